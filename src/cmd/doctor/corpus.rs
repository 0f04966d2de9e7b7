//! `doctor` for research without a model (`--offline`, `engine: offline`, or no model
//! configured and a corpus given): the corpus (readable, its documents by type, what is passed
//! over), its index (there, current, what a run would read again, what it skipped and why),
//! and the embedding model (`search.embeddings.model`: loads, its dimension, whether the
//! index's vectors are its). The index is brought up to date as a run's first step would
//! (new and changed files read, in parser processes; nothing embedded): only reading a file
//! tells whether it has text, and a corpus none of whose files has any cannot be researched.

use std::path::Path;

use serde::Serialize;

use crate::embed::Embedder;
use crate::isolate::Parsing;
use crate::search::local::extract::Reading;
use crate::search::local::inspect::{IndexState, Inspection, inspect};
use crate::search::local::{LocalIndex, LocalSearchError};
use crate::settings::Settings;

/// What offline research over the configured corpus would find.
#[derive(Debug, Clone, Serialize)]
pub struct CorpusReport {
    /// Whether offline research will work: the corpus is readable and holds a document, and
    /// the embedding model, if one is configured, loads.
    pub ok: bool,
    /// The corpus and its index after this check brought the index up to date; `None` when
    /// the corpus or its index folder cannot be used (then `error` says why).
    pub inspection: Option<Inspection>,
    /// The index as this check found it, before bringing it up to date.
    pub index_before: Option<IndexState>,
    pub model: Option<ModelReport>,
    pub error: Option<String>,
}

/// The embedding model as loaded.
#[derive(Debug, Clone, Serialize)]
pub struct ModelReport {
    pub dir: String,
    pub ok: bool,
    pub dims: Option<usize>,
    /// Whether the vectors kept beside the index are this model's (`None`: there are none).
    pub vectors_match: Option<bool>,
    pub error: Option<String>,
}

/// Checks the corpus of `settings` (offline: it has one).
pub async fn check(settings: &Settings) -> CorpusReport {
    let Some(corpus) = settings.search.corpus.clone() else {
        return failed("no corpus: pass `--corpus DIR` or set `search.corpus`".into());
    };
    let index_dir = settings.search.index_dir.clone();
    let before = match inspect(&corpus, index_dir.as_deref()) {
        Ok(inspection) => inspection,
        Err(err) => return failed(err.to_string()),
    };
    let reading = Reading {
        parsing: Parsing::isolated(settings.documents.memory_mb),
        timeout: settings.documents.timeout,
        steps: Default::default(),
    };
    let opened = tokio::task::spawn_blocking(move || {
        LocalIndex::open_with(&corpus, index_dir.as_deref(), None, &reading).map(|_| ())?;
        inspect(&corpus, index_dir.as_deref())
    })
    .await;
    let inspection = match opened {
        Ok(Ok(inspection)) => inspection,
        Ok(Err(LocalSearchError::NoDocuments { .. })) => before.clone(),
        Ok(Err(err)) => return failed(err.to_string()),
        Err(err) => return failed(format!("the index could not be updated: {err}")),
    };
    let model = settings
        .search
        .embeddings_model
        .as_deref()
        .map(|dir| model_report(dir, &inspection));
    let documents: usize = inspection.documents.values().sum();
    let index = &inspection.index;
    let error = if documents == 0 {
        Some(format!(
            "`{}` holds no document researchflow reads (Markdown, text, HTML, PDF, man pages): \
             point `--corpus` at the folder of your documents",
            inspection.corpus.display()
        ))
    } else if index.indexed == 0 {
        Some(format!(
            "none of the {documents} file(s) of `{}` has text to search (each is empty, binary or without text)",
            inspection.corpus.display()
        ))
    } else {
        None
    };
    CorpusReport {
        ok: error.is_none() && model.as_ref().is_none_or(|m| m.ok),
        inspection: Some(inspection),
        index_before: Some(before.index),
        model,
        error,
    }
}

fn failed(error: String) -> CorpusReport {
    CorpusReport {
        ok: false,
        inspection: None,
        index_before: None,
        model: None,
        error: Some(error),
    }
}

fn model_report(dir: &Path, inspection: &Inspection) -> ModelReport {
    let kept = inspection.index.vectors.as_ref();
    match Embedder::load(dir) {
        Ok(embedder) => ModelReport {
            dir: crate::output::absolute(dir),
            ok: true,
            dims: Some(embedder.dims()),
            vectors_match: kept.map(|k| k.model == embedder.id() && k.dims == embedder.dims()),
            error: None,
        },
        Err(err) => ModelReport {
            dir: crate::output::absolute(dir),
            ok: false,
            dims: None,
            vectors_match: None,
            error: Some(err.to_string()),
        },
    }
}

/// The report as lines of text.
pub fn lines(report: &CorpusReport) -> String {
    let mut out = String::new();
    if let Some(i) = &report.inspection {
        out.push_str(&format!(
            "corpus  `{}`: {}\n",
            i.corpus.display(),
            counted(&i.documents, "document")
        ));
        if !i.passed_over.is_empty() {
            out.push_str(&format!(
                "        passed over (not a kind researchflow reads): {}\n",
                counted(&i.passed_over, "file")
            ));
        }
        for w in &i.warnings {
            out.push_str(&format!("        warning: {w}\n"));
        }
        out.push_str(&index_lines(i, report.index_before.as_ref()));
    }
    if let Some(m) = &report.model {
        out.push_str(&model_line(m, report.inspection.as_ref()));
    }
    if let Some(err) = &report.error {
        out.push_str(&format!("error: {err}\n"));
    }
    out.push_str(if report.ok {
        "offline research will work\n"
    } else {
        "offline research will not work: see above\n"
    });
    out
}

fn index_lines(i: &Inspection, before: Option<&IndexState>) -> String {
    let x = &i.index;
    let found = match before {
        Some(b) if b.is_current() => "it was current".to_string(),
        Some(b) => match &b.rebuilt {
            Some(why) => format!("built again ({why})"),
            None if !b.present => "built now".to_string(),
            None => format!(
                "brought up to date: {} new or changed file(s) read, {} taken out",
                b.to_read, b.gone
            ),
        },
        None => String::new(),
    };
    let mut out = format!(
        "index   `{}`: {} document(s) indexed; {found}\n",
        x.dir.display(),
        x.indexed
    );
    for skipped in &x.skipped {
        out.push_str(&format!("        {skipped}\n"));
    }
    out
}

fn model_line(m: &ModelReport, inspection: Option<&Inspection>) -> String {
    let Some(dims) = m.dims else {
        let err = m.error.as_deref().unwrap_or("does not load");
        return format!("model   `{}`: {err}\n", m.dir);
    };
    let vectors = match (
        m.vectors_match,
        inspection.and_then(|i| i.index.vectors.as_ref()),
    ) {
        (Some(true), Some(k)) => format!(
            "the index's vectors are its ({} chunks of {} documents)",
            k.chunks, k.documents
        ),
        (Some(false), _) => {
            "the index's vectors are another model's: the next run embeds the corpus again".into()
        }
        _ => "no vectors yet: the next run embeds the corpus".into(),
    };
    format!("model   `{}`: loads, {dims} dimensions; {vectors}\n", m.dir)
}

/// `.md 3, .pdf 1` after the total.
fn counted(by_type: &std::collections::BTreeMap<String, usize>, noun: &str) -> String {
    let total: usize = by_type.values().sum();
    let parts: Vec<String> = by_type.iter().map(|(t, n)| format!("{t} {n}")).collect();
    if parts.is_empty() {
        return format!("no {noun}");
    }
    format!("{total} {noun}(s) ({})", parts.join(", "))
}
