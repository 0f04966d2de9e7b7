//! The parser process's loop (`researchflow parse-worker`, started by [`super::Pool`]): caps its
//! own memory, watches its parent, then answers requests from stdin on stdout one at a time,
//! each under a CPU budget, until stdin ends. What a job does is the handler's: this loop
//! knows no document kinds. A panic or an abort ends the process; the parent reads the cause
//! from how it ended.

use std::io::{self, BufReader, BufWriter};

use super::frame::{self, Reply};
use super::limits;

/// A job's handler: the job's kind, its JSON and its body to the reply's JSON, or why the
/// request cannot be served (an unknown kind, a malformed job).
pub type Handler = fn(&str, serde_json::Value, Vec<u8>) -> Result<serde_json::Value, String>;

/// Serves requests until stdin ends, within `memory_bytes` of address space, ending at once
/// when `parent` is gone.
pub fn serve(memory_bytes: u64, parent: u32, handler: Handler) -> io::Result<()> {
    limits::cap_memory(memory_bytes)?;
    limits::exit_with_parent(parent)?;
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    while let Some((header, body)) = frame::read_request(&mut input)? {
        limits::cpu_budget(header.cpu_seconds)?;
        let reply = match handler(&header.kind, header.job, body) {
            Ok(value) => Reply::Done(value),
            Err(why) => Reply::Refused(why),
        };
        frame::write_reply(&mut output, &reply)?;
    }
    Ok(())
}
