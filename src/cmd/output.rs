//! Data on stdout: one pretty-printed JSON document per command, its strings without control
//! characters (newlines and tabs aside) or URL passwords, whatever servers, models or plan
//! files put in them.

use serde::Serialize;

/// Prints `value` as pretty JSON on stdout.
pub fn print_json(value: &impl Serialize) {
    let printed = serde_json::to_value(value).and_then(|mut value| {
        crate::text::clean_json(&mut value);
        serde_json::to_string_pretty(&value)
    });
    match printed {
        Ok(text) => println!("{text}"),
        // Serialising a `Value` or a plain struct cannot fail; if a type ever can, say so
        // rather than print half a document.
        Err(e) => tracing::error!("cannot print the result as JSON: {e}"),
    }
}
