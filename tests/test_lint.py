"""The tree passes `ruff check` with the project's configuration: pyflakes, and no function above complexity 15."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("explainer", "benchmarks", "fixtures", "tests")


def test_complexity_limit_is_15():
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "C901" in lint["select"] and lint["mccabe"]["max-complexity"] == 15, lint


def test_ruff_check_passes():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *CHECKED], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"`ruff check {' '.join(CHECKED)}` failed:\n{result.stdout}{result.stderr}"
