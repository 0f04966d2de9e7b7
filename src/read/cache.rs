//! The page cache beside the plans (`<folder of the plan>/pages/`, one folder for every plan
//! of a batch): each page read, as read, with the validators its server sent (`ETag`,
//! `Last-Modified`), one JSON file per URL named by the URL's SHA-256. The next run asks the
//! server whether the page changed (`If-None-Match`, `If-Modified-Since`); a 304 serves the
//! page from here. A cache file that cannot be read or parsed is as good as none: the page is
//! read again and the file replaced. Nothing in it is a secret: pages are public and URLs are
//! kept as the search gave them.
//!
//! The folder is often one a cloned repository or an agent can write: a `pages` that is a
//! symbolic link (out of the MCP server's roots, into `~/.ssh`) is neither read nor written
//! (warned once; pages are then read from the web and not kept), and a cache file is read only
//! when it is a regular file of one name (never through a link, nor a hard link to a file
//! elsewhere). Seeding from an earlier batch copies only such files, and only those that are
//! what they say: a page kept under the name its URL gives.
//!
//! A cache file is input like a page: anyone who can write the folder can change it, and what
//! a 304 serves from it goes into the plan, the transcript and the claim check. A kept page
//! is used only when it is clean as the reader keeps its pages (its text without control,
//! invisible or icon-font characters, its title on one short clean line); any
//! other is refused, said in the log, and the page read again whole ([`PageCache::get`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::page::ReadPage;
use crate::search::hit::TITLE_MAX_CHARS;

/// The largest cache file read: a page's text is kept to 400,000 characters.
const MAX_ENTRY_BYTES: u64 = 8 * 1024 * 1024;

/// What a server said to identify a version of a page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validators {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl CachedPage {
    /// A kept page's text read as an entry, when it is of a format this build reads.
    fn parse(text: &str) -> Result<CachedPage, String> {
        crate::format::check(text, VERSION).map_err(|e| e.to_string())?;
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

impl Validators {
    /// Whether there is anything to ask the server with.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

/// The format version of a cached page this build writes ([`crate::format`]); a page of
/// another is read again.
pub const VERSION: u32 = 1;

/// One cached page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedPage {
    /// As the search result gave it.
    pub url: String,
    #[serde(flatten)]
    pub validators: Validators,
    /// When it was read from the web.
    pub at: String,
    pub page: ReadPage,
}

impl CachedPage {
    /// Why this entry is not what the reader keeps of a page (`crate::read::extract`): its
    /// text holds control, invisible or icon-font characters, or is empty or not trimmed, its
    /// title is more than one short clean line, or its final URL or cut holds control
    /// characters. `None` for a clean one.
    pub fn unclean(&self) -> Option<&'static str> {
        let page = &self.page;
        let clean = |text: &str| crate::text::strip_controls(text) == text;
        let glyphs = |text: &str| text.chars().any(|c| ('\u{E000}'..='\u{F8FF}').contains(&c));
        if !clean(&page.text) || glyphs(&page.text) {
            return Some("holds control or invisible characters in its text");
        }
        if page.text.is_empty() || page.text.trim() != page.text {
            return Some("holds a text that is empty or not trimmed");
        }
        let title = page.title.as_deref().unwrap_or_default();
        if crate::text::one_line(title, TITLE_MAX_CHARS) != title {
            return Some("holds a title that is not one clean line");
        }
        let cut = page.cut.as_deref().unwrap_or_default();
        if !clean(&page.url) || !clean(cut) || page.url.contains(['\n', '\t']) {
            return Some("holds control characters in its URL or cut");
        }
        None
    }
}

/// A folder of cached pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageCache {
    dir: PathBuf,
}

/// The linked page folders already warned of, so that a batch of a hundred questions says it
/// once.
static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

impl PageCache {
    pub fn new(dir: PathBuf) -> PageCache {
        let cache = PageCache { dir };
        if !cache.usable() {
            let mut warned = crate::sync::Locked::locked(&WARNED);
            if !warned.contains(&cache.dir) {
                tracing::warn!(
                    "the page folder `{}` is a symbolic link or not a folder: researchflow neither reads nor writes through it, so pages are read from the web and not kept; remove it to keep them",
                    cache.dir.display()
                );
                warned.push(cache.dir.clone());
            }
        }
        cache
    }

    /// Whether the folder may be used: absent (it is made when a page is kept) or a real
    /// folder, never a link to one.
    fn usable(&self) -> bool {
        match std::fs::symlink_metadata(&self.dir) {
            Ok(meta) => meta.is_dir(),
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        }
    }

    /// The cache beside the plan at `plan`: `pages/` in its folder.
    pub fn beside(plan: &Path) -> PageCache {
        let folder = plan.parent().filter(|p| !p.as_os_str().is_empty());
        PageCache::new(folder.unwrap_or(Path::new(".")).join("pages"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, url: &str) -> PathBuf {
        self.dir
            .join(format!("{:x}.json", Sha256::digest(url.as_bytes())))
    }

    /// The cached page of `url`, if there is a readable one that the reader could have kept:
    /// one that is not ([`CachedPage::unclean`]) is refused with a warning naming its file, and the
    /// page is read again, without validators, as if it had never been kept.
    pub fn get(&self, url: &str) -> Option<CachedPage> {
        if !self.usable() {
            return None;
        }
        let path = self.path(url);
        let text = crate::files::read_unlinked(&path, MAX_ENTRY_BYTES).ok()?;
        match CachedPage::parse(&text) {
            Ok(entry) if entry.url == url => match entry.unclean() {
                None => Some(entry),
                Some(why) => {
                    tracing::warn!(
                        "kept page `{}` of `{}` {why}, which the reader never keeps: not used, the page is read again",
                        path.display(),
                        crate::text::one_line(url, 200)
                    );
                    None
                }
            },
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(
                    "page cache `{}` unreadable ({e}): read again",
                    path.display()
                );
                None
            }
        }
    }

    /// Keeps `entry`; a failure to write is logged, never fatal (the page was read).
    pub fn put(&self, entry: &CachedPage) {
        if !self.usable() {
            return;
        }
        let path = self.path(&entry.url);
        let written = std::fs::create_dir_all(&self.dir).and_then(|()| {
            let stamped = crate::format::stamped(entry, VERSION);
            let bytes = stamped
                .and_then(|v| serde_json::to_vec(&v))
                .map_err(std::io::Error::other)?;
            crate::atomic::write(&path, &bytes)
        });
        if let Err(e) = written {
            tracing::warn!(
                "cannot keep the page `{}` in `{}`: {e}",
                entry.url,
                path.display()
            );
        }
    }
}

/// What became of the pages a batch read, against an earlier batch's: the URLs whose text
/// changed, those the earlier batch did not have, and how many are the same.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageChanges {
    pub changed: Vec<String>,
    pub new: Vec<String>,
    pub unchanged: usize,
}

impl PageCache {
    /// Every page kept by `earlier` that this cache lacks, copied here, so this batch asks
    /// their servers only whether they changed; how many were copied. Only regular files of
    /// one name that hold the page their name says are copied: a link (`a.json ->
    /// ~/creds.json`) or a hard link is skipped with a warning, anything else quietly.
    pub fn seed_from(&self, earlier: &PageCache) -> usize {
        if !self.usable() || !earlier.usable() {
            return 0;
        }
        let Ok(files) = std::fs::read_dir(&earlier.dir) else {
            return 0;
        };
        let mut copied = 0;
        for file in files.flatten() {
            let name = file.file_name();
            let (from, to) = (earlier.dir.join(&name), self.dir.join(&name));
            if std::fs::symlink_metadata(&to).is_ok()
                || from.extension().is_none_or(|e| e != "json")
            {
                continue;
            }
            let Some(bytes) = self.kept_page(&from) else {
                continue;
            };
            let written = std::fs::create_dir_all(&self.dir)
                .and_then(|()| crate::atomic::write(&to, bytes.as_bytes()));
            match written {
                Ok(()) => copied += 1,
                Err(e) => tracing::warn!("cannot copy the kept page `{}`: {e}", from.display()),
            }
        }
        copied
    }

    /// The text of `from`, an earlier cache's file, when it is a page kept under the name
    /// its URL gives here; a link or a hard link is warned of.
    fn kept_page(&self, from: &Path) -> Option<String> {
        let text = match crate::files::read_unlinked(from, MAX_ENTRY_BYTES) {
            Ok(text) => text,
            Err(e @ crate::files::FileError::Linked { .. }) => {
                tracing::warn!("not copied: {e}");
                return None;
            }
            Err(e) => {
                tracing::debug!("not copied: {e}");
                return None;
            }
        };
        let entry = CachedPage::parse(&text).ok()?;
        (self.path(&entry.url).file_name() == from.file_name()).then_some(text)
    }

    /// The pages read here at or after `since` (an RFC 3339 time as [`crate::clock`] writes
    /// it), each held against `earlier`'s copy. URLs in sorted order.
    pub fn changes_since(&self, earlier: &PageCache, since: &str) -> PageChanges {
        let mut changes = PageChanges::default();
        if !self.usable() {
            return changes;
        }
        let Ok(files) = std::fs::read_dir(&self.dir) else {
            return changes;
        };
        for file in files.flatten() {
            let text = crate::files::read_unlinked(&file.path(), MAX_ENTRY_BYTES);
            let Some(entry) = text.ok().and_then(|t| CachedPage::parse(&t).ok()) else {
                continue;
            };
            if entry.at.as_str() < since {
                continue;
            }
            match earlier.get(&entry.url) {
                None => changes.new.push(entry.url),
                Some(old) if old.page.text != entry.page.text => changes.changed.push(entry.url),
                Some(_) => changes.unchanged += 1,
            }
        }
        changes.changed.sort();
        changes.new.sort();
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::extract::PageKind;

    fn entry(url: &str, text: &str) -> CachedPage {
        CachedPage {
            url: url.into(),
            validators: Validators {
                etag: Some("\"v1\"".into()),
                last_modified: None,
            },
            at: "2026-11-27T00:00:00Z".into(),
            page: ReadPage {
                url: url.into(),
                kind: PageKind::Text,
                title: None,
                text: text.into(),
                cut: None,
                bytes: text.len() as u64,
            },
        }
    }

    #[test]
    fn a_page_kept_is_found_by_its_url_and_a_broken_file_is_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = PageCache::beside(&dir.path().join("plan.json"));
        assert_eq!(cache.dir(), dir.path().join("pages"));
        assert_eq!(cache.get("http://h.test/a"), None);
        cache.put(&entry("http://h.test/a", "Alpha."));
        let got = cache.get("http://h.test/a").expect("kept");
        assert_eq!(got.page.text, "Alpha.");
        assert_eq!(got.validators.etag.as_deref(), Some("\"v1\""));
        assert_eq!(cache.get("http://h.test/b"), None);
        std::fs::write(cache.path("http://h.test/a"), "{broken").expect("write");
        assert_eq!(cache.get("http://h.test/a"), None);
    }

    /// A page kept before versions were is read; one of a newer format is read again.
    #[test]
    fn a_kept_page_is_read_by_its_format_version() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = PageCache::beside(&dir.path().join("plan.json"));
        let url = "http://h.test/a";
        cache.put(&entry(url, "Alpha."));
        let kept = std::fs::read_to_string(cache.path(url)).expect("kept");
        assert!(kept.starts_with(r#"{"version":1,"#), "{kept}");
        let legacy = serde_json::to_string(&entry(url, "Legacy.")).expect("json");
        std::fs::write(cache.path(url), legacy).expect("write");
        assert_eq!(cache.get(url).expect("legacy").page.text, "Legacy.");
        let newer = kept.replacen(r#""version":1"#, r#""version":2"#, 1);
        std::fs::write(cache.path(url), newer).expect("write");
        assert_eq!(cache.get(url), None);
    }

    #[test]
    fn a_kept_page_the_reader_could_not_have_written_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = PageCache::beside(&dir.path().join("plan.json"));
        let url = "http://h.test/a";
        let clean = entry(url, "Alpha.\nBeta\tgamma.");
        assert_eq!(clean.unclean(), None);
        let mut with_title = clean.clone();
        with_title.page.title = Some("A title".into());
        assert_eq!(with_title.unclean(), None);
        let poisoned = [
            entry(url, "Alpha \u{1b}]0;pwned\u{7} beta."),
            entry(url, "NUL\0 and DEL\u{7f} and CSI\u{9b}2J."),
            entry(url, "Cell\u{202e}fdp.exe and zero\u{200b}width."),
            entry(url, "Icon \u{f0c1} glyph."),
            entry(url, " untrimmed"),
            entry(url, ""),
            CachedPage {
                page: ReadPage {
                    title: Some("Two\nlines".into()),
                    ..clean.page.clone()
                },
                ..clean.clone()
            },
            CachedPage {
                page: ReadPage {
                    url: "http://h.test/a\u{1b}[2J".into(),
                    ..clean.page.clone()
                },
                ..clean.clone()
            },
        ];
        for bad in poisoned {
            assert!(bad.unclean().is_some(), "{:?}", bad.page);
            cache.put(&bad);
            assert_eq!(cache.get(url), None, "refused: {:?}", bad.page.text);
        }
        cache.put(&clean);
        assert_eq!(cache.get(url), Some(clean));
    }

    #[test]
    fn a_later_batch_starts_from_the_earlier_pages_and_says_which_changed() {
        let (old, new) = (
            tempfile::tempdir().expect("old"),
            tempfile::tempdir().expect("new"),
        );
        let earlier = PageCache::new(old.path().join("pages"));
        for (url, text) in [
            ("http://h.test/a", "A."),
            ("http://h.test/b", "B."),
            ("http://h.test/c", "C."),
        ] {
            earlier.put(&entry(url, text));
        }
        let later = PageCache::new(new.path().join("pages"));
        assert_eq!(later.seed_from(&earlier), 3);
        assert_eq!(
            later.get("http://h.test/a").map(|e| e.page.text),
            Some("A.".into())
        );
        let since = "2026-11-28T00:00:00.000Z";
        let read_now = |url: &str, text: &str| CachedPage {
            at: "2026-11-28T01:00:00.000Z".into(),
            ..entry(url, text)
        };
        later.put(&read_now("http://h.test/a", "A."));
        later.put(&read_now("http://h.test/b", "B, revised."));
        later.put(&read_now("http://h.test/d", "D."));
        assert_eq!(
            later.changes_since(&earlier, since),
            PageChanges {
                changed: vec!["http://h.test/b".into()],
                new: vec!["http://h.test/d".into()],
                unchanged: 1,
            },
            "c was not read this time"
        );
        assert_eq!(later.seed_from(&earlier), 0, "nothing copied twice");
    }

    #[cfg(unix)]
    #[test]
    fn only_pages_kept_as_regular_files_of_one_name_are_seeded_or_read() {
        let (old, new, elsewhere) = (
            tempfile::tempdir().expect("old"),
            tempfile::tempdir().expect("new"),
            tempfile::tempdir().expect("elsewhere"),
        );
        let earlier = PageCache::new(old.path().join("pages"));
        earlier.put(&entry("http://h.test/a", "A."));
        let kept = |url: &str| earlier.path(url);
        let creds = elsewhere.path().join("creds.json");
        let forged = serde_json::to_string(&entry("http://h.test/b", "CREDS")).expect("json");
        std::fs::write(&creds, &forged).expect("creds");
        std::os::unix::fs::symlink(&creds, kept("http://h.test/b")).expect("symlink");
        let other = elsewhere.path().join("other.json");
        std::fs::write(&other, forged.replace("h.test/b", "h.test/c")).expect("other");
        std::fs::hard_link(&other, kept("http://h.test/c")).expect("hard link");
        std::fs::write(
            old.path().join("pages/misnamed.json"),
            forged.replace("/b", "/d"),
        )
        .expect("misnamed");
        let later = PageCache::new(new.path().join("pages"));
        assert_eq!(later.seed_from(&earlier), 1, "only the page kept as itself");
        let names: Vec<_> = std::fs::read_dir(later.dir())
            .expect("pages")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, [kept("http://h.test/a").file_name().expect("name")]);
        assert_eq!(earlier.get("http://h.test/b"), None, "a link is not read");
        assert_eq!(earlier.get("http://h.test/c"), None, "nor a hard link");

        let linked = new.path().join("linked");
        std::os::unix::fs::symlink(elsewhere.path(), &linked).expect("symlink");
        let through = PageCache::new(linked);
        through.put(&entry("http://h.test/e", "E."));
        assert_eq!(through.get("http://h.test/e"), None);
        assert_eq!(through.seed_from(&earlier), 0);
        assert_eq!(
            std::fs::read_dir(elsewhere.path())
                .expect("elsewhere")
                .count(),
            2,
            "nothing written through a linked folder"
        );
    }
}
