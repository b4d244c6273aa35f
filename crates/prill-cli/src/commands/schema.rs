//! `prill schema`: print the JSON Schema of a dialect.

use prill_spec::Dialect;
use prill_spec::schema::schema_text;

use crate::args::{SchemaArgs, SchemaDialect};
use crate::exit::ExitCode;
use crate::output;

/// Prints the schema to stdout.
pub(crate) fn run(args: &SchemaArgs) -> anyhow::Result<ExitCode> {
    let dialect = match args.dialect {
        SchemaDialect::DataDriven => Dialect::DataDriven,
        SchemaDialect::SentinelSpec => Dialect::SentinelSpec,
        SchemaDialect::SentinelSuite => Dialect::SentinelSuite,
        SchemaDialect::Config => Dialect::Config,
    };
    output::stdout(&schema_text(dialect))?;
    Ok(ExitCode::OK)
}
