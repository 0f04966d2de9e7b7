"""A small MCP search server on the official Python SDK (FastMCP on 1.x, MCPServer on 2.x),
which researchflow uses as its search provider in tests/it/mcp_search.rs. Its tool
`web_search(query, limit)` answers `limit` results for any query (URLs under
`https://mcp.example/`), plus one whose link is not a web URL, which researchflow must drop.
`page_search(query, limit)` answers results that carry their page's whole text under `content` (as
search tools that fetch pages do), one fact deep inside it. Two tools answer nothing usable: `chatty_search` a sentence, `ftp_search` results without a
web URL.

Options:
  --http           serve streamable HTTP on 127.0.0.1 (a free port, printed on stdout as
                   `PORT <n>`) instead of stdio
  --log FILE       append the arguments of every call to FILE, one JSON object a line, with
                   the server's process id (`pid`)
  --log-env        add to each logged call the environment variables named OPENAI_API_KEY
                   or RF_TEST_* that the server was started with
  --crash          exit mid-call, every call (the process dies, the answer never comes)
  --crash-once M   exit mid-call when the file M does not exist yet (creating it)
  --hang           never answer a call
"""

import argparse
import json
import os
import socket
import sys
import time

try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server

parser = argparse.ArgumentParser()
parser.add_argument("--http", action="store_true")
parser.add_argument("--log")
parser.add_argument("--log-env", action="store_true")
parser.add_argument("--crash", action="store_true")
parser.add_argument("--crash-once")
parser.add_argument("--hang", action="store_true")
args = parser.parse_args()

server = Server("test-search")


def slug(text):
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


@server.tool()
def web_search(query: str, limit: int = 5) -> list[dict]:
    """Search the web."""
    if args.log:
        with open(args.log, "a") as log:
            call = {"query": query, "limit": limit, "pid": os.getpid()}
            if args.log_env:
                call["env"] = {
                    k: v for k, v in os.environ.items() if k == "OPENAI_API_KEY" or k.startswith("RF_TEST_")
                }
            log.write(json.dumps(call) + "\n")
    if args.crash:
        os._exit(3)
    if args.hang:
        time.sleep(3600)
    if args.crash_once and not os.path.exists(args.crash_once):
        open(args.crash_once, "w").close()
        os._exit(3)
    results = [
        {
            "url": f"https://mcp.example/{slug(query)}/{i}",
            "title": f"MCP result {i} for {query}",
            "snippet": f"Snippet {i} about {query}.",
        }
        for i in range(1, limit + 1)
    ]
    results.append({"url": "javascript:alert(1)", "title": "Not a source"})
    return results


PAGE_FACT = "The relay accepts at most 64 concurrent sessions per tenant before it queues new ones."


@server.tool()
def page_search(query: str, limit: int = 5) -> list[dict]:
    """Search the web and return each page's text."""
    filler = " ".join(
        f"Paragraph {n} of the operations guide describes the dashboard, the colours of its "
        "charts and the menus that lead to them, none of which matters here."
        for n in range(1, 13)
    )
    return [
        {
            "url": f"https://mcp.example/guide/{i}",
            "title": f"Operations guide {i}",
            "content": f"{filler}\n\n{PAGE_FACT if i == 1 else 'Nothing else.'}\n\n{filler}",
        }
        for i in (1, 2)
    ]


@server.tool()
def chatty_search(query: str) -> str:
    """Talks about searching instead."""
    return f"I could not find anything about {query}, sorry."


@server.tool()
def ftp_search(query: str) -> list[dict]:
    """Finds files, not pages."""
    return [{"url": f"ftp://mcp.example/{i}", "title": f"File {i}"} for i in range(1, 3)]


if args.http:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = server.streamable_http_app()
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
else:
    server.run()
