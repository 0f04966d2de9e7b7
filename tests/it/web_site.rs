//! The web site that a page reader is tested against (`support/web_site.rs`), checked with a
//! plain HTTP client: each fixture page comes with its type, validators and fact; the Latin-1
//! page is Latin-1; robots.txt, redirects, 304s, gzip, the huge and the slow page behave as
//! their documentation says; requests are counted; and the mock search lists the site's pages.
//! Nothing here runs researchflow itself.

use std::io::Read;
use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::Value;

use crate::support::fixtures::fixture;
use crate::support::web_docs::{
    DOCS, FAQ_FR_LATIN1, MIME_SPEC_PDF, QEMU_NBD, collapse_whitespace, doc,
};
use crate::support::web_site::{
    GZIP_DOC, HUGE_BYTES, HUGE_FIRST_SENTENCE, LAST_MODIFIED, MOVED_TO, RATE_LIMITED_DOC,
    ROBOTS_TXT, SECRET_PATH, SLOW_DOC, SLOW_HEAD_BYTES,
};
use crate::support::{MockSearch, SearchKind, WebSite, http_client};

/// A client that neither asks for nor undoes compression, and follows no redirect.
fn raw_client() -> reqwest::Client {
    http_client()
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

fn client() -> reqwest::Client {
    http_client().build().expect("client")
}

/// Header `name` of `response`, "" when it is absent.
fn header(response: &reqwest::Response, name: &str) -> String {
    response.headers().get(name).map_or(String::new(), |v| {
        v.to_str().expect("ascii header").to_owned()
    })
}

/// `GET url` with [`raw_client`].
async fn raw(url: &str) -> reqwest::Response {
    raw_client().get(url).send().await.expect("get")
}

/// `GET url` with the default client (which follows redirects and undoes compression).
async fn fetch(url: &str) -> reqwest::Response {
    client().get(url).send().await.expect("get")
}

/// The JSON answer to `GET url?query`.
async fn get_json(url: &str, query: &[(&str, &str)]) -> Value {
    let response = client().get(url).query(query).send().await.expect("get");
    response.json().await.expect("json")
}

/// The text a reader would see in `html`: no scripts, styles, comments or tags, the entities
/// of the fixtures' titles decoded, whitespace collapsed. Crude, but enough for the fixtures.
fn visible_text(html: &str) -> String {
    let hidden =
        Regex::new(r"(?is)<script\b.*?</script>|<style\b.*?</style>|<!--.*?-->").expect("regex");
    let tags = Regex::new(r"(?s)<[^>]*>").expect("regex");
    let text = hidden.replace_all(html, " ");
    let text = tags.replace_all(&text, " ").replace("&mdash;", "—");
    collapse_whitespace(&text.replace("&amp;", "&"))
}

#[tokio::test]
async fn each_page_is_served_with_its_type_validators_and_exact_bytes() {
    let site = WebSite::start().await;
    for doc in DOCS {
        let response = fetch(&site.doc_url(doc.name)).await;
        assert_eq!(response.status(), 200, "{}", doc.name);
        assert_eq!(header(&response, "content-type"), doc.content_type);
        assert!(header(&response, "etag").starts_with('"'), "{}", doc.name);
        assert_eq!(header(&response, "last-modified"), LAST_MODIFIED);
        let body = response.bytes().await.expect("body");
        assert_eq!(body.as_ref(), doc.bytes().as_slice(), "{}", doc.name);
    }
}

#[tokio::test]
async fn each_fact_stands_deep_in_its_page_and_nowhere_in_its_title_or_snippet() {
    let site = WebSite::start().await;
    for doc in DOCS {
        let response = fetch(&site.doc_url(doc.name)).await;
        let text = if doc.name == MIME_SPEC_PDF {
            let bytes = response.bytes().await.expect("body");
            collapse_whitespace(&pdf_extract::extract_text_from_mem(&bytes).expect("text layer"))
        } else {
            // `text()` decodes with the charset of the Content-Type header.
            visible_text(&response.text().await.expect("text"))
        };
        let at = text.find(doc.fact);
        assert!(
            at.is_some_and(|at| at >= 300),
            "{}: fact at {at:?}",
            doc.name
        );
        assert!(!doc.title.contains(doc.fact) && !doc.fact.contains(doc.title));
        assert!(
            text.contains(doc.title),
            "{}: title {:?}",
            doc.name,
            doc.title
        );
        assert!(!doc.fact.contains(doc.snippet));
    }
}

#[tokio::test]
async fn the_latin1_page_is_sent_as_latin1_bytes() {
    let site = WebSite::start().await;
    let url = site.doc_url(FAQ_FR_LATIN1);
    let response = raw(&url).await;
    assert_eq!(
        header(&response, "content-type"),
        "text/html; charset=iso-8859-1"
    );
    let bytes = response.bytes().await.expect("body");
    assert!(std::str::from_utf8(&bytes).is_err(), "Latin-1, not UTF-8");
    assert!(
        bytes.windows(2).any(|w| w == b"r\xe9"),
        "é is the one byte 0xE9"
    );
    let decoded: String = bytes.iter().map(|&b| char::from(b)).collect();
    assert!(decoded.contains("référentiel"));
    assert!(
        decoded.contains(r#"charset=ISO-8859-1"#),
        "the page says so itself"
    );
    assert!(collapse_whitespace(&decoded).contains(doc(FAQ_FR_LATIN1).fact));
}

#[tokio::test]
async fn robots_txt_forbids_the_private_folder_whose_page_exists() {
    let site = WebSite::start().await;
    let robots = raw(&site.url("/robots.txt")).await;
    assert_eq!(robots.status(), 200);
    assert_eq!(robots.text().await.expect("text"), ROBOTS_TXT);
    assert!(ROBOTS_TXT.contains("User-agent: *\nDisallow: /private/"));
    assert_eq!(site.requests(SECRET_PATH), 0);
    let secret = raw(&site.url(SECRET_PATH)).await;
    assert_eq!(
        secret.status(),
        200,
        "a reader that ignores robots.txt would read it"
    );
    assert_eq!(site.requests(SECRET_PATH), 1);
    assert_eq!(site.requests("robots.txt"), 1);
}

#[tokio::test]
async fn moved_redirects_once_and_loop_never_ends() {
    let site = WebSite::start().await;
    let moved = raw(&site.url("/moved")).await;
    assert_eq!(moved.status(), 301);
    assert_eq!(header(&moved, "location"), MOVED_TO);
    let followed = fetch(&site.url("/moved")).await;
    assert_eq!(followed.status(), 200);
    assert_eq!(followed.url().as_str(), site.url(MOVED_TO));

    let hop = raw(&site.url("/loop")).await;
    assert_eq!(hop.status(), 302);
    assert_eq!(header(&hop, "location"), "/loop");
    let error = client()
        .get(site.url("/loop"))
        .send()
        .await
        .expect_err("a loop");
    assert!(error.is_redirect(), "{error}");
    assert!(site.requests("/loop") > 5, "{}", site.requests("/loop"));
}

#[tokio::test]
async fn revalidation_with_etag_or_date_gets_304_counted_apart() {
    let site = WebSite::start().await;
    let name = doc(QEMU_NBD).name;
    let url = site.doc_url(name);
    let first = raw(&url).await;
    let etag = header(&first, "etag");
    assert!(etag.len() > 2);
    let conditional = |name: &'static str, value: String| {
        let request = raw_client().get(&url).header(name, value);
        async move { request.send().await.expect("get") }
    };
    let same = conditional("if-none-match", etag.clone()).await;
    assert_eq!(same.status(), 304);
    assert_eq!(header(&same, "etag"), etag);
    assert!(same.bytes().await.expect("body").is_empty());
    let weak = conditional("if-none-match", format!("\"other\", W/{etag}")).await;
    assert_eq!(weak.status(), 304);
    let changed = conditional("if-none-match", "\"other\"".to_owned()).await;
    assert_eq!(changed.status(), 200);
    let since = conditional("if-modified-since", LAST_MODIFIED.to_owned()).await;
    assert_eq!(since.status(), 304);
    let older = conditional(
        "if-modified-since",
        "Mon, 30 May 2022 12:00:00 GMT".to_owned(),
    );
    assert_eq!(older.await.status(), 200);

    assert_eq!(site.not_modified(&format!("/docs/{name}")), 3);
    assert_eq!(site.requests(&format!("/docs/{name}")), 6);
}

#[tokio::test]
async fn one_page_is_gzipped_when_the_client_accepts_gzip() {
    let site = WebSite::start().await;
    let get = |name: &str, accept: Option<&str>| {
        let mut request = raw_client().get(site.doc_url(name));
        if let Some(accept) = accept {
            request = request.header("accept-encoding", accept);
        }
        async move { request.send().await.expect("get") }
    };
    let gzipped = get(GZIP_DOC, Some("gzip, deflate, br")).await;
    assert_eq!(header(&gzipped, "content-encoding"), "gzip");
    assert_eq!(header(&gzipped, "vary"), "Accept-Encoding");
    let compressed = gzipped.bytes().await.expect("body");
    let mut unpacked = Vec::new();
    flate2::read::GzDecoder::new(compressed.as_ref())
        .read_to_end(&mut unpacked)
        .expect("gunzip");
    assert_eq!(unpacked, doc(GZIP_DOC).bytes());
    assert!(compressed.len() < unpacked.len() / 2);

    for plain in [
        get(GZIP_DOC, None).await,
        get(GZIP_DOC, Some("gzip;q=0")).await,
    ] {
        assert_eq!(header(&plain, "content-encoding"), "");
        assert_eq!(plain.bytes().await.expect("body"), doc(GZIP_DOC).bytes());
    }
    let other = get(FAQ_FR_LATIN1, Some("gzip")).await;
    assert_eq!(header(&other, "content-encoding"), "");
}

#[tokio::test]
async fn huge_streams_20_mib_that_open_with_its_sentence() {
    let site = WebSite::start().await;
    let mut response = fetch(&site.url("/huge")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        header(&response, "content-type"),
        "text/plain; charset=utf-8"
    );
    assert_eq!(
        response.content_length(),
        None,
        "chunked: the size is learnt by reading"
    );
    let mut head = Vec::new();
    let mut total = 0u64;
    while let Some(chunk) = response.chunk().await.expect("chunk") {
        if head.len() < 1024 {
            head.extend_from_slice(&chunk[..chunk.len().min(1024 - head.len())]);
        }
        total += chunk.len() as u64;
    }
    assert_eq!(total, HUGE_BYTES);
    assert!(String::from_utf8_lossy(&head).starts_with(HUGE_FIRST_SENTENCE));
}

#[tokio::test]
async fn slow_sends_its_head_at_once_and_does_not_finish_within_two_seconds() {
    let site = WebSite::start().await;
    let started = Instant::now();
    let mut response = fetch(&site.url("/slow")).await;
    let length = response.content_length().expect("content-length") as usize;
    assert_eq!(length, doc(SLOW_DOC).bytes().len());
    let mut received = 0;
    while received < SLOW_HEAD_BYTES {
        received += response
            .chunk()
            .await
            .expect("chunk")
            .expect("the head")
            .len();
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        received, SLOW_HEAD_BYTES,
        "the head, and nothing of the trickle yet"
    );
    let rest = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(chunk) = response.chunk().await.expect("chunk") {
            received += chunk.len();
        }
    })
    .await;
    assert!(rest.is_err(), "the slow page finished within 2 s");
    assert!(received < length / 2, "{received} of {length} bytes");
}

#[tokio::test]
async fn status_pages_image_archive_and_unknown_paths() {
    let site = WebSite::start().await;
    let get = |path: &str| raw_client().get(site.url(path)).send();
    let limited = get("/status/429").await.expect("get");
    assert_eq!(limited.status(), 429);
    assert_eq!(header(&limited, "retry-after"), "1");
    let then = get("/status/429").await.expect("get");
    assert_eq!(then.status(), 200);
    assert_eq!(
        then.bytes().await.expect("body"),
        doc(RATE_LIMITED_DOC).bytes()
    );
    for _ in 0..2 {
        assert_eq!(get("/status/500").await.expect("get").status(), 500);
    }
    assert_eq!(get("/nowhere").await.expect("get").status(), 404);
    assert_eq!(get("/docs/nothing.html").await.expect("get").status(), 404);

    let image = get("/image.png").await.expect("get");
    assert_eq!(header(&image, "content-type"), "image/png");
    let png = image.bytes().await.expect("body");
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let info = decoder.read_info().expect("a real png");
    assert_eq!((info.info().width, info.info().height), (16, 16));
    let zip = get("/archive.zip").await.expect("get");
    assert_eq!(header(&zip, "content-type"), "application/zip");
    assert!(zip.bytes().await.expect("body").starts_with(b"PK"));
}

#[tokio::test]
async fn requests_are_counted_per_path_with_their_headers_in_order() {
    let site = WebSite::start().await;
    let agent = http_client()
        .user_agent("PageReader/1.0")
        .build()
        .expect("client");
    for path in [
        "/robots.txt",
        "/docs/gpl-3.txt",
        "docs/gpl-3.txt",
        "/nowhere?x=1",
    ] {
        agent.get(site.url(path)).send().await.expect("get");
    }
    assert_eq!(site.requests("/robots.txt"), 1);
    assert_eq!(site.requests("/docs/gpl-3.txt"), 2);
    assert_eq!(site.requests("/nowhere"), 1);
    assert_eq!(site.requests("/huge"), 0);
    let all = site.all_requests();
    let paths: Vec<&str> = all.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/robots.txt",
            "/docs/gpl-3.txt",
            "/docs/gpl-3.txt",
            "/nowhere"
        ]
    );
    assert!(
        all.iter()
            .all(|r| r.header("user-agent") == Some("PageReader/1.0"))
    );
}

#[tokio::test]
async fn the_mock_search_lists_the_site_pages_for_every_query() {
    let site = WebSite::start().await;
    let hits = site.search_hits();
    assert_eq!(hits.len(), DOCS.len());
    let search = MockSearch::with_results(SearchKind::Searxng, hits.clone()).await;
    for q in ["closures in libffi", "anything else"] {
        let url = format!("{}/search", search.base_url());
        let answer = get_json(&url, &[("q", q), ("format", "json")]).await;
        let results = answer["results"].as_array().expect("results");
        assert_eq!(results.len(), DOCS.len());
        for (result, doc) in results.iter().zip(DOCS) {
            assert_eq!(result["url"], site.doc_url(doc.name));
            assert_eq!(result["title"], doc.title);
            assert_eq!(result["content"], doc.snippet);
        }
    }
    assert_eq!(search.returned_urls().len(), DOCS.len());

    let brave = MockSearch::with_results(SearchKind::Brave, hits).await;
    let url = format!("{}/res/v1/web/search", brave.base_url());
    let answer = get_json(&url, &[("q", "x"), ("count", "2")]).await;
    let results = answer["web"]["results"].as_array().expect("results");
    let urls: Vec<&str> = results
        .iter()
        .map(|r| r["url"].as_str().expect("url"))
        .collect();
    assert_eq!(
        urls,
        [site.doc_url(DOCS[0].name), site.doc_url(DOCS[1].name)]
    );
}

#[test]
fn the_readme_gives_each_page_its_source_licence_title_fact_and_snippet() {
    let readme = std::fs::read_to_string(fixture("web/README.md")).expect("fixtures/web/README.md");
    for doc in DOCS {
        let section = readme
            .split("\n## ")
            .find(|s| s.starts_with(doc.name))
            .unwrap_or_else(|| panic!("README has no section `## {}`", doc.name));
        let line = |label: &str| {
            let prefix = format!("- {label}");
            section
                .lines()
                .find(|l| l.starts_with(&prefix))
                .unwrap_or_else(|| panic!("{}: no line `{prefix}`", doc.name))
        };
        assert!(
            line("Title").ends_with(&format!(": {}", doc.title)),
            "{}",
            doc.name
        );
        assert!(
            line("Fact").ends_with(&format!(": {}", doc.fact)),
            "{}",
            doc.name
        );
        assert!(
            line("Snippet").ends_with(&format!(": {}", doc.snippet)),
            "{}",
            doc.name
        );
        let served = format!("`{}`", doc.content_type);
        assert!(line("Served as").contains(&served), "{}", doc.name);
        assert!(line("From").contains("package `") && line("Licence").len() > 20);
    }
}
