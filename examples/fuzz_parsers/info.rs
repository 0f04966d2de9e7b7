//! The info block parser, `plan::Info`: `parse`, `part`, `render` and `set` never panic; parse
//! is idempotent on rendered output (`parse(render(parse(x))) == parse(x)`, and rendering again
//! gives the same text); any text set into a block comes back unchanged through render and
//! parse, and the other blocks stay as they were.

use researchflow::plan::{Info, InfoPart};

use crate::inputs::Gen;
use crate::target::{Expect, Input, Target, short};

const PARTS: [InfoPart; 3] = [InfoPart::Llm, InfoPart::Search, InfoPart::All];

pub struct InfoTarget {
    seeds: Vec<Vec<u8>>,
}

impl InfoTarget {
    pub fn new() -> InfoTarget {
        let mut seeds: Vec<String> = [
            "<info type=\"llm\">x &lt; y &amp;&amp; z</info><info type=\"search\">[1] t\nURL: u</info>",
            "<info type=\"llm\">x < y && z</info>\n<info type='search'>R & D</info>",
            "<info type=\"search\"><![CDATA[a </info> b]]></info>",
            "<info type=\"llm\">no end",
            "  just text  ",
            "<INFO TYPE = \"LLM\" >&#x41;&#66;&quot;&apos;</INFO>",
        ]
        .map(String::from)
        .to_vec();
        let mut g = Gen::new(3);
        seeds.extend((0..16).map(|_| valid_info(&mut g).text().into_owned()));
        InfoTarget {
            seeds: seeds.into_iter().map(String::into_bytes).collect(),
        }
    }
}

/// Two blocks set with token soup, rendered.
fn valid_info(g: &mut Gen) -> Input {
    let tokens = InfoTarget::TOKENS;
    let (llm, search) = (g.soup(tokens), g.soup(tokens));
    let mut info = Info::default();
    info.set("llm", llm.clone());
    info.set("search", search.clone());
    Input::new(info.render(), Expect::Blocks { llm, search })
}

impl InfoTarget {
    const TOKENS: &'static [&'static str] = &[
        "<info type=\"llm\">",
        "<info type=\"search\">",
        "<info type='llm'>",
        "<INFO TYPE = \"Search\" >",
        "<info type=\"\">",
        "<info type=\"a&amp;b\">",
        "<info type='x\"y'>",
        "<info type=\"a<b>\">",
        "<info",
        " type=",
        "</info>",
        "</INFO>",
        "</info",
        "<![CDATA[",
        "]]>",
        "&amp;",
        "&lt;",
        "&gt;",
        "&quot;",
        "&apos;",
        "&#x41;",
        "&#65;",
        "&#xD800;",
        "&#99999999999;",
        "&#x;",
        "&",
        "<",
        ">",
        ";",
        "\"",
        "'",
        "é",
        "日",
    ];
}

impl Target for InfoTarget {
    fn name(&self) -> &'static str {
        "info"
    }

    fn tokens(&self) -> &'static [&'static str] {
        InfoTarget::TOKENS
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("<info type=\"llm\">", "</info>"),
            ("<![CDATA[", "]]>"),
            ("<info type='search'><![CDATA[", "]]></info>"),
        ]
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        valid_info(g)
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        let text: &str = &input.text();
        let info = Info::parse(text);
        if let Expect::Blocks { llm, search } = &input.expect
            && (info.get("llm") != Some(llm) || info.get("search") != Some(search))
        {
            return Err(format!(
                "rendered blocks read back changed: {:?} and {:?}",
                info.get("llm").map(short),
                info.get("search").map(short)
            ));
        }
        for part in PARTS {
            info.part(part);
        }
        let rendered = info.render();
        let again = Info::parse(&rendered);
        if again != info {
            return Err(format!(
                "parse is not idempotent: {} renders as {} and reads back as {}",
                short(&format!("{info:?}")),
                short(&rendered),
                short(&format!("{again:?}"))
            ));
        }
        if again.render() != rendered {
            return Err("a second render differs from the first".into());
        }
        let mut set = info.clone();
        set.set("llm", text);
        let back = Info::parse(&set.render());
        if back.get("llm") != Some(text) {
            return Err(format!(
                "set text comes back changed: {:?}",
                back.get("llm").map(short)
            ));
        }
        if back.get("search") != info.get("search") {
            return Err("setting `llm` changed `search`".into());
        }
        Ok(())
    }
}
