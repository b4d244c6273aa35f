"""pytest plugin: Prill's test files as pytest items, run by one ``prill run``.

Registered with the ``pytest11`` entry point as ``prill`` (``-p no:prill`` turns it off).
It collects when asked to (``--prill``, ``--prill-args``, ``--prill-binary``, the ini
options ``prill = true`` or ``prill_args``) or when a ``prill.toml`` is found in the
folder pytest was started in or one above it, as ``prill`` itself finds it.

- **Collection.** ``prill run --list`` (with the ``--prill-args``, over the paths pytest
  was given) says which units the run would run: each case over each of its
  connections, or a Sentinel spec on its provider. Every file that pytest visits and
  that holds units becomes a file node, and each unit an item named ``CASE[CONNECTION]``.
  A file prill refuses is a collection error with prill's diagnostics.
- **Running.** At the first item, ONE ``prill run`` starts for every item pytest kept
  (after ``-k``, ``-m``, ``--lf``, ``--deselect``, node ids): with ``--units FILE`` when
  pytest kept fewer than prill listed, so prill runs exactly those, with its own
  concurrency; ``-x`` (``--maxfail=1``) adds ``--fail-fast``. Its JSON Lines stream
  (``--jsonl /dev/stdout``, one ``unit_finished`` line per unit) gives each item its
  outcome as the unit finishes; items wait for their own line in pytest's order.
- **Outcomes.** A unit that passed passes; one that failed fails with the lines prill
  prints (each check's message, ``at FILE:LINE:COL, interaction I, sample S``, the path,
  expected and found); one that errored (the agent unreachable, a timeout, a protocol
  error, a check that could not be evaluated) is a pytest *error* at setup, kept apart
  from failures as prill keeps it apart (exit 3 against 1); one prill did not run
  (``--fail-fast`` stopped it, a cancelled run) is skipped, saying why.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from prill import binary as installed_binary

#: The extensions prill reads test files from.
EXTENSIONS = {".hocon", ".conf", ".yaml", ".yml", ".json"}

#: How long the run may take to stop once pytest is done with it (Ctrl-C, ``-x``),
#: before it is killed.
STOP_GRACE_SECONDS = 10.0

_STATE = pytest.StashKey["_Prill"]()

#: A warning as ``prill run`` prints it on a stderr that is no terminal.
_WARNING = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): (?P<message>warning\[[^\]]+\]: .*)$")


class PrillWarning(UserWarning):
    """A warning prill gave about a test file (a check under an unknown part, a case
    with no check): the test still runs, as with ``prill run``."""


class PrillFailure(Exception):
    """A unit that failed: the agent answered, wrongly. (A unit that errored is a
    pytest error at setup, raised with ``pytest.fail(..., pytrace=False)``.)"""


class PrillInvalidFile(Exception):
    """A test file prill refuses, with its diagnostics."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("prill", "Prill test files (prill run)")
    group.addoption(
        "--prill",
        action="store_true",
        default=False,
        help="collect prill's test files (also on when a prill.toml is found, or any --prill-* option or ini option is set)",
    )
    group.addoption(
        "--prill-args",
        action="append",
        default=[],
        metavar="ARGS",
        help='more arguments for `prill run`, split as a shell does, e.g. --prill-args="--demo --jobs 8" (repeatable; after the ini option prill_args)',
    )
    group.addoption(
        "--prill-binary",
        default=None,
        metavar="PATH",
        help="the prill binary [default: ini prill_binary, else $PRILL_BINARY, else the one installed beside this Python, else the first on PATH]",
    )
    parser.addini(
        "prill",
        type="bool",
        default=False,
        help="collect prill's test files even without a prill.toml",
    )
    parser.addini(
        "prill_args",
        type="args",
        default=[],
        help="more arguments for `prill run` (before --prill-args)",
    )
    parser.addini(
        "prill_binary",
        default="",
        help="the prill binary (relative to the ini file's folder)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if _enabled(config):
        config.stash[_STATE] = _Prill(config)


def _enabled(config: pytest.Config) -> bool:
    if (
        config.getoption("prill")
        or config.getoption("prill_args")
        or config.getoption("prill_binary")
        or config.getini("prill")
        or config.getini("prill_args")
        or config.getini("prill_binary")
    ):
        return True
    start = Path(config.invocation_params.dir).resolve()
    return any((folder / "prill.toml").is_file() for folder in (start, *start.parents))


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    # Listed before pytest walks the paths, so that what cannot be listed (no binary,
    # an invalid prill.toml or --prill-args) stops the session as a usage error.
    state = session.config.stash.get(_STATE, None)
    if state is not None:
        state.listing()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    state = parent.config.stash.get(_STATE, None)
    if state is None or file_path.suffix not in EXTENSIONS:
        return None
    listing = state.listing()
    key = _key(file_path)
    if key in listing.invalid:
        listing.visited.add(key)
        return PrillFile.from_parent(parent, path=file_path, units=[], invalid=listing.invalid[key])
    units = listing.units.get(key)
    if not units:
        return None
    for line, message in listing.warnings.get(key, []):
        warnings.warn_explicit(PrillWarning(message), PrillWarning, str(file_path), line)
    return PrillFile.from_parent(parent, path=file_path, units=units, invalid=None)


def pytest_collection_finish(session: pytest.Session) -> None:
    # prill refused a file that pytest did not visit (a folder pytest does not walk):
    # nothing of prill's can run, and no file node says why.
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    listing = state.listing()
    unseen = [text for key, text in listing.invalid.items() if key not in listing.visited]
    if unseen:
        raise pytest.UsageError("prill refuses files that pytest does not collect:\n" + "\n".join(unseen))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if isinstance(item, PrillItem) and item.result is not None:
        # The unit's own time, not the wait for its line: what --durations shows.
        if call.when == "call" or (call.when == "setup" and report.outcome != "passed"):
            report.duration = float(item.result.get("duration") or 0.0)
        elif call.when == "setup":
            report.duration = 0.0
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is not None:
        early = bool(session.shouldstop or session.shouldfail) or exitstatus == pytest.ExitCode.INTERRUPTED
        state.stop(early)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or state.run is None:
        return
    run = state.run
    terminalreporter.write_sep("-", "prill")
    terminalreporter.write_line(f"ran: {shlex.join(run.command)}")
    text = run.stderr_text()
    lines = [line for line in text.splitlines() if line.strip()]
    unexplained = run.returncode not in (0, 1, 3, None)
    if config.getoption("verbose") > 0 or unexplained:
        for line in lines:
            terminalreporter.write_line(line)
    elif lines:
        terminalreporter.write_line(lines[-1])


@dataclass
class _Listing:
    """What ``prill run --list`` said: the units of each file, by resolved path."""

    units: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)
    warnings: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    count: int = 0
    visited: set[str] = field(default_factory=set)


class _Prill:
    """The plugin's state for one pytest session: the binary, the arguments, the
    listing, and the one run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.cwd = Path(config.invocation_params.dir)
        self.args = [*config.getini("prill_args")]
        for given in config.getoption("prill_args"):
            self.args.extend(shlex.split(given))
        self._listing: _Listing | None = None
        self.run: _Run | None = None

    def binary(self) -> str:
        given = self.config.getoption("prill_binary")
        if not given and self.config.getini("prill_binary"):
            base = self.config.inipath.parent if self.config.inipath else self.cwd
            given = str(base / self.config.getini("prill_binary"))
        given = given or os.environ.get("PRILL_BINARY")
        if given:
            path = Path(given).expanduser()
            if not path.is_absolute():
                path = self.cwd / path
            if not path.is_file():
                raise pytest.UsageError(f"prill: the binary {path} does not exist")
            return str(path)
        found = installed_binary()
        if found is None:
            raise pytest.UsageError(
                "prill: no `prill` binary beside this Python or on PATH: `pip install prill`, or give --prill-binary"
            )
        return str(found)

    def paths(self) -> list[str]:
        """pytest's paths (node ids without their ``::`` part), as prill is given them:
        relative to the folder pytest started in when they lie under it."""
        out = []
        for arg in self.config.args:
            path = Path(str(arg).split("::", 1)[0])
            absolute = path if path.is_absolute() else self.cwd / path
            try:
                out.append(str(absolute.resolve().relative_to(self.cwd.resolve())) or ".")
            except ValueError:
                out.append(str(absolute))
        return out or ["."]

    def _has(self, *flags: str) -> bool:
        return any(a == f or a.startswith(f + "=") for a in self.args for f in flags)

    def listing(self) -> _Listing:
        if self._listing is None:
            self._listing = self._list()
        return self._listing

    def _list(self) -> _Listing:
        command = [self.binary(), "run", "--list", *self.args]
        if not self._has("--no-tests"):
            command.append("--no-tests=pass")
        command += ["--", *self.paths()]
        done = subprocess.run(command, cwd=self.cwd, capture_output=True, text=True, env=_env())
        listing = _Listing()
        if done.returncode == 0:
            for line in done.stdout.splitlines():
                if line.startswith("{"):
                    unit = json.loads(line)
                    listing.units.setdefault(self._key_of(unit["file"]), []).append(unit)
                    listing.count += 1
            # The files' warnings, as prill prints them when stderr is no terminal:
            # `file:line:col: warning[code]: message`, one line each.
            for line in done.stderr.splitlines():
                m = _WARNING.match(line)
                if m:
                    key = self._key_of(m.group("file"))
                    listing.warnings.setdefault(key, []).append((int(m.group("line")), m.group("message")))
            return listing
        if done.returncode == 2:
            listing.invalid = self._invalid()
            if listing.invalid:
                return listing
        raise pytest.UsageError(
            f"prill: `{shlex.join(command)}` exited with {done.returncode}:\n{done.stderr.strip()}"
        )

    def _invalid(self) -> dict[str, str]:
        """The diagnostics of each invalid file, from ``prill validate --format json``,
        as ``file:line:col`` lines with what was expected and found under them."""
        command = [self.binary(), "validate", "--format", "json", "--no-tests=pass"]
        for flag in ("--strict",):
            if self._has(flag):
                command.append(flag)
        for i, arg in enumerate(self.args):
            if arg == "--config" and i + 1 < len(self.args):
                command += ["--config", self.args[i + 1]]
            elif arg.startswith("--config="):
                command.append(arg)
        command += ["--", *self.paths()]
        done = subprocess.run(command, cwd=self.cwd, capture_output=True, text=True, env=_env())
        try:
            files = json.loads(done.stdout)["files"]
        except (ValueError, KeyError, TypeError):
            return {}
        return {
            self._key_of(entry["file"]): "\n".join(_diagnostic(d) for d in entry.get("diagnostics", []))
            for entry in files
            if not entry.get("valid", True)
        }

    def _key_of(self, file: str) -> str:
        path = Path(file)
        return _key(path if path.is_absolute() else self.cwd / path)

    def start(self, session: pytest.Session) -> _Run:
        if self.run is None:
            items = [i for i in session.items if isinstance(i, PrillItem)]
            self.run = _Run(self, items)
        return self.run

    def stop(self, early: bool) -> None:
        if self.run is not None:
            self.run.stop(early)


def _env() -> dict[str, str]:
    """The environment for prill: the caller's, with no colour (the run's stdout, which
    carries the JSON Lines stream, gets no annotations either: ``--format human``)."""
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    return env


def _key(path: Path) -> str:
    return os.path.realpath(path)


def _diagnostic(d: dict[str, Any]) -> str:
    """One diagnostic of ``prill validate --format json`` as prill's short format
    prints it, with what was expected and found, the help and the detail under it."""
    head = f"{_shown(str(d.get('file')))}:{d.get('line')}:{d.get('column')}: {d.get('severity')}[{d.get('code')}]: "
    if d.get("path"):
        head += f"{d['path']}: "
    lines = [head + str(d.get("message", ""))]
    for name in ("expected", "found", "help"):
        if d.get(name) not in (None, ""):
            lines.append(f"  {name}: {d[name]}")
    if d.get("detail"):
        lines.extend("  " + line for line in str(d["detail"]).splitlines())
    return "\n".join(lines)


class _Run:
    """The one ``prill run`` of a session, read as it goes."""

    def __init__(self, state: _Prill, items: list[PrillItem]) -> None:
        self.results: dict[tuple[str, str], dict[str, Any]] = {}
        self.summary: dict[str, Any] | None = None
        self.returncode: int | None = None
        self.done = False
        self.lock = threading.Condition()
        self.dir = tempfile.mkdtemp(prefix="prill-pytest-")
        self.stderr_path = os.path.join(self.dir, "stderr.txt")
        self.command = [state.binary(), "run", *state.args]
        if not state._has("--format"):
            self.command += ["--format", "human"]
        self.command += ["--jsonl", "/dev/stdout"]
        if state.config.getoption("maxfail") == 1 and not state._has("-x", "--fail-fast"):
            self.command.append("--fail-fast")
        wanted = {(i.unit["case_id"], i.unit["connection"]) for i in items}
        self.wanted = len(wanted)
        if len(wanted) < state.listing().count:
            units_file = os.path.join(self.dir, "units.jsonl")
            with open(units_file, "w", encoding="utf-8") as out:
                for case_id, connection in sorted(wanted):
                    out.write(json.dumps({"case_id": case_id, "connection": connection}) + "\n")
            self.command += ["--units", units_file]
        self.command += ["--", *state.paths()]
        self.stderr = open(self.stderr_path, "w+b")
        self.saved_stderr: str | None = None
        self.process: subprocess.Popen[str] | None = None
        if not wanted:
            self._finish(None)
            return
        self.process = subprocess.Popen(
            self.command,
            cwd=state.cwd,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            stdin=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            env=_env(),
        )
        self.reader = threading.Thread(target=self._read, name="prill-jsonl", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            if not line.startswith("{"):
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            event = record.get("event")
            if event == "unit_finished":
                unit = record["unit"]
                with self.lock:
                    self.results[(unit["case_id"], unit["connection"])] = record
                    self.lock.notify_all()
            elif event == "run_finished":
                self.summary = record
        self._finish(self.process.wait())

    def _finish(self, returncode: int | None) -> None:
        with self.lock:
            self.returncode = returncode
            self.done = True
            self.lock.notify_all()

    def result(self, item: PrillItem) -> dict[str, Any] | None:
        """The unit's ``unit_finished`` record, once it is in; ``None`` when the run
        ended without one."""
        key = (item.unit["case_id"], item.unit["connection"])
        with self.lock:
            while key not in self.results and not self.done:
                self.lock.wait(0.5)
            return self.results.get(key)

    def stderr_text(self) -> str:
        """What prill printed on stderr (its human report) so far."""
        if self.saved_stderr is not None:
            return self.saved_stderr
        self.stderr.flush()
        with open(self.stderr_path, encoding="utf-8", errors="replace") as text:
            return text.read()

    def stop(self, early: bool) -> None:
        """Waits for the run to end: it is writing its reports, last run and history
        once every unit is in. When pytest stopped ``early`` (``-x``, Ctrl-C) with
        units still running: SIGTERM, which prill takes as Ctrl-C (it cancels, writes
        its reports and exits 130), then a kill."""
        if self.process is not None and self.process.poll() is None:
            with self.lock:
                all_in = len(self.results) >= self.wanted or self.summary is not None
            if all_in or not early:
                try:
                    self.process.wait(STOP_GRACE_SECONDS if all_in else None)
                except subprocess.TimeoutExpired:
                    pass
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(STOP_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        if self.process is not None:
            self.reader.join(STOP_GRACE_SECONDS)
        # Kept for the terminal summary, which comes after the session's end.
        self.saved_stderr = self.stderr_text()
        self.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrillFile(pytest.File):
    """A test file prill reads, holding one item per unit."""

    def __init__(self, *, units: list[dict[str, Any]], invalid: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.units = units
        self.invalid = invalid

    def collect(self):
        if self.invalid is not None:
            raise PrillInvalidFile(self.invalid)
        seen: set[str] = set()
        for unit in self.units:
            name = f"{unit['name']}[{unit['connection']}]"
            if name in seen:
                name = f"{unit['name']}@{unit['case_id']}[{unit['connection']}]"
            seen.add(name)
            # The node id given whole, so that pytest parses it as it parses the ids it
            # keeps (`--lf`'s cache): `CASE` as the name and `CONNECTION` as the
            # parameters, as for a parametrized test.
            yield PrillItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", unit=unit)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None):
        if excinfo.errisinstance(PrillInvalidFile):
            return f"prill refuses this file:\n{excinfo.value}"
        return super().repr_failure(excinfo)


class PrillItem(pytest.Item):
    """One unit: a case over one connection (or a Sentinel spec on its provider)."""

    def __init__(self, *, unit: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.unit = unit
        self.result: dict[str, Any] | None = None
        for word in (unit["connection"], unit["case_id"], unit["target"], unit["dialect"], *unit.get("tags", [])):
            self.extra_keyword_matches.add(word)
        self.user_properties += [("prill_case_id", unit["case_id"]), ("prill_connection", unit["connection"])]

    def setup(self) -> None:
        state: _Prill = self.config.stash[_STATE]
        run = state.start(self.session)
        self.result = run.result(self)
        if self.result is None:
            tail = "\n".join(run.stderr_text().strip().splitlines()[-20:])
            pytest.fail(
                f"prill gave no verdict for {_label(self.unit)} (`prill run` exited with {run.returncode}); its output ends with:\n{tail}",
                pytrace=False,
            )
        verdict = self.result.get("verdict")
        if verdict == "skipped":
            why = "prill stopped after the first failure (--fail-fast)" if (run.summary or {}).get("stopped") else "the prill run was cancelled"
            pytest.skip(f"not run: {why}")
        if verdict == "errored":
            # An error at setup, with prill's lines and no Python traceback.
            pytest.fail(_explain(self.result), pytrace=False)

    def runtest(self) -> None:
        assert self.result is not None
        if self.result.get("verdict") == "failed":
            raise PrillFailure(_explain(self.result))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None):
        if excinfo.errisinstance(PrillFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        line = _first_line(self.result) if self.result else None
        return self.path, (line - 1 if line else None), _label(self.unit)


def _label(unit: dict[str, Any]) -> str:
    return f"{unit['name']} [{unit['connection']}]"


def _shown(file: str) -> str:
    """A file as prill's reports show it: without a leading ``./``."""
    while file.startswith("./"):
        file = file[2:]
    return file


def _line_label(unit: dict[str, Any]) -> str:
    """How prill's report line names a unit: ``file::case [connection]``, or ``file
    [connection]`` when the case's name only restates the file's (a data-driven file)."""
    file = _shown(unit["file"])
    stem = os.path.splitext(file)[0]
    name = unit["name"]
    if stem == name or stem.endswith(("/" + name, "\\" + name)):
        return f"{file} [{unit['connection']}]"
    return f"{file}::{name} [{unit['connection']}]"


def _first_line(record: dict[str, Any]) -> int | None:
    for problem in _problems(record):
        if problem["location"]:
            return problem["location"]["line"]
    return None


def _outcome(record: dict[str, Any]) -> str:
    """``0 passed, 1 failed, 1 not run (need 2/2)``, as prill words a unit's samples."""
    tally = record.get("tally", {})
    ratio = record.get("success_ratio", "")
    total = tally.get("passed", 0) + tally.get("failed", 0) + tally.get("errored", 0)
    try:
        not_run = max(int(ratio.split("/")[1]) - total, 0)
    except (IndexError, ValueError):
        not_run = 0
    parts = [f"{tally.get('passed', 0)} passed"]
    for count, what in ((tally.get("failed", 0), "failed"), (tally.get("errored", 0), "errored"), (not_run, "not run")):
        if count:
            parts.append(f"{count} {what}")
    return f"{', '.join(parts)} (need {ratio})"


def _problems(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The unit's failing checks, then its errors, each once with the samples that had
    it, in the order first seen over the samples in index order: prill's own grouping."""
    failures: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for sample in sorted(record.get("samples", []), key=lambda s: s.get("index", 0)):
        found = []
        for interaction in sample.get("interactions", []):
            index = interaction.get("index")
            error = interaction.get("error")
            if error:
                found.append(("error", f"interaction {index}: {error['message']}", index, None))
            for check in interaction.get("checks", []):
                status = check.get("status")
                if status == "failed":
                    found.append(("failure", check.get("message", ""), index, check))
                elif status == "errored":
                    found.append(("error", check.get("message", ""), index, check))
        if sample.get("error"):
            found.append(("error", sample["error"]["message"], None, None))
        found.sort(key=lambda f: f[0] != "failure")
        seen = set()
        for kind, message, interaction, check in found:
            if (kind, message) in seen:
                continue
            seen.add((kind, message))
            group = failures if kind == "failure" else errors
            known = next((p for p in group if p["message"] == message), None)
            if known:
                known["samples"].append(sample.get("index", 0))
                continue
            group.append(
                {
                    "kind": kind,
                    "message": message,
                    "samples": [sample.get("index", 0)],
                    "interaction": interaction,
                    "check": check,
                    "location": (check or {}).get("location"),
                }
            )
    return failures + errors


def _explain(record: dict[str, Any]) -> str:
    """What prill prints of a unit that did not pass: its outcome, then each distinct
    failure and error with ``at FILE:LINE:COL, interaction I, sample S``, the check's
    path, and what it expected and found."""
    unit = record["unit"]
    head = {"failed": "FAIL", "errored": "ERROR"}.get(record.get("verdict"), "?")
    lines = [f"{head} {_line_label(unit)} {_outcome(record)}"]
    for p in _problems(record):
        message = p["message"] if p["kind"] == "failure" else f"error: {p['message']}"
        if len(p["samples"]) > 1:
            message += f" ({len(p['samples'])} samples)"
        lines.append(message)
        where = []
        check = p["check"]
        if p["location"]:
            where.append(f"at {_shown(unit['file'])}:{p['location']['line']}:{p['location']['column']}")
        elif check and check.get("path"):
            where.append(f"at {check['path']}")
        if p["interaction"] is not None:
            where.append(f"interaction {p['interaction']}")
        samples = ", ".join(str(s) for s in sorted(p["samples"]))
        where.append(("samples " if len(p["samples"]) > 1 else "sample ") + samples)
        lines.append("  " + ", ".join(where))
        if check:
            lines.append(f"  check: {check.get('path')}")
            for name in ("expected", "found"):
                if name in check:
                    lines.append(f"  {name}: {json.dumps(check[name], ensure_ascii=False)}")
    return "\n".join(lines)
