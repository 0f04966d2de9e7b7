//! Helpers for validator tests: edit a JSON document in one place, and assert on diagnostics.
//! Plain functions on JSON values: those tests start no server.

use researchflow::diagnostics::Diagnostics;
use serde_json::Value;

/// Sets the value at JSON pointer `pointer`; the last segment may be a new key of an existing
/// object.
pub fn with(mut doc: Value, pointer: &str, value: Value) -> Value {
    let (parent, last) = pointer.rsplit_once('/').expect("pointer has a segment");
    match doc.pointer_mut(parent).expect("parent exists") {
        Value::Object(map) => {
            map.insert(last.to_string(), value);
        }
        Value::Array(items) => items[last.parse::<usize>().expect("index")] = value,
        other => panic!("cannot set below {other}"),
    }
    doc
}

/// Removes `key` from the object at `pointer`.
pub fn without(mut doc: Value, pointer: &str, key: &str) -> Value {
    doc.pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .expect("object at pointer")
        .remove(key);
    doc
}

/// An error with this code at this path, and the document invalid.
#[track_caller]
pub fn assert_error(d: &Diagnostics, code: &str, path: &str) {
    assert!(
        d.errors.iter().any(|f| f.code == code && f.path == path),
        "expected {code} at `{path}`, got:\n{}",
        d.to_text()
    );
    assert!(!d.valid);
}

/// That error and no other.
#[track_caller]
pub fn assert_single_error(d: &Diagnostics, code: &str, path: &str) {
    assert_error(d, code, path);
    assert_eq!(
        d.errors.len(),
        1,
        "only one error expected:\n{}",
        d.to_text()
    );
}

/// A warning with this code at this path.
#[track_caller]
pub fn assert_warning(d: &Diagnostics, code: &str, path: &str) {
    assert!(
        d.warnings.iter().any(|f| f.code == code && f.path == path),
        "expected warning {code} at `{path}`, got:\n{}",
        d.to_text()
    );
}
