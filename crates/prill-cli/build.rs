//! Build-time switches for the tests that need what a plain machine lacks: headless
//! Chromium (`PRILL_BROWSER_TESTS=1`), real model providers
//! (`PRILL_LIVE_PROVIDERS=openai,...`), Arize Phoenix (`PRILL_PHOENIX`, the path of
//! its `phoenix` command), the OpenAI Agents SDK agent (`PRILL_OTEL_AGENT`, the
//! python of its venv) and `langgraph dev` (`PRILL_LANGGRAPH`, its `langgraph`
//! command).
//!
//! libtest cannot mark a test ignored once it runs, and a test that returns early
//! counts as passed. So each variable is read here, when the tests are built (cargo
//! rebuilds when it changes), and sets a `cfg`; without it the gated test is compiled
//! `#[ignore = "reason"]`, and `cargo test` and nextest show it as ignored, with the
//! reason, never as passed. Run with `--include-ignored`, a gated test runs for real and
//! fails when what it needs is missing.

fn main() {
    for (var, cfg) in [
        ("PRILL_BROWSER_TESTS", "prill_browser_tests"),
        ("PRILL_LIVE_PROVIDERS", "prill_live_providers"),
        ("PRILL_PHOENIX", "prill_phoenix"),
        ("PRILL_OTEL_AGENT", "prill_otel_agent"),
        ("PRILL_LANGGRAPH", "prill_langgraph"),
    ] {
        println!("cargo::rerun-if-env-changed={var}");
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        let on = std::env::var(var).is_ok_and(|v| !v.trim().is_empty() && v.trim() != "0");
        if on {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
