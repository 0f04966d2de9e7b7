#!/usr/bin/env python3
"""A loopback web site of document folders, with a SearXNG-shaped search over it, for
benchmarks (scripts/bench-read.sh, scripts/e2e-local-llm.sh, scripts/bench-peers.sh; not for
tests: those use tests/it/support).

    site.py CORPUS_DIR [RESULTS] [--also DIR ...] [--html] [--snippets]

It listens on 127.0.0.1 at a free port and prints its base URL on stdout once listening.

- `GET /<name>` serves the document <name> of the folders: as it is, with its Content-Type
  (`.md` text/markdown, `.txt` text/plain, `.html` text/html, all UTF-8); with `--html`, a
  Markdown or text document as an HTML page (headings, paragraphs, code blocks), as the web
  would show it. There is no robots.txt (a 404, which lets a reader in). Two folders holding
  the same file name are refused: a page's URL ends in its file name, which is what eval's
  evidence names (`researchflow eval --reports DIR --site <base URL>`).
- `GET /search?q=...&format=json` answers as SearXNG does, `{"query", "number_of_results",
  "results": [{"title", "url", "content", "engine", "score", "category"}]}`: the RESULTS
  (default 5) documents ranked by BM25 over their words (k1 1.2, b 0.75), ties by name. The
  `content` (the snippet) is only the document's title: deliberately useless, so that only
  reading the page gives the facts; with `--snippets`, the document's sentence that holds the
  most of the query's words (up to 300 characters), as a search engine shows.
  Without `format=json`, the same results as an HTML list.
- `GET /` lists the pages (a SearXNG instance answers its root; some clients check it first).
- `GET /stats` returns {"searches", "pages"}: the requests served, to set beside the
  reader's own counts.
"""
import argparse
import html
import json
import math
import os
import re
import threading
from collections import Counter
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

TYPES = {".md": "text/markdown; charset=utf-8", ".txt": "text/plain; charset=utf-8",
         ".html": "text/html; charset=utf-8"}
# Words too common to rank by (the questions' own function words).
STOP = set("a an and are as at be by does did do for from had has have how in is it its of on "
           "or that the their this to was were what when where which who why with".split())
lock = threading.Lock()
stats = {"searches": 0, "pages": 0}


def words(text):
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]


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


def plain_text(name, text):
    """What a reader of the page sees, as one line: tags and heading marks aside."""
    if name.endswith(".html"):
        text = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", text, flags=re.S | re.I)
        text = html.unescape(re.sub(r"<[^>]*>", " ", text))
    return " ".join(re.sub(r"^#+\s*", "", text, flags=re.M).split())


def as_html(title, text):
    """A Markdown or text document as an HTML page: ``` fences as code, `#` headings and
    underlined ones (reStructuredText) as headings, the rest as paragraphs."""
    body, para, code = [], [], None

    def flush():
        if para:
            body.append(f"<p>{html.escape(' '.join(' '.join(para).split()))}</p>")
            para.clear()

    lines = text.splitlines()
    for k, line in enumerate(lines):
        after = lines[k + 1] if k + 1 < len(lines) else ""
        if line.lstrip().startswith("```"):
            flush()
            if code is None:
                code = []
            else:
                body.append(f"<pre><code>{html.escape(chr(10).join(code))}</code></pre>")
                code = None
        elif code is not None:
            code.append(line)
        elif re.match(r"#{1,6}\s", line) or (line.strip() and re.match(r"[=\-~^]{3,}\s*$", after)):
            flush()
            body.append(f"<h2>{html.escape(line.lstrip('#').strip())}</h2>")
        elif not line.strip() or re.match(r"[=\-~^]{3,}\s*$", line):
            flush()
        else:
            para.append(line)
    flush()
    if code is not None:
        body.append(f"<pre><code>{html.escape(chr(10).join(code))}</code></pre>")
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{html.escape(title)}"
            f"</title></head><body><main>{''.join(body)}</main></body></html>")


def load(folders):
    """The documents: name -> (folder, title, plain text, word counts)."""
    docs = {}
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if os.path.splitext(name)[1] not in TYPES:
                continue
            if name in docs:
                raise SystemExit(f"site.py: {name} is in both {docs[name][0]} and {folder}")
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                text = f.read()
            plain = plain_text(name, text)
            docs[name] = (folder, title_of(name, text), plain, Counter(words(plain)))
    return docs


class Index:
    """BM25 over the documents' words."""

    def __init__(self, docs):
        self.docs = docs
        self.average = sum(sum(d[3].values()) for d in docs.values()) / max(len(docs), 1)
        df = Counter(w for d in docs.values() for w in d[3])
        n = len(docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def score(self, asked, counts):
        norm = 1.2 * (0.25 + 0.75 * sum(counts.values()) / self.average)
        return sum(self.idf[w] * counts[w] * 2.2 / (counts[w] + norm) for w in asked if w in counts)

    def search(self, query, limit):
        asked = set(words(query))
        ranked = sorted((-self.score(asked, d[3]), name) for name, d in self.docs.items())
        return [(name, -score) for score, name in ranked[:limit] if score < 0]


def snippet(plain, query):
    """The sentence of `plain` that holds the most of `query`'s words, cut to 300 characters."""
    asked = set(words(query))
    sentences = re.split(r"(?<=[.!?])\s+", plain)
    return max(sentences, key=lambda s: len(asked & set(words(s))))[:300]


def handler(args, docs, index):
    class Handler(SimpleHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **TYPES}

        def log_message(self, *_):
            pass

        def send_body(self, kind, data):
            data = data.encode()
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def translate_path(self, path):
            name = unquote(urlsplit(path).path.lstrip("/"))
            return os.path.join(docs[name][0], name)

        def do_GET(self):
            url = urlsplit(self.path)
            name = unquote(url.path.lstrip("/"))
            if url.path == "/search":
                self.answer_search(parse_qs(url.query))
            elif url.path in ("/", "/index.html"):
                # A SearXNG instance answers its root: a client may check it is up first.
                links = "".join(f"<li><a href=\"/{quote(n)}\">{html.escape(d[1])}</a></li>"
                                for n, d in sorted(docs.items()))
                self.send_body(TYPES[".html"], f"<!doctype html><html><body><ul>{links}</ul></body></html>")
            elif url.path == "/stats":
                with lock:
                    self.send_body("application/json", json.dumps(stats))
            elif name in docs:
                with lock:
                    stats["pages"] += 1
                folder, title, _, _ = docs[name]
                if args.html and not name.endswith(".html"):
                    with open(os.path.join(folder, name), encoding="utf-8") as f:
                        self.send_body(TYPES[".html"], as_html(title, f.read()))
                else:
                    super().do_GET()
            else:
                self.send_error(404)

        def answer_search(self, params):
            with lock:
                stats["searches"] += 1
            query = params.get("q", [""])[0]
            host = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"
            results = [{
                "title": docs[name][1],
                "url": f"{host}/{quote(name)}",
                "content": snippet(docs[name][2], query) if args.snippets else docs[name][1],
                "engine": "bm25",
                "engines": ["bm25"],
                "score": round(score, 4),
                "category": "general",
            } for name, score in index.search(query, args.results)]
            if params.get("format", [""])[0] == "json":
                payload = {"query": query, "number_of_results": len(results), "results": results,
                           "answers": [], "infoboxes": [], "suggestions": [],
                           "unresponsive_engines": []}
                return self.send_body("application/json", json.dumps(payload))
            items = "".join(f"<article class=\"result\"><h3><a href=\"{html.escape(r['url'])}\">"
                            f"{html.escape(r['title'])}</a></h3><p class=\"content\">"
                            f"{html.escape(r['content'])}</p></article>" for r in results)
            self.send_body(TYPES[".html"], f"<!doctype html><html><body>{items}</body></html>")

    return Handler


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


def main():
    parser = argparse.ArgumentParser(description="A loopback site of documents with a search.")
    parser.add_argument("corpus")
    parser.add_argument("results", nargs="?", type=int, default=5)
    parser.add_argument("--also", action="append", default=[], metavar="DIR")
    parser.add_argument("--html", action="store_true")
    parser.add_argument("--snippets", action="store_true")
    args = parser.parse_args()
    docs = load([os.path.abspath(f) for f in [args.corpus, *args.also]])
    server = Server(("127.0.0.1", 0), handler(args, docs, Index(docs)))
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
