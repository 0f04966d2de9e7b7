//! A small web site on 127.0.0.1 for testing a page reader: the real documents of
//! `fixtures/web/` under `/docs/<name>` (see [`web_docs`](super::web_docs)) with ETag,
//! Last-Modified and 304 answers, one of them gzip-compressed on request; a `robots.txt` that
//! forbids `/private/`; a redirect, a redirect loop, a page that trickles, a 20 MiB page, an
//! image, an archive, a 429 then success, a 500, and 404 for the rest. It stands on the shared
//! core of `server.rs`, which records every request. The bodies that stream (`/slow`, `/huge`)
//! are made in `web_bodies.rs`. It never reaches beyond loopback; dropping it shuts it down.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;

use super::mock_search::SearchHit;
use super::server::{Planned, Recorded, Route, Server, lock};
use super::web_bodies::{self, EMPTY_ZIP};
use super::web_docs::{DOCS, Doc, GPL3_TXT, LIBFFI_CLOSURES, QEMU_NBD};

pub use super::web_bodies::{HUGE_BYTES, HUGE_FIRST_SENTENCE, SLOW_BYTES_PER_SEC, SLOW_HEAD_BYTES};

/// The `Last-Modified` of every fixture page.
pub const LAST_MODIFIED: &str = "Tue, 31 May 2022 12:00:00 GMT";
/// `/robots.txt`, as served.
pub const ROBOTS_TXT: &str = "User-agent: *\nDisallow: /private/\n";
/// A page that robots.txt forbids: a polite reader never requests it.
pub const SECRET_PATH: &str = "/private/secret.html";
/// Where `/moved` sends a client (301).
pub const MOVED_TO: &str = "/docs/libffi-closure-api.html";
/// The page served gzip-compressed when the request's `Accept-Encoding` allows it.
pub const GZIP_DOC: &str = QEMU_NBD;
/// The page `/slow` trickles (its fact comes long after the first KiB).
pub const SLOW_DOC: &str = LIBFFI_CLOSURES;
/// The page `/status/429` serves once it has said 429.
pub const RATE_LIMITED_DOC: &str = GPL3_TXT;

const SECRET_PAGE: &str = "<!DOCTYPE html><html><head><title>Private</title></head>\
<body><p>robots.txt forbids this page: a polite reader never sees it.</p></body></html>";

/// A fixture page ready to serve.
struct Served {
    doc: &'static Doc,
    bytes: Bytes,
    /// Strong validator of the identity bytes, quoted.
    etag: String,
    /// The gzip-compressed bytes, for [`GZIP_DOC`] only.
    gzipped: Option<Bytes>,
}

/// What the route reads and the counters it keeps.
struct Site {
    served: Vec<Served>,
    png: Bytes,
    /// Path of every request answered 304, in order.
    not_modified: Mutex<Vec<String>>,
    /// Whether `/status/429` has said 429 yet.
    rate_limited: AtomicBool,
}

/// The web site; dropping it shuts the server down.
pub struct WebSite {
    server: Server,
    site: Arc<Site>,
}

impl WebSite {
    /// Reads the fixtures and starts serving on 127.0.0.1, port 0.
    pub async fn start() -> WebSite {
        let served = DOCS
            .iter()
            .map(|doc| {
                let bytes = Bytes::from(doc.bytes());
                Served {
                    doc,
                    etag: web_bodies::etag(&bytes),
                    gzipped: (doc.name == GZIP_DOC).then(|| web_bodies::gzip(&bytes)),
                    bytes,
                }
            })
            .collect();
        let site = Arc::new(Site {
            served,
            png: web_bodies::png_image(),
            not_modified: Mutex::new(Vec::new()),
            rate_limited: AtomicBool::new(false),
        });
        let route_site = site.clone();
        let route: Route = Arc::new(move |request: &Recorded| route_site.route(request));
        WebSite {
            server: Server::start(route).await,
            site,
        }
    }

    /// "http://127.0.0.1:PORT" (no trailing slash).
    pub fn base_url(&self) -> String {
        self.server.url()
    }

    /// "http://127.0.0.1:PORT/<path>", with or without the leading '/' in `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.server.url(), path.trim_start_matches('/'))
    }

    /// The URL of fixture page `name`: "http://127.0.0.1:PORT/docs/<name>".
    pub fn doc_url(&self, name: &str) -> String {
        self.url(&format!("/docs/{name}"))
    }

    /// How many requests asked for `path` (query strings aside), whatever the answer.
    pub fn requests(&self, path: &str) -> usize {
        let path = absolute(path);
        self.all_requests()
            .iter()
            .filter(|r| r.path == path)
            .count()
    }

    /// Every request so far, in arrival order: method, path, headers (`user-agent`...).
    pub fn all_requests(&self) -> Vec<Recorded> {
        self.server.requests()
    }

    /// How many requests for `path` were answered 304 Not Modified.
    pub fn not_modified(&self, path: &str) -> usize {
        let path = absolute(path);
        lock(&self.site.not_modified)
            .iter()
            .filter(|p| **p == path)
            .count()
    }

    /// One search result per fixture page, in [`DOCS`] order: its title, its URL on this site
    /// and its useless snippet. For [`MockSearch::with_results`](super::MockSearch::with_results).
    pub fn search_hits(&self) -> Vec<SearchHit> {
        DOCS.iter()
            .map(|doc| SearchHit {
                title: doc.title.to_owned(),
                url: self.doc_url(doc.name),
                snippet: doc.snippet.to_owned(),
            })
            .collect()
    }
}

/// `path` with a leading '/'.
fn absolute(path: &str) -> String {
    format!("/{}", path.trim_start_matches('/'))
}

impl Site {
    fn route(&self, request: &Recorded) -> Planned {
        if request.method != "GET" && request.method != "HEAD" {
            let headers = [("allow", "GET, HEAD"), ("content-type", "text/plain")];
            return respond(405, &headers, Body::from("method not allowed\n"));
        }
        let path = request.path.as_str();
        if let Some(name) = path.strip_prefix("/docs/") {
            return self.doc(request, name);
        }
        match path {
            "/robots.txt" => respond(200, &[PLAIN], Body::from(ROBOTS_TXT)),
            SECRET_PATH => respond(200, &[HTML], Body::from(SECRET_PAGE)),
            "/moved" => respond(301, &[("location", MOVED_TO), HTML], Body::empty()),
            "/loop" => respond(302, &[("location", "/loop"), HTML], Body::empty()),
            "/slow" => self.slow(),
            "/huge" => respond(200, &[PLAIN], web_bodies::huge()),
            "/image.png" => respond(
                200,
                &[("content-type", "image/png")],
                self.png.clone().into(),
            ),
            "/archive.zip" => respond(
                200,
                &[("content-type", "application/zip")],
                Body::from(EMPTY_ZIP),
            ),
            "/status/429" => self.rate_limited(request),
            "/status/500" => error_page(500, "Internal Server Error"),
            _ => error_page(404, "Not Found"),
        }
    }

    fn served(&self, name: &str) -> Option<&Served> {
        self.served.iter().find(|s| s.doc.name == name)
    }

    /// A fixture page, gzip-compressed if it is [`GZIP_DOC`] and the client accepts gzip, or
    /// 304 when the request's validators still match.
    fn doc(&self, request: &Recorded, name: &str) -> Planned {
        let Some(served) = self.served(name) else {
            return error_page(404, "Not Found");
        };
        let gzipped = served.gzipped.clone().filter(|_| accepts_gzip(request));
        let etag = match gzipped {
            // Each representation has its own strong validator.
            Some(_) => format!("{}-gzip\"", served.etag.trim_end_matches('"')),
            None => served.etag.clone(),
        };
        let mut headers = vec![("etag", etag.as_str()), ("last-modified", LAST_MODIFIED)];
        if served.gzipped.is_some() {
            headers.push(("vary", "Accept-Encoding"));
        }
        if still_fresh(request, &etag) {
            lock(&self.not_modified).push(request.path.clone());
            return respond(304, &headers, Body::empty());
        }
        headers.push(("content-type", served.doc.content_type));
        let body = match gzipped {
            Some(bytes) => {
                headers.push(("content-encoding", "gzip"));
                bytes
            }
            None => served.bytes.clone(),
        };
        respond(200, &headers, body.into())
    }

    /// [`SLOW_DOC`]: its first [`SLOW_HEAD_BYTES`] at once, then [`SLOW_BYTES_PER_SEC`].
    fn slow(&self) -> Planned {
        let served = self.served(SLOW_DOC).expect("SLOW_DOC is one of DOCS");
        let length = served.bytes.len().to_string();
        let headers = [
            ("content-type", served.doc.content_type),
            ("content-length", length.as_str()),
        ];
        respond(200, &headers, web_bodies::trickle(served.bytes.clone()))
    }

    /// 429 with `Retry-After: 1` the first time, [`RATE_LIMITED_DOC`] from then on.
    fn rate_limited(&self, request: &Recorded) -> Planned {
        if self.rate_limited.swap(true, Ordering::SeqCst) {
            return self.doc(request, RATE_LIMITED_DOC);
        }
        let headers = [("retry-after", "1"), PLAIN];
        respond(429, &headers, Body::from("Too Many Requests\n"))
    }
}

const PLAIN: (&str, &str) = ("content-type", "text/plain; charset=utf-8");
const HTML: (&str, &str) = ("content-type", "text/html; charset=utf-8");

/// A response with exactly this status, headers and body.
fn respond(status: u16, headers: &[(&str, &str)], body: Body) -> Planned {
    let mut response = Response::new(body);
    // The statuses and headers are this file's constants: a bad one is a bug of the test.
    *response.status_mut() = StatusCode::from_u16(status).expect("valid status");
    for (name, value) in headers {
        response.headers_mut().append(
            HeaderName::from_bytes(name.as_bytes()).expect("valid header name"),
            HeaderValue::from_str(value).expect("valid header value"),
        );
    }
    Planned::respond(response)
}

/// A small HTML error page, as a web server sends.
fn error_page(status: u16, reason: &str) -> Planned {
    let page = format!(
        "<!DOCTYPE html><html><head><title>{status} {reason}</title></head>\
         <body><h1>{status} {reason}</h1></body></html>"
    );
    respond(status, &[HTML], Body::from(page))
}

/// Whether `Accept-Encoding` allows gzip (`gzip` or `*`, without `q=0`).
fn accepts_gzip(request: &Recorded) -> bool {
    let Some(accepted) = request.header("accept-encoding") else {
        return false;
    };
    accepted.split(',').any(|coding| {
        let mut parts = coding.split(';').map(str::trim);
        let name = parts.next().unwrap_or("");
        let refused = parts.any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q == 0.0)
        });
        (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
    })
}

/// Whether the client's copy is current: `If-None-Match` names `etag` (weak comparison, or
/// `*`); without that header, `If-Modified-Since` is not before [`LAST_MODIFIED`].
fn still_fresh(request: &Recorded, etag: &str) -> bool {
    if let Some(tags) = request.header("if-none-match") {
        return tags
            .split(',')
            .map(|t| t.trim().trim_start_matches("W/"))
            .any(|t| t == "*" || t == etag);
    }
    let date = |s: &str| chrono::DateTime::parse_from_rfc2822(s.trim()).ok();
    match (
        request.header("if-modified-since").and_then(date),
        date(LAST_MODIFIED),
    ) {
        (Some(since), Some(modified)) => since >= modified,
        _ => false,
    }
}
