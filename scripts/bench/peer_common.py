"""What every peer adapter of scripts/bench-peers.sh shares (scripts/bench/peer_*.py): its
command line, its time limit, the tiktoken files it reads offline, how the peer is called, and
how it writes its report (whole, or not at all)."""
import argparse
import contextlib
import importlib.util
import os
import signal
import sys


def arguments(doc):
    """The adapters' command line: --base-url --model --searx --question --out [--timeout]."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    for flag in ("--base-url", "--model", "--searx", "--question", "--out"):
        p.add_argument(flag, required=True)
    p.add_argument("--timeout", type=int, default=0)
    return p.parse_args()


def tiktoken_cache():
    """The BPE files the `litellm` wheel ships (cl100k_base, o200k_base, p50k_base), for
    TIKTOKEN_CACHE_DIR: tiktoken would otherwise fetch them from the internet."""
    litellm = importlib.util.find_spec("litellm")
    return os.path.join(litellm.submodule_search_locations[0], "litellm_core_utils", "tokenizers")


def time_limit(name, seconds, cleanup=lambda: None):
    """After `seconds` (none when 0), says so and exits 3 at once, writing nothing: the peers
    swallow exceptions, so an exception would not stop them."""
    def expired(*_):
        sys.stderr.write(f"{name}: timed out after {seconds} s\n")
        cleanup()
        os._exit(3)

    if seconds > 0:
        signal.signal(signal.SIGALRM, expired)
        signal.alarm(seconds)


@contextlib.contextmanager
def peer_call(name, cleanup=lambda: None):
    """Calls the peer with what it prints sent to stderr (stdout is the adapter's); whatever it
    raises ends the adapter with one line naming it. `cleanup` runs either way."""
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        yield
    except Exception as e:  # noqa: BLE001 - one line, whatever the peer raised
        sys.exit(f"{name}: {type(e).__name__}: {' '.join(str(e).split())[:300]}")
    finally:
        sys.stdout = real_stdout
        cleanup()


def write_report(path, report):
    """Writes `report` to `path` through a `.part` file, so a report there is whole."""
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(report if report.endswith("\n") else report + "\n")
    os.replace(tmp, path)
