//! The kinds of figure a question asks for (`how many cycles`, `what energy density, in
//! Wh/L`, `what did a tonne of cobalt cost`) and the words of their units, as the offline
//! answer checks that a sentence's figure is of the kind asked ([`super::stated`]).

use crate::text::words;

/// A kind of figure: what in a question asks for it, and the words of its unit.
pub struct Kind {
    /// As the abstention names it (`the cycle count`).
    pub label: &'static str,
    /// Phrases of a question (as [`words`] gives it) that ask for it.
    pub asks: &'static [&'static str],
    /// Words of the unit (as [`words`] gives them), after the figure (`cycles`, `wh kg`).
    pub units: &'static [&'static str],
    /// The unit may stand before the figure (`port 80`, `a priority of 20`).
    pub before: bool,
    /// Asked for only when named near an asking word (`which gcc version`; not `how many
    /// copies of version 1.3`).
    pub near: bool,
}

const TIME: &[&str] = &[
    "seconds", "second", "minutes", "minute", "hours", "hour", "days", "day", "weeks", "week",
    "months", "month", "years", "year", "ms", "min",
];
const TEXT_LENGTH: &[&str] = &[
    "words",
    "word",
    "characters",
    "character",
    "lines",
    "line",
    "bytes",
    "byte",
];
const SHARE: &[&str] = &[
    "percent", "per cent", "times", "fold", "half", "third", "quarter", "fifth", "tenth", "%", "x",
    "×",
];
/// The words of an amount of memory or storage, also as written onto the figure (`32K`).
const MEMORY: &[&str] = &[
    "bytes",
    "byte",
    "kilobytes",
    "megabytes",
    "gigabytes",
    "terabytes",
    "k",
    "kb",
    "kib",
    "m",
    "mb",
    "mib",
    "g",
    "gb",
    "gib",
    "tb",
    "tib",
];

/// The months a time or a date may name; `May` is none (`it may`), so `20 May` goes unread.
pub const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The kinds, the first that a question asks for being its kind.
const KINDS: &[Kind] = &[
    Kind {
        label: "the volumetric energy density",
        asks: &["wh l", "volumetric", "per litre", "per liter"],
        units: &["wh l", "kwh l"],
        before: false,
        near: false,
    },
    Kind {
        label: "the energy density",
        asks: &["wh kg", "gravimetric", "per kilogram", "specific energy"],
        units: &["wh kg", "kwh kg"],
        before: false,
        near: false,
    },
    Kind {
        label: "the energy density",
        asks: &["energy density"],
        units: &["wh kg", "wh l", "kwh kg", "kwh l"],
        before: false,
        near: false,
    },
    Kind {
        label: "the share",
        asks: &[
            "by how much",
            "how much lower",
            "how much higher",
            "how much more",
            "how much less",
            "how much faster",
            "how much slower",
            "how much smaller",
            "how much larger",
            "how much bigger",
            "how much quicker",
            "how much cheaper",
            "how much better",
            "how much greater",
            "how many times",
            "what share",
            "what percentage",
            "what proportion",
            "what fraction",
            "what percent",
            "what factor",
            "a share",
            "efficiency",
        ],
        units: SHARE,
        before: false,
        near: false,
    },
    Kind {
        label: "the length of time",
        asks: &[
            "how many days",
            "how many hours",
            "how many minutes",
            "how many seconds",
            "how many weeks",
            "how many months",
            "how many years",
            "grace period",
        ],
        units: TIME,
        before: false,
        near: false,
    },
    Kind {
        label: "the length",
        asks: &[
            "how many words",
            "how many characters",
            "how many lines",
            "how many bytes",
        ],
        units: TEXT_LENGTH,
        before: false,
        near: false,
    },
    Kind {
        label: "the cycle count",
        asks: &["cycles", "cycle life", "cycle"],
        units: &["cycles", "cycle"],
        before: false,
        near: false,
    },
    Kind {
        label: "the temperature",
        asks: &[
            "temperature",
            "how hot",
            "how cold",
            "how warm",
            "dew point",
            "degrees",
        ],
        units: &["degrees", "celsius", "fahrenheit", "kelvin", "c"],
        before: false,
        near: false,
    },
    Kind {
        label: "the price",
        asks: &[
            "price",
            "cost",
            "costs",
            "how expensive",
            "per tonne",
            "a tonne",
        ],
        units: &[
            "dollars", "dollar", "usd", "euros", "euro", "eur", "yuan", "pounds", "cents", "$",
            "€", "£",
        ],
        before: true,
        near: false,
    },
    Kind {
        label: "the length of time",
        asks: &["how long", "how soon"],
        units: &[
            "seconds",
            "second",
            "minutes",
            "minute",
            "hours",
            "hour",
            "days",
            "day",
            "weeks",
            "week",
            "months",
            "month",
            "years",
            "year",
            "ms",
            "min",
            "words",
            "word",
            "characters",
            "character",
            "lines",
            "line",
            "bytes",
            "cycles",
            "mm",
            "cm",
            "km",
        ],
        before: false,
        near: false,
    },
    Kind {
        label: "the amount of memory",
        asks: &[
            "how much memory",
            "how much data",
            "how much ram",
            "how much space",
            "how much disk",
            "how much storage",
            "memory usage",
            "memory requirements",
            "memory footprint",
        ],
        units: MEMORY,
        before: false,
        near: false,
    },
    Kind {
        label: "the energy",
        asks: &["how much energy"],
        units: &["wh", "kwh", "mwh", "gwh", "twh", "kj", "mj"],
        before: false,
        near: false,
    },
    Kind {
        label: "the voltage",
        asks: &["voltage", "how many volts"],
        units: &["v", "volts", "volt", "mv", "kv"],
        before: false,
        near: false,
    },
    Kind {
        label: "the current density",
        asks: &["current density"],
        units: &["ma cm2", "a cm2", "ma cm", "ma cm²"],
        before: false,
        near: false,
    },
    Kind {
        label: "the conductivity",
        asks: &["conductivity"],
        units: &["s cm", "ms cm", "siemens"],
        before: false,
        near: false,
    },
    Kind {
        label: "the date",
        asks: &["date", "what day", "which day"],
        units: MONTHS,
        before: true,
        near: false,
    },
    Kind {
        label: "the version",
        asks: &["version", "release"],
        units: &["version", "release", "v"],
        before: true,
        near: true,
    },
    Kind {
        label: "the port",
        asks: &["port", "ports"],
        units: &["port", "ports"],
        before: true,
        near: false,
    },
    Kind {
        label: "the ID",
        asks: &["uid", "gid", "pid"],
        units: &["uid", "gid", "id", "pid"],
        before: true,
        near: true,
    },
    Kind {
        label: "the priority",
        asks: &["priority"],
        units: &["priority"],
        before: true,
        near: false,
    },
];

/// The kind of figure `question` asks for, if it names one: the one it names first, near an
/// asking word if one is (`at what current density ... at room temperature`), the first of
/// [`KINDS`] on a tie; with whether it is named near an asking word (`what did *a tonne*
/// ... cost`: the question asks for that figure, whatever its other words).
pub fn kind_of(question: &str) -> Option<(&'static Kind, bool)> {
    let said = format!(" {} ", words(question));
    // A kind's word right before another's names what the other is of, not what is asked:
    // `release` of `what is the release date`.
    let modifies = |p: usize, a: &str| {
        let next = said[p + a.len() + 2..]
            .split(' ')
            .next()
            .unwrap_or_default();
        KINDS.iter().any(|k| k.asks.contains(&next))
    };
    let at = |k: &Kind| {
        k.asks
            .iter()
            .flat_map(|a| {
                let phrase = format!(" {a} ");
                let found: Vec<usize> = said.match_indices(&phrase).map(|(p, _)| p).collect();
                found.into_iter().filter(move |&p| !modifies(p, a))
            })
            .min()
    };
    // A kind named within three words of an asking word is what is asked (`at minus 20
    // degrees, what share ...`).
    let asking: Vec<usize> = ["what", "which", "how"]
        .iter()
        .flat_map(|w| {
            let w = format!(" {w} ");
            said.match_indices(&w).map(|(p, _)| p).collect::<Vec<_>>()
        })
        .collect();
    // Named right after an asking word, a kind is what is asked; a few words before it, it
    // may be (`by how much`), or set the scene (`at minus 20 degrees, what share ...`).
    let distance = |p: usize| {
        asking
            .iter()
            .filter_map(|&a| {
                let (from, to) = (a.min(p), a.max(p));
                let between = said[from..to].split_whitespace().count();
                (between <= 3).then_some((p < a && between > 1, between))
            })
            .min()
    };
    let mut best: Option<((bool, bool, usize), &'static Kind)> = None;
    for kind in KINDS {
        if let Some(p) = at(kind) {
            let near = distance(p);
            if kind.near && near.is_none() {
                continue;
            }
            let rank = (near.is_none(), near.is_some_and(|(before, _)| before), p);
            if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                best = Some((rank, kind));
            }
        }
    }
    best.map(|((far, _, _), k)| (k, !far))
}

/// Whether `word` (lower case) is a unit's word of some kind (`celsius`, `percent`).
pub fn is_unit(word: &str) -> bool {
    KINDS.iter().any(|k| k.units.contains(&word))
}

/// Whether `word` (lower case) is a unit's word of a measure: a kind's other than a
/// release's or a date's (`seconds`; not `release` of `the 3.16.1 release`, nor `November`
/// of `0.1.41 (November 27, 2024)`).
pub fn is_measure_unit(word: &str) -> bool {
    KINDS
        .iter()
        .any(|k| k.units.contains(&word) && !k.units.contains(&"version") && k.units != MONTHS)
}
