//! Documents read as a person reads them (issue 57, item 3), through the real binary without a
//! model: a page of Python's library reference as Sphinx writes it, a Texinfo manual's page, a
//! man page as Debian installs it (roff, gzip-compressed), reStructuredText as a project's
//! Sphinx sources hold it and Markdown with fenced and indented code. Code, signatures, version
//! notes ("New in version 3.5"), permalink marks (`¶`) and navigation are not prose: no report
//! quotes them, leads with them or glues them to a sentence, whatever words the question shares
//! with them; the code stays searchable.

use std::io::Write;

use researchflow::offline::units::units;
use researchflow::search::local::LocalIndex;

use crate::support::researchflow;
use crate::support::scenario::{final_report as report, read_json};

/// A page of the library reference as Sphinx writes it: the navigation bar above and the
/// sidebar below the body, a heading's `¶` link, a code block, a signature, a version note.
const SPHINX: &str = r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8" />
<title>json — JSON encoder and decoder &#8212; Python 3.12 documentation</title></head>
<body>
<div class="related" role="navigation" aria-label="Related"><h3>Navigation</h3><ul>
<li class="right"><a href="../genindex.html" accesskey="I">index</a></li>
<li class="right"><a href="mailbox.html" accesskey="N">next</a> |</li>
<li class="right"><a href="email.iterators.html" accesskey="P">previous</a> |</li>
<li><a href="../index.html">3.12 Documentation</a> &#187;</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
<section id="module-json">
<h1><code class="xref py py-mod docutils literal notranslate"><span class="pre">json</span></code> — JSON encoder and decoder<a class="headerlink" href="#module-json" title="Link to this heading">¶</a></h1>
<p>JSON is a lightweight data interchange format inspired by JavaScript object literal syntax, although it is not a strict subset of it.</p>
<p>Encoding basic Python object hierarchies with sorted keys:</p>
<div class="highlight-python3 notranslate"><div class="highlight"><pre><span></span><span class="gp">&gt;&gt;&gt; </span><span class="kn">import</span> <span class="nn">json</span>
<span class="n">warnings</span><span class="o">.</span><span class="n">warn</span><span class="p">(</span><span class="s2">&quot;The optional parameters of dumps are keyword-only.&quot;</span><span class="p">)</span>
<span class="gp">&gt;&gt;&gt; </span><span class="nb">print</span><span class="p">(</span><span class="n">json</span><span class="o">.</span><span class="n">dumps</span><span class="p">({</span><span class="s2">&quot;c&quot;</span><span class="p">:</span> <span class="mi">0</span><span class="p">},</span> <span class="n">sort_keys</span><span class="o">=</span><span class="kc">True</span><span class="p">))</span>
</pre></div></div>
<section id="basic-usage">
<h2>Basic Usage<a class="headerlink" href="#basic-usage" title="Link to this heading">¶</a></h2>
<dl class="py function">
<dt class="sig sig-object py" id="json.dumps"><span class="sig-prename descclassname"><span class="pre">json.</span></span><span class="sig-name descname"><span class="pre">dumps</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">obj</span></span></em>, <em class="sig-param"><span class="o"><span class="pre">*</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">sort_keys</span></span><span class="o"><span class="pre">=</span></span><span class="default_value"><span class="pre">False</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#json.dumps" title="Link to this definition">¶</a></dt>
<dd><p>Serialize <em>obj</em> to a JSON formatted <code class="docutils literal notranslate"><span class="pre">str</span></code> using this conversion table.</p>
<p>If <em>sort_keys</em> is true, then the output of dictionaries will be sorted by key.</p>
<div class="versionchanged"><p><span class="versionmodified changed">Changed in version 3.6: </span>All optional parameters of dumps are now keyword-only.</p></div>
<div class="versionadded"><p><span class="versionmodified added">New in version 3.5.</span></p></div>
</dd></dl>
<dl class="py data">
<dt class="sig sig-object py" id="json.float_style"><span class="sig-prename descclassname"><span class="pre">json.</span></span><span class="sig-name descname"><span class="pre">float_style</span></span><a class="headerlink" href="#json.float_style" title="Link to this definition">¶</a></dt>
<dd><p>A string that says how the encoder writes floats in every output.</p></dd></dl>
</section></section>
</div></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="Main"><div class="sphinxsidebarwrapper">
<h3>Table of Contents</h3><ul><li><a href="#">json — JSON encoder and decoder</a></li></ul>
<h4>Previous topic</h4><p class="topless"><a href="email.iterators.html">email.iterators: Iterators</a></p>
</div></div></div>
</body></html>
"##;

/// A page of a Texinfo manual as makeinfo writes it: the navigation header, a definition's
/// signature with its `¶` anchor, and an example block.
const TEXINFO: &str = r##"<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" "http://www.w3.org/TR/html4/loose.dtd">
<html><!-- Created by GNU Texinfo 6.8, https://www.gnu.org/software/texinfo/ -->
<head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>The Basics (libffi: the portable foreign function interface library)</title></head>
<body lang="en">
<div class="section" id="The-Basics">
<div class="header"><p>
Next: <a href="Simple-Example.html" accesskey="n" rel="next">Simple Example</a>, Previous: <a href="Introduction.html" accesskey="p" rel="prev">Introduction</a>, Up: <a href="Using-libffi.html" accesskey="u" rel="up">Using libffi</a> &nbsp; [<a href="Index.html" title="Index" rel="index">Index</a>]</p>
</div>
<hr>
<h3 class="section">2.1 The Basics</h3>
<p>To call a function using an initialized <code>ffi_cif</code>, use the <code>ffi_call</code> function:</p>
<dl class="def">
<dt id="index-ffi_005fcall"><span class="category">Function: </span><span><strong>void</strong> <em>ffi_call (ffi_cif *<var>cif</var>, void *<var>fn</var>, void *<var>rvalue</var>, void **<var>avalues</var>)</em><a href='#index-ffi_005fcall' class='copiable-anchor'> &para;</a></span></dt>
<dd><p>This calls the function <var>fn</var> according to the description given in <var>cif</var>.</p>
<p>The result of the call is written to the memory that rvalue points to, never returned.</p>
</dd></dl>
<p>Here is how a program checks what the call wrote:</p>
<div class="example">
<pre class="example">ffi_call(&amp;cif, puts, &amp;rc, values);
printf(&quot;ffi_call returns nothing and the result is in rc.\n&quot;)
</pre></div>
<div class="header"><p>
Next: <a href="Simple-Example.html" accesskey="n" rel="next">Simple Example</a>, Up: <a href="Using-libffi.html" accesskey="u" rel="up">Using libffi</a></p>
</div>
</div>
</body></html>
"##;

/// A man page as its author writes it (roff), with a synopsis, options and an example.
const MAN: &str = r##".\" Generated by hand for the test.
.TH FROB 1 "March 2024" "frob 2.1" "User Commands"
.SH NAME
frob \- adjust the frobnication level of a file
.SH SYNOPSIS
.B frob
[\fB\-l\fR \fIlevel\fR] [\fB\-\-dry\-run\fR] \fIfile\fR...
.SH DESCRIPTION
.B frob
changes the frobnication level of each
.I file
in place.
The default frobnication level is 3, and levels above 9 are refused.
.SH OPTIONS
.TP
.BR \-l ", " \-\-level =\fIN\fR
set the frobnication level to \fIN\fR instead of the default one.
.TP
.B \-\-dry\-run
print what would change, without writing any file at all.
.SH EXAMPLES
.nf
frob \-l 5 notes.txt   # the default level of notes.txt becomes 5.
.fi
.SH "SEE ALSO"
.BR frobctl (8)
"##;

/// Markdown with fenced and indented code and a version note.
const MARKDOWN: &str = "# Write cache\n\n\
The cache is flushed to disk when its buffer fills or when the program exits.\n\n\
```python\n\
logger.info(\"The cache is flushed to disk after every single write.\")\n\
```\n\n\
\x20   cache.flush()  # flushes the cache to disk at once, whatever is in it.\n\n\
New in version 2.0: the cache can be flushed to disk by hand at any time.\n\n\
Writes that arrive during a flush wait until the flush is over.\n";

/// reStructuredText as a Python project's Sphinx sources hold it: a title, a literal block
/// after `::`, a `code-block`, an object directive's signature over its description, version
/// notes, a note, a role, and what only builds the site.
const RST: &str = r##"=============
Pool settings
=============

.. toctree::
   :maxdepth: 2

.. _pools:

A pool keeps up to ``maxsize`` connections open to one host, ten by default.
Create one with :func:`~pool.connection_from_url`::

    pool = connection_from_url("https://example.com", maxsize=10)
    pool.drain("every connection is closed when the pool is drained.")

.. function:: drain(reason, timeout=30)

   Closes the idle connections of the pool at once.

   .. versionadded:: 1.26

   .. versionchanged:: 2.0
      Draining waits for busy connections to finish.

.. note:: A drained pool opens new connections when it is asked for one.

.. code-block:: python

   logging.getLogger("pool").info("the pool is drained after each request.")
"##;

/// One document of each kind: its file name, its bytes, a question whose words are those of
/// its code or notes, the prose a person reads there, and what no report may quote from it.
struct Doc {
    name: &'static str,
    bytes: Vec<u8>,
    question: &'static str,
    prose: &'static [&'static str],
    never: &'static [&'static str],
    /// A word only its code holds: the document is still found by it.
    code_word: &'static str,
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

fn docs() -> Vec<Doc> {
    vec![
        Doc {
            name: "json.html",
            bytes: SPHINX.as_bytes().to_vec(),
            question: "Are the optional parameters of json.dumps keyword-only?",
            prose: &[
                "Serialize obj to a JSON formatted str using this conversion table.",
                "If sort_keys is true, then the output of dictionaries will be sorted by key.",
                "A string that says how the encoder writes floats in every output.",
            ],
            never: &[
                "Changed in version",
                "New in version",
                "warnings.warn",
                "json.dumps(obj",
                "float_style",
                "\u{b6}",
                "Navigation",
                "previous |",
                "Table of Contents",
            ],
            code_word: "warnings",
        },
        Doc {
            name: "The-Basics.html",
            bytes: TEXINFO.as_bytes().to_vec(),
            question: "What does ffi_call return, and where is the result?",
            prose: &[
                "This calls the function fn according to the description given in cif.",
                "The result of the call is written to the memory that rvalue points to, never \
                 returned.",
            ],
            never: &[
                "printf",
                "ffi_call(&cif",
                "Function: void",
                "Next:",
                "Up:",
                "\u{b6}",
            ],
            code_word: "printf",
        },
        Doc {
            name: "frob.1.gz",
            bytes: gzip(MAN.as_bytes()),
            question: "What is the default frobnication level of frob?",
            prose: &[
                "The default frobnication level is 3, and levels above 9 are refused.",
                "print what would change, without writing any file at all.",
            ],
            never: &[
                "\\f",
                ".TH",
                ".TP",
                ".SH",
                ".B ",
                "\\-",
                "notes.txt",
                "[-l level]",
                "--level",
            ],
            code_word: "notes",
        },
        Doc {
            name: "pools.rst",
            bytes: RST.as_bytes().to_vec(),
            question: "When is the pool drained, and what happens to its connections?",
            prose: &[
                "A pool keeps up to maxsize connections open to one host, ten by default.",
                "Closes the idle connections of the pool at once.",
                "A drained pool opens new connections when it is asked for one.",
            ],
            never: &[
                "every connection is closed",
                "after each request",
                "drain(reason",
                "Changed in version",
                "New in version",
                "versionadded",
                "toctree",
                "_pools",
                ":func:",
                "``",
            ],
            code_word: "logging",
        },
        Doc {
            name: "cache.md",
            bytes: MARKDOWN.as_bytes().to_vec(),
            question: "When is the cache flushed to disk?",
            prose: &[
                "The cache is flushed to disk when its buffer fills or when the program exits.",
                "Writes that arrive during a flush wait until the flush is over.",
            ],
            never: &["logger.info", "cache.flush()", "New in version", "```"],
            code_word: "logger",
        },
    ]
}

/// What a reader takes as the answer: the Answer section's first line of text, or, when it
/// says that no sentence states it, the first passage it quotes.
fn leading_answer(report: &str) -> String {
    let answer = report.split("## Answer").nth(1).unwrap_or_default();
    let mut lines = answer.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    // An abstention restates the question's words; what it quotes first is its first passage.
    match first.starts_with("No sentence of the sources states") {
        true => lines
            .find_map(|l| l.strip_prefix("- "))
            .unwrap_or_default()
            .to_string(),
        false => first.to_string(),
    }
}

/// Each document alone in a corpus, asked a question whose words are its code's or its
/// notes': no quote of the report (Answer, findings) holds code, a signature, a version note,
/// a `¶` or navigation, nor roff markup; nor does any unit the engine may quote from the
/// indexed text, where each prose sentence is a unit, whole; and the code still finds the
/// document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_notes_signatures_and_navigation_are_never_quoted() {
    let mut problems = Vec::new();
    for doc in docs() {
        let work = tempfile::tempdir().expect("tempdir");
        let corpus = work.path().join("corpus");
        std::fs::create_dir_all(&corpus).expect("mkdir");
        std::fs::write(corpus.join(doc.name), &doc.bytes).expect("write");
        let index = work.path().join("index");
        researchflow()
            .current_dir(work.path())
            .args(["workflow", "--offline", "--corpus"])
            .arg(&corpus)
            .arg("--index-dir")
            .arg(&index)
            .args(["--query", doc.question, "--out", "p.json"])
            .run()
            .await
            .success();
        let report = report(&read_json(&work.path().join("p.json")));
        let lead = leading_answer(&report);
        for never in doc.never.iter().filter(|never| report.contains(*never)) {
            problems.push(format!("{}: `{never}` quoted in\n{report}", doc.name));
        }
        if lead.starts_with(['`', '>', '.']) || lead.to_lowercase().contains("in version") {
            problems.push(format!("{}: leads with {lead}", doc.name));
        }
        let (index, _) = LocalIndex::open(&corpus, Some(&index)).expect("index");
        let hits = index.search(doc.code_word, 5).expect("search");
        assert_eq!(hits.len(), 1, "{}: code is searchable", doc.name);
        let text = index.document(hits[0].url.as_str()).expect("indexed").text;
        let quotable: Vec<&str> = units(&text).into_iter().map(|u| &text[u.at]).collect();
        for prose in doc.prose.iter().filter(|p| !quotable.contains(p)) {
            problems.push(format!("{}: `{prose}` not a unit of\n{text}", doc.name));
        }
        for (unit, never) in quotable
            .iter()
            .flat_map(|u| doc.never.iter().map(move |n| (u, n)))
            .filter(|(u, n)| u.contains(**n))
        {
            problems.push(format!("{}: `{never}` in the unit `{unit}`", doc.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A corpus of the five kinds together: the report of a question that touches all of them
/// leads with a sentence of prose, never with code or a version note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_over_reference_documents_leads_with_prose() {
    let work = tempfile::tempdir().expect("tempdir");
    let corpus = work.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("mkdir");
    let docs = docs();
    for doc in &docs {
        std::fs::write(corpus.join(doc.name), &doc.bytes).expect("write");
    }
    for (n, question) in [
        "Which parameters are keyword-only since version 3.6?",
        "Where is the result of ffi_call written, and what does printf show?",
        "What does logger.info say about flushing the cache after every single write?",
    ]
    .into_iter()
    .enumerate()
    {
        let out = format!("p{n}.json");
        researchflow()
            .current_dir(work.path())
            .args(["workflow", "--offline", "--corpus"])
            .arg(&corpus)
            .arg("--index-dir")
            .arg(work.path().join("index"))
            .args(["--query", question, "--out", &out])
            .run()
            .await
            .success();
        let report = report(&read_json(&work.path().join(&out)));
        let lead = leading_answer(&report);
        for never in docs.iter().flat_map(|d| d.never.iter()) {
            assert!(!lead.contains(never), "{question}: leads with {lead}");
        }
        assert!(report.contains("## Answer"), "{report}");
    }
}

/// Markdown whose tight list items hold a sub-list or a quote (issue 56: the fuzzer found a
/// tight item's text run into its sub-item's, `one` over `two` read "onetwo"): each item's
/// words are words of their own, found by a search, and each item's sentence is a unit
/// whole, never run on from the item above it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tight_list_item_and_its_sub_items_are_words_apart() {
    let work = tempfile::tempdir().expect("tempdir");
    let corpus = work.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("mkdir");
    std::fs::write(
        corpus.join("steps.md"),
        "# Release steps\n\n\
         - Preparation\n  - Tag the release commit and sign it.\n  - Recalibrate the frobnicators.\n\
         - Publication\n  > Uploads are mirrored within the hour.\n",
    )
    .expect("write");
    let index = work.path().join("index");
    researchflow()
        .current_dir(work.path())
        .args(["workflow", "--offline", "--corpus"])
        .arg(&corpus)
        .arg("--index-dir")
        .arg(&index)
        .args([
            "--query",
            "How soon are uploads mirrored?",
            "--out",
            "p.json",
        ])
        .run()
        .await
        .success();
    let report = report(&read_json(&work.path().join("p.json")));
    for glued in ["PreparationTag", "PublicationUploads"] {
        assert!(!report.contains(glued), "`{glued}` in\n{report}");
    }
    let (index, _) = LocalIndex::open(&corpus, Some(&index)).expect("index");
    for word in ["Tag", "Uploads", "Preparation", "Publication"] {
        let hits = index.search(word, 5).expect("search");
        assert_eq!(hits.len(), 1, "`{word}` finds steps.md");
    }
    let text = index
        .search("frobnicators", 5)
        .expect("search")
        .first()
        .and_then(|hit| index.document(hit.url.as_str()))
        .expect("steps.md indexed")
        .text;
    let quotable: Vec<&str> = units(&text).into_iter().map(|u| &text[u.at]).collect();
    for sentence in [
        "Tag the release commit and sign it.",
        "Uploads are mirrored within the hour.",
    ] {
        assert!(
            quotable.contains(&sentence),
            "`{sentence}` not a unit of\n{text}"
        );
    }
}

/// A README's HTML block (`<p align="center">`, a `<details>` summary) is read as a browser
/// shows it: its words are found (before: every word of an HTML block was left out), its
/// comment and script are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_of_a_markdown_html_block_is_searchable() {
    let work = tempfile::tempdir().expect("tempdir");
    let corpus = work.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("mkdir");
    std::fs::write(
        corpus.join("README.md"),
        "# Frob\n\n<p align=\"center\">Frobnicators recalibrate nightly.</p>\n\n\
         <details>\n<summary>Installation</summary>\n\nRun the installer once.\n\n</details>\n\n\
         <!-- stale remark -->\n<script>tracker()</script>\n\nThe rest is prose.\n",
    )
    .expect("write");
    let index = work.path().join("index");
    researchflow()
        .current_dir(work.path())
        .args(["workflow", "--offline", "--corpus"])
        .arg(&corpus)
        .arg("--index-dir")
        .arg(&index)
        .args([
            "--query",
            "When do frobnicators recalibrate?",
            "--out",
            "p.json",
        ])
        .run()
        .await
        .success();
    let (index, _) = LocalIndex::open(&corpus, Some(&index)).expect("index");
    for (word, found) in [
        ("nightly", 1),
        ("Installation", 1),
        ("installer", 1),
        ("stale", 0),
        ("tracker", 0),
    ] {
        let hits = index.search(word, 5).expect("search");
        assert_eq!(
            hits.len(),
            found,
            "`{word}` finds README.md {found} time(s)"
        );
    }
}
