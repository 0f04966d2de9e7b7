#!/usr/bin/env python3
"""Peer adapter for scripts/bench-peers.sh: local-deep-research (PyPI `local-deep-research`,
pinned in scripts/setup/bench/peers-requirements.txt) answers ONE question with its quick summary
and writes the report it makes of it (`formatted_findings`: the answer, the findings and the
numbered sources with their URLs), as it writes it, to --out. Run it with the peers' venv
(scripts/setup/bench/peers.sh):

  target/peers-venv/bin/python scripts/bench/peer_ldr.py --base-url URL/v1 --model NAME \
      --searx URL --question TEXT --out REPORT.md [--timeout SECONDS]

Configured only through its documented programmatic API, quick_summary(query,
settings_snapshot=create_settings_snapshot(overrides)), with these settings:
- LLM: llm.provider `openai_endpoint`, llm.openai_endpoint.url = --base-url,
  llm.openai_endpoint.api_key a dummy, llm.model = --model.
- Search: search.tool `searxng`, its instance_url = --searx. Its SearXNG engine GETs the
  instance's root first and silently turns itself off unless that answers 200 (so the site
  must serve `/`, as SearXNG does; checked here first, exit 1 if not), then asks
  `{searx}/search?q=..&format=html` and parses the result list (`article.result`: h3 > a, and
  p.content as the snippet), and drops every result whose URL starts with the instance URL
  (meant for SearXNG's own /stats pages). The site serves its pages on the same origin as its
  search, so when --searx names 127.0.0.1 the instance URL given is the same port on
  `localhost` (or the other way round): same server, and the pages' URLs survive that filter.
- Size: its quick mode as the API defines it: strategy `source-based`, 1 iteration, 1 question
  per iteration (search.iterations=1, search.questions_per_iteration=1).
- Pages: it reads search snippets only (search.snippets_only=true, its default). Its
  full-page path cannot be used here: every page fetch (FullSearchResults, ContentFetcher)
  passes an SSRF check that refuses loopback and private addresses, with no setting to allow
  them, and it renders pages with Playwright's Chromium, which is not installed (Playwright
  downloads its browsers from a CDN). So what it knows of a page is the search snippet:
  run the site with its snippets on (site.py --snippets) for a fair comparison.
Kept offline (nothing may leave loopback):
- No embeddings on this path (they serve its local-document collections only); HF_HUB_OFFLINE=1
  and TRANSFORMERS_OFFLINE=1 anyway. tiktoken: TIKTOKEN_CACHE_DIR points at the BPE files
  that the `litellm` wheel ships, should anything count tokens.
- Its data folder (settings, rate-limit memory, logs) is a fresh temporary LDR_DATA_DIR,
  removed afterwards; rate_limiting.enabled=false (its self-imposed, learned wait between
  searches, meant for public engines); notifications off (the default); no web app, no
  database (programmatic mode).
Anything it prints goes to stderr (its loguru logs are off by default). Exit 0 after writing
the report; 1 (with a one-line reason on stderr) if it fails or finds nothing; 3 on --timeout.
Nothing is written to --out unless complete.
"""
import os
import shutil
import sys
import tempfile
import time
import urllib.request
from urllib.parse import urlsplit, urlunsplit

from peer_common import arguments, peer_call, tiktoken_cache, time_limit, write_report


def instance_url(searx):
    """The same search server under the other loopback name (see the header)."""
    u = urlsplit(searx.rstrip("/"))
    other = {"127.0.0.1": "localhost", "localhost": "127.0.0.1"}.get(u.hostname)
    if other is None:
        return searx.rstrip("/")
    netloc = other + (f":{u.port}" if u.port else "")
    return urlunsplit((u.scheme, netloc, u.path, u.query, u.fragment))


def main():
    args = arguments(__doc__)

    # Its engine turns itself off, silently, unless the instance's root answers 200.
    root = instance_url(args.searx) + "/"
    try:
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(root, timeout=10).close()
    except Exception as e:  # noqa: BLE001
        sys.exit(f"peer_ldr: its SearXNG engine needs GET {root} to answer 200, got: {e}")

    data_dir = tempfile.mkdtemp(prefix="peer-ldr-")
    os.environ.update({
        "LDR_DATA_DIR": data_dir,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TIKTOKEN_CACHE_DIR": tiktoken_cache(),
        "LANGCHAIN_TRACING_V2": "false",
    })

    def remove_data():
        shutil.rmtree(data_dir, ignore_errors=True)

    time_limit("peer_ldr", args.timeout, remove_data)
    started = time.monotonic()
    with peer_call("peer_ldr", cleanup=remove_data):
        from local_deep_research.api import quick_summary
        from local_deep_research.api.settings_utils import create_settings_snapshot

        settings = create_settings_snapshot(overrides={
            "llm.provider": "openai_endpoint",
            "llm.openai_endpoint.url": args.base_url,
            "llm.openai_endpoint.api_key": "dummy",
            "llm.model": args.model,
            "search.tool": "searxng",
            "search.engine.web.searxng.default_params.instance_url": instance_url(args.searx),
            "search.iterations": 1,
            "search.questions_per_iteration": 1,
            "search.snippets_only": True,
            "rate_limiting.enabled": False,
            "notifications.enabled": False,
        })
        result = quick_summary(args.question, settings_snapshot=settings,
                               search_tool="searxng", search_strategy="source-based",
                               iterations=1, questions_per_iteration=1)
    report = result.get("formatted_findings") or ""
    if not report.strip() or report.startswith("Error:"):
        sys.exit(f"peer_ldr: no report: {' '.join(report.split())[:200] or 'empty'}")
    if not result.get("sources"):
        sys.exit("peer_ldr: the search gave it no sources")
    write_report(args.out, report)
    print(f"peer_ldr: {len(report)} chars, {len(result['sources'])} sources, "
          f"{time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
