//! Validates `prill-quarantine.toml`: a list `[[quarantine]]` of entries, each with a
//! `file`, `case`, `reason`, `owner` and `expires` (`YYYY-MM-DD`), none empty, and no
//! case listed twice.

use super::cx::{At, Cx};
use crate::diag::Diagnostic;
use crate::model::quarantine::{Date, Entry, Quarantine};
use crate::node::Node;
use crate::source::Source;

const ENTRY_KEYS: [&str; 5] = ["file", "case", "reason", "owner", "expires"];

/// The quarantine in `root`, or `None` with every problem in `cx`.
pub(crate) fn quarantine(root: &Node, source: &Source, cx: &mut Cx) -> Option<Quarantine> {
    let at = At::root("Quarantine");
    let before = cx.errors();
    let entries = cx.object(root, &at)?;
    cx.unknown_keys_because(entries, &at, &["quarantine"], |_| None, "");
    let mut out = Quarantine::default();
    if let Some(list) = root.get("quarantine") {
        let at = at.key("quarantine");
        for (i, item) in cx.list(list, &at).unwrap_or_default().iter().enumerate() {
            if let Some(entry) = entry(item, &at.index(i), source, cx) {
                let twice = out
                    .entries
                    .iter()
                    .find(|e| e.file == entry.file && e.case == entry.case);
                if let Some(first) = twice {
                    let d = Diagnostic::new(
                        "duplicate-entry",
                        at.index(i).path(),
                        format!(
                            "`{}` in {} is quarantined twice; the first entry is at line {}",
                            entry.case, entry.file, first.at.0
                        ),
                    )
                    .at(item.span)
                    .help("keep one entry per case");
                    cx.report(d, &at.index(i), None, None);
                    continue;
                }
                out.entries.push(entry);
            }
        }
    }
    (cx.errors() == before).then_some(out)
}

fn entry(node: &Node, at: &At, source: &Source, cx: &mut Cx) -> Option<Entry> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys_because(entries, at, &ENTRY_KEYS, |_| None, "");
    let mut text = |key: &str, what: &str| match node.get(key) {
        Some(n) => cx.nonempty_string(n, &at.key(key)),
        None => {
            cx.missing(node, at, key, what);
            None
        }
    };
    let file = text("file", "the case's file, from the project folder");
    let case = text("case", "the case's name, as `prill list` shows it");
    let reason = text("reason", "why it is quarantined");
    let owner = text("owner", "who answers for it");
    let expires = text("expires", "the last day it holds, YYYY-MM-DD");
    let date = expires.as_deref().and_then(|e| {
        let date = Date::parse(e);
        if date.is_none() {
            let n = node.get("expires").unwrap_or(node);
            let d = Diagnostic::new(
                "invalid-date",
                at.key("expires").path(),
                format!("`{e}` is not a day"),
            )
            .at(n.span)
            .expected("a day, YYYY-MM-DD, e.g. \"2026-12-31\"");
            cx.report(d, &at.key("expires"), None, Some(n));
        }
        date
    });
    if cx.errors() > before {
        return None;
    }
    Some(Entry {
        file: file?.replace('\\', "/"),
        case: case?,
        reason: reason?,
        owner: owner?,
        expires: date?,
        at: source.line_col(node.span.start),
    })
}

#[cfg(test)]
mod tests {
    use crate::model::quarantine::load_quarantine;

    fn errors(text: &str) -> Vec<String> {
        load_quarantine(std::path::Path::new("prill-quarantine.toml"), text)
            .unwrap_err()
            .iter()
            .map(|r| r.plain())
            .collect()
    }

    #[test]
    fn an_entry_needs_every_field_and_a_real_day() {
        let e = errors(
            "[[quarantine]]\nfile = \"a.hocon\"\ncase = \"\"\nexpires = \"2026-02-30\"\nownr = \"x\"\n",
        );
        let all = e.join("\n");
        assert!(all.contains("quarantine[0].case"), "{all}");
        assert!(all.contains("missing required field `reason`"), "{all}");
        assert!(all.contains("missing required field `owner`"), "{all}");
        assert!(all.contains("`2026-02-30` is not a day"), "{all}");
        assert!(all.contains("did you mean `owner`"), "{all}");
        assert!(all.contains("prill-quarantine.toml:5:1"), "{all}");
    }

    #[test]
    fn a_case_is_quarantined_once() {
        let entry = "[[quarantine]]\nfile = \"a.hocon\"\ncase = \"a\"\nreason = \"r\"\nowner = \"o\"\nexpires = \"2026-12-31\"\n";
        let e = errors(&format!("{entry}{entry}"));
        assert!(
            e[0].contains("`a` in a.hocon is quarantined twice; the first entry is at line 1"),
            "{e:?}"
        );
    }
}
