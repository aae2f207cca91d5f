"""A name the imported release of a library lacks: `cannot import name 'X' from 'Y'` (other.import_name_missing) and
`module 'Y' has no attribute 'X'` (other.module_has_no_attribute), the generic rules under the library-specific ones.
Live, from real failing scripts: the installed release, a project file that hides the package, a module of the
project's own, a circular import's chain, the release the repository's requirements ask for. Pasted: the corpus's
messages name their values, and other frameworks' messages stay silent."""

from __future__ import annotations

import os
import sys
import traceback
from importlib import metadata

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste, raise_fixture

import explainer


def _explain_isolated(relative: str, *names: str):
    """The diagnosis of a fixture that puts a project folder on sys.path and imports modules from it: sys.path and
    the modules it imported are put back, so no later test imports the fixture's `markdown.py` or `clip.py`."""
    saved_path, saved = sys.path[:], {name: sys.modules.get(name) for name in names}
    try:
        return explainer.explain(raise_fixture(relative))
    finally:
        sys.path[:] = saved_path
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def test_a_name_the_installed_release_removed_names_the_release_and_the_line():
    diagnosis = explainer.explain(raise_fixture("fixtures/other/release_import_name.py"))
    assert_names(diagnosis, "other.import_name_missing", ["`soft_unicode`", "`markupsafe`", "MarkupSafe 2.1",
                                                          "`soft_str`", "site-packages/markupsafe/__init__.py"])
    assert diagnosis.facts["installed_dist"] == "MarkupSafe"
    assert diagnosis.facts["installed_version"] == metadata.version("MarkupSafe")
    assert diagnosis.location.line == 4 and diagnosis.location.file.endswith("release_import_name.py")
    assert any('markupsafe<2.1' in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_a_circular_import_names_the_chain_of_files():
    diagnosis = _explain_isolated("fixtures/other/release_circular_import.py", "detector", "detector.heads",
                                  "detector.config")
    assert_names(diagnosis, "other.import_name_missing", ["circular import", "`from detector import load_config`",
                                                          "detector/__init__.py:2", "detector/heads.py:1"])
    assert "shadow_file" not in diagnosis.facts and "local_file" not in diagnosis.facts
    assert diagnosis.location.file.endswith("heads.py") and diagnosis.location.line == 1


def test_a_circular_import_seen_as_an_attribute_lookup_names_the_module_file_and_the_chain():
    diagnosis = _explain_isolated("fixtures/other/release_circular_attribute.py", "reporting", "reporting.writer")
    assert_names(diagnosis, "other.module_has_no_attribute",
                 ["`reporting.DEFAULT_FORMAT`", "circular import", "reporting/__init__.py:2", "reporting/writer.py:3",
                  os.path.join("release_circular", "reporting", "__init__.py")])
    assert diagnosis.location.file.endswith("writer.py") and diagnosis.location.line == 3


def test_a_project_file_that_hides_an_installed_package_is_named_with_the_hidden_release():
    diagnosis = _explain_isolated("fixtures/other/release_shadowed_package.py", "markdown")
    shadow = os.path.join("release_local", "markdown.py")
    assert_names(diagnosis, "other.module_has_no_attribute",
                 [shadow, f"Markdown {metadata.version('Markdown')} is installed, and hidden", "no `markdown`"])
    assert diagnosis.facts["shadow_file"].endswith(shadow)
    assert any(f"Rename {diagnosis.facts['shadow_file']}" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_a_project_module_no_distribution_provides_is_named_as_the_projects_own():
    diagnosis = _explain_isolated("fixtures/other/release_shadowed_module.py", "clip")
    assert_names(diagnosis, "other.module_has_no_attribute",
                 [os.path.join("release_local", "clip.py"), "no installed distribution provides `clip`", "no `load`"])
    assert "shadow_file" not in diagnosis.facts
    assert diagnosis.location.line == 13


def test_numpy_aliases_name_the_removal_the_builtin_and_the_installed_numpy():
    diagnosis = explainer.explain(raise_fixture("fixtures/other/release_numpy_alias.py"))
    assert_names(diagnosis, "other.module_has_no_attribute",
                 ["`np.float`", "NumPy 1.24", "builtin `float`", "`np.float64`",
                  f"NumPy {metadata.version('numpy')} is installed"])
    assert "importer_release" not in diagnosis.facts  # numpy's own __getattr__ raised: no other library involved
    assert diagnosis.location.line == 8


def test_numpy_2_removals_repeat_numpys_advice():
    diagnosis = explainer.explain(raise_fixture("fixtures/other/release_numpy_removed.py"))
    assert_names(diagnosis, "other.module_has_no_attribute", ["`np.NaN`", "NumPy 2.0", "Use `np.nan` instead.",
                                                              f"NumPy {metadata.version('numpy')} is installed"])


def test_the_release_the_repository_requirements_ask_for_is_named(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=2.0\nMarkupSafe==2.0.1  # jinja2 2.11 needs it\n")
    script = tmp_path / "render.py"
    script.write_text("from markupsafe import soft_unicode\n")
    diagnosis = explainer.explain(raise_fixture(str(script)))
    assert diagnosis.facts["required_spec"] == "MarkupSafe==2.0.1"
    assert diagnosis.facts["requirements_file"] == str(tmp_path / "requirements.txt")


def test_a_module_whose_path_is_an_egg_names_the_release_from_the_path(tmp_path):
    # a package installed as an egg folder (setup.py install's layout), imported live: Python's own message names it
    package = tmp_path / "tokenizers-0.8.1-py3.8-linux-x86_64.egg" / "tokenizers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    script = tmp_path / "load.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(package.parent)!r})\nfrom tokenizers import Tokenizer\n")
    saved_path, saved = sys.path[:], sys.modules.pop("tokenizers", None)
    try:
        error = raise_fixture(str(script))
    finally:
        sys.path[:] = saved_path
        sys.modules.pop("tokenizers", None)
        if saved is not None:
            sys.modules["tokenizers"] = saved
    text = "".join(traceback.format_exception_only(error))
    assert "tokenizers-0.8.1-py3.8-linux-x86_64.egg/tokenizers/__init__.py" in text
    assert_names(explain_paste(text), "other.import_name_missing", ["`Tokenizer`", "tokenizers 0.8.1"])


CORPUS = [
    ("r24_a.yaml#72", "other.import_name_missing", ["`make_functional`", "`opacus.grad_sample.functorch`"]),
    ("r24_a.yaml#65", "other.import_name_missing", ["`launch_server_cmd`", "`sglang.utils`"]),
    ("r24_a.yaml#75", "other.import_name_missing", ["`parse_eval_args`", "`lm_eval.__main__`"]),
    ("r24_a.yaml#3", "other.import_name_missing", ["`amp`", "`apex`", "torch.amp"]),
    ("r24_a.yaml#93", "other.import_name_missing", ["`Annotated`", "pydantic 2", "pydantic 2.0b2"]),
    ("r24_a.yaml#39", "other.import_name_missing", ["`PPO1`", "`stable_baselines`", "`mpi4py`"]),
    ("r24_b.yaml#19", "other.import_name_missing", ["`bench`", "`baselines`"]),
    ("r10_b.yaml#58", "other.import_name_missing", ["`ContextBlock`", "`mmcv.ops`"]),
    ("dist2.yaml#98", "other.import_name_missing", ["`get_accelerator`", "`deepspeed`"]),
    ("r24_a.yaml#9", "other.module_has_no_attribute", ["`clip.load`", "a local `clip.py`"]),
    ("r24_a.yaml#44", "other.module_has_no_attribute", ["`transformers.utils.logging.get_logger`"]),
    ("r24_a.yaml#84", "other.module_has_no_attribute", ["`albumentations.augmentations.transforms.RandomRotate90`"]),
    ("r24_a.yaml#85", "other.module_has_no_attribute", ["`albumentations.ReplayCompose`"]),
    ("r24_b.yaml#39", "other.module_has_no_attribute", ["`nvdiffrast.torch.RasterizeCudaContext`"]),
    ("r23_a.yaml#21", "other.module_has_no_attribute", ["`comfy.latent_formats.HunyuanVideo`"]),
    ("r24_b.yaml#33", "other.module_has_no_attribute", ["`MultiScaleDeformableAttention.ms_deform_attn_forward`"]),
    ("r24_b.yaml#34", "other.module_has_no_attribute", ["`MultiScaleDeformableAttention` is a class here",
                                                        "`ms_deform_attn_forward`"]),
    ("r24_a.yaml#101", "other.module_has_no_attribute", ["`tensorflow._api.v1.io.gfile`", "`get_filesystem`",
                                                         "torch.utils.tensorboard.SummaryWriter"]),
    ("r15_b.yaml#69", "other.module_has_no_attribute", ["`np.float`", "NumPy 1.20", "NumPy 1.24", "`np.float64`"]),
    ("r19_a.yaml#52", "other.module_has_no_attribute", ["`np.float`", "NumPy 1.20"]),
    ("r17_b.yaml#14", "other.module_has_no_attribute", ["`scipy.misc.imread`", "SciPy 1.2"]),
    ("r10_b.yaml#71", "other.module_has_no_attribute", ["`faster_whisper.BatchedInferencePipeline`"]),
    ("r20_b.yaml#20", "other.module_has_no_attribute", ["`bert.run_classifier`", "index 17264"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


PASTED = [
    # Python 3.10 removed collections' ABC aliases (old code on a new Python)
    ("ImportError: cannot import name 'Mapping' from 'collections' (/usr/lib/python3.10/collections/__init__.py)",
     "other.import_name_missing", ["`Mapping`", "Python 3.10", "`collections.abc`"]),
    # a folder named like the package: Python's "(unknown location)"
    ("ImportError: cannot import name 'AutoModel' from 'peft' (unknown location)", "other.import_name_missing",
     ["`peft`", "without `__init__.py`", "`AutoModel`"]),
    # Python 3.8+'s circular-import wording of the attribute lookup
    ("AttributeError: partially initialized module 'yaml' has no attribute 'safe_load' (most likely due to a circular "
     "import)", "other.module_has_no_attribute", ["`yaml.safe_load`", "circular import", "`yaml.py`"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[p[1] + str(i) for i, p in enumerate(PASTED)])
def test_pasted_wordings_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


# Another framework's own modules are not a PyTorch program's environment: neither rule answers.
OTHER_FRAMEWORKS = [
    "ImportError: cannot import name 'pywrap_tensorflow' from 'tensorflow.python' (/opt/miniconda3/lib/python3.7/"
    "site-packages/tensorflow/python/__init__.py)",
    "AttributeError: module 'jaxlib.xla_client' has no attribute 'generate_pjrt_gpu_plugin_options'",
    "ImportError: cannot import name 'GluonEstimator' from 'gluonts.model.estimator' (/opt/conda/lib/python3.7/"
    "site-packages/gluonts/model/estimator.py)`",
    "AttributeError: module 'keras.layers' has no attribute 'LayerNormalization'",
    "AttributeError: module 'paddle.fluid' has no attribute 'EndStepEvent'",
    "ImportError: cannot import name 'nd' from 'mxnet' (unknown location)",
]


@pytest.mark.parametrize("text", OTHER_FRAMEWORKS, ids=range(len(OTHER_FRAMEWORKS)))
def test_other_frameworks_names_stay_silent(text):
    assert_left_alone(text, "other.import_name_missing")
    assert_left_alone(text, "other.module_has_no_attribute")


@pytest.mark.parametrize("text", [
    # torch._C and torch.distributed lack names by how torch was built (CPU-only, without distributed), not by release
    "AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'",
    "AttributeError: module 'torch.distributed' has no attribute 'init_process_group'",
    # Python <= 3.6's bare wording with no `from Y import X` above it does not say which module lacked the name
    "ImportError: cannot import name 'Optional'",
], ids=range(3))
def test_builds_and_unnamed_modules_are_not_read_as_releases(text):
    assert_left_alone(text, "other.import_name_missing")
    assert_left_alone(text, "other.module_has_no_attribute")


def test_specific_rules_keep_their_messages():
    # torch's own names, torchvision's InterpolationMode, transformers' and a compiled extension's stay theirs
    owned = {
        "AttributeError: module 'torch' has no attribute 'compiler'": "other.torch_attribute_missing",
        "ImportError: cannot import name 'InterpolationMode' from 'torchvision.transforms'": "other.torchvision_api_too_new",
        "ImportError: cannot import name 'top_k_top_p_filtering' from 'transformers' (/usr/local/lib/python3.10/"
        "dist-packages/transformers/__init__.py)": "other.transformers_import_mismatch",
        "ImportError: cannot import name '_C' from partially initialized module 'diff_gaussian_rasterization' (most "
        "likely due to a circular import)": "other.extension_module_missing",
        "ImportError: cannot import name 'PILLOW_VERSION' from 'PIL'": "other.pillow_version_removed",
    }
    for text, rule in owned.items():
        assert explain_paste(text).rule == rule, text
