"""The package's layout is its architecture: each layer imports only the layers below it, no folder holds
more than 12 modules and no module is above 500 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "explainer"

# Lowest first. A module may import its own layer and those listed before it.
LAYERS = [
    ("foundation", ("explainer._diagnosis", "explainer._errors", "explainer._inspect", "explainer._gc", "explainer._lazyre",
                    "explainer._cache", "explainer._config", "explainer._version", "explainer._pycode")),
    ("probes", ("explainer.probes",)),
    ("rules", ("explainer.rules",)),
    ("diagnose", ("explainer.diagnose",)),
    ("signals", ("explainer.signals",)),
    ("hook", ("explainer.hook",)),
    ("site", ("explainer.site",)),
    ("cli", ("explainer.cli",)),
    ("entry points", ("explainer", "explainer.__main__", "explainer.pytest_plugin")),
]


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the layer that owns module (the longest matching prefix); None outside."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            owns = module == prefix or (prefix != "explainer" and module.startswith(prefix + "."))
            if owns and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module) for every import in source, function-level ones included, relative ones resolved."""
    found = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # `from pkg import name` may name a submodule: judge the submodule where one exists.
            found += [(node.lineno, f"{base}.{alias.name}" if layer_of(f"{base}.{alias.name}") is not None
                       and (PACKAGE.parent / f"{base}.{alias.name}".replace(".", "/")).exists() else base)
                      for alias in node.names]
    return found


def upward_imports(source: str, module: str, is_package: bool) -> list[str]:
    own = layer_of(module)
    problems = []
    for line, target in imported_modules(source, module, is_package):
        theirs = layer_of(target)
        if target.split(".")[0] == "explainer" and theirs is None:
            problems.append(f"{module}:{line} imports {target}, which no layer owns")
        elif theirs is not None and own is not None and theirs > own:
            problems.append(f"{module}:{line} ({LAYERS[own][0]}) imports {target} ({LAYERS[theirs][0]})")
    return problems


def package_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_belongs_to_a_layer():
    assert [module_name(p) for p in package_modules() if layer_of(module_name(p)) is None] == []


def test_no_layer_imports_a_layer_above_it():
    problems = []
    for path in package_modules():
        problems += upward_imports(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")
    assert problems == []


@pytest.mark.parametrize("source, module, is_package, expected", [
    ("from explainer.diagnose.explain import explain\n", "explainer.rules.base", False, "(rules) imports"),
    ("def f():\n    from ..signals import curves\n", "explainer.diagnose.render", False, "(diagnose) imports"),
    ("from .. import cli\n", "explainer.site.pages", False, "(site) imports explainer.cli (cli)"),
    ("import explainer.cli.main\n", "explainer._config", False, "(foundation) imports"),
])
def test_an_upward_import_is_reported(source, module, is_package, expected):
    problems = upward_imports(source, module, is_package)
    assert len(problems) == 1 and expected in problems[0], problems


def test_downward_and_sideways_imports_pass():
    source = "from explainer._inspect import is_tensor\nfrom .render import render\nfrom ..rules import base\n"
    assert upward_imports(source, "explainer.diagnose.explain", False) == []


def test_no_folder_holds_more_than_12_modules_and_no_module_500_lines():
    folders: dict[Path, int] = {}
    long = []
    for path in package_modules():
        folders[path.parent] = folders.get(path.parent, 0) + 1
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > 500:
            long.append(f"{path.relative_to(PACKAGE.parent)}: {lines} lines")
    crowded = [f"{folder.relative_to(PACKAGE.parent)}: {count} modules" for folder, count in folders.items() if count > 12]
    assert crowded == [] and long == []
