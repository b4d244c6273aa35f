//! The model matrix (`--model a,b`): each spec run on each model, side by side, as
//! promptfoo's providers table shows them.
//!
//! A case run on a `--model` has the model after an `@` in its id (`0a1b2c3d4e5f@gpt-4o`)
//! and its name (`hello @gpt-4o`); [`render`] puts the units of one case in one row,
//! one column per model, each cell the verdict, with the samples that passed out of
//! those taken when the case takes more than one. Units of cases without a model are
//! left out.
//!
//! ```
//! use prill_report::matrix::render;
//!
//! assert_eq!(render(&["gpt-4o".to_owned()], &[]), "");
//! ```

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;

use prill_run::{Event, Status, UnitReport};

use crate::Reporter;

/// The table of `units` by case (rows) and model (`columns`, in this order); empty
/// when no unit ran on one of them.
pub fn render(columns: &[String], units: &[UnitReport]) -> String {
    let mut rows: Vec<((PathBuf, String), String)> = Vec::new();
    let mut cells: HashMap<(PathBuf, String, String), String> = HashMap::new();
    for unit in units {
        let Some((base, model)) = unit.unit.case_id.split_once('@') else {
            continue;
        };
        if !columns.iter().any(|c| c == model) {
            continue;
        }
        let key = (unit.unit.file.clone(), base.to_owned());
        if !rows.iter().any(|(k, _)| *k == key) {
            let suffix = format!(" @{model}");
            let name = unit
                .unit
                .name
                .strip_suffix(&suffix)
                .unwrap_or(&unit.unit.name);
            rows.push((key.clone(), name.to_owned()));
        }
        cells.insert((key.0, key.1, model.to_owned()), cell(unit));
    }
    if rows.is_empty() {
        return String::new();
    }
    rows.sort_by(|a, b| (&a.0.0, &a.1).cmp(&(&b.0.0, &b.1)));
    let mut table: Vec<Vec<String>> = vec![
        std::iter::once("case".to_owned())
            .chain(columns.iter().cloned())
            .collect(),
    ];
    for ((file, base), name) in &rows {
        let mut line = vec![name.clone()];
        for column in columns {
            let key = (file.clone(), base.clone(), column.clone());
            line.push(cells.get(&key).cloned().unwrap_or_else(|| "-".to_owned()));
        }
        table.push(line);
    }
    layout(&table)
}

/// A unit's cell: `passed`, `failed`, `errored`, `not run`; `passed 3/5` when the
/// case takes several samples.
fn cell(unit: &UnitReport) -> String {
    if unit.verdict == Status::Skipped && unit.tally.total() == 0 {
        return "not run".to_owned();
    }
    let verdict = unit.verdict.name();
    if unit.gate.max_samples() > 1 {
        format!("{verdict} {}/{}", unit.tally.passed, unit.tally.total())
    } else {
        verdict.to_owned()
    }
}

/// The rows in columns padded to their widest cell, two spaces apart.
fn layout(table: &[Vec<String>]) -> String {
    let columns = table.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            table
                .iter()
                .map(|row| row[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in table {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            let pad = widths[i] - cell.chars().count();
            line.extend(std::iter::repeat_n(' ', pad));
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// Collects the units of a run and writes [`render`]'s table at the end, after a blank
/// line, when there is one.
pub struct MatrixReport {
    columns: Vec<String>,
    units: Vec<UnitReport>,
    out: Option<Box<dyn Write + Send>>,
}

impl MatrixReport {
    /// A table of `columns` (the models, as given) written to `out`.
    pub fn new(columns: Vec<String>, out: impl Write + Send + 'static) -> MatrixReport {
        MatrixReport {
            columns,
            units: Vec::new(),
            out: Some(Box::new(out)),
        }
    }
}

impl Reporter for MatrixReport {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        if let Event::UnitFinished(unit) = event {
            self.units.push(unit.clone());
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let Some(mut out) = self.out.take() else {
            return Ok(());
        };
        let table = render(&self.columns, &self.units);
        if table.is_empty() {
            return Ok(());
        }
        out.write_all(format!("\n{table}").as_bytes())?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use prill_run::UnitId;
    use prill_spec::model::data_driven::SuccessRatio;
    use prill_spec::plan::Dialect;
    use prill_spec::plan::Gate;

    use super::*;

    fn unit(id: &str, name: &str, verdict: Status, passed: u32, of: u32) -> UnitReport {
        let mut tally = prill_run::Tally::default();
        for i in 0..of {
            tally.add(if i < passed {
                Status::Passed
            } else {
                Status::Failed
            });
        }
        UnitReport {
            unit: UnitId {
                case_id: id.to_owned(),
                name: name.to_owned(),
                file: "suite.yaml".into(),
                dialect: Dialect::SentinelSuite,
                connection: "openai".to_owned(),
                target: "m".to_owned(),
                tags: Vec::new(),
            },
            verdict,
            gate: Gate::Ratio(SuccessRatio { need: of, of }),
            quarantine: None,
            tally,
            samples: Vec::new(),
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn one_row_per_case_one_column_per_model() {
        let columns = vec!["gpt-4o".to_owned(), "openai:gpt-4o-mini".to_owned()];
        let units = vec![
            unit(
                "b2@openai:gpt-4o-mini",
                "greets @openai:gpt-4o-mini",
                Status::Failed,
                0,
                1,
            ),
            unit("a1@gpt-4o", "adds @gpt-4o", Status::Passed, 3, 3),
            unit("b2@gpt-4o", "greets @gpt-4o", Status::Passed, 1, 1),
            unit(
                "a1@openai:gpt-4o-mini",
                "adds @openai:gpt-4o-mini",
                Status::Failed,
                2,
                3,
            ),
            unit("c3", "no model", Status::Passed, 1, 1),
        ];
        assert_eq!(
            render(&columns, &units),
            "case    gpt-4o      openai:gpt-4o-mini\n\
             adds    passed 3/3  failed 2/3\n\
             greets  passed      failed\n"
        );
    }

    #[test]
    fn no_model_no_table() {
        let units = vec![unit("c3", "no model", Status::Passed, 1, 1)];
        assert_eq!(render(&["gpt-4o".to_owned()], &units), "");
    }
}
