//! Data on stdout: one pretty-printed JSON document per command.

use serde::Serialize;

/// Prints `value` as pretty JSON on stdout.
pub fn print_json(value: &impl Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        // Serialising a `Value` or a plain struct cannot fail; if a type ever can, say so
        // rather than print half a document.
        Err(e) => tracing::error!("cannot print the result as JSON: {e}"),
    }
}
