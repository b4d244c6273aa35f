//! `prill assess`: planted failure modes are recovered with their shares, the same seed
//! gives the same report, errors are modes of their own, and the HTML page renders its
//! bars in a real browser.

use std::path::Path;
use std::process::Command;

use crate::support::{prill, prill_env};

const FLAKY: &str = "agent: flaky\nconnections: direct\nsuccess_ratio: \"3/5\"\ninteractions:\n  - text: roll\n    sly_data: {seed: 11, modes: {A: 0.2, B: 0.1}}\n    response:\n      text: {value: ok}\n";

fn assess_json(dir: &Path, file: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["assess", "--demo", file, "--json", "assessment.json"];
    args.extend_from_slice(extra);
    let out = prill(dir, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("assessment.json")).unwrap()).unwrap()
}

#[test]
fn planted_modes_are_recovered_inside_their_intervals_and_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flaky.yaml"), FLAKY).unwrap();
    let report = assess_json(dir.path(), "flaky.yaml", &["--samples", "400"]);
    let case = &report["cases"][0];
    assert_eq!(case["samples"], 400);
    assert_eq!(
        case["success_ratio"], "3/5",
        "the case's own ratio, not the sample count"
    );
    let (low, high) = (
        case["ci_low"].as_f64().unwrap(),
        case["ci_high"].as_f64().unwrap(),
    );
    assert!(
        low <= 0.7 && 0.7 <= high,
        "pass rate interval {low}..{high} misses 0.7"
    );
    let modes = case["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 2, "{modes:#?}");
    for (mode, planted, found) in [
        (&modes[0], 0.2, "found failure a"),
        (&modes[1], 0.1, "found failure b"),
    ] {
        assert!(
            mode["signature"].as_str().unwrap().ends_with(found),
            "{mode}"
        );
        let (low, high) = (
            mode["ci_low"].as_f64().unwrap(),
            mode["ci_high"].as_f64().unwrap(),
        );
        assert!(
            low <= planted && planted <= high,
            "{found}: {low}..{high} misses {planted}"
        );
        for field in ["signature", "label", "count", "share", "example"] {
            assert!(mode.get(field).is_some(), "mode field {field}");
        }
    }
    for field in [
        "id",
        "file",
        "samples",
        "passed",
        "failed",
        "errored",
        "pass_rate",
        "ci_low",
        "ci_high",
        "success_ratio",
        "p_meets_ratio",
        "modes",
    ] {
        assert!(case.get(field).is_some(), "case field {field}");
    }
    // The same seed gives the same report.
    let again = assess_json(dir.path(), "flaky.yaml", &["--samples", "400"]);
    assert_eq!(report, again);
}

#[test]
fn an_unsound_ratio_gets_a_suggestion_and_errors_are_their_own_mode() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("flaky.yaml"),
        FLAKY.replace("\"3/5\"", "\"5/5\""),
    )
    .unwrap();
    let report = assess_json(dir.path(), "flaky.yaml", &["--samples", "200"]);
    let suggestion = report["cases"][0]["suggestion"]
        .as_str()
        .expect("5/5 at ~70% is unsound");
    assert!(
        suggestion.starts_with("meets 5/5 with p = "),
        "{suggestion}"
    );

    std::fs::write(
        dir.path().join("slow.yaml"),
        "agent: slow\nconnections: direct\nsuccess_ratio: \"1/3\"\ninteractions:\n  - text: wait\n    sly_data: {delay_ms: 5000}\n    timeout_in_seconds: 0.2\n",
    )
    .unwrap();
    let report = assess_json(dir.path(), "slow.yaml", &[]);
    let case = &report["cases"][0];
    assert_eq!(
        (case["samples"].as_u64(), case["errored"].as_u64()),
        (Some(3), Some(3))
    );
    let modes = case["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 1);
    assert!(
        modes[0]["signature"]
            .as_str()
            .unwrap()
            .contains("error:timeout"),
        "{modes:#?}"
    );
}

#[test]
fn the_html_page_is_self_contained_with_a_bar_per_mode() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flaky.yaml"), FLAKY).unwrap();
    let out = prill(
        dir.path(),
        &[
            "assess",
            "--demo",
            "flaky.yaml",
            "--samples",
            "100",
            "--html",
            "assessment.html",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(dir.path().join("assessment.html")).unwrap();
    assert!(page.contains("<svg class=\"modes\""), "a bar chart");
    assert_eq!(
        page.matches("<rect class=\"bar\"").count(),
        2,
        "a bar per mode"
    );
    assert!(
        !page.contains("<script") && !page.contains("http://") && !page.contains("https://"),
        "self-contained"
    );
    // Each bar carries its mode's name, in words.
    for name in [
        "interaction 0: text value expected &quot;ok&quot;, found &quot;failure A&quot;",
        "interaction 0: text value expected &quot;ok&quot;, found &quot;failure B&quot;",
    ] {
        assert!(
            page.contains("<text class=\"name\" x=\"40\" y=") && page.contains(name),
            "{name} is not on the page"
        );
    }
    // And the terminal names them the same way.
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("interaction 0: text value expected \"ok\", found \"failure A\""),
        "{said}"
    );
    assert!(
        !said.contains("interactions[0].response.text.value · value"),
        "{said}"
    );
}

/// The bars' fill, `.bar{fill:#d9534f}` in the page's style.
const BAR: [u8; 3] = [0xd9, 0x53, 0x4f];
/// The width of a bar at share 1, in CSS pixels (`width` in `assessment_html`).
const FULL_BAR: f64 = 420.0;

/// Renders the page in headless Chromium (Debian's `chromium`) and reads the pixels of
/// its screenshot: two bars of the bar colour, one above the other, each as wide as its
/// mode's share says. That is layout and paint, not only a DOM that parses.
///
/// Needs Chromium, so it is built ignored unless `PRILL_BROWSER_TESTS=1` (see
/// `build.rs`); `.ci/run` installs Chromium and sets it. Run with the variable set (or
/// `--include-ignored`) and no Chromium, it fails.
#[test]
#[cfg_attr(
    not(prill_browser_tests),
    ignore = "needs headless Chromium: set PRILL_BROWSER_TESTS=1 with Debian's chromium installed (.ci/run does)"
)]
fn the_html_page_renders_its_bars_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flaky.yaml"), FLAKY).unwrap();
    let out = prill(
        dir.path(),
        &[
            "assess",
            "--demo",
            "flaky.yaml",
            "--samples",
            "100",
            "--html",
            "assessment.html",
            "--json",
            "assessment.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("assessment.json")).unwrap())
            .unwrap();
    let shares: Vec<f64> = report["cases"][0]["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["share"].as_f64().unwrap())
        .collect();
    assert_eq!(shares.len(), 2);

    let profile = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let chromium = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--window-size=1000,800",
            &format!("--user-data-dir={}", profile.path().display()),
            &format!("--screenshot={}", shot.display()),
            &format!("file://{}", dir.path().join("assessment.html").display()),
        ])
        .output()
        .expect("chromium runs (apt-get install chromium)");
    assert!(
        chromium.status.success() && shot.is_file(),
        "no screenshot: {}",
        String::from_utf8_lossy(&chromium.stderr)
    );

    let bands = bar_bands(&shot);
    assert_eq!(bands.len(), 2, "two bars drawn, one per mode: {bands:?}");
    assert!(
        bands[0].0 + bands[0].1 < bands[1].0,
        "the bars are stacked, apart: {bands:?}"
    );
    for ((_, rows, width), share) in bands.iter().zip(&shares) {
        let expected = share * FULL_BAR;
        assert!(
            (*width as f64 - expected).abs() <= 2.0,
            "a bar of share {share} is {width}px wide, expected {expected:.1}px"
        );
        assert!((20..=24).contains(rows), "a bar is 22px high, found {rows}");
    }
}

/// The runs of screenshot rows that hold bar-coloured pixels, each as (its first row,
/// how many rows, the most bar-coloured pixels in one of them).
fn bar_bands(png_path: &std::path::Path) -> Vec<(usize, usize, usize)> {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected screenshot colour type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let close = |p: &[u8]| p.iter().zip(BAR).all(|(a, b)| a.abs_diff(b) <= 4);
    let per_row: Vec<usize> = (0..info.height as usize)
        .map(|y| {
            let row = &buf[y * info.line_size..(y + 1) * info.line_size];
            row.chunks(channels).filter(|p| close(&p[..3])).count()
        })
        .collect();
    let mut bands: Vec<(usize, usize, usize)> = Vec::new();
    let mut first = None;
    let mut widest = 0;
    for (y, &count) in per_row.iter().chain([&0]).enumerate() {
        match (count > 0, first) {
            (true, None) => {
                first = Some(y);
                widest = count;
            }
            (true, Some(_)) => widest = widest.max(count),
            (false, Some(start)) => {
                bands.push((start, y - start, widest));
                first = None;
            }
            (false, None) => {}
        }
    }
    bands
}

#[test]
fn classify_llm_names_and_merges_modes_with_the_judge_s_model() {
    use prill_testkit::providers::Reply;
    use prill_testkit::providers::openai::FakeOpenAi;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake");
    fake.script(Reply::structured(
        serde_json::json!({"names": ["says failure", "says failure"]}),
    ));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flaky.yaml"), FLAKY).unwrap();
    let out = prill_env(
        dir.path(),
        &[
            "assess",
            "--demo",
            "flaky.yaml",
            "--samples",
            "100",
            "--classify",
            "llm",
            "--judge",
            "openai:gpt-4o-mini",
            "--json",
            "assessment.json",
        ],
        &[
            ("OPENAI_BASE_URL", &fake.base_url()),
            ("OPENAI_API_KEY", "sk-fake"),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("assessment.json")).unwrap())
            .unwrap();
    let case = &report["cases"][0];
    let modes = case["modes"].as_array().unwrap();
    assert_eq!(
        modes.len(),
        1,
        "the two planted modes, named alike, are merged: {modes:#?}"
    );
    assert_eq!(modes[0]["label"], "says failure");
    let signature = modes[0]["signature"].as_str().unwrap();
    assert!(
        signature.contains("found failure a") && signature.contains("found failure b"),
        "{signature}"
    );
    assert_eq!(modes[0]["count"], case["failed"]);
    // The model saw both modes, with their signatures.
    let request: serde_json::Value = serde_json::from_slice(&fake.requests()[0].body).unwrap();
    let asked = request["messages"][1]["content"].as_str().unwrap();
    assert!(
        asked.contains("found failure a") && asked.contains("found failure b"),
        "{asked}"
    );
}
