//! The bounds of a run, each declared once, as one field: its flag and variable (clap), its
//! MCP argument (serde, and schemars for the tools' input schemas, which hold its range: the
//! server checks every call against them), what wins over what ([`RunBounds::or`]), and the
//! config key of a budget limit, which has the same type (`settings/config_file.rs`). The
//! numbers are [`Bounded`]: their range is in their type, so clap, the config and the MCP
//! schema refuse the same values, naming the range. Part of [`super`], where every clap type
//! is; nothing here reads the environment or the config: `settings` merges them.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use clap::Args;
use clap::builder::{MapValueParser, RangedU64ValueParser, TypedValueParser, ValueParserFactory};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};

use crate::clock::LONGEST_SECS;

/// A whole number from `MIN` to `MAX`, whether a flag, a variable, a config key or an MCP
/// argument gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounded<const MIN: u64, const MAX: u64>(u64);

/// Tokens: at least one.
pub type Tokens = Bounded<1, { u64::MAX }>;
/// Planning rounds, Thinkon blocks: at least one, at most a `u32`.
pub type Count = Bounded<1, { u32::MAX as u64 }>;
/// A span of seconds, at least one and at most [`LONGEST_SECS`] (30 days): no deadline
/// computed from one can overflow.
pub type Seconds = Bounded<1, LONGEST_SECS>;
/// A span of seconds that may be 0 (a grace that cuts at once), at most 30 days.
pub type SecondsFromZero = Bounded<0, LONGEST_SECS>;

impl<const MIN: u64, const MAX: u64> Bounded<MIN, MAX> {
    /// `n`, when it is in range.
    pub const fn new(n: u64) -> Option<Self> {
        if n >= MIN && n <= MAX {
            Some(Bounded(n))
        } else {
            None
        }
    }

    pub const fn get(self) -> u64 {
        self.0
    }

    /// What to give instead of a value out of range.
    fn range() -> String {
        match MAX {
            u64::MAX => format!("use {MIN} or more"),
            LONGEST_SECS => format!("use {MIN} to {MAX} (30 days)"),
            ms if ms == LONGEST_SECS * 1000 => format!("use {MIN} to {MAX} (30 days)"),
            _ => format!("use {MIN} to {MAX}"),
        }
    }
}

impl<const MIN: u64> Bounded<MIN, LONGEST_SECS> {
    pub const fn duration(self) -> Duration {
        Duration::from_secs(self.0)
    }
}

impl Count {
    pub fn count(self) -> u32 {
        u32::try_from(self.0).unwrap_or(u32::MAX)
    }
}

impl<const MIN: u64, const MAX: u64> fmt::Display for Bounded<MIN, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A flag's parser: clap's own for a range of `u64` ("`0` is not in 1..=2592000").
impl<const MIN: u64, const MAX: u64> ValueParserFactory for Bounded<MIN, MAX> {
    type Parser = MapValueParser<RangedU64ValueParser<u64>, fn(u64) -> Self>;

    fn value_parser() -> Self::Parser {
        let wrap: fn(u64) -> Self = Bounded;
        RangedU64ValueParser::new().range(MIN..=MAX).map(wrap)
    }
}

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Bounded<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = u64::deserialize(d)?;
        Self::new(n).ok_or_else(|| {
            serde::de::Error::custom(format!("`{n}` is out of range: {}", Self::range()))
        })
    }
}

impl<const MIN: u64, const MAX: u64> JsonSchema for Bounded<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Bounded_{MIN}_to_{MAX}").into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut schema = json_schema!({"type": "integer", "format": "uint64", "minimum": MIN});
        if MAX < u64::MAX {
            schema.insert("maximum".into(), MAX.into());
        }
        schema
    }
}

/// The bounds of a workflow run: the flags of `RunArgs`, and the arguments of the MCP tools
/// `research` and `resume`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args, Deserialize, JsonSchema)]
pub struct RunBounds {
    /// Most planning rounds of one invocation; the last one must finalise [default: 8, or
    /// with --replay the recorded run's].
    #[arg(long, env = "RESEARCHFLOW_MAX_ROUNDS")]
    pub max_rounds: Option<Count>,

    #[command(flatten)]
    #[serde(flatten)]
    pub budget: Budget,
}

/// What a workflow run may spend, and how its tasks end once it has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args, Deserialize, JsonSchema)]
pub struct Budget {
    #[command(flatten)]
    #[serde(flatten)]
    pub limits: LimitArgs,

    /// Once the time budget is spent, running tasks may still finish for this many seconds,
    /// then are cut [config: budget.graceSeconds; default: a quarter of the time budget, 1 to
    /// 30].
    #[arg(long, env = "RESEARCHFLOW_GRACE", value_name = "SECS")]
    pub grace: Option<SecondsFromZero>,

    /// Under a time budget, the final summary may take this many seconds once it starts; the
    /// budget that ended the research never cuts it [config: budget.finalSeconds; default: 300].
    #[arg(long, env = "RESEARCHFLOW_FINAL_TIME", value_name = "SECS")]
    pub final_time: Option<Seconds>,
}

/// The limits of what one run (a workflow's, a Thinkon tree's) may spend; reaching one ends
/// the run `partial`, with a result from what exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args, Deserialize, JsonSchema)]
pub struct LimitArgs {
    /// At most this many tokens (prompt + completion of every call) [config: budget.maxTokens].
    #[arg(long, env = "RESEARCHFLOW_MAX_TOKENS", value_name = "N")]
    pub max_tokens: Option<Tokens>,

    /// At most this many seconds of wall clock for the research [config: budget.maxSeconds].
    #[arg(long, env = "RESEARCHFLOW_MAX_TIME", value_name = "SECS")]
    pub max_time: Option<Seconds>,
}

impl RunBounds {
    /// These bounds, each one not given taken from `other`: a call's over the server's flags.
    pub fn or(self, other: RunBounds) -> RunBounds {
        RunBounds {
            max_rounds: self.max_rounds.or(other.max_rounds),
            budget: self.budget.or(other.budget),
        }
    }
}

impl Budget {
    /// The final summary's own bound when none is given: long enough for a slow model's one
    /// call (the default LLM timeout), short enough that a cron job still ends.
    pub const DEFAULT_FINAL_TIME: Duration = Duration::from_secs(300);

    /// This budget, each limit not given taken from `other`: the flags' over the config's.
    pub fn or(self, other: Budget) -> Budget {
        Budget {
            limits: self.limits.or(other.limits),
            grace: self.grace.or(other.grace),
            final_time: self.final_time.or(other.final_time),
        }
    }

    pub fn max_tokens(&self) -> Option<u64> {
        self.limits.max_tokens.map(Bounded::get)
    }

    /// The research's wall clock: no task starts after it.
    pub fn max_time(&self) -> Option<Duration> {
        self.limits.max_time.map(Seconds::duration)
    }

    /// How long running tasks may still finish once a limit is reached: the grace given,
    /// else a quarter of the time budget within 1 to 30 s, else (a token budget alone) 30 s.
    pub fn grace(&self) -> Duration {
        let most = Duration::from_secs(30);
        self.grace
            .map(SecondsFromZero::duration)
            .unwrap_or_else(|| {
                self.max_time()
                    .map_or(most, |max| (max / 4).clamp(Duration::from_secs(1), most))
            })
    }

    /// The final summary's own bound, when the run has a time budget.
    pub fn final_bound(&self) -> Option<Duration> {
        self.max_time().map(|_| {
            self.final_time
                .map_or(Self::DEFAULT_FINAL_TIME, Seconds::duration)
        })
    }
}

impl LimitArgs {
    /// These limits, each one not given taken from `other`.
    pub fn or(self, other: LimitArgs) -> LimitArgs {
        LimitArgs {
            max_tokens: self.max_tokens.or(other.max_tokens),
            max_time: self.max_time.or(other.max_time),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Flags {
        #[command(flatten)]
        bounds: RunBounds,
    }

    fn secs(n: u64) -> Option<Seconds> {
        Seconds::new(n)
    }

    #[test]
    fn a_flag_out_of_range_is_refused_naming_the_range() {
        let refused = |args: &[&str]| {
            Flags::try_parse_from([&["x"], args].concat())
                .expect_err("refused")
                .to_string()
        };
        let long = refused(&["--max-time", "2592001"]);
        assert!(
            long.contains("--max-time") && long.contains("1..=2592000"),
            "{long}"
        );
        assert!(refused(&["--max-rounds", "0"]).contains("0 is not in 1..="));
        assert!(refused(&["--max-tokens", "0"]).contains("0 is not in 1..="));
        assert!(refused(&["--final-time", "0"]).contains("--final-time"));
        let given = Flags::try_parse_from(["x", "--grace", "0", "--max-time", "2592000"])
            .expect("in range")
            .bounds;
        assert_eq!(given.budget.grace, SecondsFromZero::new(0));
        assert_eq!(given.budget.max_time(), Some(crate::clock::LONGEST));
    }

    #[test]
    fn a_value_out_of_range_is_refused_as_it_is_read_naming_the_range() {
        let read = |json: &str| serde_json::from_str::<RunBounds>(json).map_err(|e| e.to_string());
        let long = read(r#"{"max_time": 9223372036854775807}"#).expect_err("refused");
        assert!(
            long.contains("`9223372036854775807` is out of range: use 1 to 2592000 (30 days)"),
            "{long}"
        );
        let zero = read(r#"{"max_tokens": 0}"#).expect_err("refused");
        assert!(zero.contains("use 1 or more"), "{zero}");
        let rounds = read(r#"{"max_rounds": 4294967296}"#).expect_err("refused");
        assert!(rounds.contains("use 1 to 4294967295"), "{rounds}");
        let given = read(r#"{"max_rounds": 2, "grace": 0}"#).expect("in range");
        assert_eq!(given.max_rounds.map(Count::count), Some(2));
        assert_eq!(given.budget.grace(), Duration::ZERO);
    }

    #[test]
    fn the_schema_holds_each_range() {
        let schema = schemars::schema_for!(RunBounds).to_value();
        let field = |name: &str| &schema["properties"][name];
        assert_eq!(field("max_time")["minimum"], 1);
        assert_eq!(field("max_time")["maximum"], LONGEST_SECS);
        assert_eq!(field("grace")["minimum"], 0);
        assert_eq!(field("max_rounds")["maximum"], u32::MAX);
        assert!(field("max_tokens").get("maximum").is_none());
        assert_eq!(
            field("final_time")["type"],
            serde_json::json!(["integer", "null"])
        );
    }

    #[test]
    fn a_bound_given_wins_over_the_other() {
        let flags: RunBounds = serde_json::from_str(r#"{"max_time": 5}"#).expect("bounds");
        let config: RunBounds = serde_json::from_str(
            r#"{"max_tokens": 9, "max_time": 60, "grace": 2, "max_rounds": 3}"#,
        )
        .expect("bounds");
        let both = flags.or(config);
        assert_eq!(both.budget.max_time(), Some(Duration::from_secs(5)));
        assert_eq!(both.budget.max_tokens(), Some(9));
        assert_eq!(both.budget.grace(), Duration::from_secs(2));
        assert_eq!(both.max_rounds.map(Count::count), Some(3));
    }

    #[test]
    fn the_grace_is_a_quarter_within_bounds_unless_set() {
        let timed = |t| Budget {
            limits: LimitArgs {
                max_time: secs(t),
                ..LimitArgs::default()
            },
            ..Budget::default()
        };
        let secs = Duration::from_secs;
        assert_eq!(timed(2).grace(), secs(1));
        assert_eq!(timed(40).grace(), secs(10));
        assert_eq!(timed(3600).grace(), secs(30));
        assert_eq!(Budget::default().grace(), secs(30));
        let set = Budget {
            grace: SecondsFromZero::new(0),
            ..timed(3600)
        };
        assert_eq!(set.grace(), secs(0));
    }

    #[test]
    fn the_final_bound_exists_only_under_a_time_budget() {
        assert_eq!(Budget::default().final_bound(), None);
        let timed = Budget {
            limits: LimitArgs {
                max_time: secs(8),
                ..LimitArgs::default()
            },
            ..Budget::default()
        };
        assert_eq!(timed.final_bound(), Some(Budget::DEFAULT_FINAL_TIME));
        let set = Budget {
            final_time: secs(5),
            ..timed
        };
        assert_eq!(set.final_bound(), Some(Duration::from_secs(5)));
    }
}
