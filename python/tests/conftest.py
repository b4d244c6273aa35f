"""What the plugin's tests share: pytest's ``pytester``, the repository's fixtures, and
the real ``prill`` binary (the one the wheel installed beside this Python, or
``$PRILL_BINARY``), which every test runs: nothing of Prill is mocked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import prill

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]


def prill_binary() -> str:
    """The binary the plugin runs when given none: ``$PRILL_BINARY``, else the
    installed one."""
    found = os.environ.get("PRILL_BINARY") or prill.binary()
    if not found:
        pytest.fail("no prill binary: install the wheel (.ci/wheel) or set PRILL_BINARY")
    return str(found)


@pytest.fixture
def copy_fixture(pytester: pytest.Pytester):
    """Copies ``fixtures/<name>`` of the repository to ``<pytester.path>/<as_>``."""

    def copy(name: str, as_: str | None = None) -> Path:
        target = pytester.path / (as_ or Path(name).name)
        shutil.copytree(REPO / "fixtures" / name, target)
        return target

    return copy


def prill_units(cwd: Path, *args: str) -> list[tuple[str, str, str]]:
    """``prill run --demo ARGS --jsonl`` run by hand in ``cwd``: each finished unit's
    file, name and connection, sorted."""
    out = cwd / "by-hand.jsonl"
    subprocess.run(
        [prill_binary(), "run", "--demo", "-q", "--jsonl", str(out), *args],
        cwd=cwd,
        capture_output=True,
        check=False,
    )
    units = []
    for line in out.read_text().splitlines():
        record = json.loads(line)
        if record["event"] == "unit_finished":
            u = record["unit"]
            units.append((u["file"], u["name"], u["connection"]))
    out.unlink()
    return sorted(units)
