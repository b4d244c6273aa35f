//! The human reporter: failure lines, deduplicated messages, the summary line, colour.

use prill_report::{Human, HumanOptions, Verbosity};
use prill_run::Event;

use crate::fixtures::{Capture, KEYWORD_FAILURE, UNREACHABLE, feed, run};
use crate::snapshots::assert_snapshot;

fn human(options: HumanOptions, events: &[Event]) -> String {
    let capture = Capture::default();
    let mut reporter = Human::new(capture.clone(), options);
    feed(&mut reporter, events);
    capture.text()
}

fn plain(verbosity: Verbosity) -> HumanOptions {
    HumanOptions {
        verbosity,
        color: false,
        terminal: false,
        transcripts: false,
    }
}

#[test]
fn prints_failures_errors_and_the_summary() {
    let out = human(plain(Verbosity::Quiet), &run(false));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "FAIL [0.30s] cases/a.hocon::greets [http] 1 passed, 2 failed (need 2/3)"
    );
    assert!(
        lines[1].starts_with(&format!("    {KEYWORD_FAILURE}")),
        "{out}"
    );
    assert!(lines[1].ends_with(" (2 samples)"), "{out}");
    // Where: the check's place in its file, the interaction and the samples.
    assert_eq!(
        lines[2],
        "      at cases/a.hocon:8:13, interaction 0, samples 0, 2"
    );
    // What the calls said beyond their answers, once for the unit.
    assert_eq!(
        lines[3],
        "    an answer was cut short by a token limit (stop reason `length`)"
    );
    assert!(
        lines[4].starts_with("    note: temperature 0.2 not sent: gpt-5.1 is a reasoning model"),
        "{out}"
    );
    // The tool calls of the first sample that did not pass, by turn.
    assert_eq!(
        lines[5],
        "    trajectory of sample 0: turn 1: search (2 model calls)"
    );
    assert_eq!(
        lines[6],
        "ERROR [0.30s] cases/b.yaml::looks up [http] 0 passed, 2 errored (need 1/2)"
    );
    assert_eq!(lines[7], format!("    error: interaction 0: {UNREACHABLE}"));
    assert_eq!(lines[8], "      interaction 0, sample 0");
    assert_eq!(lines[9], "    error: text: the judge failed: timed out");
    // A check with no known place in the file is named by its path.
    assert_eq!(
        lines[10],
        "      at interactions[0].response.text.gist, interaction 0, sample 1"
    );
    assert_eq!(
        lines[11],
        "1 passed, 1 failed, 1 errored, 1 skipped in 1.23s"
    );
    assert_eq!(lines.len(), 12, "{out}");
    assert!(!out.contains("PASS"), "{out}");
    assert!(!out.contains("transcript"), "{out}");
}

#[test]
fn in_a_ci_log_every_finished_unit_gets_a_line() {
    let out = human(plain(Verbosity::Normal), &run(false));
    assert_snapshot("human-ci.txt", &out);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "PASS [0.30s] cases/a.hocon::greets [direct]");
    assert!(
        out.contains("\nSKIP cases/b.yaml::farewell [direct] not run\n"),
        "{out}"
    );
    // The failures read as they do at every verbosity.
    let quiet = human(plain(Verbosity::Quiet), &run(false));
    let without_passes: String = out
        .lines()
        .filter(|l| !l.starts_with("PASS ") && !l.starts_with("SKIP "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(without_passes, quiet);
}

#[test]
fn show_transcript_prints_the_first_failing_sample_of_each_failure() {
    let options = HumanOptions {
        transcripts: true,
        ..plain(Verbosity::Quiet)
    };
    let out = human(options, &run(false));
    assert_snapshot("human-transcripts.txt", &out);
    assert_eq!(out.matches("    transcript:\n").count(), 2, "{out}");
    // What was sent, the text and the sly_data, and what came back.
    assert!(out.contains("      interaction 0 (0.09s):\n"), "{out}");
    assert!(out.contains("        sent: hi\n"), "{out}");
    assert!(
        out.contains("        sent sly_data: {\"user\":\"ringo\"}\n"),
        "{out}"
    );
    assert!(out.contains("        answer: bye\n"), "{out}");
    assert!(
        out.contains("        FAILED keywords at cases/a.hocon:8:13: text: expected"),
        "{out}"
    );
    assert!(
        out.contains(&format!("        error (unreachable): {UNREACHABLE}\n")),
        "{out}"
    );
}

#[test]
fn verbose_lists_samples_in_index_order_with_their_own_messages() {
    let mut unit = crate::fixtures::failed_unit();
    // Completion order: 2, 0, 1.
    unit.samples.rotate_right(1);
    assert_eq!(unit.samples[0].index, 2);
    let out = human(plain(Verbosity::Verbose), &[Event::UnitFinished(unit)]);
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("no `{s}` in {out}"));
    assert!(at("    sample 0: failed") < at("    sample 1: passed"));
    assert!(at("    sample 1: passed") < at("    sample 2: failed"));
    // Each failing sample says what failed in it, where; no merged list below.
    let under_sample = format!("      {KEYWORD_FAILURE}");
    assert_eq!(out.matches(&under_sample).count(), 2, "{out}");
    assert_eq!(
        out.matches("        at cases/a.hocon:8:13, interaction 0\n")
            .count(),
        2,
        "{out}"
    );
    assert!(!out.contains("(2 samples)"), "{out}");
    // And -v shows the transcript of the first failing sample.
    assert!(
        out.contains("    transcript:\n      sample 0 (failed, 0.10s)\n"),
        "{out}"
    );
}

#[test]
fn verbose_output_matches_its_snapshot() {
    let out = human(plain(Verbosity::Verbose), &run(false));
    assert_snapshot("human-verbose.txt", &out);
}

#[test]
fn without_color_there_are_no_escapes() {
    for verbosity in [Verbosity::Quiet, Verbosity::Normal, Verbosity::Verbose] {
        let out = human(plain(verbosity), &run(false));
        assert!(!out.contains('\x1b'), "{out}");
    }
}

#[test]
fn with_color_the_words_are_coloured() {
    let options = HumanOptions {
        color: true,
        ..plain(Verbosity::Verbose)
    };
    let out = human(options, &run(false));
    assert!(
        out.contains("\x1b[1;31mFAIL\x1b[0m [0.30s] cases/a.hocon::greets [http]"),
        "{out}"
    );
    assert!(
        out.contains("\x1b[1;33mERROR\x1b[0m [0.30s] cases/b.yaml::looks up [http]"),
        "{out}"
    );
    assert!(
        out.contains("\x1b[1;32mPASS\x1b[0m [0.30s] cases/a.hocon::greets [direct]"),
        "{out}"
    );
    // The summary line stays plain, for tools that read it.
    assert!(
        out.ends_with("1 passed, 1 failed, 1 errored, 1 skipped in 1.23s\n"),
        "{out}"
    );
}

#[test]
fn verbose_adds_passes_skips_and_samples() {
    let out = human(plain(Verbosity::Verbose), &run(false));
    assert!(
        out.contains(
            "PASS [0.30s] cases/a.hocon::greets [direct] 2 passed, 1 not run (need 2/3)\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("SKIP cases/b.yaml::farewell [direct] not run\n"),
        "{out}"
    );
    // Each model call of a sample's tool loop, under the sample.
    let turns = "      turn 1: 1 tool call, 5 in / 9 out tokens, 0.03s, stop `tool_calls`\n      turn 2: no tool call, 7 in / 500 out tokens, 0.05s, stop `length`\n";
    let failure =
        format!("      {KEYWORD_FAILURE}\n        at cases/a.hocon:8:13, interaction 0\n");
    assert!(
        out.contains(&format!(
            "    sample 0: failed in 0.10s\n{failure}{turns}    sample 1: passed in 0.10s\n    sample 2: failed in 0.10s\n{failure}{turns}"
        )),
        "{out}"
    );
    assert!(out.contains("    sample 0: errored in 0.10s\n"), "{out}");
}

#[test]
fn quiet_prints_only_failures_and_the_summary() {
    let quiet = human(plain(Verbosity::Quiet), &run(false));
    assert!(
        !quiet.contains("PASS") && !quiet.contains("SKIP"),
        "{quiet}"
    );
    // Even on a terminal: no bar.
    let on_terminal = human(
        HumanOptions {
            terminal: true,
            ..plain(Verbosity::Quiet)
        },
        &run(false),
    );
    assert_eq!(on_terminal, quiet);
}

#[test]
fn a_cancelled_run_says_so() {
    let out = human(plain(Verbosity::Normal), &run(true));
    assert!(
        out.ends_with("1 passed, 1 failed, 1 errored, 1 skipped in 1.23s (cancelled)\n"),
        "{out}"
    );
}

#[test]
fn a_stream_cut_short_still_ends_with_a_summary() {
    let mut events = run(false);
    events.pop();
    let out = human(plain(Verbosity::Normal), &events);
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("1 passed, 1 failed, 1 errored, 1 skipped in "),
        "{out}"
    );
    assert!(last.ends_with(" (cancelled)"), "{out}");
}

#[test]
fn on_a_terminal_the_bar_draws_and_the_lines_still_come_through() {
    let options = HumanOptions {
        terminal: true,
        ..plain(Verbosity::Normal)
    };
    let out = human(options, &run(false));
    assert!(
        out.contains("FAIL [0.30s] cases/a.hocon::greets [http] 1 passed, 2 failed (need 2/3)"),
        "{out}"
    );
    // On a terminal the bar shows progress: no line for a pass.
    assert!(!out.contains("PASS"), "{out}");
    assert!(out.contains("/4 "), "the bar drew: {out:?}");
    // Under the bar, the cases in flight (a draw follows each change: no timing).
    assert!(
        out.contains("running: greets [direct]"),
        "the bar named the case in flight: {out:?}"
    );
    let last = out.rsplit('\n').nth(1).unwrap();
    assert!(
        last.ends_with("1 passed, 1 failed, 1 errored, 1 skipped in 1.23s"),
        "{out:?}"
    );
}

#[test]
fn terminal_escapes_in_messages_are_shown_escaped() {
    let mut unit = crate::fixtures::errored_unit();
    unit.samples[0].interactions[0]
        .error
        .as_mut()
        .unwrap()
        .message = "bad\x1b[2Jthing".into();
    let out = human(plain(Verbosity::Normal), &[Event::UnitFinished(unit)]);
    assert!(out.contains("bad\\u{1b}[2Jthing"), "{out}");
    assert!(!out.contains('\x1b'), "{out}");
}

#[test]
fn short_durations_show_in_milliseconds() {
    let mut unit = crate::fixtures::failed_unit();
    unit.duration = std::time::Duration::from_micros(7_300);
    let out = human(plain(Verbosity::Quiet), &[Event::UnitFinished(unit)]);
    assert!(
        out.starts_with("FAIL [7ms] cases/a.hocon::greets [http] "),
        "{out}"
    );
}
