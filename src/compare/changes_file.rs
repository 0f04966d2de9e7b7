//! The name of the "what changed" digest written beside a plan file, so every writer (today
//! `batch --previous`) and every reader agree on it.

/// `<stem>.changes.md`: the digest beside the plan file `<stem>.json`.
pub fn changes_file_name(plan_file_stem: &str) -> String {
    format!("{plan_file_stem}.changes.md")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_named_after_the_plan_file_stem() {
        assert_eq!(changes_file_name("q-battery"), "q-battery.changes.md");
        assert_eq!(changes_file_name("plan.v2"), "plan.v2.changes.md");
    }
}
