#!/usr/bin/env python3
"""Does an OpenAI-compatible server stop generating when its client leaves? Not a test: it
prints figures (docs/src/streaming.md).

    disconnect.py BASE_URL MODEL [ROUNDS]

For each round: a short call alone (how long the server takes when idle), a long answer
streamed in full (how long a whole generation takes), a long streamed answer dropped after
its fifth event followed at once by the short call, and a long whole answer cut by a 1 s
client timeout followed at once by the short call. On a single-slot server that stops on a
disconnect, the short call after a cut takes what it takes alone; on one that goes on
generating, it waits for the rest of the abandoned answer. Python standard library only.
"""
import http.client
import json
import sys
import time
import urllib.parse

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
LONG = "List the numbers from 1 to 500, one per line, with their squares."


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: disconnect.py BASE_URL MODEL [ROUNDS]")
    base = urllib.parse.urlsplit(sys.argv[1])
    model, rounds = sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3
    path = base.path.rstrip("/") + "/chat/completions"

    def body(stream, tokens, question):
        b = {"model": model, "messages": [SYSTEM, {"role": "user", "content": question}],
             "max_tokens": tokens, "temperature": 0.8}
        if stream:
            b["stream"] = True
        return json.dumps(b)

    def connect(timeout=600):
        return http.client.HTTPConnection(base.hostname, base.port or 80, timeout=timeout)

    def post(conn, payload):
        conn.request("POST", path, payload, {"content-type": "application/json"})
        return conn.getresponse()

    def short():
        started, conn = time.time(), connect()
        post(conn, body(False, 8, "Say hi.")).read()
        conn.close()
        return time.time() - started

    def streamed_in_full():
        started, conn = time.time(), connect()
        post(conn, body(True, 400, LONG)).read()
        conn.close()
        return time.time() - started

    def stream_dropped():
        conn, events = connect(), 0
        response = post(conn, body(True, 400, LONG))
        while events < 5:
            if response.fp.readline().startswith(b"data:"):
                events += 1
        conn.sock.close()
        conn.close()
        return short()

    def whole_cut():
        conn = connect(timeout=1.0)
        try:
            post(conn, body(False, 400, LONG)).read()
            cut = False  # the answer came within the second: nothing was cut
        except TimeoutError:
            cut = True
        conn.close()
        return short(), cut

    for n in range(1, rounds + 1):
        alone, full, after_stream = short(), streamed_in_full(), stream_dropped()
        after_whole, cut = whole_cut()
        print(f"round {n}: short call alone {alone:.2f} s; long answer streamed in full {full:.2f} s; "
              f"short call after a dropped stream {after_stream:.2f} s; after a whole answer "
              + (f"cut at 1 s {after_whole:.2f} s" if cut else f"(not cut: it came within 1 s) {after_whole:.2f} s"))


if __name__ == "__main__":
    main()
