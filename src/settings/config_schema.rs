//! The JSON Schema of the config file (`researchflow schema config`), generated from
//! [`ConfigFile`]'s types with schemars so it cannot drift from what the parser accepts. The
//! derives sit on the types; this file holds the three the parser reads by hand: `roles` (one
//! key per role of [`super::role::Role`]), a provider name (`local`, `none` or a web
//! provider of the registry) and a value-or-list.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::config_file::{ConfigFile, OneOrMany, RoleConfig, Roles};
use super::role::Role;
use super::search_provider::SearchProviderKind;
use crate::web_providers::WEB_PROVIDERS;

/// The schema of the whole config file.
pub fn schema() -> Schema {
    let mut schema = schemars::schema_for!(ConfigFile);
    schema.insert("title".into(), "researchflow agent.config.json".into());
    schema
}

impl JsonSchema for Roles {
    fn schema_name() -> Cow<'static, str> {
        "Roles".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let role = generator.subschema_for::<Option<RoleConfig>>().to_value();
        let properties: serde_json::Map<String, serde_json::Value> = Role::NAMES
            .iter()
            .map(|name| (name.to_string(), role.clone()))
            .collect();
        json_schema!({
            "description": "Per-role overrides of the model endpoint, one key per role.",
            "type": "object",
            "properties": properties,
            "additionalProperties": false
        })
    }
}

impl JsonSchema for SearchProviderKind {
    fn schema_name() -> Cow<'static, str> {
        "SearchProvider".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = ["local", "none", "mcp"]
            .into_iter()
            .chain(WEB_PROVIDERS.iter().map(|p| p.spec().name))
            .collect();
        json_schema!({ "type": "string", "enum": names })
    }
}

impl<T: JsonSchema> JsonSchema for OneOrMany<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("OneOrMany_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let one = generator.subschema_for::<T>().to_value();
        json_schema!({ "anyOf": [one, { "type": "array", "items": one }] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_config_is_valid_against_the_schema() {
        let schema = schema().to_value();
        let text = include_str!("../../agent.config.example.json");
        let example: serde_json::Value = serde_json::from_str(text).expect("example is JSON");
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        let errors: Vec<String> = validator
            .iter_errors(&example)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        let typo = serde_json::json!({"baseUrl": "x"});
        assert!(!validator.is_valid(&typo), "unknown keys are refused");
        let provider = serde_json::json!({"search": {"provider": ["local", "bing"]}});
        assert!(!validator.is_valid(&provider));
        let roles = serde_json::json!({"roles": {"second_opinion": {"model": "m"}, "verifer": {}}});
        assert!(!validator.is_valid(&roles));
    }
}
