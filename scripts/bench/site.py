#!/usr/bin/env python3
"""A loopback web site of a document folder, with a SearXNG-shaped search over it, for
benchmarks (scripts/bench-read.sh; not for tests: those use tests/it/support).

    site.py CORPUS_DIR [RESULTS]

It listens on 127.0.0.1 at a free port and prints its base URL on stdout once listening.

- `GET /<name>` serves the document CORPUS_DIR/<name> as it is, with its Content-Type
  (`.md` text/markdown, `.txt` text/plain, `.html` text/html, all UTF-8). There is no
  robots.txt (a 404, which lets a reader in).
- `GET /search?q=...&format=json` answers as SearXNG does, `{"results": [{"title", "url",
  "content"}]}`: the RESULTS (default 5) documents sharing the most query words, each word
  weighted by its rarity over the folder (idf), ties by name. The `content` (the snippet) is
  only the document's title: deliberately useless, so that only reading the page gives the
  facts.
- `GET /stats` returns {"searches", "pages"}: the requests served, to set beside the
  reader's own counts.
"""
import json
import math
import os
import re
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CORPUS = os.path.abspath(sys.argv[1])
RESULTS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
TYPES = {".md": "text/markdown; charset=utf-8", ".txt": "text/plain; charset=utf-8",
         ".html": "text/html; charset=utf-8"}
# Words too common to rank by (the questions' own function words).
STOP = set("a an and are as at be by does did do for from had has have how in is it its of on "
           "or that the their this to was were what when where which who why with".split())
lock = threading.Lock()
stats = {"searches": 0, "pages": 0}


def words(text):
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP}


def title_of(name, text):
    """The document's title: the HTML <title>, the Markdown front matter's `title:` or first
    `# ` heading, a text file's short first line; else its file name in words."""
    for pattern in (r"<title>([^<]*)</title>", r"^title:[ \t]*(.+)$", r"^# (.+)$"):
        found = re.search(pattern, text, re.M | re.I)
        if found:
            return " ".join(found.group(1).split())
    first = text.strip().split("\n", 1)[0].strip()
    if name.endswith(".txt") and 0 < len(first) <= 80 and not first.endswith("."):
        return first
    return os.path.splitext(name)[0].replace("-", " ").capitalize()


# The documents: name -> (title, words). HTML is ranked on its text, tags aside.
DOCS = {}
for name in sorted(os.listdir(CORPUS)):
    if os.path.splitext(name)[1] in TYPES:
        with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
            text = f.read()
        DOCS[name] = (title_of(name, text), words(re.sub(r"<[^>]*>", " ", text)))
IDF = {}
for _, (_, ws) in DOCS.items():
    for w in ws:
        IDF[w] = IDF.get(w, 0) + 1
IDF = {w: math.log(1 + len(DOCS) / n) for w, n in IDF.items()}


def search(query, base):
    asked = words(query)
    ranked = sorted(((-sum(IDF[w] for w in asked & ws), name) for name, (_, ws) in DOCS.items()))
    return [{"title": DOCS[name][0], "url": f"{base}/{name}", "content": DOCS[name][0]}
            for score, name in ranked[:RESULTS] if score < 0]


class Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **TYPES}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=CORPUS, **kwargs)

    def log_message(self, *args):
        pass

    def send_json(self, payload):
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/search":
            with lock:
                stats["searches"] += 1
            query = parse_qs(url.query).get("q", [""])[0]
            host = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"
            self.send_json({"query": query, "results": search(query, host)})
        elif url.path == "/stats":
            with lock:
                self.send_json(dict(stats))
        elif url.path.lstrip("/") in DOCS:
            with lock:
                stats["pages"] += 1
            super().do_GET()
        else:
            self.send_error(404)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


server = Server(("127.0.0.1", 0), Handler)
print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
