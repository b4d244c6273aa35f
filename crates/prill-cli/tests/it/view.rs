//! `prill view`: the kept runs served read-only on 127.0.0.1, on a port the system
//! picks, until it is stopped; the browser it opens (`BROWSER`); and, in headless
//! Chromium, every page reachable from the first loads without a console error and
//! every link on them resolves.

use std::collections::{BTreeSet, VecDeque};
use std::io::{BufReader, Read as _};
use std::path::Path;
use std::process::{ChildStderr, Stdio};

use crate::html::PASSING;
use crate::serve::{Server, get, next_line};
use crate::support::{command, prill, text};

/// A case that passes in the first run and fails in the second (its answer is the same;
/// its expectation changes, and expectations are not part of a case's id).
const TURNS: &str = "agent: echo\nconnections: [direct]\ninteractions:\n  - text: turn\n    response: {text: {value: turn}}\n";

/// A project with two kept runs: the second adds a case, and one case fails in it that
/// passed in the first. Returns the folder and the runs' ids, newest first.
fn project() -> (tempfile::TempDir, Vec<String>) {
    let dir = crate::history::project();
    std::fs::write(dir.path().join("turns.yaml"), TURNS).unwrap();
    let out = prill(dir.path(), &["run", "--demo", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    std::fs::write(
        dir.path().join("turns.yaml"),
        TURNS.replace("value: turn}", "value: other}"),
    )
    .unwrap();
    std::fs::write(dir.path().join("more.yaml"), PASSING.replace("hi", "more")).unwrap();
    let out = prill(dir.path(), &["run", "--demo", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let mut ids: Vec<String> = std::fs::read_dir(dir.path().join(".prill/runs"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    ids.sort();
    ids.reverse();
    assert_eq!(ids.len(), 2);
    (dir, ids)
}

/// Starts `prill view --no-open` (and `extra`) in `dir`; returns it, its address
/// (`127.0.0.1:PORT`) and what else it printed up to `press ctrl-c to stop`.
fn view(
    dir: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Server, String, String, BufReader<ChildStderr>) {
    let mut args = vec!["view"];
    args.extend_from_slice(extra);
    let mut child = command(dir, &args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the prill binary runs");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
    let server = Server(child);
    let first = next_line(&mut stderr);
    let addr = first
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|rest| rest.strip_suffix('/'))
        .unwrap_or_else(|| panic!("the first line gives the url: {first:?}"))
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let mut rest = String::new();
    loop {
        let line = next_line(&mut stderr);
        assert!(!line.is_empty(), "the viewer stopped early: {rest}");
        rest.push_str(&line);
        if line.starts_with("press ctrl-c") {
            break;
        }
    }
    (server, addr, rest, stderr)
}

/// The status of a whole response, and its body.
fn status_and_body(response: &str) -> (u16, String) {
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {response:.200}"));
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_owned())
}

#[cfg(unix)]
#[test]
fn view_serves_the_kept_runs_read_only_and_stops_on_sigterm() {
    let (dir, ids) = project();
    let (mut server, addr, said, mut stderr) = view(dir.path(), &["--no-open"], &[]);
    assert!(said.contains("2 runs kept in "), "{said}");
    assert!(said.contains("nothing leaves this machine"), "{said}");

    let (status, runs) = status_and_body(&get(&addr, "/"));
    assert_eq!(status, 200);
    for id in &ids {
        assert!(runs.contains(&format!("href=\"/run/{id}\"")), "{runs}");
    }
    assert!(runs.contains(&format!(
        "href=\"/compare?base={}&amp;head={}\"",
        ids[1], ids[0]
    )));
    let (status, run) = status_and_body(&get(&addr, &format!("/run/{}", ids[0])));
    assert_eq!(status, 200);
    assert!(run.contains(&format!("<title>Prill run {}</title>", ids[0])));
    assert!(
        run.contains("\"case_href\":\"/case/\""),
        "its cases link to their history"
    );
    let (status, compared) = status_and_body(&get(&addr, "/compare"));
    assert_eq!(status, 200);
    assert!(compared.contains("1 regression"), "the newest two compared");
    for missing in [
        "/run/nothing",
        "/case/nothing",
        "/elsewhere",
        "/compare?base=nothing",
    ] {
        assert_eq!(status_and_body(&get(&addr, missing)).0, 404, "{missing}");
    }

    // Read-only: nothing but GET and HEAD.
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    std::io::Write::write_all(
        &mut stream,
        b"DELETE / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 405 "), "{answer}");

    let status = std::process::Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    assert_eq!(server.0.wait().unwrap().code(), Some(0));
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
}

/// Without `--no-open` the page is opened in the browser `BROWSER` names.
#[test]
fn view_opens_the_browser_that_browser_names() {
    let (dir, _) = project();
    let opened = dir.path().join("opened.txt");
    let script = dir.path().join("browser.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let browser = script.display().to_string();
    let (_server, addr, _, _) = view(dir.path(), &[], &[("BROWSER", &browser)]);
    let mut shown = String::new();
    for _ in 0..600 {
        shown = std::fs::read_to_string(&opened).unwrap_or_default();
        if !shown.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(shown, format!("http://{addr}/"));
}

#[test]
fn view_on_a_port_in_use_says_so_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    let out = prill(dir.path(), &["view", "--no-open", "--port", &port]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!("cannot serve on 127.0.0.1:{port}")),
        "{said}"
    );
    assert!(said.contains("--port 0"), "{said}");
}

/// Every page reachable from the list of runs, in headless Chromium: each answers 200,
/// none logs a console error, and every link on each leads to a page that does; the
/// form compares two runs. Screenshots of the runs, a case and a comparison are kept
/// as `view-runs.png`, `view-case.png` and `view-compare.png` in the target's tmp
/// folder.
#[test]
#[cfg_attr(
    not(prill_browser_tests),
    ignore = "needs headless Chromium: set PRILL_BROWSER_TESTS=1 with Debian's chromium installed (.ci/run does)"
)]
fn every_page_of_view_loads_cleanly_and_every_link_resolves_in_headless_chromium() {
    use crate::html::{Browser, strings};
    let (dir, ids) = project();
    let (_server, addr, _, _) = view(dir.path(), &["--no-open"], &[]);
    let origin = format!("http://{addr}");
    let browser = Browser::launch_sized(1400, 900);
    let open = |url: &str| -> u64 {
        browser.tab.navigate_to(url).unwrap();
        browser.tab.wait_until_navigated().unwrap();
        browser
            .eval("performance.getEntriesByType('navigation')[0].responseStatus")
            .as_u64()
            .unwrap()
    };

    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from([format!("{origin}/")]);
    while let Some(url) = queue.pop_front() {
        if !seen.insert(url.clone()) {
            continue;
        }
        assert!(seen.len() < 100, "the site is small: {seen:?}");
        assert_eq!(open(&url), 200, "{url}");
        let links =
            strings(&browser.eval(
                "JSON.stringify([...document.querySelectorAll('a[href]')].map((a) => a.href))",
            ));
        for link in links {
            assert!(
                link.starts_with(&origin),
                "every link stays on the site: {link} on {url}"
            );
            let link = link.split('#').next().unwrap_or_default().to_owned();
            if !seen.contains(&link) {
                queue.push_back(link);
            }
        }
    }
    let pages: Vec<&str> = seen.iter().map(|u| &u[origin.len()..]).collect();
    for id in &ids {
        assert!(pages.contains(&format!("/run/{id}").as_str()), "{pages:?}");
    }
    assert!(pages.iter().any(|p| p.starts_with("/case/")), "{pages:?}");
    assert!(
        pages.contains(&format!("/compare?base={}&head={}", ids[1], ids[0]).as_str()),
        "{pages:?}"
    );

    // The form compares the two runs it is set to: the newest with the one before.
    open(&format!("{origin}/"));
    browser.screenshot("view-runs.png");
    browser
        .tab
        .wait_for_element("#compare-form button")
        .unwrap()
        .click()
        .unwrap();
    browser.tab.wait_until_navigated().unwrap();
    browser.tab.wait_for_element("#compare").unwrap();
    assert_eq!(
        browser.eval("location.pathname + location.search"),
        format!("/compare?base={}&head={}", ids[1], ids[0]).as_str()
    );
    assert!(
        browser
            .eval("document.getElementById('compare').textContent")
            .as_str()
            .unwrap()
            .contains("1 regression")
    );
    browser.screenshot("view-compare.png");

    // A failing case's name leads to its history: a dot per run, the newest failed.
    browser
        .tab
        .wait_for_element("details.failure summary strong a")
        .unwrap()
        .click()
        .unwrap();
    browser.tab.wait_until_navigated().unwrap();
    browser.tab.wait_for_element("#rate-chart").unwrap();
    assert_eq!(
        browser.eval("document.querySelectorAll('#rate-chart circle').length"),
        2
    );
    browser.screenshot("view-case.png");
    assert_eq!(browser.errors(), Vec::<String>::new(), "no console error");
}
