//! [`LocalIndex`]: opens (builds or updates) the index of a corpus and answers searches and
//! document look-ups from it.
//!
//! Opening takes an exclusive lock on `<index dir>/lock` for the whole update, so two
//! processes never write the same index; the second waits, then finds nothing to do. The index
//! folder holds `tantivy/` (the index), `manifest.json` and `lock`, and nothing else is touched
//! there: a rebuild deletes only `tantivy/`. Queries are never parsed as query syntax: any text
//! is split into terms by the index's analyzer and matched with BM25, word order adding to the
//! score ([`super::query`]), so no query can fail.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument, Term};

use super::chunks::cut;
use super::extract::{Reading, type_label};
use super::hit::{Document, LocalHit};
use super::manifest::{self, IndexManifest, Loaded};
use super::query::Asked;
use super::report::IndexReport;
use super::schema::{self, Fields, StoredDoc};
use super::vectors::Vectors;
use super::{LocalSearchError, location, passage, rank, update, url, walk};
use crate::embed::Embedder;
use crate::in_corpus::InCorpus;
use crate::text::analyzer;

mod meaning;

/// How many more candidates than asked each ranking (words, meaning) gives the fusion.
const FUSION_DEPTH: usize = 4;

/// The full-text index of one corpus folder.
pub struct LocalIndex {
    corpus: PathBuf,
    dir: PathBuf,
    reader: IndexReader,
    fields: Fields,
    analyzer: TextAnalyzer,
    /// The embedding model and the corpus's vectors, when `search.embeddings.model` is set.
    meaning: Option<(Arc<Embedder>, Vectors)>,
}

impl LocalIndex {
    /// Opens the index of `corpus`, building it on first use and bringing it up to date with
    /// the files otherwise (only added or changed files are read). The index lives in
    /// `index_dir`, else in the user's cache folder ([`location::default_index_dir`]); an
    /// index folder inside the corpus is refused. A corpus with no indexable document is an
    /// error ([`LocalSearchError::NoDocuments`]); a file that cannot be indexed is a warning.
    pub fn open(
        corpus: &Path,
        index_dir: Option<&Path>,
    ) -> Result<(LocalIndex, IndexReport), LocalSearchError> {
        LocalIndex::open_with(corpus, index_dir, None, &Reading::in_process())
    }

    /// [`LocalIndex::open`] with its files read as `reading` says (in a parser process, for
    /// every command of the binary), and with `embedder`, the corpus's chunks embedded (only
    /// the texts that have no vectors yet: [`super::vectors`]), so that searches rank by
    /// meaning too.
    pub fn open_with(
        corpus: &Path,
        index_dir: Option<&Path>,
        embedder: Option<Arc<Embedder>>,
        reading: &Reading,
    ) -> Result<(LocalIndex, IndexReport), LocalSearchError> {
        let corpus = location::canonical_corpus(corpus)?;
        let dir = location::resolve_index_dir(&corpus, index_dir)?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| LocalSearchError::io("create the index folder", &dir, e))?;
        let _lock = lock(&dir)?;
        let walk = walk::walk(&corpus)?;
        let (index, old, rebuilt) = open_or_create(&dir, &corpus.to_string_lossy())?;
        let fields = Fields::of(&index.schema()).map_err(|e| LocalSearchError::index(&dir, e))?;
        let update = update::run(&index, &fields, &dir, reading, old, walk.files)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| LocalSearchError::index(&dir, e))?;
        let mut report = update.report;
        report.warnings = [walk.warnings, rebuilt, report.warnings].concat();
        count_skipped(&mut report, walk.passed_over, &update.manifest);
        report.documents = usize::try_from(reader.searcher().num_docs()).unwrap_or(usize::MAX);
        if report.documents == 0 {
            return Err(LocalSearchError::NoDocuments { corpus });
        }
        let mut local = LocalIndex {
            corpus,
            dir,
            reader,
            fields,
            analyzer: analyzer::analyzer(),
            meaning: None,
        };
        if let Some(embedder) = embedder {
            report.embedded = Some(local.embed(embedder, &reading.steps)?);
        }
        // After the vectors: a crash before leaves the old manifest, and the next open reads
        // (and embeds) the changed files again.
        if update.changed {
            manifest::save(&local.dir, &update.manifest)
                .map_err(|e| LocalSearchError::io("write the manifest in", &local.dir, e))?;
        }
        Ok((local, report))
    }

    /// The canonical corpus folder.
    pub fn corpus(&self) -> &Path {
        &self.corpus
    }

    /// The folder that holds the index.
    pub fn index_dir(&self) -> &Path {
        &self.dir
    }

    /// The best `limit` documents for a free-text `query` (any text: words missing from the
    /// corpus, punctuation and query-language syntax are harmless), best first, each once with
    /// its best passage; documents of equal score in path order. No term in the query means no
    /// result.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<LocalHit>, LocalSearchError> {
        let mut analyzer = self.analyzer.clone();
        let asked = Asked::of(query, &mut analyzer);
        let searcher = self.reader.searcher();
        if asked.terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let depth = match self.meaning {
            Some(_) => limit.saturating_mul(FUSION_DEPTH),
            None => limit,
        };
        let top = self.top_docs(&searcher, &asked.query(&self.fields), depth)?;
        let mut seen = HashSet::new();
        let mut found = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher
                .doc(address)
                .map_err(|e| LocalSearchError::index(&self.dir, e))?;
            let stored = self.fields.stored(&doc);
            if seen.insert(stored.path.clone()) {
                found.push((score, stored.path.clone(), stored));
            }
        }
        let by_words = rank::rank(found, depth);
        let ranked = match &self.meaning {
            Some((embedder, vectors)) => self.fuse(query, by_words, embedder, vectors, limit)?,
            None => by_words
                .into_iter()
                .map(|(score, path, stored)| (score, path, stored, None))
                .collect(),
        };
        Ok(ranked
            .into_iter()
            .map(|(score, path, stored, chunk)| LocalHit {
                url: url::file_url(&path),
                passage: match chunk {
                    Some(chunk) => cut(&stored.body).swap_remove(chunk),
                    None => passage::best(&stored.body, &asked.terms, &mut analyzer),
                },
                title: stored.title,
                in_corpus: InCorpus {
                    path: self.relative(&path),
                    sha256: stored.sha256,
                },
                path: PathBuf::from(path),
                score,
            })
            .collect())
    }

    /// The stored document at canonical `path`, if indexed.
    fn stored_at(&self, path: &str) -> Result<Option<StoredDoc>, LocalSearchError> {
        let term = Term::from_field_text(self.fields.path, path);
        let query = TermQuery::new(term, IndexRecordOption::Basic);
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(1).order_by_score())
            .map_err(|e| LocalSearchError::index(&self.dir, e))?;
        let Some((_, address)) = top.into_iter().next() else {
            return Ok(None);
        };
        let doc: TantivyDocument = searcher
            .doc(address)
            .map_err(|e| LocalSearchError::index(&self.dir, e))?;
        Ok(Some(self.fields.stored(&doc)))
    }

    /// The canonical `path` of a document relative to the corpus folder, `/`-separated (every
    /// document lies inside the corpus: the walk follows no link out of it).
    fn relative(&self, path: &str) -> String {
        Path::new(path)
            .strip_prefix(&self.corpus)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| path.to_string())
    }

    /// The best `limit` documents for `query`, and every other document that ties with the
    /// last of them ([`rank::ties`]), so that ties can be ordered by path.
    fn top_docs(
        &self,
        searcher: &Searcher,
        query: &BooleanQuery,
        limit: usize,
    ) -> Result<Vec<(f32, DocAddress)>, LocalSearchError> {
        // tantivy allocates for the hits it is asked for: never more than there are.
        let total = usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX);
        let limit = limit.min(total);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut fetch = limit.saturating_add(1).min(total);
        loop {
            let mut top = searcher
                .search(query, &TopDocs::with_limit(fetch).order_by_score())
                .map_err(|e| LocalSearchError::index(&self.dir, e))?;
            let Some(cut) = top.get(limit - 1).map(|t| t.0) else {
                return Ok(top);
            };
            let more_may_tie =
                top.len() == fetch && fetch < total && rank::ties(cut, top[fetch - 1].0);
            if !more_may_tie {
                top.retain(|t| t.0 >= cut || rank::ties(cut, t.0));
                return Ok(top);
            }
            fetch = fetch.saturating_mul(2).min(total);
        }
    }

    /// The indexed document named by a `file://` URL (as in a [`LocalHit`]) or a path
    /// (resolved to its canonical form when the file exists); `None` when it is not indexed.
    pub fn document(&self, url_or_path: &str) -> Option<Document> {
        let path = if url_or_path.starts_with("file:") {
            url::path_from_url(url_or_path)?
        } else {
            PathBuf::from(url_or_path)
        };
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        let term = Term::from_field_text(self.fields.path, path.to_str()?);
        let query = TermQuery::new(term, IndexRecordOption::Basic);
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(1).order_by_score())
            .ok()?;
        let (_, address) = top.into_iter().next()?;
        let doc: TantivyDocument = searcher.doc(address).ok()?;
        Some(to_document(self.fields.stored(&doc)))
    }

    /// Every indexed document with its full text, sorted by path. Loads them all: meant for
    /// corpora of tens of documents (an extractive summary over the whole corpus).
    pub fn documents(&self) -> Result<Vec<Document>, LocalSearchError> {
        Ok(self
            .stored_documents()?
            .into_iter()
            .map(to_document)
            .collect())
    }

    /// Every indexed document as stored, sorted by path.
    fn stored_documents(&self) -> Result<Vec<StoredDoc>, LocalSearchError> {
        let searcher = self.reader.searcher();
        let mut documents = Vec::new();
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            // Segment ordinals are u32 in tantivy; an index never has 4 billion segments.
            let ord = u32::try_from(ord).unwrap_or(u32::MAX);
            for doc_id in segment.doc_ids_alive() {
                let doc: TantivyDocument = searcher
                    .doc(DocAddress::new(ord, doc_id))
                    .map_err(|e| LocalSearchError::index(&self.dir, e))?;
                documents.push(self.fields.stored(&doc));
            }
        }
        documents.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(documents)
    }
}

fn to_document(stored: StoredDoc) -> Document {
    Document {
        url: url::file_url(&stored.path),
        title: stored.title,
        path: PathBuf::from(stored.path),
        text: stored.body,
    }
}

/// Adds to the report's count of skipped files those the walk `passed_over` and those the
/// `manifest` holds as read but not indexed.
fn count_skipped(
    report: &mut IndexReport,
    passed_over: BTreeMap<String, usize>,
    manifest: &IndexManifest,
) {
    for (label, n) in passed_over {
        *report.skipped.entry(label).or_default() += n;
    }
    for (path, entry) in &manifest.files {
        if !entry.indexed {
            *report
                .skipped
                .entry(type_label(Path::new(path)))
                .or_default() += 1;
        }
    }
}

/// Holds the index folder's lock until dropped.
fn lock(dir: &Path) -> Result<File, LocalSearchError> {
    let path = dir.join("lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| LocalSearchError::io("open the lock file", &path, e))?;
    file.lock()
        .map_err(|e| LocalSearchError::io("lock", &path, e))?;
    Ok(file)
}

/// The tantivy index of `dir` with its manifest, or a new empty one (with a warning saying
/// why, when an index was there but could not be trusted).
fn open_or_create(
    dir: &Path,
    corpus: &str,
) -> Result<(Index, IndexManifest, Vec<String>), LocalSearchError> {
    let tantivy_dir = dir.join("tantivy");
    let why = match manifest::load(dir, corpus) {
        Loaded::Valid(manifest) => match open_existing(&tantivy_dir) {
            Ok(index) => return Ok((index, manifest, Vec::new())),
            Err(e) => Some(format!("it could not be opened ({e})")),
        },
        Loaded::Invalid(reason) => Some(reason),
        Loaded::Missing => None,
    };
    let warnings = why
        .map(|why| {
            format!(
                "rebuilt the index in `{}` from scratch: {why}",
                dir.display()
            )
        })
        .into_iter()
        .collect();
    if tantivy_dir.exists() {
        std::fs::remove_dir_all(&tantivy_dir)
            .map_err(|e| LocalSearchError::io("remove the old index", &tantivy_dir, e))?;
    }
    std::fs::create_dir_all(&tantivy_dir)
        .map_err(|e| LocalSearchError::io("create the index folder", &tantivy_dir, e))?;
    let index = Index::create_in_dir(&tantivy_dir, schema::schema())
        .map_err(|e| LocalSearchError::index(&tantivy_dir, e))?;
    index
        .tokenizers()
        .register(analyzer::NAME, analyzer::analyzer());
    Ok((index, IndexManifest::new(corpus), warnings))
}

fn open_existing(tantivy_dir: &Path) -> tantivy::Result<Index> {
    let index = Index::open_in_dir(tantivy_dir)?;
    Fields::of(&index.schema())?;
    index
        .tokenizers()
        .register(analyzer::NAME, analyzer::analyzer());
    Ok(index)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    /// A corpus folder and an index folder beside it (never the real cache).
    struct Fixture {
        _tmp: tempfile::TempDir,
        corpus: PathBuf,
        index: PathBuf,
    }

    impl Fixture {
        fn new(files: &[(&str, &str)]) -> Fixture {
            let tmp = tempfile::tempdir().expect("tempdir");
            let corpus = tmp.path().join("corpus");
            std::fs::create_dir(&corpus).expect("mkdir");
            let corpus = std::fs::canonicalize(corpus).expect("canonical");
            let index = tmp.path().join("cache").join("index");
            let fixture = Fixture {
                _tmp: tmp,
                corpus,
                index,
            };
            for (name, text) in files {
                fixture.write(name, text);
            }
            fixture
        }

        fn write(&self, name: &str, text: &str) -> PathBuf {
            let path = self.corpus.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::fs::write(&path, text).expect("write");
            path
        }

        fn open(&self) -> (LocalIndex, IndexReport) {
            LocalIndex::open(&self.corpus, Some(&self.index)).expect("open")
        }
    }

    fn three() -> Fixture {
        Fixture::new(&[
            (
                "solid.md",
                "# Solid-state batteries\n\nSolid electrolytes replace the liquid one. They promise a higher energy density and fewer fires.",
            ),
            (
                "sodium.txt",
                "Sodium-ion cells\nSodium is abundant and cheap. Sodium-ion cells suit stationary storage.",
            ),
            (
                "grid.html",
                "<html><head><title>Grid storage</title></head><body><p>Pumped hydro dominates grid storage.</p></body></html>",
            ),
        ])
    }

    #[test]
    fn builds_searches_and_returns_passages_urls_and_documents() {
        let f = three();
        let (index, report) = f.open();
        assert_eq!((report.documents, report.added, report.read), (3, 3, 3));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);

        let hits = index
            .search("energy density of solid electrolytes", 5)
            .expect("search");
        assert_eq!(hits[0].title, "Solid-state batteries");
        let path = f.corpus.join("solid.md");
        assert_eq!(hits[0].path, path);
        assert_eq!(hits[0].url, format!("file://{}", path.display()));
        assert!(
            hits[0].passage.contains("energy density"),
            "{}",
            hits[0].passage
        );
        assert!(hits[0].score > 0.0);
        let paths: HashSet<_> = hits.iter().map(|h| &h.path).collect();
        assert_eq!(paths.len(), hits.len(), "one hit per document");

        let doc = index.document(&hits[0].url).expect("by url");
        assert!(doc.text.contains("fewer fires") && !doc.text.contains('#'));
        // Its place in the corpus: the path inside it and the hash of the text indexed.
        assert_eq!(hits[0].in_corpus.path, "solid.md");
        let sha256 = format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(&doc.text));
        assert_eq!(hits[0].in_corpus.sha256, sha256);
        assert_eq!(index.document(&path.to_string_lossy()), Some(doc));
        assert_eq!(index.document("file:///nowhere.md"), None);
        let all = index.documents().expect("documents");
        let titles: Vec<_> = all.iter().map(|d| d.title.as_str()).collect();
        assert_eq!(
            titles,
            ["Grid storage", "Sodium-ion cells", "Solid-state batteries"]
        );
        assert_eq!(
            index.search("grid", 1).expect("search")[0].title,
            "Grid storage"
        );
    }

    fn names(hits: &[LocalHit]) -> Vec<String> {
        hits.iter()
            .filter_map(|h| h.path.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect()
    }

    /// Word order counts: the words of the query side by side, or as the phrase it quotes,
    /// outrank the same words apart in a document that has more of them.
    #[test]
    fn words_side_by_side_and_quoted_phrases_outrank_the_words_apart() {
        let f = Fixture::new(&[
            (
                "apart.md",
                "The charge of a state grid. Charge again, charge once more, charge at night. The state decides.",
            ),
            (
                "pairs.md",
                "The state of the grid. Out of charge again, charge once more, charge at night.",
            ),
            (
                "together.md",
                "Its state of charge is shown on the dashboard of every car sold today, in digits.",
            ),
            ("other.md", "Pumped hydro dominates grid storage."),
        ]);
        let (index, _) = f.open();
        let order = |query: &str| -> Vec<String> {
            let hits = index.search(query, 4).expect("search");
            hits.iter()
                .filter_map(|h| h.path.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect()
        };
        let first = |query: &str| order(query).first().cloned();
        let before = |query: &str, a: &str, b: &str| {
            let got = order(query);
            got.iter().position(|n| n == a) < got.iter().position(|n| n == b)
        };
        assert!(
            before("charge state", "apart.md", "together.md"),
            "words alone"
        );
        assert!(
            before("state of charge", "together.md", "apart.md"),
            "pairs"
        );
        // Both pairs of `state of charge` are in pairs.md too: only the quoted phrase tells.
        assert_eq!(first("what state of charge").as_deref(), Some("pairs.md"));
        assert_eq!(
            first("what 'state of charge'").as_deref(),
            Some("together.md"),
            "quoted"
        );
    }

    /// Six equal documents, each indexed by its own open (six segments, which tantivy orders
    /// by their random ids): equal scores come back in path order, cut at any limit.
    #[test]
    fn equal_scores_go_in_path_order_whatever_the_index_history() {
        let text = "# Flywheels\n\nFlywheels store kinetic energy in a spinning rotor.";
        let f = Fixture::new(&[]);
        for name in ["f.md", "e.md", "d.md", "c.md", "b.md", "a.md"] {
            f.write(name, text);
            drop(f.open());
        }
        let (index, _) = f.open();
        let all = ["a.md", "b.md", "c.md", "d.md", "e.md", "f.md"];
        for limit in 1..=7 {
            let hits = index.search("kinetic flywheels", limit).expect("search");
            assert_eq!(names(&hits), all[..limit.min(6)], "limit {limit}");
        }
        f.write(
            "g.md",
            "# Flywheels\n\nFlywheels, flywheels, flywheels everywhere.",
        );
        drop(index);
        let (index, _) = f.open();
        let hits = index.search("flywheels", 3).expect("search");
        assert_eq!(
            names(&hits),
            ["g.md", "a.md", "b.md"],
            "a better score first"
        );
    }

    /// An index brought up to date by updates ranks like one built afresh: a replaced or
    /// removed document no longer counts in the statistics of BM25 (before the merge, the
    /// scores here were four times a fresh index's). The merge estimates the documents'
    /// average length from their quantised lengths, so scores may differ slightly.
    #[test]
    fn an_updated_index_ranks_like_a_fresh_one() {
        let f = three();
        drop(f.open());
        let changed = f.write(
            "sodium.txt",
            "Sodium-ion cells\nSodium cells store less energy than lithium cells.",
        );
        let later = SystemTime::now() + Duration::from_secs(5);
        File::options()
            .write(true)
            .open(&changed)
            .expect("open")
            .set_modified(later)
            .expect("mtime");
        std::fs::remove_file(f.corpus.join("grid.html")).expect("remove");
        f.write(
            "flow.md",
            "# Flow batteries\n\nFlow cells store energy in tanks.",
        );
        let (updated, _) = f.open();
        let fresh_dir = f.index.with_file_name("fresh");
        let (fresh, _) = LocalIndex::open(&f.corpus, Some(&fresh_dir)).expect("open");
        for query in [
            "energy",
            "sodium cells",
            "solid electrolytes energy density",
        ] {
            let updated = updated.search(query, 10).expect("search");
            let fresh = fresh.search(query, 10).expect("search");
            assert_eq!(names(&updated), names(&fresh), "{query}");
            for (u, f) in updated.iter().zip(&fresh) {
                assert!(
                    (u.score - f.score).abs() <= f.score * 0.01,
                    "{query}: {u:?} {f:?}"
                );
            }
        }
    }

    #[test]
    fn any_query_text_is_accepted() {
        let f = three();
        let (index, _) = f.open();
        for query in [
            "title:(sodium AND \"",
            "-- ** ?? !!",
            "",
            "sodium^2 OR [a TO",
            "钠离子 电池",
        ] {
            index.search(query, 3).expect("never a syntax error");
        }
        assert!(index.search("?!", 3).expect("search").is_empty());
        assert!(index.search("sodium", 0).expect("search").is_empty());
        assert_eq!(index.search("sodium", usize::MAX).expect("search").len(), 1);
        assert_eq!(
            index.search("SODIUM, cheap!", 3).expect("search")[0].title,
            "Sodium-ion cells"
        );
    }

    #[test]
    fn reopening_reads_only_what_changed() {
        let f = three();
        drop(f.open());
        let (_, report) = f.open();
        assert_eq!((report.read, report.unchanged, report.documents), (0, 3, 3));

        f.write("new.md", "# Flywheels\n\nFlywheels store kinetic energy.");
        let changed = f.write(
            "sodium.txt",
            "Sodium-ion cells\nPrussian blue cathodes are now common.",
        );
        let later = SystemTime::now() + Duration::from_secs(5);
        File::options()
            .write(true)
            .open(&changed)
            .expect("open")
            .set_modified(later)
            .expect("mtime");
        std::fs::remove_file(f.corpus.join("grid.html")).expect("remove");
        let (index, report) = f.open();
        assert_eq!(
            (
                report.read,
                report.added,
                report.updated,
                report.removed,
                report.unchanged,
                report.documents
            ),
            (2, 1, 1, 1, 1, 3)
        );
        assert_eq!(
            index.search("flywheels", 3).expect("search")[0].title,
            "Flywheels"
        );
        assert_eq!(index.search("prussian", 3).expect("search").len(), 1);
        assert!(
            index.search("abundant", 3).expect("search").is_empty(),
            "old text gone"
        );
        assert!(
            index.search("pumped hydro", 3).expect("search").is_empty(),
            "removed file gone"
        );
        assert_eq!(index.documents().expect("documents").len(), 3);
    }

    #[test]
    fn problem_files_are_warnings_and_stay_reported_without_being_read_again() {
        let f = three();
        f.write("empty.txt", "");
        std::fs::write(f.corpus.join("binary.txt"), b"\x7fELF\0\0\x01").expect("write");
        std::fs::write(f.corpus.join("latin1.txt"), b"Caf\xe9 notes").expect("write");
        std::fs::write(
            f.corpus.join("scan.pdf"),
            super::super::pdf::tests::tiny_pdf(None),
        )
        .expect("write");
        let (index, report) = f.open();
        assert_eq!((report.documents, report.read), (4, 7));
        assert_eq!(report.warnings.len(), 4, "{:?}", report.warnings);
        for name in ["empty.txt", "binary.txt", "latin1.txt", "scan.pdf"] {
            assert!(
                report.warnings.iter().any(|w| w.contains(name)),
                "{name}: {:?}",
                report.warnings
            );
        }
        assert_eq!(
            index.search("notes", 3).expect("search")[0].title,
            "Caf\u{e9} notes"
        );
        drop(index);
        let (_, again) = f.open();
        assert_eq!((again.read, again.documents), (0, 4));
        assert_eq!(again.warnings, report.warnings);
    }

    #[test]
    fn a_link_to_a_document_indexes_it_once() {
        let f = three();
        std::os::unix::fs::symlink(f.corpus.join("solid.md"), f.corpus.join("alias.md"))
            .expect("link");
        let (index, report) = f.open();
        assert_eq!(report.documents, 3);
        assert_eq!(index.search("electrolytes", 5).expect("search").len(), 1);
        let by_link = index
            .document(&f.corpus.join("alias.md").to_string_lossy())
            .expect("doc");
        assert_eq!(by_link.path, f.corpus.join("solid.md"));
    }

    #[test]
    fn missing_and_empty_corpora_and_an_index_inside_are_input_errors() {
        let f = Fixture::new(&[("empty.txt", ""), ("image.png", "png")]);
        let err = LocalIndex::open(&f.corpus, Some(&f.index))
            .err()
            .expect("no documents");
        assert!(matches!(err, LocalSearchError::NoDocuments { .. }), "{err}");
        assert!(err.is_input_error());
        let err = LocalIndex::open(&f.corpus.join("nope"), Some(&f.index))
            .err()
            .expect("missing");
        assert!(
            matches!(err, LocalSearchError::CorpusMissing { .. }),
            "{err}"
        );
        f.write("a.md", "# A\n\ntext");
        let inside = f.corpus.join(".index");
        let err = LocalIndex::open(&f.corpus, Some(&inside))
            .err()
            .expect("inside");
        assert!(
            matches!(err, LocalSearchError::IndexInsideCorpus { .. }),
            "{err}"
        );
        assert!(!inside.exists());
    }

    #[test]
    fn a_broken_manifest_or_index_is_rebuilt_with_a_warning() {
        let f = three();
        drop(f.open());
        std::fs::write(f.index.join(manifest::FILE_NAME), "{").expect("write");
        let (_, report) = f.open();
        assert_eq!((report.read, report.documents), (3, 3));
        assert!(
            report.warnings[0].contains("rebuilt"),
            "{:?}",
            report.warnings
        );
        std::fs::remove_dir_all(f.index.join("tantivy")).expect("remove");
        let (index, report) = f.open();
        assert_eq!((report.read, report.documents), (3, 3));
        assert_eq!(index.search("sodium", 5).expect("search").len(), 1);
    }

    #[test]
    fn two_openers_at_once_share_the_index_safely() {
        let f = three();
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| f.open().1);
            let b = s.spawn(|| f.open().1);
            (a.join().expect("a"), b.join().expect("b"))
        });
        assert_eq!((a.documents, b.documents), (3, 3));
        assert_eq!(
            a.read + b.read,
            3,
            "the second waited for the first, then read nothing"
        );
    }

    #[test]
    fn the_index_can_be_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<LocalIndex>();
    }
}
