#!/usr/bin/env python3
"""A stand-in OpenAI-compatible server for benchmarks (not for tests: those use tests/it/support).

Every answer takes LATENCY seconds. With RATE > 0 it admits at most RATE requests per second
(a sliding one-second window) and answers 429 with `retry-after-ms` beyond, like a provider's
rate limit; with MODE `bare` its 429s say nothing of when to come back (no Retry-After); with
MODE `headers` it admits from a bucket of RATE requests refilled at RATE a second and
announces its budget on every answer as OpenAI does (`x-ratelimit-limit-requests`,
`x-ratelimit-remaining-requests`, `x-ratelimit-reset-requests`: the time until the bucket is
full, e.g. `350ms`), and on a 429 `retry-after-ms` too. The planner plans one search, then the final summary; sub-agents answer at once.
GET /stats returns {"requests", "refused", "refused_at"}: the last is when each 429 was
answered, in seconds since the first request; GET /stats/reset starts them again. Prints its
base URL on stdout once listening.

With MODE `quote` it is a model that does the least a faithful one would, for `eval` over a
corpus: its search query is the user's question, its search summary quotes the first sentence
of the first result's text, and its final report quotes the first sentence of what its first
numbered source says (`says:`), with their citations (or, over a summary task's result, the
cited line it gives). The result's text is its snippet, or, when its page was read
(`search.read`), its passages (the chosen ones, in the page's reading order). With MODE
`quote-best` both quote instead the sentence of that text sharing the most words with the
question (the first on a tie; the first sentence when none shares one): a model that looks
for the answer in what it is shown.

    mock_llm.py LATENCY_SECONDS [RATE_PER_SECOND] [MODE: quote, quote-best, headers, bare]
"""
import json
import re
import sys
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LATENCY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1
RATE = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
MODE = sys.argv[3] if len(sys.argv) > 3 else ""
QUOTE = MODE in ("quote", "quote-best")
HEADERS = MODE == "headers"
bucket = [RATE, None]  # requests left, when last refilled (MODE `headers`)
# Words of a question too common to look for (`quote-best`).
STOP = set("a an and are as at be by does did do for from had has have how in is it its of on "
           "or that the their this to was were what when where which who why with".split())
lock = threading.Lock()
admitted = deque()
stats = {"requests": 0, "refused": 0, "refused_at": []}
started = []  # when the first request came


def answer(body):
    messages = body.get("messages", [])
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    if "planning agent" in system:
        if "### b:" in user:
            plan = {"is_final": True, "tasks": [{"title": "Final report", "type": "summary",
                                                 "p_node": "b:summary"}], "next_check_list": []}
        else:
            plan = {"is_final": False, "tasks": [{"title": "The one search", "type": "search",
                                                  "p_node": "a:info"}],
                    "next_check_list": ["NEW1:summary"]}
        return json.dumps(plan)
    if QUOTE:
        return quoting(system, user)
    if "final report" in system:
        return "A short report."
    if "web search queries" in system:
        return json.dumps({"queries": ["q"]})
    return json.dumps({"summary": "A finding.", "analysis": "The analysis."})


def quoting(system, user):
    """The answers of MODEs `quote` and `quote-best`."""
    if "final report" in system:
        # What the first numbered source says; else a summary task's cited line.
        says = re.search(r"^\[1\] .*\n    says: (.*)$", user, re.M)
        if says:
            return f"{chosen([says.group(1)], user)} [1]."
        earlier = user.split("Earlier results", 1)[-1].split("Numbered sources:", 1)[0]
        quoted = re.search(r"^.*\[1\]\.?$", earlier, re.M)
        return quoted.group(0).strip() if quoted else "The search results do not answer it."
    if "web search queries" in system:
        question = re.search(r"^User question: (.*)$", user, re.M)
        return json.dumps({"queries": [question.group(1) if question else "q"]})
    # The first result: "[1] title", its URL, its snippet, each on a line; or, when its page
    # was read, "passages of the page:" in the snippet's place and each passage on a line
    # after "> ".
    first = re.search(r"^\[1\] .*\n.*\n(.*)$", user, re.M)
    if not first:
        return json.dumps({"summary": "The search results do not answer it.", "analysis": ""})
    text = [first.group(1)]
    if text[0] == "passages of the page:":
        text = re.match(r"(?:> .*\n?)*", user[first.end() + 1:]).group(0).splitlines()
        text = [line[2:] for line in text]
    sentence = chosen(text, user)
    return json.dumps({"summary": f"{sentence} [1].", "analysis": f"1. {sentence} [1]."})


def chosen(text, user):
    """The sentence of `text` (a list of passages) that MODE quotes, without its last full
    stop: the first, or with `quote-best` the one sharing the most words with the question."""
    pieces = (s.strip(" …") for t in text for s in re.split(r"(?<=[.!?…])\s", t.strip()))
    sentences = [s for s in pieces if s] or [""]
    sentence = sentences[0]
    if MODE == "quote-best":
        question = re.search(r"^User question: (.*)$", user, re.M)
        words = lambda t: {w for w in re.findall(r"[a-z0-9]+", t.lower()) if w not in STOP}
        asked = words(question.group(1) if question else "")
        shared = [len(asked & words(s)) for s in sentences]
        if max(shared) > 0:
            sentence = sentences[shared.index(max(shared))]
    return sentence.rstrip(".")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this, the body waits for a delayed ACK.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def send(self, status, payload, headers=()):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.endswith("/stats"):
            with lock:
                self.send(200, dict(stats))
        elif self.path.endswith("/stats/reset"):
            with lock:
                stats.update({"requests": 0, "refused": 0, "refused_at": []})
                started.clear()
                self.send(200, {})
        else:
            self.send(200, {"object": "list", "data": [{"id": "bench-model", "object": "model"}]})

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        with lock:
            stats["requests"] += 1
            now = time.monotonic()
            if not started:
                started.append(now)
            headers = []
            if RATE > 0 and HEADERS:
                left, at = bucket
                left = min(RATE, left + (now - (at or now)) * RATE)
                refused = left < 1.0
                wait_ms = int((1.0 - left) / RATE * 1000) + 1
                left = left if refused else left - 1.0
                bucket[:] = [left, now]
                headers = [("x-ratelimit-limit-requests", str(int(RATE))),
                           ("x-ratelimit-remaining-requests", str(int(left))),
                           ("x-ratelimit-reset-requests", f"{int((RATE - left) / RATE * 1000)}ms")]
            else:
                while admitted and now - admitted[0] >= 1.0:
                    admitted.popleft()
                refused = RATE > 0 and len(admitted) >= RATE
                if refused:
                    wait_ms = int((1.0 - (now - admitted[0])) * 1000) + 1
                else:
                    admitted.append(now)
            if refused:
                stats["refused"] += 1
                stats["refused_at"].append(round(now - started[0], 3))
        if refused:
            if MODE != "bare":
                headers.append(("retry-after-ms", str(wait_ms)))
            self.send(429, {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}},
                      headers)
            return
        time.sleep(LATENCY)
        self.send(200, {
            "id": "bench", "object": "chat.completion", "model": body.get("model", "bench-model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer(body)},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }, headers)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


server = Server(("127.0.0.1", 0), Handler)
print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
server.serve_forever()
