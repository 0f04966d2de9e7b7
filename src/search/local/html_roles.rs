//! What an HTML element is to a reader where its name does not say it all, by its class or
//! role as documentation generators write them: navigation and permalink marks a reader skips
//! (Sphinx's `related` bar and `sphinxsidebar`, Texinfo's `header` and `nav-panel`, DocBook's
//! `navheader`, `role="navigation"`; Sphinx's `headerlink`, Texinfo's `copiable-anchor`),
//! code (Sphinx's `highlight`, Texinfo's `example` and `lisp`, docutils' `literal-block`,
//! `language-*`) and signatures (Sphinx's `<dt class="sig">` and its object lists, Texinfo's
//! definitions). [`super::html`] acts on the answers; this module only looks at one tag.

use html5ever::tokenizer::Tag;

/// Classes of navigation: the bars and panels that link a page to others. Texinfo's
/// `header` is one only on a page Texinfo made: elsewhere (Doxygen's) it holds the title.
const NAVIGATION: &[&str] = &[
    "related",
    "sphinxsidebar",
    "nav-panel",
    "navheader",
    "navfooter",
    "navigation",
];

/// Elements that hold a navigation bar when their class or role says so.
const NAVIGATION_HOLDERS: &[&str] = &[
    "div", "ul", "ol", "table", "section", "aside", "header", "footer", "p",
];

/// Classes of a heading's or a definition's permalink (`¶`).
const PERMALINKS: &[&str] = &[
    "headerlink",
    "copiable-anchor",
    "copiable-link",
    "hash-link",
    "anchorjs-link",
];

/// Classes of code, whole or as a prefix (`highlight-python3`, `language-rust`).
const CODE_PREFIXES: &[&str] = &[
    "highlight",
    "language-",
    "lang-",
    "sourcecode",
    "literal-block",
    "code",
    "hljs",
    "prettyprint",
    "doctest",
    "programlisting",
    "verbatim",
];

/// Classes of code, whole only: Texinfo's blocks (`example` alone is too common a word to
/// match as a prefix), DocBook's screens and synopses.
const CODE_CLASSES: &[&str] = &[
    "example",
    "smallexample",
    "lisp",
    "smalllisp",
    "example-preformatted",
    "smallexample-preformatted",
    "lisp-preformatted",
    "smalllisp-preformatted",
    "screen",
    "synopsis",
    "console",
    "shell",
];

/// The kinds of object whose definition lists' terms are signatures: Sphinx's domains'
/// (`<dl class="py function">`, or `class="function"` before Sphinx 4) and Texinfo's
/// (`<dl class="def">`, `first-deffn`).
const SIGNATURE_LISTS: &[&str] = &[
    "function",
    "method",
    "class",
    "attribute",
    "data",
    "exception",
    "classmethod",
    "staticmethod",
    "decorator",
    "decoratormethod",
    "property",
    "type",
    "macro",
    "member",
    "var",
    "struct",
    "union",
    "enum",
    "enumerator",
    "describe",
    "object",
    "option",
    "cmdoption",
    "envvar",
    "opcode",
    "pdbcommand",
    "def",
];

/// The value of `tag`'s attribute `name`, if it has one.
fn attribute<'a>(tag: &'a Tag, name: &str) -> Option<&'a str> {
    tag.attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

/// The classes of `tag`, in lower case.
fn classes(tag: &Tag) -> impl Iterator<Item = String> + '_ {
    attribute(tag, "class")
        .unwrap_or_default()
        .split_ascii_whitespace()
        .map(str::to_ascii_lowercase)
}

/// A navigation bar or a permalink: left out of the text with all it holds. `texinfo`: the
/// page is Texinfo's.
pub fn is_left_out(tag: &Tag, texinfo: bool) -> bool {
    let name: &str = &tag.name;
    if name == "a" {
        return classes(tag).any(|c| PERMALINKS.contains(&c.as_str()));
    }
    NAVIGATION_HOLDERS.contains(&name)
        && (attribute(tag, "role").is_some_and(|r| r.eq_ignore_ascii_case("navigation"))
            || classes(tag).any(|c| NAVIGATION.contains(&c.as_str()) || (texinfo && c == "header")))
}

/// A `<meta name="Generator">` that names Texinfo's `makeinfo` or `texi2any`.
pub fn made_by_texinfo(tag: &Tag) -> bool {
    &*tag.name == "meta"
        && attribute(tag, "name").is_some_and(|n| n.eq_ignore_ascii_case("generator"))
        && attribute(tag, "content")
            .is_some_and(|c| c.contains("makeinfo") || c.contains("texi2any"))
}

/// Code by its class: a `<pre>` so named is code, and so is a `<pre>` inside a `<div>` so
/// named (Sphinx: `<div class="highlight"><pre>`).
pub fn is_code(tag: &Tag) -> bool {
    classes(tag).any(|c| {
        CODE_CLASSES.contains(&c.as_str()) || CODE_PREFIXES.iter().any(|p| c.starts_with(p))
    })
}

/// A definition list whose terms are signatures.
pub fn lists_signatures(tag: &Tag) -> bool {
    classes(tag).any(|c| SIGNATURE_LISTS.contains(&c.as_str()) || c.starts_with("first-def"))
}

/// A term that is a signature: so classed (Sphinx's `sig`, Texinfo's `deffn`), or in a list
/// of signatures.
pub fn is_signature(tag: &Tag, in_signature_list: bool) -> bool {
    in_signature_list
        || classes(tag).any(|c| {
            c == "sig" || (c.starts_with("def") && c != "default" && !c.starts_with("defini"))
        })
}
