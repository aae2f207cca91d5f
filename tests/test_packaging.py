"""What `pip install torch-explainer` gets: a wheel holding every module and every rule, which explains a crash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import benchmark_module

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheels_package_list_names_every_package_folder():
    packages = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    folders = {".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "explainer").rglob("__init__.py")}
    assert packages - {"explainer.runbooks"} == folders


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return benchmark_module("run").build_wheel(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_holds_every_module_and_every_rule(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "explainer").rglob("*.py")
               if "__pycache__" not in path.parts}
    rules = {"explainer/runbooks/" + path.relative_to(ROOT / "runbooks").as_posix()
             for path in (ROOT / "runbooks").rglob("*.md")}
    assert not modules - names, sorted(modules - names)[:10]
    assert not rules - names, sorted(rules - names)[:10]


def test_an_installed_wheel_explains_a_crash_with_its_own_rules(wheel, tmp_path):
    site = tmp_path / "site-packages"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "work"  # outside the checkout: `python -m` puts the working folder first on sys.path
    work.mkdir()
    shutil.copy(ROOT / "fixtures" / "shape" / "linear_in_features.py", work)
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    where = subprocess.run([sys.executable, "-c", "import explainer.rules.files as f; print(f.builtin_rules_dir())"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert where.stdout.strip() == str(site / "explainer" / "runbooks"), where.stderr
    for run in ("builds the rule index", "reads it"):
        done = subprocess.run([sys.executable, "-m", "explainer", "linear_in_features.py"], cwd=work, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, (run, done.stderr[-2000:])
        assert "mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)" in done.stderr, run
        assert "torch-explainer [shape.matmul]" in done.stderr + done.stdout, (run, done.stderr[-2000:])
    # the site is built from a checkout's site/ sources: said at once, with the page in the terminal instead
    opened = subprocess.run([sys.executable, "-m", "explainer", "open", "shape.matmul", "--print"], cwd=work, env=env,
                            capture_output=True, text=True, timeout=120)
    assert opened.returncode == 1 and "building" not in opened.stderr, opened.stderr
    assert "cannot be built here" in opened.stderr and "`explainer rules show shape.matmul`" in opened.stderr
    shown = subprocess.run([sys.executable, "-m", "explainer", "rules", "show", "shape.matmul"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "What it means" in shown.stdout, shown.stderr

