//! The secrets of one notification, in every form a receiver or a mail server may echo them
//! back, and the one filter for what such a server says ([`Secrets::clean`]). A webhook's
//! path and query are often its secret (a chat service's hook URL is one), its signing
//! secret is one, and so is an SMTP login; servers quote them in error replies as received
//! (percent-encoded, JSON-escaped) or as sent (base64 in `AUTH`). What a server sends back is
//! untrusted text: it reaches no record, event or log but through this filter, which masks
//! those secrets and keeps one short line without control characters. It must not be given
//! our own framing of a message (a secret that happens to be a common word would mask it).

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// How much of what a server said is kept.
const SAID_CHARS: usize = 300;

/// A secret shorter than this is not masked: it would mask letters of every word.
const SHORTEST: usize = 3;

/// A piece of a secret (one segment of a hook's path, one value of its query) shorter than
/// this is not masked by itself: `T0` or `v1` are no secret, the whole path still is.
const SHORTEST_PIECE: usize = 6;

/// RFC 3986's unreserved characters kept (Python's `quote(s, safe="")`).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A path's slashes kept too (Python's `quote(s)`).
const PATH: &AsciiSet = &COMPONENT.remove(b'/');

/// What JavaScript's `encodeURIComponent` keeps.
const JS_COMPONENT: &AsciiSet = &COMPONENT
    .remove(b'!')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// Every form of every secret of one notification, the longest first.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    forms: Vec<String>,
}

impl Secrets {
    /// A webhook's: the path, query and fragment of `target` (whole, as written and decoded,
    /// and each segment and value), the user part of its address, and `signing` (the secret
    /// its digest is signed with).
    pub fn of_webhook(target: &str, signing: Option<&str>) -> Secrets {
        let mut secrets = Secrets::default();
        secrets.add(signing.unwrap_or_default());
        let Ok(url) = url::Url::parse(target.trim()) else {
            // Not a URL: nothing was sent to it, and the whole of it is the secret.
            secrets.add(target);
            return secrets.sorted();
        };
        if url.path() != "/" {
            secrets.add_url_part(url.path());
            secrets.add_url_part(url.path().trim_start_matches('/'));
        }
        let pieces = url.path_segments().into_iter().flatten();
        let pieces = pieces.chain(url.query().into_iter().flat_map(|q| q.split('&')));
        for piece in pieces.chain(url.fragment()) {
            if piece.len() >= SHORTEST_PIECE {
                secrets.add_url_part(piece);
            }
            if let Some((_, value)) = piece.split_once('=')
                && value.len() >= SHORTEST_PIECE
            {
                secrets.add_url_part(value);
            }
        }
        for part in [
            url.query(),
            url.fragment(),
            url.password(),
            Some(url.username()),
        ] {
            secrets.add_url_part(part.unwrap_or_default());
        }
        secrets.sorted()
    }

    /// An SMTP login's: the user and password, and the base64 that `AUTH PLAIN` and
    /// `AUTH LOGIN` send of them.
    pub fn of_login(user: &str, password: &str) -> Secrets {
        let mut secrets = Secrets::default();
        secrets.add(user);
        secrets.add(password);
        secrets.add_base64(format!("\0{user}\0{password}").as_bytes());
        secrets.sorted()
    }

    /// What a server said, fit to record and print: every form of every secret masked as
    /// `***` (before and after control characters are removed, so that none split one), then
    /// one line of at most [`SAID_CHARS`] characters.
    pub fn clean(&self, said: &str) -> String {
        let masked = crate::text::without_url_passwords(&self.mask(said)).into_owned();
        let line = crate::text::one_line(&masked, usize::MAX);
        crate::text::one_line(&self.mask(&line), SAID_CHARS)
    }

    fn mask(&self, text: &str) -> String {
        self.forms
            .iter()
            .fold(text.to_string(), |text, form| masked(&text, form))
    }

    /// `secret` as given, JSON-escaped, percent-encoded as the usual encoders do, and in
    /// base64.
    fn add(&mut self, secret: &str) {
        if secret.chars().count() < SHORTEST {
            return;
        }
        self.forms.push(secret.to_string());
        self.forms.push(secret.replace('/', "\\/"));
        for set in [NON_ALPHANUMERIC, COMPONENT, PATH, JS_COMPONENT] {
            self.forms
                .push(utf8_percent_encode(secret, set).to_string());
        }
        self.forms
            .push(url::form_urlencoded::byte_serialize(secret.as_bytes()).collect());
        self.add_base64(secret.as_bytes());
    }

    /// A part of a URL, as written (percent-encoded) and decoded.
    fn add_url_part(&mut self, part: &str) {
        self.add(part);
        self.add(&percent_decode_str(part).decode_utf8_lossy());
    }

    fn add_base64(&mut self, bytes: &[u8]) {
        for engine in [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD] {
            self.forms.push(engine.encode(bytes));
        }
    }

    /// The longest first: a form that holds a shorter one is masked whole.
    fn sorted(mut self) -> Secrets {
        self.forms.retain(|f| f.chars().count() >= SHORTEST);
        self.forms
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        self.forms.dedup();
        self
    }
}

/// `text` with every occurrence of `form` masked, ASCII case ignored (a server may change
/// the case of a percent-encoding, or of the whole path).
fn masked(text: &str, form: &str) -> String {
    // ASCII lower-casing keeps every byte where it was, so offsets hold for both.
    let (lower, needle) = (text.to_ascii_lowercase(), form.to_ascii_lowercase());
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    while let Some(at) = lower[from..].find(&needle) {
        out.push_str(&text[from..from + at]);
        out.push_str("***");
        from += at + needle.len();
    }
    out.push_str(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hooks_path_query_and_secret_are_masked_in_every_form_and_the_rest_kept() {
        let hook =
            "https://hooks.example/services/T0/B0/tok%21en-s3cret?key=query-s3cret#frag-s3cret";
        let secrets = Secrets::of_webhook(hook, Some("signing-s3cret"));
        let said = "404 for /services/T0/B0/tok%21en-s3cret?key=query-s3cret, \
            %2Fservices%2FT0%2FB0%2Ftok%2521en-s3cret, /SERVICES/t0/b0/TOK%21EN-S3CRET, \
            tok!en-s3cret, \\/services\\/T0, frag-s3cret, signing-s3cret c2lnbmluZy1zM2NyZXQ=\n\
            \u{1b}[31mforged line\u{7}";
        let clean = secrets.clean(said);
        assert!(!clean.to_lowercase().contains("s3cret"), "{clean}");
        assert!(!clean.contains("c2lnbmluZy1zM2NyZXQ"), "{clean}");
        assert!(clean.starts_with("404 for ***"), "{clean}");
        assert!(clean.ends_with("*** forged line"), "{clean}");
        assert!(!clean.contains(['\n', '\u{1b}', '\u{7}']), "{clean}");
        let long = "x".repeat(1000);
        assert_eq!(secrets.clean(&long).chars().count(), SAID_CHARS);
        assert_eq!(
            Secrets::of_webhook("https://h.example/", None).clean("a/b"),
            "a/b"
        );
    }

    #[test]
    fn a_login_is_masked_plain_encoded_and_as_auth_sends_it() {
        let secrets = Secrets::of_login("watch-login", "pa55 w/rd");
        let plain = STANDARD.encode("\0watch-login\0pa55 w/rd");
        let said = format!(
            "535 watch-login pa55 w/rd pa55%20w%2Frd pa55+w%2Frd {plain} {} {}",
            STANDARD.encode("watch-login"),
            STANDARD_NO_PAD.encode("pa55 w/rd")
        );
        assert_eq!(secrets.clean(&said), "535 *** *** *** *** *** *** ***");
        assert_eq!(secrets.clean("sp\u{1b}[1mlit pa5\u{7}5 w/rd"), "split ***");
    }
}
