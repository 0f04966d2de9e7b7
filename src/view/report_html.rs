//! Markdown (the report, a summary) as HTML that can only be read: pulldown-cmark renders it,
//! with raw HTML turned into text (`<script>` shows as written), a link kept only when
//! [`Links`] allows its target (else its text stays, unlinked), and an image shown as its
//! alternative text, since a view loads nothing (`crate::markdown::without_images`, which the
//! report's Markdown goes through too). pulldown-cmark escapes text and attributes.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, html};

use super::html::{Links, cut, esc};

/// `markdown` as HTML, cut to `max_chars` first (a note says so).
pub fn render(markdown: &str, max_chars: usize, links: &Links) -> String {
    let clean = crate::markdown::without_images(&crate::text::strip_controls(markdown));
    let (text, was_cut) = cut(&clean, max_chars);
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    // Whether each open link was kept, innermost last.
    let mut open_links: Vec<bool> = Vec::new();
    let events = Parser::new_ext(text, options).filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::HtmlBlock) => Some(Event::Start(Tag::Paragraph)),
        Event::End(TagEnd::HtmlBlock) => Some(Event::End(TagEnd::Paragraph)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let href = links.href(&dest_url);
            open_links.push(href.is_some());
            href.map(|href| {
                Event::Start(Tag::Link {
                    link_type,
                    dest_url: CowStr::from(href),
                    title,
                    id,
                })
            })
        }
        Event::End(TagEnd::Link) => open_links
            .pop()
            .unwrap_or(false)
            .then_some(Event::End(TagEnd::Link)),
        other => Some(other),
    });
    let mut rendered = String::with_capacity(text.len() * 2);
    html::push_html(&mut rendered, events);
    let mut out = aligned_by_class(&rendered);
    if was_cut {
        out.push_str(&format!(
            r#"<p class="note">Cut here: the rest ({} characters) is in the file.</p>"#,
            clean.chars().count() - max_chars
        ));
    }
    out
}

/// pulldown-cmark aligns a table's columns (`|:---|---:|`) with `style` attributes, which the
/// page's policy refuses (it allows only our stylesheet) with an error on the console: the
/// same alignment as a class of that stylesheet. Only the renderer's attribute matches, since
/// it ends the tag with `>`, and every `>` of the text is escaped.
fn aligned_by_class(html: &str) -> String {
    html.replace(r#" style="text-align: left">"#, r#" class="align-left">"#)
        .replace(
            r#" style="text-align: center">"#,
            r#" class="align-center">"#,
        )
        .replace(r#" style="text-align: right">"#, r#" class="align-right">"#)
}

/// Plain text (a summary, an analysis, a snippet) as a paragraph that keeps its line breaks,
/// cut to `max_chars` (a note says so).
pub fn plain(text: &str, max_chars: usize) -> String {
    let (shown, was_cut) = cut(text.trim(), max_chars);
    let mut out = format!(r#"<div class="text">{}</div>"#, esc(shown));
    if was_cut {
        out.push_str(&format!(
            r#"<p class="note">Cut to {max_chars} characters: the whole text is in the plan file.</p>"#
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_text_and_only_allowed_links_stay() {
        let md = "# Q <img src=x onerror=alert(1)>\n\n<script>alert(1)</script>\n\n\
                  [ok](https://example.org) [bad](javascript:alert(1)) \
                  ![pic](https://example.org/p.png) <https://example.org/auto>\n";
        let html = render(md, 10_000, &Links::web());
        assert!(
            !html.contains("<script") && !html.contains("<img"),
            "{html}"
        );
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="https://example.org">ok</a>"#),
            "{html}"
        );
        assert!(!html.contains("javascript:") || !html.contains("href=\"javascript"));
        assert!(html.contains("bad") && html.contains("pic"), "{html}");
        assert_eq!(html.matches("<a ").count(), 2, "{html}");
    }

    #[test]
    fn table_alignment_is_a_class_never_a_style_attribute() {
        let md = "| a | b | c | d |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |\n\n\
                  ` style=\"text-align: left\">` and \" style=\"text-align: right\">\n";
        let html = render(md, 10_000, &Links::web());
        assert!(
            !html.contains("<th style") && !html.contains("<td style"),
            "{html}"
        );
        assert_eq!(
            html.matches(r#"<th class="align-left">"#).count(),
            1,
            "{html}"
        );
        assert_eq!(html.matches(r#"<td class="align-center">"#).count(), 1);
        assert_eq!(html.matches(r#"<td class="align-right">"#).count(), 1);
        assert!(html.contains("<th>d</th>"), "{html}");
        // The same words in the text stay text.
        assert!(
            html.contains(r#"<code> style="text-align: left"&gt;</code>"#)
                && html.contains(r#"and " style="text-align: right"&gt;"#),
            "{html}"
        );
    }

    #[test]
    fn long_text_is_cut_with_a_note() {
        let html = plain(&"x".repeat(50), 10);
        assert!(html.contains(&format!(">{}</div>", "x".repeat(10))));
        assert!(html.contains("Cut to 10 characters"));
        let html = render(&"y".repeat(50), 10, &Links::web());
        assert!(html.contains("the rest (40 characters)"), "{html}");
    }
}
