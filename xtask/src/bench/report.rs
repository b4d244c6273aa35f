//! The benchmark's report: a Markdown table of every workload and tool, `prill list`'s
//! loading and planning, the targets, and the machine it ran on; and the section of
//! `docs/performance.md` it replaces with `--write-docs`.

use std::fmt::Write as _;

use super::stats::{Summary, ideal};
use super::targets::{Outcome, thousands};

/// The line before the generated part of `docs/performance.md`.
pub(crate) const BEGIN: &str = "<!-- bench:begin -->";
/// The line after it.
pub(crate) const END: &str = "<!-- bench:end -->";

/// A tool measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    Prill,
    Promptfoo,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Prill => "Prill",
            Tool::Promptfoo => "promptfoo",
        }
    }
}

/// One workload run by one tool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Row {
    pub(crate) tests: usize,
    pub(crate) jobs: usize,
    pub(crate) tool: Tool,
    pub(crate) summary: Summary,
}

/// Everything a run of the benchmark measured.
#[derive(Debug, Default)]
pub(crate) struct Results {
    /// `prill run` and `promptfoo eval`, workload by workload.
    pub(crate) rows: Vec<Row>,
    /// `prill list` by number of tests.
    pub(crate) lists: Vec<(usize, Summary)>,
    /// The long-answer workload (`--long-answers`) by source and concurrency.
    pub(crate) long: Vec<(super::long::Source, usize, Summary)>,
}

impl Results {
    /// The summary of `tool` on `tests` tests at `jobs`.
    pub(crate) fn find(&self, tests: usize, jobs: usize, tool: Tool) -> Option<Summary> {
        self.rows
            .iter()
            .find(|r| r.tests == tests && r.jobs == jobs && r.tool == tool)
            .map(|r| r.summary)
    }
}

/// The whole report, in Markdown: `preamble` (the machine and the set-up), the table of
/// runs, the table of `prill list`, and the targets.
pub(crate) fn render(
    results: &Results,
    outcomes: &[Outcome],
    latency_ms: u64,
    preamble: &str,
) -> String {
    let mut out = String::new();
    out.push_str(preamble.trim_end());
    out.push_str("\n\n");
    out.push_str(&runs_table(results, latency_ms));
    out.push_str("\nLoading and planning (`prill list` of the same suite):\n\n");
    out.push_str("| tests | wall s, median (min–max) | CPU s | peak RSS MB |\n|---|---|---|---|\n");
    for (tests, s) in &results.lists {
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} | {:.1} |",
            thousands(*tests),
            wall(s),
            s.cpu_median,
            s.rss_median_mb
        );
    }
    if !results.long.is_empty() {
        out.push_str(&long_table(&results.long));
    }
    out.push_str(
        "\nPrill's targets (medians; `cargo xtask bench` exits non-zero when one is missed):\n\n",
    );
    out.push_str("| workload | measure | target | measured | |\n|---|---|---|---|---|\n");
    for outcome in outcomes {
        let t = &outcome.target;
        let value = outcome
            .value
            .map_or("not run".to_owned(), |v| t.measure.format(v));
        let verdict = match outcome.met() {
            Some(true) => "met",
            Some(false) => "**missed**",
            None => "",
        };
        let _ = writeln!(
            out,
            "| {} | {} | ≤ {} | {value} | {verdict} |",
            t.subject,
            t.measure.name(),
            t.measure.format(t.limit)
        );
    }
    out
}

/// The table of the long-answer workload: its peak RSS, and that in answers.
fn long_table(long: &[(super::long::Source, usize, Summary)]) -> String {
    let answer = super::long::answer_mb();
    let mut out = format!(
        "\nLong answers (`--long-answers`): {} tests, each answered {:.0} MB by the fake \
         server (streamed 64 KiB an event) or by a direct agent (one line), with the \
         history, `--json` and `--html`:\n\n\
         | answered by | -j | wall s, median (min–max) | peak RSS MB | peak RSS / answers in flight |\n|---|---|---|---|---|\n",
        super::long::TESTS,
        answer
    );
    for (source, jobs, s) in long {
        let _ = writeln!(
            out,
            "| {source} | {jobs} | {} | {:.1} | {:.1} |",
            wall(s),
            s.rss_median_mb,
            s.rss_median_mb / (answer * (*jobs).min(super::long::TESTS) as f64)
        );
    }
    out
}

/// The table of runs: one row per workload and tool.
fn runs_table(results: &Results, latency_ms: u64) -> String {
    let mut out = String::from(
        "| workload | tool | wall s, median (min–max) | CPU s | peak RSS MB | wall / ideal | promptfoo wall / Prill wall |\n|---|---|---|---|---|---|---|\n",
    );
    for row in &results.rows {
        let s = &row.summary;
        let ideal = ideal(row.tests, row.jobs, latency_ms);
        let versus = match row.tool {
            Tool::Prill => results
                .find(row.tests, row.jobs, Tool::Promptfoo)
                .map_or(String::new(), |p| {
                    format!("{:.1}×", p.wall_median / s.wall_median)
                }),
            Tool::Promptfoo => String::new(),
        };
        let _ = writeln!(
            out,
            "| {} tests, -j {} (ideal {ideal:.2} s) | {} | {} | {:.2} | {:.1} | {:.2} | {versus} |",
            thousands(row.tests),
            row.jobs,
            row.tool.name(),
            wall(s),
            s.cpu_median,
            s.rss_median_mb,
            s.wall_median / ideal,
        );
    }
    out
}

/// `1.23 (1.20–1.31)`.
fn wall(s: &Summary) -> String {
    format!("{:.2} ({:.2}–{:.2})", s.wall_median, s.wall_min, s.wall_max)
}

/// `doc` with what lies between [`BEGIN`] and [`END`] replaced by `body`.
pub(crate) fn replace_section(doc: &str, body: &str) -> Result<String, String> {
    let (Some(begin), Some(end)) = (doc.find(BEGIN), doc.find(END)) else {
        return Err(format!("the markers {BEGIN} and {END} are missing"));
    };
    if end < begin || doc.matches(BEGIN).count() != 1 || doc.matches(END).count() != 1 {
        return Err(format!(
            "{BEGIN} must come once, before {END}, which must come once"
        ));
    }
    let head = &doc[..begin + BEGIN.len()];
    Ok(format!("{head}\n{}\n{}", body.trim(), &doc[end..]))
}

/// The CPU model of `/proc/cpuinfo`'s text.
pub(crate) fn cpu_model(cpuinfo: &str) -> Option<&str> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == "model name").then(|| value.trim())
    })
}

/// The memory of `/proc/meminfo`'s text, in GiB.
pub(crate) fn memory_gib(meminfo: &str) -> Option<f64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::super::targets::{TARGETS, check};
    use super::*;

    fn summary(wall: f64) -> Summary {
        Summary {
            runs: 3,
            wall_median: wall,
            wall_min: wall - 0.5,
            wall_max: wall + 0.5,
            cpu_median: 0.75,
            rss_median_mb: 20.0,
        }
    }

    #[test]
    fn the_docs_section_is_replaced_and_nothing_else() {
        let doc = format!("# Perf\n\nbefore\n{BEGIN}\nold table\n{END}\nafter\n");
        let new = replace_section(&doc, "\nnew table\n").unwrap();
        assert_eq!(
            new,
            format!("# Perf\n\nbefore\n{BEGIN}\nnew table\n{END}\nafter\n")
        );
        assert_eq!(replace_section(&new, "new table").unwrap(), new);
        assert!(replace_section("no markers", "x").is_err());
        assert!(replace_section(&format!("{END}\n{BEGIN}\n"), "x").is_err());
        assert!(replace_section(&format!("{BEGIN}{BEGIN}{END}"), "x").is_err());
    }

    #[test]
    fn the_report_has_ratios_and_targets() {
        let mut results = Results::default();
        for (tool, wall) in [(Tool::Prill, 1.25), (Tool::Promptfoo, 50.0)] {
            let summary = summary(wall);
            results.rows.push(Row {
                tests: 10_000,
                jobs: 200,
                tool,
                summary,
            });
        }
        results.lists.push((10_000, summary(0.5)));
        let outcomes = check(&TARGETS, |_| None);
        let text = render(&results, &outcomes, 20, "Machine: test\n");
        assert!(text.starts_with("Machine: test\n\n| workload |"), "{text}");
        assert!(text.contains(
            "| 10,000 tests, -j 200 (ideal 1.00 s) | Prill | 1.25 (0.75–1.75) | 0.75 | 20.0 | 1.25 | 40.0× |"
        ), "{text}");
        assert!(
            text.contains("| promptfoo | 50.00 (49.50–50.50) | 0.75 | 20.0 | 50.00 |  |"),
            "{text}"
        );
        assert!(
            text.contains("| 10,000 | 0.50 (0.00–1.00) | 0.75 | 20.0 |"),
            "{text}"
        );
        assert!(
            text.contains("| `prill run`, 10,000 tests, -j 200 | CPU | ≤ 1.60 s | not run |  |"),
            "{text}"
        );
        assert!(!text.contains("Long answers"), "{text}");
        let mut long = summary(4.0);
        long.rss_median_mb = 104.9;
        results
            .long
            .push((super::super::long::Source::Direct, 1, long));
        let text = render(&results, &outcomes, 20, "Machine: test\n");
        assert!(
            text.contains("Long answers (`--long-answers`): 20 tests, each answered 21 MB by"),
            "{text}"
        );
        assert!(
            text.contains("| a direct agent | 1 | 4.00 (3.50–4.50) | 104.9 | 5.0 |"),
            "{text}"
        );
        assert!(
            text.contains(
                "| `prill run`, 20 tests answered 20 MiB each by a direct agent, -j 1 | peak RSS | ≤ 250.0 MB | not run |  |"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_machine_is_read_from_proc() {
        let cpuinfo = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t: fpu\n";
        assert_eq!(cpu_model(cpuinfo), Some("Intel(R) Xeon(R) Processor"));
        let meminfo = "MemTotal:       24684544 kB\nMemFree: 1 kB\n";
        let gib = memory_gib(meminfo).unwrap();
        assert!((gib - 23.54).abs() < 0.01, "{gib}");
    }
}
