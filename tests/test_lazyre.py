"""The explainer's own stdlib patterns built from code an earlier process kept (explainer/_lazyre.py): each matches as
`re.compile`'s pattern does, a second process compiles none of them again, and a cache that cannot be used changes
nothing but the time."""

from __future__ import annotations

import importlib
import pkgutil
import re
import textwrap

import explainer
from explainer import _lazyre
from explainer.rules.base import default_rulebase

from conftest import run_python


def _module_patterns() -> dict[tuple[str, int], re.Pattern]:
    """Every module-level pattern of the explainer's modules (lazy ones compiled), by source and flags."""
    found = {}
    for info in pkgutil.walk_packages(explainer.__path__, "explainer."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in list(vars(module).values()):
            values = value if isinstance(value, (list, tuple)) else [value]
            for item in values:
                if isinstance(item, _lazyre.LazyPattern):
                    item = item._compiled if "_compiled" in item.__dict__ else _lazyre.cached_compile(*item._source)
                if isinstance(item, re.Pattern):
                    found[(item.pattern, item.flags)] = item
    return found


def _found(pattern: re.Pattern, text: str):
    subject = text.encode() if isinstance(pattern.pattern, bytes) else text  # (a source file's coding cookie is bytes)
    return [(m.span(), m.groups(), m.groupdict()) for m in pattern.finditer(subject)]


def test_every_module_pattern_built_from_its_kept_code_matches_as_re_compiles_it(monkeypatch):
    patterns = _module_patterns()
    assert len(patterns) > 120
    monkeypatch.setattr(_lazyre, "_codes", {})
    texts = [line for rule in default_rulebase().rules[:400] for example in rule.examples
             for line in example.message.splitlines()][:600]
    compared = 0
    for (source, flags), pattern in patterns.items():
        _, args = _lazyre._recorded_compile(source, flags)
        assert args is not None, source
        built, reference = _lazyre._engine.compile(*args), re.compile(source, flags)
        assert (built.pattern, built.flags, built.groups, built.groupindex) == \
               (reference.pattern, reference.flags, reference.groups, reference.groupindex)
        for text in texts:
            assert _found(built, text) == _found(reference, text), (source, text)
            compared += 1
    assert compared > 50_000


def test_code_the_engine_refuses_is_compiled_again(monkeypatch):
    source = r"(?P<rows>\d+)x(?P<cols>\d+)"
    monkeypatch.setattr(_lazyre, "_codes", {(source, 0): (source, 32, [1, 2, 3], 2, {}, (None,))})
    pattern = _lazyre.cached_compile(source)
    assert pattern.search("(32x512 and 256x10)").groupdict() == {"rows": "32", "cols": "512"}
    assert _lazyre._codes[(source, 0)][2] != [1, 2, 3]  # replaced by the code re made


def test_a_second_process_compiles_none_of_the_explainers_patterns_again(tmp_path):
    script = textwrap.dedent("""
        import explainer
        from explainer import _lazyre
        compiled = []
        original = _lazyre._recorded_compile
        _lazyre._recorded_compile = lambda p, flags: (compiled.append(p), original(p, flags))[1]
        diagnosis = explainer.explain_text('''Traceback (most recent call last):
          File "train.py", line 12, in <module>
            out = model(x)
        RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)''')
        print(diagnosis.rule, diagnosis.summary)
        print(len(compiled), _lazyre._added)
    """)
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    first = run_python("-c", script, env=env)
    warm = run_python("-c", script, env=env)
    assert first.returncode == warm.returncode == 0, first.stderr + warm.stderr
    assert first.stdout.splitlines()[0] == warm.stdout.splitlines()[0]
    assert first.stdout.splitlines()[0].startswith("shape.matmul ")
    assert int(first.stdout.splitlines()[1].split()[0]) > 10 and first.stdout.splitlines()[1].endswith("True")
    assert warm.stdout.splitlines()[1] == "0 False"
    assert list(tmp_path.glob("torch-explainer/re-code-*.marshal"))


def test_without_the_cache_nothing_is_written(tmp_path):
    script = "import explainer; print(explainer.explain_text('RuntimeError: CUDA error: out of memory').rule)"
    result = run_python("-c", script, env={"XDG_CACHE_HOME": str(tmp_path), "EXPLAINER_CACHE": "0"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    assert not list(tmp_path.glob("**/re-code-*"))
