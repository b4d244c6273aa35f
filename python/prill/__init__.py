"""Prill from Python: where the ``prill`` binary that came with this package is.

``pip install prill`` puts the ``prill`` command (the Rust binary, nothing in Python) on
the environment's ``PATH`` and installs the pytest plugin of :mod:`prill.pytest_plugin`,
which runs Prill's test files as pytest items (``docs/pytest.md``). This module only
finds the binary; it imports nothing beyond the standard library.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

__all__ = ["binary"]

_EXE = "prill.exe" if os.name == "nt" else "prill"


def binary() -> Path | None:
    """The ``prill`` binary of this Python environment, else the first on ``PATH``.

    The wheel installs it into the environment's scripts folder (``bin/`` of a venv),
    beside ``python``; that one is preferred, so a venv's pytest runs the ``prill`` it
    installed even when another comes first on ``PATH``. ``None`` when there is none.
    """
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidate = Path(scripts) / _EXE
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("prill")
    return Path(found) if found else None
