//! How an HTML page's text is laid out, as a browser shows it: the elements that start a line
//! ([`BLOCKS`]) or set a paragraph apart ([`TITLES`]), and [`Text`], which collapses white
//! space and breaks lines. [`super::html`] decides what goes in; this module only lays it out.

/// Elements that start a new line of text.
pub const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

/// Elements that title what follows them: a paragraph of their own, set apart by blank lines,
/// so that no sentence runs on from one into the text under it ("2.7 Thread Safety" over
/// "libffi is not completely thread-safe.").
pub const TITLES: &[&str] = &["h1", "h2", "h3", "h4", "h5", "h6", "caption"];

/// Text as a browser lays it out: runs of white space one space, none at the start of a line,
/// a line break where a block starts or ends; preformatted text as it is.
#[derive(Default)]
pub struct Text {
    pub out: String,
    pub space: bool,
}

impl Text {
    pub fn push(&mut self, text: &str, preformatted: bool) {
        if preformatted {
            self.out.push_str(text);
            self.space = false;
            return;
        }
        for c in text.chars() {
            if c.is_whitespace() {
                self.space = true;
                continue;
            }
            if self.space && !self.out.is_empty() && !self.out.ends_with('\n') {
                self.out.push(' ');
            }
            self.space = false;
            self.out.push(c);
        }
    }

    pub fn newline(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        self.space = false;
    }

    /// Ends the line and leaves one blank line: a paragraph ends here.
    pub fn paragraph(&mut self) {
        self.newline();
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }
}
