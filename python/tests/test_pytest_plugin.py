"""The pytest plugin, through real pytest sessions (``pytester``) that run the real
``prill`` binary on the repository's fixtures with the built-in demo agents.

Each test checks what a pytest user sees: which items are collected and how they are
named, their outcomes, the failure text (prill's own lines: ``file:line:col``, expected
and found), and that selection (``-k``, node ids, ``--lf``, ``-x``) reaches the single
``prill run`` of the session as exactly the units pytest kept.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import prill_binary, prill_units

DEMO = "--prill-args=--demo"


def items(result: pytest.RunResult) -> list[str]:
    """The node ids a ``-v`` or ``--collect-only -q`` run printed, in order."""
    ids = []
    for line in result.outlines:
        m = re.match(r"^(\S+\.(?:hocon|yaml|yml|json|conf)::.+?)(?: (PASSED|FAILED|ERROR|SKIPPED)\b.*)?$", line)
        if m:
            ids.append(m.group(1))
    return ids


def ran(result: pytest.RunResult) -> str:
    """The ``prill run`` command line the plugin ran, from its terminal summary."""
    for line in result.outlines:
        if line.startswith("ran: "):
            return line
    raise AssertionError("no `ran:` line:\n" + result.stdout.str())


def test_quickstart_runs_every_unit_as_an_item(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("quickstart")
    result = pytester.runpytest(DEMO, "-v")
    result.assert_outcomes(passed=6)
    # The same units `prill run --demo quickstart` runs, named CASE[CONNECTION] under
    # their files.
    expected = sorted(f"{file}::{name}[{connection}]" for file, name, connection in prill_units(pytester.path, "quickstart"))
    assert sorted(items(result)) == expected
    assert "quickstart/echo.yaml::quickstart/echo[direct] PASSED" in result.stdout.str()
    # One run, of everything collected: no --units narrowing it.
    line = ran(result)
    assert "--jsonl /dev/stdout" in line and "--units" not in line
    result.stdout.fnmatch_lines(["6 passed, 0 failed, 0 errored, 0 skipped in *"])


def test_failures_fail_and_errors_are_errors_with_prill_s_lines(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("examples/failing", "failing")
    result = pytester.runpytest(DEMO, "-rfE")
    # wrong_answers and math_off_by_one fail (wrong answers); server_error,
    # unknown_agent and too_slow cannot be judged: errors, as prill exits 3 for them.
    result.assert_outcomes(failed=2, errors=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*FAIL failing/wrong_answers.hocon [[]direct[]] 0 passed, 1 failed (need 1/1)",
            'structure.answer: expected to contain "Rolling Stones", found "Yellow Submarine was recorded by The Beatles."',
            "  at failing/wrong_answers.hocon:11:20, interaction 0, sample 0",
            "  check: interactions[0].response.structure.answer.keywords",
            '  expected: "Rolling Stones"',
            '  found: "Yellow Submarine was recorded by The Beatles."',
            "structure.running_cost: expected value 4.0, found 3.0",
            "  at failing/wrong_answers.hocon:12:26, interaction 0, sample 0",
        ]
    )
    assert "0 passed, 1 failed, 1 not run (need 2/2)" in out
    # Errors are reported at setup, with prill's message.
    result.stdout.fnmatch_lines(["*ERROR at setup of failing/unknown_agent [[]http[]]*"])
    assert "error: interaction 0: unknown agent `no_such_agent` on http://127.0.0.1:" in out
    assert "error: interaction 0: no complete answer from http://127.0.0.1:" in out
    result.stdout.fnmatch_lines(["FAILED failing/wrong_answers.hocon::failing/wrong_answers[[]direct[]]*"])
    result.stdout.fnmatch_lines(["ERROR failing/server_error.json::failing/server_error[[]http[]]*"])


def test_k_runs_exactly_the_units_pytest_kept(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("quickstart")
    result = pytester.runpytest(DEMO, "-k", "direct and not echo", "-v")
    result.assert_outcomes(passed=2, deselected=4)
    assert sorted(items(result)) == [
        "quickstart/math.hocon::quickstart/math[direct]",
        "quickstart/music_trivia.hocon::quickstart/music_trivia[direct]",
    ]
    # prill ran those two units and no other: the plugin passed them with --units.
    assert "--units" in ran(result)
    result.stdout.fnmatch_lines(["2 passed, 0 failed, 0 errored, 0 skipped in *"])


def test_a_node_id_runs_one_unit(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("quickstart")
    result = pytester.runpytest(DEMO, "quickstart/echo.yaml::quickstart/echo[http]", "-v")
    result.assert_outcomes(passed=1)
    assert items(result) == ["quickstart/echo.yaml::quickstart/echo[http]"]
    result.stdout.fnmatch_lines(["1 passed, 0 failed, 0 errored, 0 skipped in *"])


def test_tags_and_connections_are_keywords(pytester: pytest.Pytester) -> None:
    # `prill init` writes a project: prill.toml (which turns the plugin on by itself),
    # a data-driven case over direct and http, a Sentinel spec and a suite on the demo
    # model, one of whose tests carries the tag `refunds`, and a flaky case.
    subprocess.run([prill_binary(), "init", str(pytester.path)], check=True, capture_output=True)
    result = pytester.runpytest("--prill-args=--demo", "-v")
    result.assert_outcomes(passed=6)
    ids = items(result)
    assert "tests/greeting.yaml::Greeting[demo]" in ids
    assert "tests/suite.yaml::Refund[demo]" in ids
    assert "tests/flaky.hocon::tests/flaky[direct]" in ids
    result = pytester.runpytest("--prill-args=--demo", "-k", "refunds or http", "-v")
    result.assert_outcomes(passed=2, deselected=4)
    assert sorted(items(result)) == [
        "tests/music_trivia.hocon::tests/music_trivia[http]",
        "tests/suite.yaml::Refund[demo]",
    ]


def test_lf_reruns_the_failures_only(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("quickstart")
    pytester.makefile(
        ".yaml",
        **{
            "quickstart/wrong": "agent: echo\nconnections: [direct, http]\ninteractions:\n"
            "  - text: hello\n    response:\n      text: {keywords: goodbye}\n"
        },
    )
    first = pytester.runpytest(DEMO)
    first.assert_outcomes(passed=6, failed=2)
    again = pytester.runpytest(DEMO, "--lf", "-v")
    again.assert_outcomes(failed=2)
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 2 failures*"])
    assert sorted(items(again)) == [
        "quickstart/wrong.yaml::quickstart/wrong[direct]",
        "quickstart/wrong.yaml::quickstart/wrong[http]",
    ]
    again.stdout.fnmatch_lines(["0 passed, 2 failed, 0 errored, 0 skipped in *"])
    # prill's own last run says the same, so `prill run --rerun-failed` agrees.
    rerun = subprocess.run(
        [prill_binary(), "run", "--demo", "--rerun-failed", "quickstart"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
    )
    assert rerun.returncode == 1, rerun.stderr
    assert "0 passed, 2 failed, 0 errored, 0 skipped" in rerun.stderr


def test_x_stops_prill_after_the_first_failure(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("examples/failing", "failing")
    result = pytester.runpytest(DEMO, "-x", "--prill-args=--jobs 1")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) + outcomes.get("errors", outcomes.get("error", 0)) == 1, result.stdout.str()
    assert "--fail-fast" in ran(result)
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])
    # prill stopped too (or, had it still been finishing a unit when pytest ended, was
    # cancelled by the plugin): not every unit ran.
    assert re.search(r"^0 passed, 1 failed, 0 errored, [1-4] skipped in .* \((stopped after the first failure|cancelled)\)$", result.stdout.str(), re.M), result.stdout.str()


def test_an_invalid_file_is_a_collection_error_with_prill_s_diagnostics(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("quickstart")
    (pytester.path / "quickstart" / "typo.yaml").write_text(
        "agent: echo\ninteractions:\n  - text: hi\n    response:\n      text: {keyword: hi}\n"
    )
    result = pytester.runpytest(DEMO)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting quickstart/typo.yaml*",
            "prill refuses this file:",
            "quickstart/typo.yaml:5:14: error[[]unknown-check[]]: interactions[[]0[]].response.text.keyword: unknown check `keyword`",
        ]
    )
    assert "did you mean" in result.stdout.str()


def test_a_warning_of_prill_is_a_pytest_warning(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("quickstart")
    (pytester.path / "quickstart" / "unchecked.yaml").write_text(
        "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hi\n"
    )
    result = pytester.runpytest(DEMO)
    result.assert_outcomes(passed=7, warnings=1)
    result.stdout.fnmatch_lines(
        ["*quickstart/unchecked.yaml:3: PrillWarning: warning[[]no-checks[]]: this case checks nothing*"]
    )


def test_off_unless_asked_or_a_prill_toml_is_found(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("quickstart")
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    pytester.makefile(".toml", prill="")
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["6 tests collected*"])
    # -p no:prill turns it off whatever else says so.
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:prill")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_agent_networks_and_config_files_are_not_items(pytester: pytest.Pytester, copy_fixture) -> None:
    # neuro-san's agent network files (HOCON with no `agent` or `interactions` key) and
    # prill.toml sit beside the tests in a neuro-san project; python tests too, run by
    # the same pytest.
    copy_fixture("quickstart")
    copy_fixture("neuro-san-real/registries", "registries")
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest("--prill", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["7 tests collected*"])
    assert not any("registries/" in line for line in result.outlines)
    result = pytester.runpytest(DEMO)
    result.assert_outcomes(passed=7)


def test_a_missing_binary_is_a_usage_error(pytester: pytest.Pytester, copy_fixture) -> None:
    copy_fixture("quickstart")
    result = pytester.runpytest("--prill-binary", "no/such/prill")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*prill: the binary */no/such/prill does not exist*"])
