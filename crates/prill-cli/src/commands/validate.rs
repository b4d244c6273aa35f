//! `prill validate`: check test files and report every problem in them.

use prill_run::select::Emptied;

use prill_app::{Overrides, Settings};
use prill_spec::Env;
use prill_spec::inputs::load_paths;

use super::report_empty;
use crate::args::{ValidateArgs, ValidateFormat};
use crate::exit::ExitCode;
use crate::output::{self, Look};

/// Checks every file, prints its diagnostics and a summary, and exits
/// [`ExitCode::INVALID`] when any file is invalid (with `--strict`, any that has a
/// warning), or when there is no test file and `--no-tests` does not allow that.
pub(crate) fn run(args: &ValidateArgs, color: bool) -> anyhow::Result<ExitCode> {
    // `strict` and the input limits of prill.toml; an invalid prill.toml is reported
    // when it is among the files validated.
    let settings = Settings::load(args.config.as_deref(), Overrides::default()).ok();
    let strict = args.strict || settings.as_ref().is_some_and(Settings::strict);
    let limits = settings.map(|s| s.input_limits()).unwrap_or_default();
    let inputs = load_paths(&args.paths, &Env::from_process(), strict, &limits);
    let look = match args.format {
        None | Some(ValidateFormat::Github) => Some(Look::auto(color)),
        Some(ValidateFormat::Human) => Some(Look::Rich { color }),
        Some(ValidateFormat::Short) => Some(Look::Short),
        Some(ValidateFormat::Json) => None,
    };
    // Annotations when asked for, or in GitHub Actions unless another format was.
    let annotate = match args.format {
        Some(format) => format == ValidateFormat::Github,
        None => output::in_github_actions(),
    };
    match look {
        Some(look) => {
            let reports = inputs.reports();
            output::stderr(&output::render_as(&reports, look));
            if annotate {
                let base = output::run_dir();
                output::stdout(&prill_report::github::diagnostics(
                    &reports,
                    base.as_deref(),
                ))?;
            }
            output::stdout(&format!("{}\n", inputs.summary()))?;
        }
        None => {
            let mut text = serde_json::to_string_pretty(&inputs.to_json())?;
            text.push('\n');
            output::stdout(&text)?;
        }
    }
    let empty_fails = inputs.test_files() == 0
        && report_empty(&Emptied::NoFiles.judge(args.no_tests.map(Into::into)));
    Ok(if inputs.invalid() == 0 && !empty_fails {
        ExitCode::OK
    } else {
        ExitCode::INVALID
    })
}
