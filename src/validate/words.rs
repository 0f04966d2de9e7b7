//! The word lists behind the plan-next wording rules, and how they are matched.
//!
//! - Ordering words (forbidden in PLAN_PROBES hypotheses: 先/再/然后/第一步/接下来).
//! - Guessing words (forbidden in PLAN_STEPS steps: 可能/也许/原因/假设).
//! - Failure words (how a `think.done` entry says an attempt failed, for the no-repeat rule).
//!
//! English words match whole words only (split on anything but ASCII letters, digits and `'`),
//! ignoring case: `next` matches "Next," but not "nextjs". Chinese words match as substrings,
//! except inside a few listed compounds whose meaning is not the flagged one (优先 "priority",
//! 领先, 祖先, 先进, 先前 "previous", 不再 "no longer", 再现 "reproduce"), which would otherwise
//! reject ordinary hypotheses. Matching is lexical: negations ("no errors") are not understood.
//! This module only matches text; it knows no document.

/// Ordering words, Chinese.
pub const ORDERING_ZH: &[&str] = &[
    "先",
    "再",
    "然后",
    "第一步",
    "第二步",
    "第三步",
    "接下来",
    "其次",
    "随后",
];
/// Compounds holding an ordering character that do not express an order.
pub const ORDERING_ZH_EXCEPTIONS: &[&str] =
    &["优先", "领先", "祖先", "先进", "先前", "不再", "再现"];
/// Ordering words, English.
pub const ORDERING_EN: &[&str] = &[
    "first",
    "then",
    "next",
    "finally",
    "afterwards",
    "afterward",
    "subsequently",
    "lastly",
];

/// Guessing words, Chinese.
pub const GUESSING_ZH: &[&str] = &[
    "可能", "也许", "原因", "假设", "或许", "猜测", "大概", "怀疑",
];
/// Guessing words, English.
pub const GUESSING_EN: &[&str] = &[
    "maybe",
    "perhaps",
    "might",
    "possibly",
    "probably",
    "hypothesis",
    "hypotheses",
    "hypothesize",
    "guess",
    "presumably",
];

/// Failure words, Chinese.
pub const FAILURE_ZH: &[&str] = &["失败", "出错", "报错", "错误", "未完成"];
/// Failure words, English.
pub const FAILURE_EN: &[&str] = &[
    "fail",
    "fails",
    "failed",
    "failure",
    "error",
    "errors",
    "errored",
    "unsuccessful",
];

/// The first ordering word in `text`.
pub fn ordering_word(text: &str) -> Option<&'static str> {
    find(text, ORDERING_ZH, ORDERING_ZH_EXCEPTIONS, ORDERING_EN)
}

/// The first guessing word in `text`.
pub fn guessing_word(text: &str) -> Option<&'static str> {
    find(text, GUESSING_ZH, &[], GUESSING_EN)
}

/// The first failure word in `text`.
pub fn failure_word(text: &str) -> Option<&'static str> {
    find(text, FAILURE_ZH, &[], FAILURE_EN)
}

fn find(
    text: &str,
    zh: &[&'static str],
    exceptions: &[&str],
    en: &[&'static str],
) -> Option<&'static str> {
    for &word in zh {
        let hit = text
            .match_indices(word)
            .any(|(at, _)| !inside_exception(text, at, word, exceptions));
        if hit {
            return Some(word);
        }
    }
    let tokens: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
        .filter(|t| !t.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    en.iter().copied().find(|w| tokens.iter().any(|t| t == w))
}

/// Whether the occurrence of `word` at byte `at` is part of one of the `exceptions`.
fn inside_exception(text: &str, at: usize, word: &str, exceptions: &[&str]) -> bool {
    exceptions.iter().any(|e| {
        e.match_indices(word).any(|(offset, _)| {
            at >= offset
                && text
                    .get(at - offset..)
                    .is_some_and(|rest| rest.starts_with(e))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_matches_whole_words_ignoring_case() {
        assert_eq!(ordering_word("Then check the logs"), Some("then"));
        assert_eq!(ordering_word("deploy to nextjs"), None);
        assert_eq!(ordering_word("the FIRST request"), Some("first"));
        assert_eq!(guessing_word("it might time out"), Some("might"));
        assert_eq!(guessing_word("mighty service"), None);
        assert_eq!(guessing_word("检查hypothesis文档"), Some("hypothesis"));
    }

    #[test]
    fn chinese_matches_substrings_outside_exceptions() {
        assert_eq!(ordering_word("先检查日志"), Some("先"));
        assert_eq!(ordering_word("首先检查日志"), Some("先"));
        assert_eq!(ordering_word("接下来重启"), Some("接下来"));
        assert_eq!(ordering_word("高优先级请求被丢弃"), None);
        assert_eq!(ordering_word("服务不再响应"), None);
        assert_eq!(ordering_word("优先级高，先处理"), Some("先"));
        assert_eq!(guessing_word("分析失败原因"), Some("原因"));
        assert_eq!(guessing_word("创建 login.html 骨架结构"), None);
    }

    #[test]
    fn failure_words() {
        assert_eq!(failure_word("shell: npm test 失败"), Some("失败"));
        assert_eq!(failure_word("Build FAILED"), Some("failed"));
        assert_eq!(failure_word("the build errored"), Some("errored"));
        assert_eq!(failure_word("all green"), None);
    }
}
