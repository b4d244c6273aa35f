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
