//! `assay list`: one line per case of every valid file.

use assay_spec::plan::Target;
use assay_spec::redact::Redactor;
use assay_spec::{Case, Dialect, Env, Plan};

use assay_run::select::Emptied;

use assay_settings::{Overrides, Settings};
use assay_spec::inputs::{Entry, load_paths};

use super::report_empty;
use crate::args::{Format, ListArgs};
use crate::exit::ExitCode;
use crate::output;

/// Lists the cases of the valid files; the invalid ones' diagnostics go to stderr
/// and make the exit code [`ExitCode::INVALID`], as does finding no case when
/// `--no-tests` does not allow that.
pub(crate) fn run(args: &ListArgs, color: bool) -> anyhow::Result<ExitCode> {
    let inputs = load_paths(
        &args.paths,
        &Env::from_process(),
        false,
        &Settings::load(None, Overrides::default())
            .map(|s| s.input_limits())
            .unwrap_or_default(),
    );
    let plan = Plan::new(inputs.entries.iter().flat_map(Entry::cases).collect());
    let reports: Vec<_> = inputs.entries.iter().flat_map(Entry::reports).collect();
    output::stderr(&output::render(&reports, color));
    // Values read from the environment (`${OPENAI_API_KEY}`) are listed by name.
    let mut redactor = Redactor::default();
    for entry in &inputs.entries {
        if let Entry::Loaded(loaded) = entry {
            redactor.extend(&loaded.redactor);
        }
    }
    let text = match args.format {
        Format::Human => redactor.text(&plan.cases.iter().map(line).collect::<String>()),
        Format::Json => {
            let mut json = serde_json::to_value(&plan)?;
            redactor.json(&mut json);
            let mut text = serde_json::to_string_pretty(&json)?;
            text.push('\n');
            text
        }
    };
    output::stdout(&text)?;
    let all_valid = inputs.entries.iter().all(Entry::is_valid);
    // No case to list, and no invalid file to explain it: the `--no-tests` rule of `run`.
    let emptied = match (all_valid, inputs.test_files(), plan.cases.len()) {
        (true, 0, _) => Some(Emptied::NoFiles),
        (true, _, 0) => Some(Emptied::NoCases),
        _ => None,
    };
    let empty_fails =
        emptied.is_some_and(|why| report_empty(&why.judge(args.no_tests.map(Into::into))));
    Ok(if all_valid && !empty_fails {
        ExitCode::OK
    } else {
        ExitCode::INVALID
    })
}

/// `id<TAB>dialect<TAB>name<TAB>file`; a data-driven case's name also names its agent.
fn line(case: &Case) -> String {
    let name = match (&case.target, case.dialect) {
        (Target::Agent { agent, .. }, Dialect::DataDriven) => {
            format!("{} (agent {agent})", case.name)
        }
        _ => case.name.clone(),
    };
    format!(
        "{}\t{}\t{}\t{}\n",
        case.id,
        case.dialect,
        one_field(&name),
        one_field(&case.file.display().to_string())
    )
}

/// Text with no tab or line break, so that it stays one field of one line.
fn one_field(text: &str) -> String {
    text.replace(['\t', '\n', '\r'], " ")
}
