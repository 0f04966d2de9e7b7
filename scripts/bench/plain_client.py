#!/usr/bin/env python3
"""A plain client for benchmarks: the model calls of a batch without the batch around them.

N questions, each making 4 calls one after another (planner, search analysis, planner, final:
what one question of `researchflow batch` asks scripts/bench/mock_llm.py), JOBS questions at
once, each worker thread on a kept-alive connection of its own. Prints the wall time in
seconds and the median time of a call, so that `bench-batch.sh` can hold the batch's wall time
against the time the same calls take with nothing else to do.

    plain_client.py BASE_URL N JOBS
"""
import http.client
import json
import statistics
import sys
import threading
import time
from urllib.parse import urlparse

BASE = urlparse(sys.argv[1])
N = int(sys.argv[2])
JOBS = int(sys.argv[3])
PATH = BASE.path.rstrip("/") + "/chat/completions"

# The four calls of one question, as the mock tells them apart (by their system prompt and,
# for the planner's second round, a `### b:` section).
CALLS = [
    ("You are the planning agent.", "User question: {q}"),
    ("Summarise the search results.", "User question: {q}\n[1] A result\nhttps://x\nText."),
    ("You are the planning agent.", "User question: {q}\n\n### b:summary\nA finding."),
    ("Write the final report.", "User question: {q}\n\n### b:summary\nA finding."),
]

lock = threading.Lock()
next_question = 0
latencies = []


def take():
    global next_question
    with lock:
        if next_question >= N:
            return None
        next_question += 1
        return next_question - 1


def worker():
    conn = http.client.HTTPConnection(BASE.hostname, BASE.port, timeout=120)
    mine = []
    while (n := take()) is not None:
        question = f"Benchmark question number {n + 1}?"
        for system, user in CALLS:
            body = json.dumps({
                "model": "bench-model",
                "messages": [{"role": "system", "content": system},
                             {"role": "user", "content": user.format(q=question)}],
            })
            t0 = time.monotonic()
            conn.request("POST", PATH, body, {"content-type": "application/json",
                                              "authorization": "Bearer bench"})
            response = conn.getresponse()
            response.read()
            mine.append(time.monotonic() - t0)
            if response.status != 200:
                raise SystemExit(f"HTTP {response.status}")
    conn.close()
    with lock:
        latencies.extend(mine)


t0 = time.monotonic()
threads = [threading.Thread(target=worker) for _ in range(min(JOBS, N))]
for t in threads:
    t.start()
for t in threads:
    t.join()
wall = time.monotonic() - t0
print(json.dumps({"seconds": round(wall, 3), "calls": len(latencies),
                  "median_call_ms": round(statistics.median(latencies) * 1000, 1)}))
