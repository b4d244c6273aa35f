//! `docs/config.md`: the reference page of `prill.toml`, written from its JSON Schema
//! (`prill_spec::schema`), so that every key, type, default and example on the page is
//! the model's own.
//!
//! The page has one heading per table (`[judge]`, `[agents.<name>]`, ...) and one entry
//! per key: its description, its type (with its limits), its default (the schema's
//! `default`, else what the description says) and an example (the schema's first of
//! `examples`, written as TOML in its table).

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// The page's first line: where it comes from and how to regenerate it.
const HEADER: &str = "<!-- Generated from the model of `prill.toml` (schemas/config.schema.json) by `cargo run -p xtask -- schemas`; do not edit by hand. -->";

/// The name a key of a table of tables stands for, in headings.
const ANY_NAME: &str = "<name>";

/// The reference page of `prill.toml`, from its schema.
pub(crate) fn config_reference(schema: &Value) -> String {
    let mut page = Page {
        defs: schema.get("$defs").and_then(Value::as_object),
        out: String::new(),
    };
    page.out.push_str(HEADER);
    page.out.push_str("\n\n# `prill.toml` reference\n\n");
    page.paragraph(schema);
    page.out.push_str(
        "Prill reads `--config FILE`, else the first `prill.toml` in the working directory or a \
         folder above it (`docs/running.md`, \"Settings, once\"). Every top-level key is \
         optional; a key its table cannot go without says so in its type. Each \
         entry below gives the key's type, its default (what applies when the key is not \
         given) and an example, written as TOML in its table. Keys and tables not listed here \
         are errors.\n\n## Top-level keys\n\n",
    );
    page.table(schema, &Place::default());
    page.out
}

/// The page being written, with the schema's `$defs` to follow references into.
struct Page<'s> {
    defs: Option<&'s Map<String, Value>>,
    out: String,
}

impl<'s> Page<'s> {
    /// `schema` with a `$ref` followed, and an `anyOf` of one schema and `null` taken
    /// as that schema.
    fn resolve(&self, schema: &'s Value) -> &'s Value {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.trim_start_matches("#/$defs/");
            if let Some(target) = self.defs.and_then(|d| d.get(name)) {
                return self.resolve(target);
            }
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array)
            && let [only] = all.as_slice()
        {
            return self.resolve(only);
        }
        if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
            let not_null: Vec<&Value> = any.iter().filter(|s| !is_null(s)).collect();
            if let [only] = not_null.as_slice() {
                return self.resolve(only);
            }
        }
        schema
    }

    /// A table of keys (a struct) at `place`: its keys first, then each table inside it.
    fn table(&mut self, schema: &'s Value, place: &Place) {
        let schema = self.resolve(schema);
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        let mut tables = Vec::new();
        for (key, property) in properties {
            let target = self.resolve(property);
            if is_struct(target) {
                tables.push((property, place.child(key, key, first_example(property))));
                continue;
            }
            self.key(key, property, target, schema, place);
            if let Some(inner) = self.named_tables(target) {
                let example = first_example(property).and_then(Value::as_object);
                let (name, base) = example
                    .and_then(|e| e.iter().next())
                    .map_or(("name".to_owned(), None), |(n, v)| (n.clone(), Some(v)));
                let named = place.child(key, key, None).child(ANY_NAME, &name, base);
                tables.push((inner, named));
            }
        }
        for (property, inner) in tables {
            let _ = writeln!(self.out, "## `[{}]`\n", inner.heading.join("."));
            self.paragraph(property);
            let resolved = self.resolve(property);
            if resolved.get("description") != property.get("description") {
                self.paragraph(resolved);
            }
            self.table(property, &inner);
        }
    }

    /// The struct every value of a table of tables is (`[agents.<name>]`), if `target`
    /// is one.
    fn named_tables(&self, target: &'s Value) -> Option<&'s Value> {
        let values = target.get("additionalProperties")?;
        is_struct(self.resolve(values)).then_some(values)
    }

    /// The entry of `key` of the table `table` at `place`.
    fn key(&mut self, key: &str, property: &Value, target: &Value, table: &Value, place: &Place) {
        let mut heading = place.heading.clone();
        heading.push(key.to_owned());
        let _ = writeln!(self.out, "### `{}`\n", heading.join("."));
        self.paragraph(property);
        let required = table
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|k| k == key));
        let _ = writeln!(
            self.out,
            "- Type: {}{}",
            self.type_of(property, target),
            if required { ", required" } else { "" }
        );
        let said = property
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| d.contains("default") || d.contains("when not given"));
        let default = match property.get("default") {
            Some(value) => format!("`{}`", inline_toml(value)),
            None if said => "as the description says".to_owned(),
            None => "none".to_owned(),
        };
        let _ = writeln!(self.out, "- Default: {default}");
        match first_example(property) {
            Some(value) => {
                let example = place.example_with(key, value, table);
                let _ = writeln!(
                    self.out,
                    "- Example:\n\n  ```toml\n{}  ```\n",
                    indent(&toml_at(&place.example, &example))
                );
            }
            None => self.out.push('\n'),
        }
    }

    /// A description as a paragraph, its hard line breaks joined.
    fn paragraph(&mut self, schema: &Value) {
        if let Some(text) = schema.get("description").and_then(Value::as_str) {
            let _ = writeln!(
                self.out,
                "{}\n",
                text.split('\n').collect::<Vec<_>>().join(" ")
            );
        }
    }

    /// The type of a key, in words, with its limits.
    fn type_of(&self, property: &Value, target: &Value) -> String {
        let mut words = self.base_type(target);
        let mut limits: Vec<String> = Vec::new();
        let mut push = |limit: String| {
            if !limits.contains(&limit) {
                limits.push(limit);
            }
        };
        for schema in [property, target] {
            for (keyword, word) in [
                ("minimum", "at least"),
                ("exclusiveMinimum", "more than"),
                ("maximum", "at most"),
                ("minItems", "items: at least"),
                ("minLength", "length: at least"),
            ] {
                if let Some(n) = schema.get(keyword) {
                    push(format!("{word} {n}"));
                }
            }
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
                push(format!("matching `{pattern}`"));
            }
        }
        if !limits.is_empty() {
            let _ = write!(words, " ({})", limits.join(", "));
        }
        words
    }

    fn base_type(&self, target: &Value) -> String {
        if let Some(choices) = target.get("oneOf").and_then(Value::as_array) {
            let consts: Vec<String> = choices
                .iter()
                .filter_map(|c| c.get("const"))
                .map(|c| format!("`{}`", inline_toml(c)))
                .collect();
            if consts.len() == choices.len() {
                return format!("one of {}", consts.join(", "));
            }
        }
        let kinds: Vec<&str> = match target.get("type") {
            Some(Value::String(kind)) => vec![kind.as_str()],
            Some(Value::Array(kinds)) => kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|k| *k != "null")
                .collect(),
            _ => Vec::new(),
        };
        match kinds.as_slice() {
            ["array"] => {
                let items = target.get("items").map(|i| self.base_type(self.resolve(i)));
                format!("array of {}s", items.unwrap_or_else(|| "value".to_owned()))
            }
            ["object"] => match target.get("additionalProperties").map(|v| self.resolve(v)) {
                Some(values) if is_struct(values) => {
                    "table of tables, one per name (keys below)".to_owned()
                }
                Some(values) => format!("table of {}s", self.base_type(values)),
                None => "table".to_owned(),
            },
            ["number"] => "number".to_owned(),
            [kind] => (*kind).to_owned(),
            _ => "value".to_owned(),
        }
    }
}

/// Where a table is: its heading's path (with `<name>` for a key of a table of tables),
/// the path its examples are written at (an example name there), and the keys every
/// example of it starts from (what the table needs to be valid, such as an agent's
/// `command` or a provider's `kind`).
#[derive(Debug, Default)]
struct Place {
    heading: Vec<String>,
    example: Vec<String>,
    base: Map<String, Value>,
}

impl Place {
    /// The table `key` inside this one, whose examples start from `base` (an object).
    fn child(&self, heading: &str, example: &str, base: Option<&Value>) -> Place {
        let mut place = Place {
            heading: self.heading.clone(),
            example: self.example.clone(),
            base: base.and_then(Value::as_object).cloned().unwrap_or_default(),
        };
        place.heading.push(heading.to_owned());
        place.example.push(example.to_owned());
        place
    }

    /// The table's example for `key = value`: the base with `key` set, less the base's
    /// keys that are the other choices of a `oneOf` of `table` (an agent's `url` drops
    /// the base's `command`).
    fn example_with(&self, key: &str, value: &Value, table: &Value) -> Value {
        let mut example = self.base.clone();
        let choices: Vec<Vec<&str>> = table
            .get("oneOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|choice| {
                let required = choice.get("required").and_then(Value::as_array);
                required
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect()
            })
            .collect();
        if choices.iter().any(|required| required.contains(&key)) {
            for other in choices.iter().filter(|r| !r.contains(&key)).flatten() {
                example.remove(*other);
            }
        }
        example.insert(key.to_owned(), value.clone());
        Value::Object(example)
    }
}

/// The first of a schema's `examples`.
fn first_example(schema: &Value) -> Option<&Value> {
    schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
}

/// Whether `schema` is a table of named keys (a struct of the model).
fn is_struct(schema: &Value) -> bool {
    schema.get("properties").is_some()
        && schema.get("additionalProperties") == Some(&Value::Bool(false))
}

fn is_null(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::String("null".to_owned()))
}

/// `value` written as TOML at `path` (its tables as headers).
fn toml_at(path: &[String], value: &Value) -> String {
    let mut nested = value.clone();
    for key in path.iter().rev() {
        let mut table = Map::new();
        table.insert(key.clone(), nested);
        nested = Value::Object(table);
    }
    toml::to_string(&nested).unwrap_or_else(|e| format!("# cannot write the example: {e}\n"))
}

/// A scalar (or small list) as TOML writes it after `key = `.
fn inline_toml(value: &Value) -> String {
    let line = toml_at(&["k".to_owned()], value);
    line.strip_prefix("k = ")
        .map(|rest| rest.trim_end().to_owned())
        .unwrap_or_else(|| value.to_string())
}

/// TOML lines indented under a list item.
fn indent(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> String {
        let schema = prill_spec::schema::schema_for(prill_spec::plan::Dialect::Config).to_value();
        config_reference(&schema)
    }

    #[test]
    fn every_key_of_the_model_has_an_entry_with_type_default_and_example() {
        let page = page();
        for key in [
            "`server`",
            "`timeout_in_seconds`",
            "`judge.model`",
            "`judge.votes`",
            "`agents`",
            "`agents.<name>.command`",
            "`agents.<name>.env`",
            "`providers.<name>.base_url`",
            "`concurrency.jobs`",
            "`neuro_san.python`",
            "`frameworks.langgraph.url`",
            "`max_input_bytes`",
        ] {
            assert!(page.contains(&format!("### {key}\n")), "no entry for {key}");
        }
        let entries = page.matches("\n### ").count();
        assert_eq!(page.matches("\n- Type: ").count(), entries);
        assert_eq!(page.matches("\n- Default: ").count(), entries);
        assert_eq!(
            page.matches("\n- Example:").count(),
            entries,
            "every key has an example in the model (`examples`)"
        );
        assert!(page.contains("- Default: `300`"), "timeout's default");
        assert!(
            page.contains("  [agents.echo]\n  command = [\"python3\", \"agents/echo.py\"]\n"),
            "{page}"
        );
        assert!(
            page.contains("- Type: one of `\"any\"`, `\"project\"`"),
            "{page}"
        );
    }

    #[test]
    fn every_example_is_a_valid_prill_toml() {
        let page = page();
        let mut blocks = page.split("```toml\n").skip(1);
        let mut seen = 0;
        for block in blocks.by_ref() {
            let text: String = block
                .split("```")
                .next()
                .unwrap_or_default()
                .lines()
                .map(|l| format!("{}\n", l.trim_start()))
                .collect();
            let loaded = prill_spec::load::load_str(
                std::path::Path::new("prill.toml"),
                &text,
                &prill_spec::Env::default(),
                prill_spec::load::Unrecognized::Error,
            )
            .expect("read as prill.toml");
            assert!(loaded.is_valid(), "{text}: {:?}", loaded.reports());
            seen += 1;
        }
        assert!(seen > 30, "only {seen} examples");
    }
}
