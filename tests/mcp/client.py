"""An MCP client built on the official Python SDK (`mcp` on PyPI, 1.x or 2.x), driven by
tests/it/mcp_server.rs: it connects to `researchflow mcp` (started over stdio, or at a
streamable HTTP URL), runs the scenario below and prints what it saw as one JSON object on
stdout. The Rust test asserts on that object; this script asserts nothing itself, so a
failure shows as a readable difference there.

The scenario: list the tools; run `research` with progress; run two `research` calls at
once; run `research` offline over a corpus; start a `research` call, cancel it after its
first finished task, read the run with `get_report`, and `resume` it; ask for a path outside
the root and for one through a symbolic link that leaves it; `list_runs`; list and read the
resources; `validate_plan`.

With `--scenario thinkon`: list the tools; run `thinkon` on a goal with progress; start a
second goal, cancel it once a block is done and the model holds its next request, and continue
it giving only its folder; ask with neither goal nor folder, for a folder outside the root, and
for another goal in the same folder.

With `--scenario offline` (a server started without any config, so without a model): list
the tools; run `research` offline over the corpus `docs` with progress; start a second one and
cancel it at its first progress notification, then `list_runs`, `get_report` and `resume`
it giving only its plan file; ask `research` for a corpus outside the root, and for a run
with a model the server does not have.

Usage: client.py --root DIR --outside PATH [--scenario full|offline|thinkon] (--url URL | -- COMMAND ARGS...)
"""

import argparse
import importlib.metadata
import json
import os
import sys
from contextlib import asynccontextmanager

import anyio

MAJOR = int(importlib.metadata.version("mcp").split(".")[0])


@asynccontextmanager
async def connect(url, command, root):
    """A connected client: the SDK's own high-level client on 2.x, a `ClientSession` on 1.x."""
    from mcp import StdioServerParameters

    params = None
    if command:
        params = StdioServerParameters(
            command=command[0], args=command[1:], env=dict(os.environ), cwd=root
        )
    if MAJOR >= 2:
        from mcp import Client

        async with Client(url or params) as client:
            yield client, client.session
        return
    from mcp import ClientSession, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    transport = streamable_http_client(url) if url else stdio_client(params)
    async with transport as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            yield session, session


def dump(result):
    """A tool result as plain data."""
    texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
    structured = getattr(result, "structuredContent", None)
    if structured is None:
        structured = getattr(result, "structured_content", None)
    is_error = getattr(result, "isError", None)
    if is_error is None:
        is_error = getattr(result, "is_error", None)
    return {"is_error": bool(is_error), "structured": structured, "texts": texts}


async def research(client, arguments):
    notes = []

    async def on_progress(progress, total, message):
        notes.append({"progress": progress, "total": total, "message": message})

    result = await client.call_tool("research", arguments, progress_callback=on_progress)
    return {"result": dump(result), "progress": notes}


# How many cancellations of a quick offline run may arrive after it ended (a loaded machine).
LATE_CANCELS_ALLOWED = 4


async def cancelled_run(client, session, arguments, after=1, hanging=None, tool="research"):
    """Starts `tool` (`research`, or `thinkon`) with `arguments`, cancels it once `after` tasks
    (or blocks) have finished (0: at its first progress notification) and, with `hanging`, once
    that file exists (the mock model creates it when it holds the run's next request), and
    returns the plan file (or folder) that notification named."""
    seen = {"plan_file": None, "progress": []}
    one_done = anyio.Event()

    async def on_progress(progress, total, message):
        seen["progress"].append({"progress": progress, "total": total, "message": message})
        if seen["plan_file"] is None and "`" in (message or ""):
            seen["plan_file"] = message.split("`")[1]
        if progress >= after:
            one_done.set()

    async with anyio.create_task_group() as group:
        request_id = getattr(session, "_request_id", None)

        async def call():
            await client.call_tool(tool, arguments, progress_callback=on_progress)
            seen["completed_anyway"] = True

        group.start_soon(call)
        await one_done.wait()
        if hanging:
            with anyio.fail_after(60):
                while not os.path.exists(hanging):
                    await anyio.sleep(0.01)
        if MAJOR < 2:
            # The 1.x session does not tell the server when a call is abandoned: say it.
            from mcp import types

            await session.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(
                            requestId=request_id, reason="cancelled by the test"
                        )
                    )
                )
            )
        # On 2.x, abandoning the call sends `notifications/cancelled` itself.
        group.cancel_scope.cancel()
    return seen


async def settled_report(client, plan):
    """`get_report` once the cancelled run has saved its plan. Over stdio the server has the
    cancellation before the next request; over HTTP a cancellation can be a closed stream
    the server notices a moment later, so the run may still be `running` at first."""
    for _ in range(600):
        report = dump(await client.call_tool("get_report", {"plan_file": plan}))
        if (report["structured"] or {}).get("status") != "running":
            return report
        await anyio.sleep(0.05)
    return report


async def scenario(args):
    out = {"sdk": importlib.metadata.version("mcp")}
    async with connect(args.url, args.command, args.root) as (client, session):
        tools = await client.list_tools()
        out["tools"] = {
            t.name: {
                "input": getattr(t, "inputSchema", None) or getattr(t, "input_schema", None),
                "output": getattr(t, "outputSchema", None) or getattr(t, "output_schema", None),
            }
            for t in tools.tools
        }
        out["research"] = await research(client, {"query": "What is the Model Context Protocol?"})
        results = [None, None]

        async def one(i, query):
            results[i] = await research(client, {"query": query})

        async with anyio.create_task_group() as group:
            group.start_soon(one, 0, "First of two at once?")
            group.start_soon(one, 1, "Second of two at once?")
        out["concurrent"] = results
        out["offline"] = await research(
            client, {"query": "What do the notes say about tides?", "offline": True, "corpus": "docs"}
        )
        seen = await cancelled_run(
            client, session, {"query": "Cancel me: a long question?"}, hanging=args.hanging
        )
        out["cancelled"] = seen
        plan = seen["plan_file"]
        out["after_cancel"] = await settled_report(client, plan)
        out["resumed"] = dump(await client.call_tool("resume", {"plan_file": plan}))
        out["outside"] = dump(await client.call_tool("get_report", {"plan_file": args.outside}))
        out["through_link"] = dump(await client.call_tool("get_report", {"plan_file": "leak.json"}))
        out["unknown_argument"] = dump(
            await client.call_tool("get_report", {"plan_file": plan, "plan": plan})
        )
        out["list_runs"] = dump(await client.call_tool("list_runs", {}))
        resources = await client.list_resources()
        out["resources"] = [
            {"uri": str(r.uri), "name": r.name, "mime": getattr(r, "mimeType", None) or getattr(r, "mime_type", None)}
            for r in resources.resources
        ]
        question = "report: What is the Model Context Protocol?"
        report_uri = next(r["uri"] for r in out["resources"] if r["name"] == question)
        read = await client.read_resource(report_uri)
        out["read_resource"] = {"uri": report_uri, "text": read.contents[0].text}
        plan_file = out["research"]["result"]["structured"]["plan_file"]
        out["validate"] = dump(await client.call_tool("validate_plan", {"plan_file": plan_file}))
    return out


async def offline_scenario(args):
    """A server without a model: offline research over a corpus, cancelled and resumed."""
    out = {"sdk": importlib.metadata.version("mcp")}
    async with connect(args.url, args.command, args.root) as (client, session):
        tools = await client.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        corpus = {"offline": True, "corpus": "docs"}
        out["research"] = await research(
            client, {"query": "How do lithium-ion cells degrade?", **corpus}
        )
        # An offline run is quick: a cancellation that reaches the server after the run has
        # ended cannot interrupt it, and the run rightly stays `completed`. Such a late one is
        # counted and the question asked again; the test fails if no cancellation is in time.
        out["late_cancels"] = 0
        for _ in range(LATE_CANCELS_ALLOWED + 1):
            seen = await cancelled_run(
                client, session, {"query": "What limits fast charging?", **corpus}, after=0
            )
            plan = seen["plan_file"]
            # Right after the cancellation: over stdio the server has it before the next
            # request, and the run is saved before these answer. Over HTTP the cancellation
            # can be a closed stream that the server notices a moment later (`settled_report`).
            if args.url:
                out["after_cancel"] = await settled_report(client, plan)
                out["list_runs"] = dump(await client.call_tool("list_runs", {}))
            else:
                out["list_runs"] = dump(await client.call_tool("list_runs", {}))
                out["after_cancel"] = dump(
                    await client.call_tool("get_report", {"plan_file": plan})
                )
            out["cancelled"] = seen
            if (out["after_cancel"]["structured"] or {}).get("status") != "completed":
                break
            out["late_cancels"] += 1
        notes = []

        async def on_progress(progress, total, message):
            notes.append({"progress": progress, "total": total, "message": message})

        # Only the plan file: the run stays offline, over its corpus.
        resumed = await client.call_tool("resume", {"plan_file": plan}, progress_callback=on_progress)
        out["resumed"] = {"result": dump(resumed), "progress": notes}
        out["outside_corpus"] = dump(
            await client.call_tool(
                "research", {"query": "Anything?", "offline": True, "corpus": args.outside}
            )
        )
        out["no_model"] = dump(await client.call_tool("research", {"query": "Anything?"}))
        out["list_runs_after"] = dump(await client.call_tool("list_runs", {}))
    return out


async def thinkon_scenario(args):
    """A Thinkon goal with progress; a second one cancelled once a block is done and its
    model holds the next request, then continued with only its folder; the calls refused."""
    out = {"sdk": importlib.metadata.version("mcp")}
    async with connect(args.url, args.command, args.root) as (client, session):
        tools = await client.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        notes = []

        async def on_progress(progress, total, message):
            notes.append({"progress": progress, "total": total, "message": message})

        result = await client.call_tool(
            "thinkon", {"goal": "What is G?"}, progress_callback=on_progress
        )
        out["thinkon"] = {"result": dump(result), "progress": notes}
        seen = await cancelled_run(
            client, session, {"goal": "Cancel me: what is H?"}, hanging=args.hanging, tool="thinkon"
        )
        out["cancelled"] = seen
        # Over HTTP the cancellation can be a closed stream the server notices a moment later.
        for _ in range(600):
            continued = dump(await client.call_tool("thinkon", {"dir": seen["plan_file"]}))
            if not (continued["is_error"] and "being run" in " ".join(continued["texts"])):
                break
            await anyio.sleep(0.05)
        out["continued"] = continued
        out["nothing"] = dump(await client.call_tool("thinkon", {}))
        out["zero_blocks"] = dump(
            await client.call_tool("thinkon", {"goal": "Zero?", "max_blocks": 0})
        )
        out["outside"] = dump(await client.call_tool("thinkon", {"dir": args.outside}))
        out["other_goal"] = dump(
            await client.call_tool("thinkon", {"dir": seen["plan_file"], "goal": "Another?"})
        )
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--root", required=True)
    parser.add_argument("--outside", required=True)
    parser.add_argument("--scenario", choices=["full", "offline", "thinkon"], default="full")
    parser.add_argument("--hanging", help="full: the file the mock model creates when it hangs")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    run = {"full": scenario, "offline": offline_scenario, "thinkon": thinkon_scenario}
    out = anyio.run(run[args.scenario], args)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
