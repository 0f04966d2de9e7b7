//! Every run's plan and report as MCP resources, named by their `file://` URIs (the absolute
//! path, percent-encoded: the same files the tools name by path). The list holds the runs of
//! `runs/` in each root (where `research` writes them); any plan file or report under the
//! roots can be read by its URI. A URI outside the roots, or of another kind of file, is
//! refused.

use std::path::Path;

use rmcp::model::{ReadResourceResult, Resource, ResourceContents};

use super::setup::ResearchServer;
use super::{plan_check, runs};
use crate::files::read_opened;
use crate::plan::Beside;
use crate::search::local::url::{file_url, path_from_url};

/// The largest file read as a resource.
const RESOURCE_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The plans and reports of the runs in `runs/` of every root.
pub fn list(server: &ResearchServer) -> Vec<Resource> {
    let mut out = Vec::new();
    for root in server.setup.roots.all() {
        let dir = root.join("runs");
        let Ok(found) = runs::list(&server.setup.roots, &dir, |p| server.active.state(p)) else {
            continue;
        };
        for run in found {
            let plan = Path::new(&run.plan_file);
            out.push(
                Resource::new(uri(plan), format!("plan: {}", run.question))
                    .with_description(format!("The plan file of a run ({})", run.status))
                    .with_mime_type("application/json"),
            );
            if let Some(report) = &run.report_file {
                out.push(
                    Resource::new(uri(Path::new(report)), format!("report: {}", run.question))
                        .with_description("The Markdown report of a run, with its sources")
                        .with_mime_type("text/markdown"),
                );
            }
        }
    }
    out
}

/// The plan file or report `raw_uri` names, when it is one under the roots.
pub fn read(server: &ResearchServer, raw_uri: &str) -> Result<ReadResourceResult, String> {
    let path = path_from_url(raw_uri).ok_or_else(|| {
        format!("`{raw_uri}` is not a `file://` URI of a run's plan or report: `resources/list` gives them")
    })?;
    let path = server
        .setup
        .roots
        .resolve(&path.to_string_lossy(), "resource")
        .map_err(|e| e.to_string())?;
    let roots = &server.setup.roots;
    let (text, mime) = if is_report(&path) {
        let (file, meta) = roots.open_inside(&path)?;
        let text =
            read_opened(file, &meta, &path, RESOURCE_MAX_BYTES).map_err(|e| e.to_string())?;
        (text, "text/markdown")
    } else {
        // Only a file that reads as a plan: the roots hold other files too. Read once, so
        // what is sent is what was checked.
        let (_, text) = plan_check::read_plan_text(roots, &path)
            .map_err(|e| format!("`{raw_uri}` is neither a run's plan nor its report: {e}"))?;
        if text.len() as u64 > RESOURCE_MAX_BYTES {
            return Err(format!(
                "`{raw_uri}` is over {} MB, the most a resource sends: read the file itself",
                RESOURCE_MAX_BYTES / (1024 * 1024)
            ));
        }
        (text, "application/json")
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, raw_uri).with_mime_type(mime),
    ]))
}

/// The `file://` URI of an absolute path.
fn uri(path: &Path) -> String {
    file_url(&path.to_string_lossy())
}

/// Whether `path` is a run's report: `<stem>.report.md` beside a plan `<stem>.json`.
fn is_report(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some(stem) = name.strip_suffix(".report.md") else {
        return false;
    };
    let plan = path.with_file_name(format!("{stem}.json"));
    plan.is_file() && Beside::of(&plan).report == path
}
