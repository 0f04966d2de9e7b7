//! The messages between a parent and its parser process, over the child's stdin and stdout: a
//! request is a JSON header (the job's kind, the job, its CPU budget) and a body of raw bytes
//! (a page as fetched); a reply is one JSON value. Each part is preceded by its length, so a
//! document's bytes never need escaping and a torn message is told from a whole one.
//!
//! Pure framing over `Read`/`Write`: no processes, no jobs.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

/// The largest header or reply read: a reply holds at most a document's text (a few MB), so a
/// length past this is a broken stream, not a message to allocate for.
const MAX_JSON_BYTES: u64 = 256 * 1024 * 1024;
/// The largest body: a page's bytes are capped far below this before they get here.
const MAX_BODY_BYTES: u64 = 1024 * 1024 * 1024;

/// What a request's header says.
#[derive(Debug, Serialize, Deserialize)]
pub struct Header {
    /// Which handler of the child reads the job (`page`, `file`).
    pub kind: String,
    pub job: serde_json::Value,
    /// The CPU seconds the job may use before the kernel stops the child.
    pub cpu_seconds: u64,
}

/// A child's answer to one request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// The handler's result.
    Done(serde_json::Value),
    /// The request could not be served (an unknown kind, a job of the wrong shape): a bug of
    /// the caller, not of the document.
    Refused(String),
}

/// Writes one request.
pub fn write_request(to: &mut impl Write, header: &Header, body: &[u8]) -> io::Result<()> {
    let header = serde_json::to_vec(header)?;
    let len = u32::try_from(header.len()).map_err(|_| invalid("a header over 4 GB"))?;
    to.write_all(&len.to_le_bytes())?;
    to.write_all(&header)?;
    to.write_all(&(body.len() as u64).to_le_bytes())?;
    to.write_all(body)?;
    to.flush()
}

/// Reads one request; `Ok(None)` at the end of the stream (the parent is done).
pub fn read_request(from: &mut impl Read) -> io::Result<Option<(Header, Vec<u8>)>> {
    let mut len = [0u8; 4];
    match from.read_exact(&mut len) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    let header = read_part(from, u64::from(u32::from_le_bytes(len)), MAX_JSON_BYTES)?;
    let header: Header = serde_json::from_slice(&header)?;
    let mut len = [0u8; 8];
    from.read_exact(&mut len)?;
    let body = read_part(from, u64::from_le_bytes(len), MAX_BODY_BYTES)?;
    Ok(Some((header, body)))
}

/// Writes one reply.
pub fn write_reply(to: &mut impl Write, reply: &Reply) -> io::Result<()> {
    let bytes = serde_json::to_vec(reply)?;
    to.write_all(&(bytes.len() as u64).to_le_bytes())?;
    to.write_all(&bytes)?;
    to.flush()
}

/// Reads one reply.
pub fn read_reply(from: &mut impl Read) -> io::Result<Reply> {
    let mut len = [0u8; 8];
    from.read_exact(&mut len)?;
    let bytes = read_part(from, u64::from_le_bytes(len), MAX_JSON_BYTES)?;
    Ok(serde_json::from_slice(&bytes)?)
}

/// `len` bytes, refused past `max`.
fn read_part(from: &mut impl Read, len: u64, max: u64) -> io::Result<Vec<u8>> {
    if len > max {
        return Err(invalid("a message longer than the protocol allows"));
    }
    let mut bytes = Vec::new();
    from.take(len).read_to_end(&mut bytes)?;
    if bytes.len() as u64 != len {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(bytes)
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_and_a_reply_round_trip_and_a_torn_one_is_an_error() {
        let header = Header {
            kind: "page".into(),
            job: serde_json::json!({"url": "http://a.test/"}),
            cpu_seconds: 3,
        };
        let mut wire = Vec::new();
        write_request(&mut wire, &header, b"<p>\0bytes</p>").expect("write");
        let (read, body) = read_request(&mut wire.as_slice())
            .expect("read")
            .expect("one");
        assert_eq!((read.kind.as_str(), read.cpu_seconds), ("page", 3));
        assert_eq!(body, b"<p>\0bytes</p>");
        assert!(read_request(&mut &b""[..]).expect("end").is_none());
        assert!(read_request(&mut &wire[..wire.len() - 2]).is_err(), "torn");

        let mut wire = Vec::new();
        write_reply(&mut wire, &Reply::Done(serde_json::json!("text"))).expect("write");
        match read_reply(&mut wire.as_slice()).expect("read") {
            Reply::Done(value) => assert_eq!(value, "text"),
            Reply::Refused(why) => panic!("{why}"),
        }
        let huge = (MAX_JSON_BYTES + 1).to_le_bytes();
        assert!(read_reply(&mut &huge[..]).is_err(), "a length past the cap");
    }
}
