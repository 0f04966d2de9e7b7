//! The secrets of the process, masked (`***`) in everything it writes: [`remember`] learns one
//! (the settings learn the keys of the config, of each role and of the search provider, the
//! passwords of the URLs, and the key variables of the environment even when no setting uses
//! them; the MCP server its bearer token), [`mask`] hides every one learnt. The writers call
//! it, not their callers: files through `crate::atomic`, lines through [`super::clean`] (the
//! event log, stdout), the transcript, the log on stderr, a mail, a webhook. A key typed into
//! a question or echoed by a search result is then written nowhere, whichever path it took.
//!
//! A value shorter than [`MIN_CHARS`] is not learnt: keys are long, and the short values
//! local servers take for one (`EMPTY`, `ollama`, `none`) are words of ordinary text, which
//! masking would garble everywhere while protecting nothing. This module knows no setting.

use std::borrow::Cow;
use std::sync::RwLock;

/// The shortest value learnt as a secret.
pub const MIN_CHARS: usize = 8;

/// Every secret learnt, longest first, so that one holding another is masked whole.
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Learns `secret`, so that [`mask`] hides it from now on; blank, short or known values are
/// ignored. Surrounding white space is not part of it (a key pasted with a newline).
pub fn remember(secret: &str) {
    let secret = secret.trim();
    if secret.chars().count() < MIN_CHARS {
        return;
    }
    // A poisoned lock still holds a list: a panic elsewhere must not unmask anything.
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if !secrets.iter().any(|s| s == secret) {
        secrets.push(secret.to_string());
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// `text` with every secret learnt replaced by `***`; borrowed when it holds none.
pub fn mask(text: &str) -> Cow<'_, str> {
    let secrets = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    let mut out = Cow::Borrowed(text);
    for secret in secrets.iter() {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), "***"));
        }
    }
    out
}

/// `bytes` masked as [`mask`] masks text, when they are UTF-8 text; other bytes as they are
/// (a secret cannot be told apart in them, and changing them would break the file).
pub fn mask_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    match std::str::from_utf8(bytes).map(mask) {
        Ok(Cow::Owned(text)) => Cow::Owned(text.into_bytes()),
        Ok(Cow::Borrowed(_)) | Err(_) => Cow::Borrowed(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_learnt_is_masked_whole_and_short_values_are_not_learnt() {
        remember("  sk-mask-test-PART-1 \n");
        remember("sk-mask-test-PART-1-and-more");
        remember("ollama");
        remember("sk-mask-test-PART-1");
        assert_eq!(
            mask("a sk-mask-test-PART-1-and-more b sk-mask-test-PART-1 c ollama"),
            "a *** b *** c ollama"
        );
        assert!(matches!(mask("nothing to hide"), Cow::Borrowed(_)));
        assert_eq!(
            mask_bytes(b"{\"q\": \"sk-mask-test-PART-1\"}").as_ref(),
            b"{\"q\": \"***\"}"
        );
        let binary = [0xff, 0xfe, b's', b'k'];
        assert!(matches!(mask_bytes(&binary), Cow::Borrowed(_)));
    }
}
