//! Dotted paths into a JSON document, as the diagnostics show them: `plan.steps[1].inputs.file`,
//! `nodes[3].p_node`, `` (the root). Keys that would be ambiguous in dotted form are written as
//! `["a.b"]`. This module only builds strings; it never reads a document.

/// `base.key`, or `base["key"]` when the key holds `.`, `[`, `]`, `"` or white space.
pub fn key(base: &str, key: &str) -> String {
    let simple = !key.is_empty()
        && !key
            .chars()
            .any(|c| matches!(c, '.' | '[' | ']' | '"') || c.is_whitespace());
    if !simple {
        let quoted = key.replace('\\', "\\\\").replace('"', "\\\"");
        format!("{base}[\"{quoted}\"]")
    } else if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

/// `base[i]`.
pub fn index(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_dotted_paths() {
        assert_eq!(key("", "plan"), "plan");
        assert_eq!(index(&key("plan", "steps"), 1), "plan.steps[1]");
        assert_eq!(key("inputs", "a.b"), "inputs[\"a.b\"]");
        assert_eq!(key("", "a b"), "[\"a b\"]");
        assert_eq!(index("", 0), "[0]");
    }
}
