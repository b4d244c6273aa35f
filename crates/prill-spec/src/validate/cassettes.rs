//! Validates `[cassettes]` of `prill.toml`: the body fields that matching a request to
//! its recording leaves out (`ignore`) or keeps after all (`keep`).

use super::cx::{At, Cx};
use crate::diag::Diagnostic;
use crate::model::config::CassettesConfig;
use crate::node::Node;

/// `[cassettes]`: `ignore` and `keep`, lists of dotted body field paths.
pub(crate) fn cassettes(node: &Node, at: &At, cx: &mut Cx) -> Option<CassettesConfig> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(entries, at, &["ignore", "keep"], |k| match k {
        "dir" | "path" | "folder" => Some(
            "the cassettes' folder is given on the command line: `--record DIR`, `--replay DIR`"
                .to_owned(),
        ),
        "volatile" | "exclude" | "skip" | "ignored" => {
            Some("fields left out of matching are `ignore`".to_owned())
        }
        "match" | "include" | "kept" => {
            Some("default volatile fields matched on after all are `keep`".to_owned())
        }
        _ => None,
    });
    let ignore = paths(node, at, "ignore", cx);
    let keep = paths(node, at, "keep", cx);
    (cx.errors() == before).then_some(CassettesConfig { ignore, keep })
}

/// The list `key` of `node`, each item a dotted path with no empty part.
fn paths(node: &Node, at: &At, key: &str, cx: &mut Cx) -> Vec<String> {
    let Some(list) = node.get(key) else {
        return Vec::new();
    };
    let at = at.key(key);
    let Some(items) = cx.list(list, &at) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let Some(path) = cx.string(item, &at) else {
            continue;
        };
        if path.split('.').any(str::is_empty) {
            let d = Diagnostic::new(
                "invalid-field-path",
                at.path(),
                format!("`{path}` is not a dotted field path"),
            )
            .at(item.span)
            .expected("keys joined by `.`, `*` for any one key or element, e.g. `metadata.trace_id` or `messages.*.name`");
            cx.report(d, &at, None, Some(item));
            continue;
        }
        paths.push(path);
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::super::config_messages as load;

    #[test]
    fn ignore_and_keep_are_read() {
        let config = load(
            "[cassettes]\nignore = [\"metadata.session\", \"messages.*.name\"]\nkeep = [\"trace_id\"]\n",
        )
        .unwrap();
        let cassettes = config.cassettes.unwrap();
        assert_eq!(cassettes.ignore, ["metadata.session", "messages.*.name"]);
        assert_eq!(cassettes.keep, ["trace_id"]);
    }

    #[test]
    fn bad_cassettes_say_what_is_expected() {
        let errors = load(
            "[cassettes]\nignore = [\"metadata..x\", 3]\nkeep = \"trace_id\"\ndir = \"cassettes\"\n",
        )
        .unwrap_err();
        let has = |path: &str, words: &str| {
            errors
                .iter()
                .any(|e| e.starts_with(&format!("{path}:")) && e.contains(words))
        };
        assert!(
            has("cassettes.ignore[0]", "dotted field path"),
            "{errors:?}"
        );
        assert!(has("cassettes.ignore[1]", ""), "{errors:?}");
        assert!(has("cassettes.keep", ""), "{errors:?}");
        assert!(has("cassettes.dir", ""), "{errors:?}");
    }
}
