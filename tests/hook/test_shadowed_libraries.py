"""The hook imports its own libraries (PyYAML, jinja2, regex) at the moment of a crash, where the script's folder is
first on sys.path: a user's `yaml.py` or `regex.py` beside the script must not be imported (that would run user code)
nor break the diagnosis."""

from __future__ import annotations

from conftest import ROOT, run_explainer

LINEAR = "fixtures/shape/linear_in_features.py"


def test_a_users_yaml_regex_and_jinja2_beside_the_script_are_never_imported(tmp_path):
    marker = tmp_path / "user_code_ran.txt"
    for name in ("yaml", "regex", "jinja2"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write('{name}\\n')\n")
    script = tmp_path / "train.py"
    script.write_text((ROOT / LINEAR).read_text())
    # an empty cache: the rule base is parsed, checked and compiled now, with every library it needs
    done = run_explainer(str(script), cwd=tmp_path, env={"EXPLAINER_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 1
    assert not marker.exists(), f"the explainer imported the user's {marker.read_text().split()}"
    assert "torch-explainer [shape.matmul]" in done.stderr, done.stderr[-800:]
    assert "internal error" not in done.stderr
