//! Man pages, `search::local::man::{is_roff, is_alias, to_text}` as the corpus reads a `.1`,
//! `.3` or `.8` file: never panics, never overflows the stack, stays within the time and memory
//! bounds, and gives at most 8 bytes of text per byte of page; a generated page (a `.TH`, a
//! NAME line, sections of filled paragraphs, font macros, `.TP` and `.IP` tags, `.RS` indents,
//! `.nf` and `.EX` blocks, tables, conditionals and macro definitions it leaves out) is roff,
//! no alias, its words come out in order, each a word of its own, and its NAME line is the
//! title.

use researchflow::search::local::man::{is_alias, is_roff, to_text};

use crate::html::in_order;
use crate::inputs::Gen;
use crate::target::{Expect, Input, Target, short};

pub struct ManTarget {
    seeds: Vec<Vec<u8>>,
}

impl ManTarget {
    pub fn new() -> ManTarget {
        let mut seeds: Vec<Vec<u8>> = [
            ".TH FROB 1 \"March 2024\" \"frob 2.1\"\n.SH NAME\nfrob \\- adjust a file\n.SH SYNOPSIS\n.B frob\n[\\fB\\-l\\fR \\fIlevel\\fR] \\fIfile\\fR...\n.SH OPTIONS\n.TP\n.BR \\-l \", \" \\-\\-level =\\fIN\\fR\nset the level.\n",
            ".Dd March 1, 2024\n.Dt FROB 1\n.Os\n.Sh NAME\n.Nm frob\n.Nd adjust a file\n.Sh SYNOPSIS\n.Nm\n.Op Fl l Ar level\n.Bl -tag -width Ds\n.It Fl l Xo\n.Ar level\n.Xc\nsets it.\n.El\n.Bd -literal\nfrob -l 5\n.Ed\n",
            ".so man1/frob.1\n",
            "'\\\" t\n.TH T 1\n.TS\nallbox tab(;);\nl l.\na;b\nT{\nc\nT};d\n.TE\n",
            ".de Vb\n.nf\n..\n.de Ve\n.fi\n..\n.TH P 3pm\n.Vb 1\n\\&  use P;\n.Ve\n.ie n \\{\\\nx\n.\\}\n.el \\{ y \\}\n.ig\nignored\n..\n",
        ]
        .map(|s| s.as_bytes().to_vec())
        .to_vec();
        let mut g = Gen::new(11);
        seeds.extend((0..16).map(|_| valid_page(&mut g).bytes));
        ManTarget { seeds }
    }
}

fn phrase(g: &mut Gen, words: &mut Vec<String>, n: usize) -> String {
    let shown: Vec<String> = (0..n).map(|_| g.word()).collect();
    let text = shown.join(" ");
    words.extend(shown);
    text
}

/// A page of sections, the words it shows, and its title (the NAME line).
fn valid_page(g: &mut Gen) -> Input {
    let mut words = Vec::new();
    let mut page = String::new();
    if g.rng.bool() {
        page.push_str(".\\\" Generated for the fuzzer.\n");
    }
    page.push_str(&format!(
        ".TH {} {}\n",
        g.word().to_uppercase(),
        g.rng.u8(1..9)
    ));
    let title = match g.rng.u8(..4) {
        0 => None,
        _ => {
            let name = phrase(g, &mut words, 1);
            let n = g.rng.usize(1..5);
            let what = phrase(g, &mut words, n);
            page.push_str(&format!(".SH NAME\n{name} \\- {what}\n"));
            Some(format!("{name} - {what}"))
        }
    };
    for _ in 0..g.rng.usize(1..5) {
        page.push_str(&format!(".SH {}\n", g.word().to_uppercase()));
        words.push(words_of_last_line(&page));
        for _ in 0..g.rng.usize(1..6) {
            block(g, &mut page, &mut words);
        }
    }
    Input::new(page, Expect::Words { words, title })
}

/// The section name just written, as the text shows it.
fn words_of_last_line(page: &str) -> String {
    page.trim_end()
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// One block of a section's body: its requests and the words it shows, appended.
fn block(g: &mut Gen, page: &mut String, words: &mut Vec<String>) {
    let n = g.rng.usize(1..6);
    match g.rng.u8(..10) {
        0 => page.push_str(&format!(".PP\n{}\n", phrase(g, words, n))),
        1 => {
            let font = g.pick(&["B", "I", "SM"]);
            page.push_str(&format!(".{font} {}\n", phrase(g, words, n)));
        }
        2 => {
            // Alternating fonts join their arguments: a word and a reference.
            let name = phrase(g, words, 1);
            let section = g.rng.u8(1..9);
            words.push(section.to_string());
            page.push_str(&format!(".BR {name} ({section})\n"));
        }
        3 => {
            let tag = phrase(g, words, 1);
            let text = phrase(g, words, n);
            page.push_str(&format!(".TP\n.B \\-{tag}\n{text}\n"));
        }
        4 => {
            let text = phrase(g, words, n);
            page.push_str(&format!(".IP \\(bu 2\n{text}\n"));
        }
        5 => {
            let text = phrase(g, words, n);
            page.push_str(&format!(".RS\n{text}\n.RE\n"));
        }
        6 => {
            let (start, end) = *g.pick(&[&(".nf", ".fi"), &(".EX", ".EE")]);
            let lines: Vec<String> = (0..g.rng.usize(1..4))
                .map(|_| phrase(g, words, n))
                .collect();
            page.push_str(&format!("{start}\n{}\n{end}\n", lines.join("\n")));
        }
        7 => {
            let (a, b) = (phrase(g, words, 1), phrase(g, words, 1));
            page.push_str(&format!(".TS\ntab(;);\nl l.\n{a};{b}\n.TE\n"));
        }
        8 => {
            // What the reader leaves out: a definition, a conditional, a comment.
            page.push_str(match g.rng.u8(..3) {
                0 => ".de XX\n.ft B\nhidden\n..\n",
                1 => ".if t \\{\\\n.ft B\nhidden\n.\\}\n",
                _ => ".\\\" hidden\n",
            });
        }
        _ => {
            // A filled paragraph over lines, with escapes that print nothing between words.
            let (a, b) = (phrase(g, words, n), phrase(g, words, n));
            page.push_str(&format!("\\fB{a}\\fR\n\\&{b}\\(em\n"));
        }
    }
}

impl ManTarget {
    const TOKENS: &'static [&'static str] = &[
        ".TH ",
        ".SH ",
        ".SS ",
        ".TP\n",
        ".TQ\n",
        ".IP ",
        ".PP\n",
        ".RS\n",
        ".RE\n",
        ".nf\n",
        ".fi\n",
        ".EX\n",
        ".EE\n",
        ".Vb\n",
        ".Ve\n",
        ".de ",
        "..\n",
        ".ig\n",
        ".if ",
        ".ie ",
        ".el ",
        "\\{",
        "\\}",
        ".TS\n",
        ".TE\n",
        "tab(;);\n",
        "T{",
        "T}",
        ".B ",
        ".BR ",
        ".SY ",
        ".OP ",
        ".so ",
        ".Dd",
        ".Dt ",
        ".Sh ",
        ".Nm ",
        ".Nd ",
        ".It ",
        ".Xo",
        ".Xc\n",
        ".Bl ",
        ".El\n",
        ".Bd -literal\n",
        ".Ed\n",
        ".Dl ",
        ".D1 ",
        ".Op ",
        ".Fl ",
        ".Ar ",
        ".Xr ",
        "\\-",
        "\\(em",
        "\\(",
        "\\[",
        "]",
        "\\*(",
        "\\fB",
        "\\fI",
        "\\fR",
        "\\f(CW",
        "\\s-1",
        "\\c",
        "\\&",
        "\\e",
        "\\\"",
        "\\",
        "\"",
        "'",
        ".",
        "\n",
        " ",
        "\t",
        ";",
        "\u{0}",
        "é",
    ];
}

impl Target for ManTarget {
    fn name(&self) -> &'static str {
        "man"
    }

    fn tokens(&self) -> &'static [&'static str] {
        ManTarget::TOKENS
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (".RS\n", ".RE\n"),
            (".if n \\{\\\n", ".\\}\n"),
            ("\\{", "\\}"),
            (".nf\n", ".fi\n"),
            (".de X\n", "..\n"),
            (".It Xo\n", ".Xc\n"),
            ("\\fB", "\\fR"),
            (".TS\n", ".TE\n"),
        ]
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        valid_page(g)
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        let page = input.text();
        let (roff, alias) = (is_roff(&page), is_alias(&page));
        let (title, text) = to_text(&page);
        if text.len() > 8 * page.len() + 64 {
            return Err(format!(
                "text of {} bytes from a page of {}: {}",
                text.len(),
                page.len(),
                short(&page)
            ));
        }
        if let Expect::Words { words, title: want } = &input.expect {
            if !roff || alias {
                return Err(format!(
                    "roff: {roff}, alias: {alias}, for {}",
                    short(&page)
                ));
            }
            in_order(words, &text)?;
            if want.is_some() && title != *want {
                return Err(format!(
                    "title: {title:?}, not {want:?}, in {}",
                    short(&page)
                ));
            }
        }
        Ok(())
    }
}
