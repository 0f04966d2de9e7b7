#!/usr/bin/env python3
"""A recording HTTP proxy in front of one OpenAI-compatible server, for end-to-end checks.

    record-proxy.py UPSTREAM_BASE_URL LOG_FILE

Listens on 127.0.0.1 (a free port), forwards every request to UPSTREAM's host with the same
method, path, query, headers and body, and returns the upstream status, headers and body
unchanged, error statuses included; a streamed answer (text/event-stream) is relayed as it
comes, and a client that leaves mid-stream closes the upstream connection too. Each request appends one JSON line to LOG_FILE once the
upstream has answered: {"method", "path", "body": <parsed JSON or null>, "status": <upstream
status, or null if the upstream could not be reached>, "elapsed_ms": <time to the upstream's
answer (its head, for a stream)>, "usage": <the answer's `usage` object (for a stream, the
last one its events carry), or null>, "pieces": <for a stream, the events that carried text:
about its completion tokens where the server reports no usage>}; a stream's line is written
when it ends. Requests still waiting for the upstream
when the proxy is stopped (SIGTERM, SIGINT) are logged then, with status null, so the log holds
every request that arrived. Once listening it prints its base URL (UPSTREAM's path kept, e.g.
http://127.0.0.1:PORT/v1) on stdout and flushes it.

Python standard library only. The upstream may take up to 10 minutes per answer (a small model
on a CPU, one request at a time), so the upstream timeout is generous. It is a test tool: it
must not be exposed beyond loopback.
"""

import json
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UPSTREAM_TIMEOUT_S = 660  # a little over the 10 minutes a slow upstream may take

# Hop-by-hop headers (RFC 9110 section 7.6.1) and those this proxy recomputes itself.
HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
    "transfer-encoding", "upgrade", "host", "content-length",
}


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Hands 3xx answers back as they are instead of following them."""

    def redirect_request(self, *args, **kwargs):
        return None


# No proxy from the environment (the upstream is usually on loopback) and no redirects followed.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())


class RequestLog:
    """The JSON-lines log, written from many threads, and the requests not yet answered."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.pending = {}  # id -> entry, until the upstream answers
        self.next_id = 0

    def arrived(self, method, path, body):
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        with self.lock:
            self.next_id += 1
            self.pending[self.next_id] = {"method": method, "path": path, "body": parsed,
                                          "status": None, "started": time.monotonic()}
            return self.next_id

    def answered(self, request_id, status, usage=None, elapsed_ms=None, pieces=None):
        with self.lock:
            entry = self.pending.pop(request_id, None)
            if entry is not None:
                entry["status"] = status
                entry["usage"] = usage
                if pieces is not None:
                    entry["pieces"] = pieces
                self.write(entry, elapsed_ms)

    def since(self, request_id):
        """Milliseconds since request `request_id` arrived."""
        with self.lock:
            entry = self.pending.get(request_id)
            return round((time.monotonic() - entry["started"]) * 1000) if entry else None

    def flush_pending(self):
        with self.lock:
            for entry in self.pending.values():
                self.write(entry)
            self.pending.clear()

    def write(self, entry, elapsed_ms=None):  # called with the lock held
        started = entry.pop("started")
        entry["elapsed_ms"] = elapsed_ms or round((time.monotonic() - started) * 1000)
        with open(self.path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")


def usage_of(reply):
    """The `usage` object of a JSON answer, or None."""
    try:
        usage = json.loads(reply).get("usage")
    except (ValueError, AttributeError):
        return None
    return usage if isinstance(usage, dict) else None


def is_event_stream(headers):
    return any(name.lower() == "content-type" and value.lower().startswith("text/event-stream")
               for name, value in headers)


def make_handler(upstream, log):
    origin = f"{upstream.scheme}://{upstream.netloc}"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def forward(self):
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            request_id = log.arrived(self.command, self.path, body)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            request = urllib.request.Request(
                origin + self.path, data=body if body else None, headers=headers,
                method=self.command)
            status, reply_headers, reply = None, [], b""
            try:
                with OPENER.open(request, timeout=UPSTREAM_TIMEOUT_S) as response:
                    status, reply_headers = response.status, response.getheaders()
                    if is_event_stream(reply_headers):
                        # Relayed as it comes; a client that leaves closes the upstream too.
                        head = log.since(request_id)
                        read = {"usage": None, "pieces": 0}
                        try:
                            self.relay(status, reply_headers, response, read)
                        finally:
                            log.answered(request_id, status, read["usage"], head, read["pieces"])
                        return
                    reply = response.read()
            except urllib.error.HTTPError as err:  # 3xx/4xx/5xx: passed through unchanged
                status, reply_headers, reply = err.code, err.headers.items(), err.read()
            except (BrokenPipeError, ConnectionResetError):
                raise
            except Exception as err:  # unreachable upstream or timeout: the client sees a 502
                reply = json.dumps({"error": {"message": f"record-proxy: upstream failed: {err}",
                                              "type": "proxy_error"}}).encode()
                reply_headers = [("Content-Type", "application/json")]
            log.answered(request_id, status, usage_of(reply))
            # Only the status line: the upstream's own Date and Server headers follow.
            self.send_response_only(status or 502)
            for name, value in reply_headers:
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply)

        def relay(self, status, reply_headers, response, read):
            """A streamed answer (server-sent events), passed on chunk by chunk; `read` gets
            the last `usage` object its events carry and how many events carried text."""
            self.send_response_only(status)
            for name, value in reply_headers:
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            pending = b""
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if not line.startswith(b"data:"):
                        continue
                    if b'"usage"' in line:
                        read["usage"] = usage_of(line[5:]) or read["usage"]
                    if b'"content": "' in line or b'"content":"' in line:
                        read["pieces"] += 1
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = forward

        def handle_one_request(self):
            try:
                super().handle_one_request()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client went away: nothing to answer

        def log_message(self, fmt, *args):  # keep stderr for real problems
            pass

    return Handler


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: record-proxy.py UPSTREAM_BASE_URL LOG_FILE")
    upstream = urllib.parse.urlsplit(sys.argv[1])
    if upstream.scheme not in ("http", "https") or not upstream.netloc:
        sys.exit(f"record-proxy: `{sys.argv[1]}` is not an http(s) URL")
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    log = RequestLog(sys.argv[2])
    handler = make_handler(upstream, log)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    port = server.server_address[1]
    print(f"http://127.0.0.1:{port}{upstream.path.rstrip('/')}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        log.flush_pending()
        server.server_close()


if __name__ == "__main__":
    main()
