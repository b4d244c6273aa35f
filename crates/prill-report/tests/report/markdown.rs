//! The Markdown summary.

use prill_report::{Markdown, Output};

use crate::fixtures::{Capture, KEYWORD_FAILURE, UNREACHABLE, feed, run};

fn markdown(cancelled: bool) -> String {
    let capture = Capture::default();
    let mut reporter = Markdown::new(Output::writer(capture.clone()));
    feed(&mut reporter, &run(cancelled));
    capture.text()
}

#[test]
fn heading_totals_and_a_row_per_unit() {
    let md = markdown(false);
    assert!(md.starts_with("## Prill results\n\n"), "{md}");
    assert!(
        md.contains("**1 passed, 1 failed, 1 errored, 1 skipped** in 1.23s\n"),
        "{md}"
    );
    for row in [
        "| ✅ passed | greets | direct | 2/2 | 2/3 |",
        "| ❌ failed | greets | http | 1/3 | 2/3 |",
        "| ⚠️ errored | looks up | http | 0/2 | 1/2 |",
        "| ⏭️ skipped | farewell | direct | 0/0 | 1/1 |",
    ] {
        assert!(md.contains(&format!("{row}\n")), "{row} missing from\n{md}");
    }
}

#[test]
fn failures_and_errors_are_listed_with_their_messages() {
    let md = markdown(false);
    let section = &md[md.find("### Failures and errors").unwrap()..];
    assert!(
        section.contains(
            "#### ❌ greets \\[http\\]\n\n`cases/a.hocon`: 1 passed, 2 failed (need 2/3)\n"
        ),
        "{section}"
    );
    assert!(
        section.contains(&format!("```text\n{KEYWORD_FAILURE}")),
        "{section}"
    );
    assert!(section.contains("(2 samples)\n```"), "{section}");
    assert!(section.contains("#### ⚠️ looks up \\[http\\]"), "{section}");
    assert!(
        section.contains(&format!("error: interaction 0: {UNREACHABLE}")),
        "{section}"
    );
    assert!(
        !section.contains("greets \\[direct\\]"),
        "passed units are not detailed"
    );
}

#[test]
fn a_cancelled_run_says_so() {
    assert!(
        markdown(true)
            .contains("**1 passed, 1 failed, 1 errored, 1 skipped** in 1.23s (cancelled)\n")
    );
}

#[test]
fn long_messages_are_cut() {
    let mut unit = crate::fixtures::errored_unit();
    unit.samples[0].interactions[0]
        .error
        .as_mut()
        .unwrap()
        .message = "x".repeat(5000);
    let capture = Capture::default();
    let mut reporter = Markdown::new(Output::writer(capture.clone()));
    feed(&mut reporter, &[prill_run::Event::UnitFinished(unit)]);
    let md = capture.text();
    assert!(
        md.contains(&format!(
            "{}…\n",
            "x".repeat(500 - "error: interaction 0: ".len())
        )),
        "{md}"
    );
    assert!(!md.contains(&"x".repeat(501)));
}

#[test]
fn appending_keeps_what_was_there() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("summary.md");
    std::fs::write(&path, "# earlier step\n\n").unwrap();
    let mut reporter = Markdown::new(Output::append(&path).unwrap());
    feed(&mut reporter, &run(false));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# earlier step\n\n## Prill results\n"),
        "{text}"
    );
}
