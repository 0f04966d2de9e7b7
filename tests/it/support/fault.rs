//! Scripted failures that both mock servers can serve instead of a normal answer: an HTTP error
//! status with chosen headers and body (rate limits, exhausted quota, 5xx), a request that is
//! accepted and never answered ([`Fault::Hang`]), and a connection closed without any response
//! byte ([`Fault::Drop`]). How each is carried out lives in `server.rs`.

/// A failure to serve instead of the scripted answer.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Answer with this status, headers and body.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Accept the request and never answer (the client's timeout must fire). The request stays
    /// in flight until the client gives up or the mock is dropped.
    Hang,
    /// Close the connection without sending any response byte.
    Drop,
}

impl Fault {
    /// `status` with `body` and `content-type: application/json`.
    pub fn status(status: u16, body: &str) -> Fault {
        Fault::Status {
            status,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: body.to_owned(),
        }
    }

    /// Adds a header to a [`Fault::Status`]; [`Fault::Hang`] and [`Fault::Drop`] send no headers,
    /// so for them this does nothing.
    pub fn header(self, name: &str, value: &str) -> Fault {
        match self {
            Fault::Status {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.to_owned(), value.to_owned()));
                Fault::Status {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }

    /// 429 as OpenAI sends when a rate limit is hit, with a `retry-after` header (seconds or an
    /// HTTP date, passed through verbatim) when given.
    pub fn rate_limited(retry_after_secs: Option<&str>) -> Fault {
        let fault = Fault::status(
            429,
            r#"{"error":{"message":"Rate limit reached","type":"rate_limit_exceeded"}}"#,
        );
        match retry_after_secs {
            Some(value) => fault.header("retry-after", value),
            None => fault,
        }
    }

    /// 429 with a `retry-after-ms` header, as OpenAI sends for short waits.
    pub fn rate_limited_ms(ms: u64) -> Fault {
        Fault::rate_limited(None).header("retry-after-ms", &ms.to_string())
    }

    /// 429 for an exhausted quota: retrying cannot help, a client should give up.
    pub fn insufficient_quota() -> Fault {
        Fault::status(
            429,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        )
    }

    /// A server-side error such as 500, 502 or 503, with an OpenAI-style JSON error body.
    pub fn server_error(status: u16) -> Fault {
        let body = serde_json::json!({
            "error": {
                "message": format!("mock server error {status}"),
                "type": "server_error",
                "code": null,
            }
        });
        Fault::status(status, &body.to_string())
    }
}
