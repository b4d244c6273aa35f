//! TOML text (`prill.toml`) to a located [`Node`] tree, through `toml`'s spanned parser.

use crate::diag::Diagnostic;
use crate::node::{Key, Node, Span, Value};
use crate::source::Source;

/// Parses `source` as TOML, reporting every syntax error it can recover from.
pub fn parse(source: &Source) -> Result<Node, Vec<Diagnostic>> {
    let (table, errors) = toml::de::DeTable::parse_recoverable(&source.text);
    if !errors.is_empty() {
        return Err(errors
            .iter()
            .map(|e| {
                let mut d = Diagnostic::new("syntax", "", lowercase_message(e.message()));
                if let Some(range) = e.span() {
                    d = d.at(Span::new(range.start, range.end));
                }
                d
            })
            .collect());
    }
    let span = table.span();
    Ok(Node::new(
        table_value(table.get_ref()),
        Span::new(span.start, span.end),
    ))
}

fn lowercase_message(message: &str) -> String {
    let trimmed = message.trim().trim_end_matches('.');
    let mut chars = trimmed.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => "invalid toml".to_owned(),
    }
}

fn table_value(table: &toml::de::DeTable<'_>) -> Value {
    Value::Object(
        table
            .iter()
            .map(|(k, v)| {
                let ks = k.span();
                (
                    Key {
                        name: k.get_ref().to_string(),
                        span: Span::new(ks.start, ks.end),
                    },
                    node(v),
                )
            })
            .collect(),
    )
}

fn node(value: &toml::Spanned<toml::de::DeValue<'_>>) -> Node {
    use toml::de::DeValue;
    let range = value.span();
    let span = Span::new(range.start, range.end);
    let v = match value.get_ref() {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Integer(i) => {
            let parsed = i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok();
            match parsed {
                Some(n) => Value::Number(n.into()),
                None => Value::String(i.as_str().to_owned()),
            }
        }
        DeValue::Float(f) => f
            .as_str()
            .replace('_', "")
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(f.as_str().to_owned())),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(d) => Value::String(d.to_string()),
        DeValue::Array(items) => Value::Array(items.iter().map(node).collect()),
        DeValue::Table(t) => table_value(t),
    };
    Node::new(v, span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_point_at_values() {
        let src = Source::new(
            "prill.toml",
            "[agents.math]\nurl = \"http://x\"\n\n[concurrency]\njobs = 4\n",
        );
        let root = parse(&src).unwrap();
        let url = root
            .get("agents")
            .unwrap()
            .get("math")
            .unwrap()
            .get("url")
            .unwrap();
        assert_eq!(url.as_str(), Some("http://x"));
        assert_eq!(src.line_col(url.span.start), (2, 7));
        let jobs = root.get("concurrency").unwrap().get("jobs").unwrap();
        assert_eq!(jobs.to_json(), serde_json::json!(4));
    }

    #[test]
    fn syntax_errors_have_positions() {
        let src = Source::new("prill.toml", "[agents\nurl = 1\n");
        let errs = parse(&src).unwrap_err();
        assert!(!errs.is_empty());
        assert!(errs[0].span.is_some());
        assert_eq!(errs[0].code, "syntax");
    }
}
