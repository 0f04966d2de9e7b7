//! The atom registry a step plan is checked against: which atom ids exist, which inputs each
//! accepts (and which are required), which outputs each produces.
//!
//! Accepted sources: a folder of `*.json` files (read in name order), or one JSON or YAML file.
//! Each file holds one atom object (it has a string `id`), a list of atoms, or a map keyed by atom
//! id (an `id` inside an entry, if any, must equal its key). Per atom, `inputs` is a list of
//! `{name, required?}` (or bare names) or a map `name -> {required?}`; `outputs` is a list of
//! `{name}` (or bare names) or a map whose keys are the names. Missing `inputs` / `outputs` mean
//! none; `required` defaults to false. A registry that breaks these shapes is an input error,
//! not a validation finding. This module loads and answers look-ups; it checks no plan.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::document::{self, DocumentError};

/// One declared input of an atom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtomInput {
    pub name: String,
    pub required: bool,
}

/// One atom service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Atom {
    pub id: String,
    pub inputs: Vec<AtomInput>,
    pub outputs: Vec<String>,
}

impl Atom {
    pub fn input(&self, name: &str) -> Option<&AtomInput> {
        self.inputs.iter().find(|i| i.name == name)
    }

    pub fn has_output(&self, name: &str) -> bool {
        self.outputs.iter().any(|o| o == name)
    }
}

/// Why a registry cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum AtomError {
    #[error(transparent)]
    Document(#[from] DocumentError),
    #[error("cannot list the atom folder `{path}`: {error}: check the path")]
    ReadDir { path: String, error: std::io::Error },
    #[error(
        "the atom folder `{path}` holds no `.json` file: add atom files or pass one registry file"
    )]
    EmptyFolder { path: String },
    #[error("atom registry `{source_name}`: {what}")]
    Invalid { source_name: String, what: String },
    #[error("atom id `{id}` is declared twice (again in `{source_name}`): keep one definition")]
    Duplicate { id: String, source_name: String },
}

impl AtomError {
    /// The registry breaks the accepted shapes; `what` says where and how.
    fn invalid(source_name: &str, what: String) -> AtomError {
        AtomError::Invalid {
            source_name: source_name.to_string(),
            what,
        }
    }
}

/// Atoms by id.
#[derive(Debug, Clone, Default)]
pub struct AtomRegistry {
    atoms: HashMap<String, Atom>,
}

impl AtomRegistry {
    /// Loads a folder of JSON files or one file.
    pub fn load(path: &Path) -> Result<AtomRegistry, AtomError> {
        let mut registry = AtomRegistry::default();
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|error| AtomError::ReadDir {
                path: path.display().to_string(),
                error,
            })?;
            let mut files = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|error| AtomError::ReadDir {
                    path: path.display().to_string(),
                    error,
                })?;
                let p = entry.path();
                let is_json = p
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| e.eq_ignore_ascii_case("json"));
                if is_json && p.is_file() {
                    files.push(p);
                }
            }
            if files.is_empty() {
                return Err(AtomError::EmptyFolder {
                    path: path.display().to_string(),
                });
            }
            files.sort();
            for file in files {
                let value = document::read_document(&file)?;
                registry.add_value(&value, &file.display().to_string())?;
            }
        } else {
            let value = document::read_document(path)?;
            registry.add_value(&value, &path.display().to_string())?;
        }
        Ok(registry)
    }

    /// A registry from one parsed document; `source_name` labels it in errors.
    pub fn from_value(value: &Value, source_name: &str) -> Result<AtomRegistry, AtomError> {
        let mut registry = AtomRegistry::default();
        registry.add_value(value, source_name)?;
        Ok(registry)
    }

    pub fn get(&self, id: &str) -> Option<&Atom> {
        self.atoms.get(id)
    }

    pub fn len(&self) -> usize {
        self.atoms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.atoms.is_empty()
    }

    fn add_value(&mut self, value: &Value, source_name: &str) -> Result<(), AtomError> {
        let invalid = |what: String| AtomError::invalid(source_name, what);
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let obj = item.as_object().ok_or_else(|| {
                        invalid(format!(
                            "entry [{i}] is not an object: write atoms as objects with an `id`"
                        ))
                    })?;
                    self.insert(parse_atom(obj, None, source_name)?, source_name)?;
                }
            }
            Value::Object(map) if map.get("id").is_some_and(Value::is_string) => {
                self.insert(parse_atom(map, None, source_name)?, source_name)?;
            }
            Value::Object(map) => {
                for (key, entry) in map {
                    let obj = entry.as_object().ok_or_else(|| {
                        invalid(format!(
                            "atom `{key}` is not an object: write `{key}: {{inputs, outputs}}`"
                        ))
                    })?;
                    self.insert(parse_atom(obj, Some(key), source_name)?, source_name)?;
                }
            }
            _ => {
                return Err(invalid(
                    "expected one atom object, a list of atoms or a map keyed by atom id".into(),
                ));
            }
        }
        Ok(())
    }

    fn insert(&mut self, atom: Atom, source_name: &str) -> Result<(), AtomError> {
        if self.atoms.contains_key(&atom.id) {
            return Err(AtomError::Duplicate {
                id: atom.id,
                source_name: source_name.to_string(),
            });
        }
        self.atoms.insert(atom.id.clone(), atom);
        Ok(())
    }
}

fn parse_atom(
    obj: &Map<String, Value>,
    key: Option<&str>,
    source_name: &str,
) -> Result<Atom, AtomError> {
    let invalid = |what: String| AtomError::invalid(source_name, what);
    let id = match (obj.get("id"), key) {
        (Some(Value::String(id)), Some(key)) if id != key => {
            return Err(invalid(format!(
                "atom keyed `{key}` declares id `{id}`: make them equal or drop the inner `id`"
            )));
        }
        (Some(Value::String(id)), _) => id.clone(),
        (None, Some(key)) => key.to_string(),
        (Some(other), _) => {
            return Err(invalid(format!("atom id `{other}` is not a string")));
        }
        (None, None) => return Err(invalid("an atom has no `id`: add one".into())),
    };
    if id.trim().is_empty() {
        return Err(invalid("an atom has an empty `id`: give it a name".into()));
    }
    let inputs = parse_inputs(obj.get("inputs"), &id, source_name)?;
    let outputs = parse_outputs(obj.get("outputs"), &id, source_name)?;
    Ok(Atom {
        id,
        inputs,
        outputs,
    })
}

fn parse_inputs(
    inputs: Option<&Value>,
    id: &str,
    source_name: &str,
) -> Result<Vec<AtomInput>, AtomError> {
    match inputs {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                let name = named_entry(item, "input", id, source_name)?;
                let required = match item {
                    Value::Object(o) => required_flag(o, id, name, source_name)?,
                    _ => false,
                };
                Ok(AtomInput {
                    name: name.to_string(),
                    required,
                })
            })
            .collect(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, spec)| {
                let required = match spec {
                    Value::Object(o) => required_flag(o, id, name, source_name)?,
                    Value::Null => false,
                    // `name: {type: ...}` is the usual form; a bare type string is tolerated.
                    Value::String(_) => false,
                    other => {
                        let what = format!(
                            "input `{name}` of atom `{id}` is `{other}`: write an object like `{{required: true}}`"
                        );
                        return Err(AtomError::invalid(source_name, what));
                    }
                };
                Ok(AtomInput {
                    name: name.clone(),
                    required,
                })
            })
            .collect(),
        Some(other) => Err(AtomError::invalid(
            source_name,
            format!("`inputs` of atom `{id}` is `{other}`: write a list or a map"),
        )),
    }
}

fn parse_outputs(
    outputs: Option<&Value>,
    id: &str,
    source_name: &str,
) -> Result<Vec<String>, AtomError> {
    match outputs {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| Ok(named_entry(item, "output", id, source_name)?.to_string()))
            .collect(),
        Some(Value::Object(map)) => Ok(map.keys().cloned().collect()),
        Some(other) => Err(AtomError::invalid(
            source_name,
            format!("`outputs` of atom `{id}` is `{other}`: write a list or a map"),
        )),
    }
}

/// The name of one entry of an `inputs` or `outputs` list (`what` says which): a bare name, or
/// an object with a string `name`.
fn named_entry<'a>(
    item: &'a Value,
    what: &str,
    id: &str,
    source_name: &str,
) -> Result<&'a str, AtomError> {
    match item {
        Value::String(name) => Ok(name),
        Value::Object(o) => match o.get("name").and_then(Value::as_str) {
            Some(name) => Ok(name),
            None => Err(AtomError::invalid(
                source_name,
                format!("an {what} of atom `{id}` has no string `name`"),
            )),
        },
        other => Err(AtomError::invalid(
            source_name,
            format!("{what} `{other}` of atom `{id}` is neither a name nor an object"),
        )),
    }
}

fn required_flag(
    o: &Map<String, Value>,
    id: &str,
    name: &str,
    source_name: &str,
) -> Result<bool, AtomError> {
    match o.get("required") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(AtomError::invalid(
            source_name,
            format!(
                "`required` of input `{name}` of atom `{id}` is `{other}`: write true or false"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_and_map_shapes_give_the_same_atom() {
        let list = json!([{"id": "read", "inputs": [{"name": "path", "required": true}, "enc"],
                           "outputs": [{"name": "text"}]}]);
        let map = json!({"read": {"inputs": {"path": {"required": true}, "enc": {}},
                                  "outputs": {"text": {"type": "string"}}}});
        let single = json!({"id": "read", "inputs": [{"name": "path", "required": true}, {"name": "enc"}],
                            "outputs": ["text"]});
        let a = AtomRegistry::from_value(&list, "l").expect("list");
        let b = AtomRegistry::from_value(&map, "m").expect("map");
        let c = AtomRegistry::from_value(&single, "s").expect("single");
        for r in [&a, &b, &c] {
            let atom = r.get("read").expect("read is there");
            assert_eq!(atom.input("path").map(|i| i.required), Some(true));
            assert_eq!(atom.input("enc").map(|i| i.required), Some(false));
            assert!(atom.has_output("text"));
            assert_eq!(r.len(), 1);
        }
    }

    #[test]
    fn bad_shapes_are_errors() {
        for bad in [
            json!(3),
            json!([1]),
            json!([{"inputs": []}]),
            json!({"read": {"id": "other"}}),
            json!({"id": "read", "inputs": 3}),
            json!({"id": "read", "inputs": [{"name": "a", "required": "yes"}]}),
            json!([{"id": "a"}, {"id": "a"}]),
        ] {
            assert!(AtomRegistry::from_value(&bad, "x").is_err(), "{bad}");
        }
    }

    #[test]
    fn a_folder_needs_json_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(matches!(
            AtomRegistry::load(dir.path()),
            Err(AtomError::EmptyFolder { .. })
        ));
        std::fs::write(dir.path().join("a.json"), r#"{"id": "a"}"#).expect("write");
        std::fs::write(dir.path().join("b.json"), r#"[{"id": "b"}, {"id": "c"}]"#).expect("write");
        std::fs::write(dir.path().join("notes.txt"), "ignored").expect("write");
        let r = AtomRegistry::load(dir.path()).expect("loads");
        assert_eq!(r.len(), 3);
    }
}
