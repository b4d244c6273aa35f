//! `prill convert`: rewrite a valid test file in another syntax, keeping its comments
//! in YAML and HOCON output.

use prill_spec::syntax::emit::{emit, emit_with_comments};
use prill_spec::{Env, Syntax};

use crate::args::{ConvertArgs, TargetSyntax};
use crate::exit::ExitCode;
use crate::output;
use prill_spec::inputs::{Entry, load_one};

/// Prints the file in the target syntax, or its diagnostics when it is not valid.
pub(crate) fn run(args: &ConvertArgs, color: bool) -> anyhow::Result<ExitCode> {
    let entry = load_one(&args.file, &Env::from_process());
    // Errors, or the warnings of a valid file.
    output::stderr(&output::render(&entry.reports(), color));
    let tree = match &entry {
        Entry::Loaded(loaded) if loaded.is_valid() => loaded.tree.as_ref(),
        _ => None,
    };
    let Some(tree) = tree else {
        return Ok(ExitCode::INVALID);
    };
    if let Entry::Loaded(loaded) = &entry {
        let env = Env::from_process();
        let names = if loaded.syntax == Syntax::Hocon {
            prill_spec::syntax::hocon::environment_references(&loaded.source, &env)
        } else {
            Vec::new()
        };
        if !names.is_empty() && !args.allow_env {
            let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            output::stderr(&format!(
                "error: {} reads {} from the environment; the converted text would contain the value, which may be a secret\n\nhint: pass `--allow-env` to write it anyway\n",
                loaded.source.name(),
                list.join(", ")
            ));
            return Ok(ExitCode::INVALID);
        }
    }
    let syntax = match args.to {
        TargetSyntax::Json => Syntax::Json,
        TargetSyntax::Yaml => Syntax::Yaml,
        TargetSyntax::Hocon => Syntax::Hocon,
    };
    let text = match &entry {
        Entry::Loaded(loaded) => emit_with_comments(tree, syntax, &loaded.source),
        _ => emit(tree, syntax),
    };
    output::stdout(&text)?;
    Ok(ExitCode::OK)
}
