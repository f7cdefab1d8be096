"""The project's own checks, run as tests: ruff's lint rules over the code and mypy over engine/.

Both read their configuration from pyproject.toml ([tool.ruff], [tool.mypy]); the ignores there each say why.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINTED = ["engine", "lab", "lessons", "spark_exercises", "classroom", "tests"]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_finds_nothing_to_fix() -> None:
    result = _run("ruff", "check", "--no-cache", "--output-format", "concise", *LINTED)
    assert result.returncode == 0, f"ruff check {' '.join(LINTED)}:\n{result.stdout}{result.stderr}"


def test_mypy_finds_no_type_error_in_the_engine() -> None:
    result = _run("mypy", "--cache-dir", "/dev/null", "engine")   # no cache left in the work tree
    assert result.returncode == 0, f"mypy engine:\n{result.stdout}{result.stderr}"
