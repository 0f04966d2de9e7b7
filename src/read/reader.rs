//! [`Reader`]: the pages of a run (or of every run of a batch), each read once. A page asked
//! again, by another task or another question, gets the first read's answer without a request.
//! With a [`PageCache`] (beside the plans), a page kept by an earlier run is asked for only if
//! it changed (a 304 serves it from the cache), and each page read is kept there. Text is
//! extracted in a parser process ([`crate::isolate`]: a hostile page costs its own read, never
//! the run), within what is left of the page's time, and kept to [`MAX_TEXT_CHARS`].

use crate::sync::Locked;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use super::cache::{CachedPage, PageCache, Validators};
use super::extract::{PAGE_JOB, PageJob};
use super::fetch::{Answer, Fetched, Fetcher};
use super::page::{PageResult, ReadPage};
use crate::http::{Gates, RetryObserver};
use crate::isolate::Parsing;
use crate::settings::{ReadSettings, RetrySettings};

/// The most characters of a page's text kept: far more than any task's passages need.
pub const MAX_TEXT_CHARS: usize = 400_000;
/// A page whose body came at the end of its time still gets this long to be read.
const MIN_READING: Duration = Duration::from_secs(1);

/// How a read was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "lowercase")]
pub enum Served {
    /// Fetched now: new, or changed since the cached version.
    Web,
    /// Fetched now and the same text as the cached version (its server did not answer 304).
    Unchanged,
    /// The cached version, which its server said is still the page (304).
    Cache,
    /// Read before in this run or batch.
    Memory,
}

impl Served {
    /// As `page_read` events say it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One URL's read, made by the first task that asks for it.
type Slot = OnceCell<(PageResult, Served)>;

/// The reader of a run or a batch.
#[derive(Debug)]
pub struct Reader {
    fetcher: Fetcher,
    parsing: Parsing,
    pages: Mutex<HashMap<String, Arc<Slot>>>,
}

impl Reader {
    pub fn new(
        settings: ReadSettings,
        retry: RetrySettings,
        gates: Arc<Gates>,
        parsing: Parsing,
    ) -> Result<Reader, reqwest::Error> {
        Ok(Reader {
            fetcher: Fetcher::new(settings, retry, gates)?,
            parsing,
            pages: Mutex::default(),
        })
    }

    pub fn settings(&self) -> &ReadSettings {
        self.fetcher.settings()
    }

    /// The page at `url`, read once per reader, through `cache` when given.
    pub async fn read(
        &self,
        url: &str,
        cache: Option<&PageCache>,
        observer: &dyn RetryObserver,
    ) -> (PageResult, Served) {
        let cell = {
            let mut pages = self.pages.locked();
            Arc::clone(pages.entry(url.to_string()).or_default())
        };
        if let Some((known, _)) = cell.get() {
            return (known.clone(), Served::Memory);
        }
        let mut first = false;
        let (result, served) = cell
            .get_or_init(|| {
                first = true;
                self.fetch(url, cache, observer)
            })
            .await;
        match first {
            true => (result.clone(), *served),
            false => (result.clone(), Served::Memory),
        }
    }

    /// A page of `url` read by an interrupted run, salvaged from its transcript: any later
    /// read of it by this reader gets it from memory, without a request.
    pub fn remember(&self, url: &str, page: PageResult) {
        let cell = Arc::clone(self.pages.locked().entry(url.to_string()).or_default());
        // Set already (read meanwhile): that read stands.
        let _ = cell.set((page, Served::Memory));
    }

    /// The page at `url` from the web, asked only if changed when `cache` holds it.
    async fn fetch(
        &self,
        url: &str,
        cache: Option<&PageCache>,
        observer: &dyn RetryObserver,
    ) -> (PageResult, Served) {
        let kept = cache.and_then(|c| c.get(url));
        let known = kept
            .as_ref()
            .map_or_else(Validators::default, |k| k.validators.clone());
        let fetched = match self.fetcher.fetch(url, &known, observer).await {
            Err(why) => return (Err(why), Served::Web),
            Ok(Answer::NotModified) => match (kept, cache) {
                (Some(mut kept), Some(cache)) => {
                    // Still the page: kept as read now, so a batch can tell it was read.
                    kept.at = crate::clock::now_millis();
                    cache.put(&kept);
                    return (Ok(Arc::new(kept.page)), Served::Cache);
                }
                _ => {
                    return (
                        Err("it answered 304 to a plain request".into()),
                        Served::Web,
                    );
                }
            },
            Ok(Answer::Body(fetched)) => fetched,
        };
        let validators = fetched.validators.clone();
        let parsing = self.parsing.clone();
        let page = match tokio::task::spawn_blocking(move || to_page(fetched, &parsing)).await {
            Ok(Ok(page)) => page,
            Ok(Err(why)) => return (Err(why), Served::Web),
            Err(e) => {
                return (
                    Err(format!("its text could not be extracted ({e})")),
                    Served::Web,
                );
            }
        };
        let served = match &kept {
            Some(kept) if kept.page.text == page.text => Served::Unchanged,
            _ => Served::Web,
        };
        if let Some(cache) = cache {
            cache.put(&CachedPage {
                url: url.to_string(),
                validators,
                at: crate::clock::now_millis(),
                page: page.clone(),
            });
        }
        (Ok(Arc::new(page)), served)
    }
}

/// The text of a fetched body, read by `parsing` within what is left of the page's time.
fn to_page(fetched: Fetched, parsing: &Parsing) -> Result<ReadPage, String> {
    let job = PageJob {
        url: fetched.url.clone(),
        content_type: fetched.content_type.clone(),
        cut: fetched.cut.is_some(),
    };
    let left = fetched.deadline.saturating_duration_since(Instant::now());
    let page = parsing
        .run(
            PAGE_JOB,
            &job,
            &fetched.bytes,
            left.max(MIN_READING),
            || job.extract(&fetched.bytes),
        )
        .map_err(|e| e.to_string())
        .and_then(|page| page)
        .map_err(|why| match &fetched.cut {
            Some(cut) => format!("{why} (what arrived before {cut})"),
            None => why,
        })?;
    let mut cut = fetched.cut.clone();
    let mut text = page.text;
    if text.chars().count() > MAX_TEXT_CHARS {
        text = crate::text::truncate(&text, MAX_TEXT_CHARS);
        cut.get_or_insert_with(|| format!("the text cap ({MAX_TEXT_CHARS} characters)"));
    }
    Ok(ReadPage {
        url: fetched.url,
        kind: page.kind,
        title: page.title,
        text,
        cut,
        bytes: fetched.bytes.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::extract::PageKind;

    /// Events store these names: they must never change.
    #[test]
    fn every_served_keeps_its_stored_name() {
        assert_eq!(
            crate::text::variant_names::<Served>(),
            "web unchanged cache memory"
        );
    }

    #[test]
    fn a_body_becomes_a_page_with_its_cut() {
        let fetched = Fetched {
            url: "http://h.test/a.txt".into(),
            content_type: Some("text/plain; charset=utf-8".into()),
            bytes: b"Cells hold 270 Wh/kg today.\n".to_vec(),
            cut: Some("the byte cap (28 bytes)".into()),
            validators: Validators::default(),
            deadline: Instant::now(),
        };
        let page = to_page(fetched, &Parsing::InProcess).expect("a page");
        assert_eq!(page.kind, PageKind::Text);
        assert!(page.text.contains("270 Wh/kg"), "{}", page.text);
        assert_eq!(page.cut.as_deref(), Some("the byte cap (28 bytes)"));
        assert_eq!(page.bytes, 28);
        let image = Fetched {
            url: "http://h.test/a.png".into(),
            content_type: Some("image/png".into()),
            bytes: vec![0x89, b'P', b'N', b'G', 0, 0, 0],
            cut: None,
            validators: Validators::default(),
            deadline: Instant::now(),
        };
        assert!(to_page(image, &Parsing::InProcess).is_err());
    }
}
