//! The CI recipes of `docs/ci.md` (`docs/examples/*.yml`): each file is valid YAML,
//! every `prill` command in its scripts parses with the current command line, and the
//! page shows each file as it is.

use std::path::{Path, PathBuf};

use clap::Parser as _;
use prill_cli::args::Cli;
use saphyr_parser::{Event, Parser};

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    files
}

/// Every shell script of a CI file: the value of each `run` key (GitHub) and each item
/// of `script`, `before_script` and `after_script` (GitLab). Invalid YAML panics with
/// the parser's message.
fn scripts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut parser = Parser::new_from_str(&text);
    // For each open collection: a mapping's last key and whether a key comes next, or
    // a sequence's key (the key of the mapping entry it is the value of).
    enum Open {
        Map { key: Option<String>, want_key: bool },
        Seq { of: Option<String> },
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut out = Vec::new();
    let is_script = |k: &str| matches!(k, "script" | "before_script" | "after_script");
    loop {
        let (event, _) = match parser.next_event() {
            Some(Ok(e)) => e,
            None => break,
            Some(Err(e)) => panic!("{} is not valid YAML: {e}", path.display()),
        };
        // The key whose value starts now, when the top is a mapping waiting for a value.
        let value_of = match stack.last() {
            Some(Open::Map {
                key,
                want_key: false,
            }) => key.clone(),
            _ => None,
        };
        match event {
            Event::Scalar(text, ..) => match stack.last_mut() {
                Some(Open::Map { key, want_key }) => {
                    if *want_key {
                        *key = Some(text.to_string());
                    } else if key.as_deref() == Some("run") || key.as_deref().is_some_and(is_script)
                    {
                        out.push(text.to_string());
                    }
                    *want_key = !*want_key;
                }
                Some(Open::Seq { of }) if of.as_deref().is_some_and(is_script) => {
                    out.push(text.to_string());
                }
                Some(Open::Seq { .. }) | None => {}
            },
            Event::MappingStart(..) => stack.push(Open::Map {
                key: None,
                want_key: true,
            }),
            Event::SequenceStart(..) => stack.push(Open::Seq { of: value_of }),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                if let Some(Open::Map { want_key, .. }) = stack.last_mut() {
                    *want_key = true;
                }
            }
            _ => {}
        }
    }
    out
}

/// The words of every `prill` command in `script`: lines joined at a trailing `\\`,
/// CI expressions and shell variables replaced by `1`, words split as a shell would
/// (quotes), commands split at pipes and list operators, redirections left out.
fn prill_commands(script: &str) -> Vec<Vec<String>> {
    let joined = script.replace("\\\n", " ");
    let mut commands = Vec::new();
    for line in joined.lines() {
        let mut command: Vec<String> = Vec::new();
        let mut redirect = false;
        for word in words(&substitute(line)).into_iter().chain([";".to_owned()]) {
            if ["|", "||", "&&", ";"].contains(&word.as_str()) {
                if command.first().is_some_and(|w| w == "prill") {
                    commands.push(std::mem::take(&mut command));
                }
                command.clear();
                redirect = false;
            } else if [">", ">>", "2>"].contains(&word.as_str()) {
                redirect = true;
            } else if !redirect {
                command.push(word);
            }
        }
    }
    commands
}

/// `line` with `${{ ... }}`, `${VAR}` and `$VAR` replaced by `1`.
fn substitute(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let skip = if let Some(expr) = after.strip_prefix("{{") {
            expr.find("}}").map_or(after.len(), |end| end + 4)
        } else if after.starts_with('{') {
            after.find('}').map_or(after.len(), |end| end + 1)
        } else {
            after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len())
        };
        out.push('1');
        rest = &after[skip..];
    }
    out.push_str(rest);
    out
}

/// Shell words: whitespace splits, quotes group.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, '#') if word.is_empty() && !any => break,
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}

#[test]
fn every_prill_command_of_the_ci_recipes_parses() {
    let files = examples();
    assert!(files.len() >= 2, "a GitHub and a GitLab recipe: {files:?}");
    for file in files {
        let commands: Vec<Vec<String>> = scripts(&file)
            .iter()
            .flat_map(|s| prill_commands(s))
            .collect();
        let subcommands: Vec<&str> = commands.iter().map(|c| c[1].as_str()).collect();
        for needed in ["run", "report", "compare"] {
            assert!(
                subcommands.contains(&needed),
                "{} has no `prill {needed}`: {commands:?}",
                file.display()
            );
        }
        for command in &commands {
            if let Err(e) = Cli::try_parse_from(command) {
                panic!(
                    "{}: `{}` does not parse:\n{e}",
                    file.display(),
                    command.join(" ")
                );
            }
        }
    }
}

#[test]
fn docs_ci_shows_each_recipe_as_it_is() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ci.md"))
            .unwrap();
    for file in examples() {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            page.contains(&format!("```yaml\n{text}```")),
            "docs/ci.md does not show {} as it is: copy the file into its yaml block",
            file.display()
        );
    }
}

#[test]
fn the_reader_finds_commands_and_refuses_bad_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.yml");
    std::fs::write(
        &good,
        "jobs:\n  a:\n    steps:\n      - run: |\n          prill run --shard ${{ matrix.shard }}/4 \\\n            --jsonl \"out $X.jsonl\" > log\nb:\n  script:\n    - echo hi && prill runs --format json\n",
    )
    .unwrap();
    let commands: Vec<Vec<String>> = scripts(&good)
        .iter()
        .flat_map(|s| prill_commands(s))
        .collect();
    assert_eq!(
        commands,
        vec![
            vec!["prill", "run", "--shard", "1/4", "--jsonl", "out 1.jsonl"],
            vec!["prill", "runs", "--format", "json"],
        ]
        .into_iter()
        .map(|c| c.into_iter().map(str::to_owned).collect::<Vec<_>>())
        .collect::<Vec<_>>()
    );
    let bad = dir.path().join("bad.yml");
    std::fs::write(&bad, "a: [1, 2\nb: c\n").unwrap();
    let refused = std::panic::catch_unwind(|| scripts(&bad));
    assert!(refused.is_err(), "unclosed flow sequence is invalid YAML");
}
