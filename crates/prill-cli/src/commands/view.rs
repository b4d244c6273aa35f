//! `prill view`: the kept runs in a browser, served read-only on 127.0.0.1 until Ctrl-C
//! ([`prill_app::view::Viewer`]'s pages, with `prill serve`'s limits on clients).
//!
//! Exit codes: 0 when stopped; 2 when the settings are invalid or the history cannot be
//! read; 3 when the port cannot be had.

use std::sync::Arc;

use prill_app::view::Viewer;
use prill_app::{Overrides, Settings};
use prill_demo::DemoServer;

use super::run::settings_error;
use crate::args::ViewArgs;
use crate::exit::ExitCode;
use crate::output;

/// Serves the history's pages until interrupted. The first line on stderr is
/// `listening on <url>`.
pub(crate) fn run(args: &ViewArgs, color: bool) -> anyhow::Result<ExitCode> {
    let settings = match Settings::load(args.config.as_deref(), Overrides::default()) {
        Ok(settings) => settings,
        Err(e) => return Ok(settings_error(&e, color)),
    };
    let kept = match settings
        .history()
        .and_then(|h| Ok((h.runs()?, h.skipped().to_vec())))
    {
        Ok(kept) => kept,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    for skipped in &kept.1 {
        output::stderr(&format!("warning: {skipped}\n"));
    }
    let dir = settings.runs_dir();
    let runtime = prill_app::runtime()?;
    runtime.block_on(async {
        let viewer = Arc::new(Viewer::new(settings));
        let server = match DemoServer::builder()
            .pages(viewer)
            .bind(("127.0.0.1", args.port))
            .await
        {
            Ok(server) => server,
            Err(e) => {
                output::stderr(&format!(
                    "error: cannot serve on 127.0.0.1:{}: {e}; pick another port with `--port N`, or let the system pick one with `--port 0`\n",
                    args.port
                ));
                return Ok(ExitCode::ERROR);
            }
        };
        let url = format!("{}/", server.base_url());
        output::stderr(&format!("listening on {url}\n"));
        output::stderr(&format!(
            "{} kept in {} (read-only; nothing leaves this machine)\n",
            match kept.0.len() {
                1 => "1 run".to_owned(),
                n => format!("{n} runs"),
            },
            dir.display()
        ));
        if !args.no_open {
            let shown = url.clone();
            let opened = tokio::task::spawn_blocking(move || webbrowser::open(&shown)).await;
            if !matches!(opened, Ok(Ok(()))) {
                output::stderr(&format!("note: no browser could be opened; open {url}\n"));
            }
        }
        output::stderr("press ctrl-c to stop\n");
        crate::signals::listen().await;
        server.shutdown().await;
        Ok(ExitCode::OK)
    })
}
