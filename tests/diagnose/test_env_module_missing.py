"""other.module_not_installed: an import that failed, read live (the interpreter, the distribution and release that
provide the package, the missing part of a dotted name, the repository folder that is not on sys.path) and from
pasted messages (the module, the import statement, the pip name), with other frameworks' own modules left alone."""

from __future__ import annotations

import importlib
import sys
from importlib import metadata
from pathlib import Path

import pytest

import explainer
from conftest import ROOT, corpus_message, explain_paste, raise_fixture, raised, rules_of

RULE = "other.module_not_installed"
REPO = ROOT / "fixtures" / "other" / "module_missing_repo"


# --- live: real imports that fail ----------------------------------------------------------------

def test_a_package_that_is_not_installed_names_the_interpreter_and_the_import_line(monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    exc = raise_fixture("fixtures/other/module_missing_package.py")
    assert type(exc) is ModuleNotFoundError and exc.name == "warpctc_pytorch"
    diagnosis = explainer.explain(exc)
    assert diagnosis.rule == RULE, (diagnosis.rule, diagnosis.summary)
    facts = diagnosis.facts
    assert facts["module"] == "warpctc_pytorch" and facts["interpreter"] == sys.executable
    assert facts["import_code"] == "from warpctc_pytorch import CTCLoss"  # (its trailing comment cut off)
    assert facts["import_line"] == 11 and facts["import_file"].endswith("module_missing_package.py")
    assert "top_found" not in facts and "local_path" not in facts and "env_mismatch" not in facts
    assert f"`warpctc_pytorch` is not installed in the Python that ran the script, `{sys.executable}`" in diagnosis.summary
    assert "`from warpctc_pytorch import CTCLoss` (" in diagnosis.summary
    assert "No folder or file named `warpctc_pytorch` exists beside the script" in diagnosis.summary
    # the rule's table knows it is no pip package, and what replaced it
    assert any("github.com/SeanNaren/warp-ctc" in fix and "torch.nn.CTCLoss" in fix for fix in diagnosis.fixes)


def test_an_active_environment_that_is_not_the_interpreter_is_named(monkeypatch, tmp_path):
    other_env = tmp_path / "venv"
    other_env.mkdir()
    monkeypatch.setenv("VIRTUAL_ENV", str(other_env))
    diagnosis = explainer.explain(raise_fixture("fixtures/other/module_missing_package.py"))
    assert diagnosis.facts["active_env"] == str(other_env) and diagnosis.facts["env_mismatch"] is True
    assert f"that is not the active environment `{other_env}`" in diagnosis.summary
    assert any(f"`{other_env}/bin/python`" in fix and sys.executable in fix for fix in diagnosis.fixes)


def test_a_submodule_the_installed_release_lacks_names_the_release():
    exc = raise_fixture("fixtures/other/module_missing_submodule.py")
    assert exc.name == "numpy.compat"  # removed in NumPy 2.0
    diagnosis = explainer.explain(exc)
    version = metadata.version("numpy")
    facts = diagnosis.facts
    assert diagnosis.rule == RULE
    assert (facts["top_dist"], facts["top_version"], facts["missing_part"]) == ("numpy", version, "numpy.compat")
    assert facts["top_origin"] == sys.modules["numpy"].__file__
    assert f"numpy {version} is installed" in diagnosis.summary and "has no `numpy.compat`" in diagnosis.summary
    assert "`from numpy.compat import long`" in diagnosis.summary
    assert any('pip install "numpy==<that release>"' in fix for fix in diagnosis.fixes)


def test_a_repository_package_outside_sys_path_says_where_it_is_and_how_to_run():
    # tools/train.py imports the repository's `models`: Python searches tools/, not the repository's root
    diagnosis = explainer.explain(raise_fixture(str(REPO / "tools" / "train.py")))
    facts = diagnosis.facts
    assert diagnosis.rule == RULE
    assert Path(facts["local_path"]) == REPO / "models" and Path(facts["local_root"]) == REPO
    assert facts["local_script"] == "tools/train.py" and Path(facts["local_editable_root"]) == REPO
    assert f"it is part of the repository, `{REPO / 'models'}`" in diagnosis.summary
    assert "`from models import build_backbone`" in diagnosis.summary
    assert any(f"cd {REPO} && PYTHONPATH=. python tools/train.py" in fix and f"pip install -e {REPO}" in fix
               for fix in diagnosis.fixes)
    assert not any("pip install models" in fix for fix in diagnosis.fixes)


def test_a_submodule_missing_from_the_repositorys_own_package(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script puts the repository's root on it
    for name in [m for m in sys.modules if m == "models" or m.startswith("models.")]:
        monkeypatch.delitem(sys.modules, name)
    try:
        diagnosis = explainer.explain(raise_fixture(str(REPO / "tools" / "evaluate.py")))
    finally:
        for name in [m for m in sys.modules if m == "models" or m.startswith("models.")]:
            del sys.modules[name]  # (the repository's package, imported by the script: not for later tests)
    facts = diagnosis.facts
    assert diagnosis.rule == RULE and facts["missing_part"] == "models.heads" and facts["top_local"] is True
    assert Path(facts["top_origin"]) == REPO / "models" / "__init__.py" and "top_dist" not in facts
    assert facts["parent_submodules"] == "backbone"
    assert "a folder of your code rather than an installed package" in diagnosis.summary
    assert "(it holds backbone)" in diagnosis.summary and "`from models.heads import build_head`" in diagnosis.summary
    assert any("Look for `models/heads.py`" in fix and str(REPO / "models") in fix for fix in diagnosis.fixes)


def test_a_file_path_used_as_a_module_name_names_the_module_file():
    # a config given as a path: "json/tool.py" -> "json.tool.py", and the module json.tool is no package
    exc = raised(lambda: importlib.import_module("json/tool.py".replace("/", ".")))
    assert str(exc) == "No module named 'json.tool.py'; 'json.tool' is not a package"
    diagnosis = explainer.explain(exc)
    facts = diagnosis.facts
    assert diagnosis.rule == RULE and facts["not_package"] == "json.tool" and facts["child"] == "py"
    assert facts["not_package_file"] == sys.modules["json.tool"].__file__
    assert f"`json.tool` is a module (a single file, `{sys.modules['json.tool'].__file__}`)" in diagnosis.summary
    assert "a file name with its `.py` suffix used as a module name" in diagnosis.summary
    assert any("importlib.import_module('json.tool')" in fix for fix in diagnosis.fixes)


# --- pasted messages (the corpus) ------------------------------------------------------------------

@pytest.mark.parametrize("where, values", [
    ("r24_a.yaml#97", ["`basicsr` is not installed", "`from basicsr.archs.rrdbnet_arch import RRDBNet` needs it"]),
    ("r24_a.yaml#11", ["`colossalai` was imported, but it has no `legacy` submodule",
                       "`from colossalai.legacy.context import ParallelMode`"]),
    ("r24_a.yaml#79", ["`warpctc_pytorch` is not installed", "`from warpctc_pytorch import CTCLoss`"]),
    ("r24_a.yaml#103", ["PyTorch itself is not installed", "`import torch as th` needs it"]),  # pasted in backticks
    ("r24_a.yaml#58", ["`x_transformers` is not installed"]),  # a Colab cell's arrow line
    ("r10_a.yaml#31", ["`python -m accelerate.commands.launch` could not start: `accelerate`",
                       r"`D:\AI\Training\Anima-Standalone-Trainer\venv\Scripts\python.exe`"]),
    ("r8_a.yaml#58", ["`PIPNet.experiments.data_300W.pip_32_16_60_r101_l2_l1_10_1_nb10` is a module",
                      "ends with a dot"]),
    ("r8_a.yaml#57", ["`training` is, by its name, a folder or file of the repository"]),
    ("r8_a.yaml#59", ["`models` is, by its name, a folder or file of the repository",
                      "`from models import build_model, build_loss`"]),
])
def test_corpus_messages_are_explained_with_their_values(where, values):
    diagnosis = explain_paste(corpus_message(where))
    assert diagnosis.rule == RULE, (where, diagnosis.rule)
    missing = [v for v in values if v not in diagnosis.summary]
    assert not missing, (where, missing, diagnosis.summary)


def test_the_pip_name_of_an_import_name_comes_from_the_rule_table():
    diagnosis = explain_paste(corpus_message("r4_a.yaml#69"))  # import cv2
    assert any("pip install opencv-python" in fix and "`cv2` is the import name of the pip package `opencv-python`" in fix
               for fix in diagnosis.fixes), diagnosis.fixes
    sklearn = explain_paste("ModuleNotFoundError: No module named 'sklearn'")
    assert any("pip install scikit-learn" in fix for fix in sklearn.fixes)
    protobuf = explain_paste("ModuleNotFoundError: No module named 'google.protobuf'")
    assert any("pip install protobuf" in fix for fix in protobuf.fixes), protobuf.fixes


def test_a_repository_folder_name_is_never_offered_as_a_pip_install():
    diagnosis = explain_paste(corpus_message("r8_a.yaml#59"))
    assert not any(fix.startswith("Install it") for fix in diagnosis.fixes), diagnosis.fixes
    assert any("do not `pip install models`" in fix for fix in diagnosis.fixes)


@pytest.mark.parametrize("paste", [
    "> ModuleNotFoundError: No module named 'basicsr'",
    "`ModuleNotFoundError: No module named 'basicsr'`",
    "ModuleNotFoundError: No module named 'basicsr'`",
    "    from basicsr.archs.rrdbnet_arch import RRDBNet\nModuleNotFoundError: No module named 'basicsr'",
])
def test_decorated_pastes(paste):
    diagnosis = explain_paste(paste)
    assert diagnosis.rule == RULE and diagnosis.facts["module"] == "basicsr"
    assert "`basicsr` is not installed" in diagnosis.summary


def test_python_m_with_the_module_itself_missing():
    diagnosis = explain_paste("/usr/bin/python3: No module named pip")
    assert diagnosis.rule == RULE and diagnosis.facts["interpreter_path"] == "/usr/bin/python3"
    assert any("/usr/bin/python3 -m ensurepip --upgrade" in fix for fix in diagnosis.fixes)


# --- controls --------------------------------------------------------------------------------------

@pytest.mark.parametrize("paste", [
    "ModuleNotFoundError: No module named 'tensorflow.contrib'",
    "ModuleNotFoundError: No module named 'tensorflow.keras.engine'",
    "    from keras.engine.base_layer import InputSpec\nModuleNotFoundError: No module named 'keras.engine.base_layer'",
    "ModuleNotFoundError: No module named 'jax.experimental.maps'",
    "ImportError: No module named '_pywrap_tensorflow_internal'",
    "ModuleNotFoundError: No module named 'jaxlib'",  # jax's own native half
    "ModuleNotFoundError: No module named 'paddle.fluid'",
])
def test_another_frameworks_own_modules_are_left_alone(paste):
    assert RULE not in rules_of(paste)


def test_a_plain_nameerror_is_not_claimed():
    assert RULE not in rules_of("NameError: name 'np' is not defined")


@pytest.mark.parametrize("paste, rule", [
    ("ModuleNotFoundError: No module named 'torch._C'", "other.no_module_torch_c"),
    ("ModuleNotFoundError: No module named 'mmcv._ext'", "other.extension_module_missing"),
    ("ModuleNotFoundError: No module named 'torch._six'", "other.removed_private_module"),
    ("ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'", "other.torchvision_module_version"),
])
def test_specific_rules_keep_their_messages(paste, rule):
    assert explain_paste(paste).rule == rule


def test_an_import_error_chained_to_a_specific_rules_error_is_shown_under_it():
    # torchaudio raises "TorchCodec is required" from the ModuleNotFoundError: one failure, led by the specific rule
    diagnoses = [d for d in rules_of(corpus_message("r16_b.yaml#37")) if d]
    assert diagnoses == ["other.torchcodec_load_failed"]
    lead = explain_paste(corpus_message("r16_b.yaml#37"))
    assert [part["rule"] for part in lead.facts.get("printed_with", [])] == [RULE]


def test_finding_a_top_level_package_imports_nothing(monkeypatch):
    # find_spec of a top-level name locates it without running its __init__ (a dotted name would import its parents)
    from explainer.probes.environment.imports import _top_level

    monkeypatch.syspath_prepend(str(REPO.parent))
    origin, folders = _top_level("module_missing_repo")
    assert Path(folders[0]) == REPO and "module_missing_repo" not in sys.modules
    assert _top_level("warpctc_pytorch") is None
