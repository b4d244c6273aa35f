//! JSON Schemas of every dialect, generated from the model with schemars.

use schemars::{JsonSchema, Schema, generate::SchemaSettings};

use crate::model::config::Config;
use crate::model::data_driven::DataDrivenCase;
use crate::model::sentinel::{TestSpec, TestSuite};
use crate::plan::Dialect;

/// Every dialect that has a schema, with its file name under `schemas/`.
pub const SCHEMAS: [(Dialect, &str); 4] = [
    (Dialect::DataDriven, "data-driven.schema.json"),
    (Dialect::SentinelSpec, "sentinel-spec.schema.json"),
    (Dialect::SentinelSuite, "sentinel-suite.schema.json"),
    (Dialect::Config, "config.schema.json"),
];

/// The JSON Schema (draft 2020-12) of `dialect`. [`Dialect::RustSuite`] is written in
/// no file, so its schema is `false`: it accepts nothing.
pub fn schema_for(dialect: Dialect) -> Schema {
    match dialect {
        Dialect::RustSuite => Schema::from(false),
        Dialect::DataDriven => generate::<DataDrivenCase>(),
        Dialect::SentinelSpec => generate::<TestSpec>(),
        Dialect::SentinelSuite => generate::<TestSuite>(),
        Dialect::Config => generate::<Config>(),
    }
}

/// The schema as the pretty JSON text written to `schemas/`, ending in a newline.
pub fn schema_text(dialect: Dialect) -> String {
    let mut text = serde_json::to_string_pretty(&schema_for(dialect)).unwrap_or_default();
    text.push('\n');
    text
}

fn generate<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `$ref` under `value` that points outside its own document, with its JSON
    /// pointer.
    fn outside_refs(value: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, v) in map {
                    let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                    if key == "$ref" && v.as_str().is_none_or(|r| !r.starts_with('#')) {
                        out.push(format!("{here}: {v}"));
                    }
                    outside_refs(v, &here, out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    outside_refs(v, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    /// An editor that cannot fetch a reference skips the whole file (the YAML language
    /// server shows only "Problems loading reference"), so every schema must stand alone.
    #[test]
    fn every_schema_is_self_contained() {
        for (dialect, file) in SCHEMAS {
            let mut refs = Vec::new();
            outside_refs(&schema_for(dialect).to_value(), "", &mut refs);
            assert!(
                refs.is_empty(),
                "{file} refers outside itself:\n{}",
                refs.join("\n")
            );
        }
    }

    /// The same for every file in `schemas/`, the reports' and the cassette's too, which
    /// other crates generate (`cargo xtask schemas` keeps the files in step with them).
    #[test]
    fn every_file_in_schemas_is_self_contained() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if !path.to_string_lossy().ends_with(".schema.json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
            let mut refs = Vec::new();
            outside_refs(&schema, "", &mut refs);
            assert!(
                refs.is_empty(),
                "{} refers outside itself:\n{}",
                path.display(),
                refs.join("\n")
            );
            checked += 1;
        }
        assert!(
            checked >= SCHEMAS.len() + 3,
            "only {checked} schemas in {}",
            dir.display()
        );
    }

    #[test]
    fn an_outside_ref_is_found() {
        let mut refs = Vec::new();
        let schema = serde_json::json!({
            "$defs": {"a": {"type": "string"}},
            "properties": {
                "local": {"$ref": "#/$defs/a"},
                "remote": {"items": [{"$ref": "https://json-schema.org/draft/2020-12/schema"}]},
                "sibling": {"$ref": "other.schema.json#/$defs/b"}
            }
        });
        outside_refs(&schema, "", &mut refs);
        assert_eq!(
            refs,
            [
                "/properties/remote/items/0/$ref: \"https://json-schema.org/draft/2020-12/schema\"",
                "/properties/sibling/$ref: \"other.schema.json#/$defs/b\""
            ]
        );
    }
}
