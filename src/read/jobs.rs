//! The jobs a parser process ([`crate::isolate`], `researchflow parse-worker`) serves: a fetched
//! web page ([`PAGE_JOB`], read by [`super::extract`]) and a corpus file ([`FILE_JOB`], read by
//! the local index's extraction), each with the same function a trusted caller runs in
//! process. Pure dispatch: the limits and the loop are the worker's.

use serde_json::Value;

use super::extract::{PAGE_JOB, PageJob};
use crate::search::local::extract::{FILE_JOB, FileJob, extract};

/// One job: its reply as JSON, or why it cannot be served.
pub fn handle(kind: &str, job: Value, body: Vec<u8>) -> Result<Value, String> {
    let reply = match kind {
        PAGE_JOB => {
            let job: PageJob = serde_json::from_value(job).map_err(|e| e.to_string())?;
            serde_json::to_value(job.extract(&body))
        }
        FILE_JOB => {
            let job: FileJob = serde_json::from_value(job).map_err(|e| e.to_string())?;
            serde_json::to_value(extract(&job.path, job.kind))
        }
        other => return Err(format!("no job of kind `{other}`")),
    };
    reply.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_job_is_read_and_an_unknown_kind_refused() {
        let job = serde_json::json!({"url": "http://a.test/", "content_type": "text/plain", "cut": false});
        let reply =
            handle(PAGE_JOB, job, b"Sodium cells last 3000 cycles.".to_vec()).expect("served");
        assert_eq!(reply["Ok"]["text"], "Sodium cells last 3000 cycles.");
        let refused = handle("spreadsheet", Value::Null, Vec::new()).expect_err("unknown");
        assert!(refused.contains("`spreadsheet`"), "{refused}");
        assert!(
            handle(FILE_JOB, Value::Null, Vec::new()).is_err(),
            "a malformed job"
        );
    }
}
