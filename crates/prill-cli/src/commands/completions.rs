//! `prill completions SHELL` and `prill man`: a shell completion script and the man
//! page, both generated from the clap definitions of [`crate::args`] and printed to
//! stdout, so they always match the binary that prints them.
//!
//! The man page is printed by the binary rather than kept as a generated file under
//! `docs/`: there is nothing to keep in step, and a packager writes it with
//! `prill man > prill.1`.
//!
//! Exit codes: 0; 3 when stdout cannot be written.

use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs};
use crate::exit::ExitCode;
use crate::output;

/// `prill completions SHELL`.
pub(crate) fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "prill", &mut script);
    output::stdout(&String::from_utf8_lossy(&script))?;
    Ok(ExitCode::OK)
}

/// `prill man`: the page of `prill` with a section for each subcommand, in place of
/// clap_mangen's list of `prill-<command>(1)` pages (there are none).
pub(crate) fn man() -> anyhow::Result<ExitCode> {
    let command = Cli::command();
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    let mut commands = Vec::new();
    render_subcommands(&command, "prill", &mut commands)?;
    let page = with_commands(
        &String::from_utf8_lossy(&page),
        &String::from_utf8_lossy(&commands),
    );
    output::stdout(&once_preamble(&page))?;
    Ok(ExitCode::OK)
}

/// `page` with its `.SH SUBCOMMANDS` section replaced by `commands` (added before the
/// next section, or at the end, when there is none).
fn with_commands(page: &str, commands: &str) -> String {
    let Some(start) = page.find(".SH SUBCOMMANDS\n") else {
        return format!("{page}{commands}");
    };
    let rest = &page[start + 1..];
    let end = rest
        .find("\n.SH ")
        .map_or(page.len(), |i| start + 1 + i + 1);
    format!("{}{commands}{}", &page[..start], &page[end..])
}

/// The page with the two lines each rendered part starts with (they define the string
/// `Aq`) kept only the first time.
fn once_preamble(page: &str) -> String {
    const PREAMBLE: [&str; 2] = [".ie \\n(.g .ds Aq \\(aq", ".el .ds Aq '"];
    let mut seen = [false; 2];
    let mut out = String::with_capacity(page.len());
    for line in page.lines() {
        if let Some(i) = PREAMBLE.iter().position(|p| *p == line) {
            if seen[i] {
                continue;
            }
            seen[i] = true;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A `.SH` section per subcommand (`prill judge check` included), with its synopsis
/// and options.
fn render_subcommands(
    command: &clap::Command,
    prefix: &str,
    page: &mut Vec<u8>,
) -> std::io::Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("{prefix} {}", sub.get_name());
        let sub = sub
            .clone()
            .display_name(name.clone())
            .bin_name(name.clone());
        let man = clap_mangen::Man::new(sub.clone());
        page.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        if let Some(about) = sub.get_about() {
            page.extend_from_slice(format!("{}\n", roff_escape(&about.to_string())).as_bytes());
        }
        let mut body = Vec::new();
        man.render_synopsis_section(&mut body)?;
        man.render_options_section(&mut body)?;
        // The sub-page's own `.SH` headings become sub-headings under this one.
        let body = String::from_utf8_lossy(&body).replace(".SH ", ".SS ");
        page.extend_from_slice(body.as_bytes());
        render_subcommands(&sub, &name, page)?;
    }
    Ok(())
}

/// Text that roff reads as text: a leading `.` or `'` would be a request.
fn roff_escape(text: &str) -> String {
    text.lines()
        .map(|line| {
            let line = line.replace('\\', "\\\\");
            if line.starts_with('.') || line.starts_with('\'') {
                format!("\\&{line}")
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
