"""Round 17 `other` rules (first half): libraries built on torch that refuse their input or their install.
Lightning's Trainer given a model of the other Lightning package,
Stable-Baselines3's action-space check and its unreadable saved schedules, DGL's TensorAdapter and fbgemm_gpu's
operator library, Open3D without PyTorch ops, Gaussian Splatting's unbuilt CUDA modules, pip's failed builds of
torch extensions, pyannote.audio's API generations and its unset pipeline, huggingface_hub's cached_download,
Hydra's private API under NeMo, and libsndfile. Messages verbatim from the corpus and the threads cited; none of
these libraries is installed here, so no live fixture raises them."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message as corpus, explain_paste, rules_of

CORPUS = [
    ("r17_a.yaml#16", "other.lightning_not_lightningmodule",
     ["`TemporalFusionTransformer`", "`lightning.pytorch`", "pytorch-forecasting"]),
    ("r17_a.yaml#31", "other.sb3_action_space_unsupported", ["`Discrete(2)`", "gymnasium"]),
    ("r17_a.yaml#32", "other.sb3_action_space_unsupported", ["`Box(-1.0, 1.0, (29,), float32)`", "`gym.spaces`"]),
    ("r17_a.yaml#2", "other.sb3_schedule_not_deserialized", ["`learning_rate`", "unpickle"]),
    ("r17_a.yaml#25", "other.dgl_tensoradapter_missing",
     ["`libtensoradapter_pytorch_1.10.2.so`", "torch 1.10.2", "tensordispatch.cc:43"]),
    ("r17_a.yaml#22", "other.ops_load_library_failed", ["`fbgemm_gpu_py.so`", "torchrec"]),
    ("r17_a.yaml#23", "other.torch_op_not_registered",
     ["`torch.ops.fbgemm.jagged_2d_to_dense`", "`fbgemm_gpu_py.so`", "`_ZNK5torch8autograd4Node4nameEv`"]),
    ("r17_a.yaml#27", "other.undefined_symbol", ["`kaolin-0.2.0`", "`_ZN2at19UndefinedTensorImpl10_singletonE`"]),
    ("r17_a.yaml#37", "other.open3d_ml_torch_unavailable", ["without PyTorch support", "Linux x86-64"]),
    ("r17_a.yaml#49", "other.extension_module_missing", ["`diff_gaussian_rasterization`", "`submodules/`"]),
    ("r17_a.yaml#12", "other.extension_wheel_build_failed", ["`tinycudann`", "`TCNN_CUDA_ARCHITECTURES`"]),
    ("r17_a.yaml#13", "other.extension_wheel_build_failed", ["`tinycudann`", "exit code: 1", "51 lines of output"]),
    ("r17_a.yaml#42", "other.pyannote_version_mismatch", ["`pyannote.audio.Pipeline`", "1.x"]),
    ("r17_a.yaml#44", "other.pyannote_version_mismatch", ["`SpeakerSegmentation`", "3.0"]),
    ("r17_a.yaml#43", "other.pyannote_pipeline_not_instantiated", ["`pipeline.instantiate(parameters)`"]),
    ("r17_a.yaml#46", "other.hf_hub_cached_download", ["1 positional argument", "2 were given", "speechbrain"]),
    ("r17_a.yaml#5", "other.hydra_private_api_mismatch", ["'args'", "hydra-core"]),
    ("r17_a.yaml#45", "other.libsndfile_missing", ["libsndfile", "soundfile"]),
    ("r17_a.yaml#38", "other.torchmdnet_version_mismatch", ["`torchmdnet.priors.__all__`", "`scripts/`"]),
    ("r17_a.yaml#39", "other.torchmdnet_version_mismatch", ["`torchmd_gn`", "`graph-network`"]),
    ("r17_a.yaml#26", "other.deepchem_torch_models_missing", ["`deepchem.models.TorchModel`", "DeepChem 2.4"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # https://github.com/zzr-idam/UVM-Net/issues/11: Lightning 2.0's wording without torch.compile's class
    ("  File \"/usr/local/lib/python3.9/dist-packages/lightning/pytorch/utilities/compile.py\", line 123, in "
     "_maybe_unwrap_optimized\n    raise TypeError(f\"`model` must be a `LightningModule`, got "
     "`{type(model).__qualname__}`\")\nTypeError: `model` must be a `LightningModule`, got `UNet`",
     "other.lightning_not_lightningmodule", ["`UNet`", "plain `nn.Module`"]),
    # https://github.com/Lightning-AI/pytorch-lightning/issues/13355: Lightning 1.6's strategy unwrapping
    ("TypeError: Unwrapping the module did not yield a `LightningModule`", "other.lightning_not_lightningmodule",
     ["plain `nn.Module`"]),
    # https://github.com/DLR-RM/stable-baselines3/issues/1714: SAC (Box only) with gym's Box under SB3 2.x
    ("AssertionError: The algorithm only supports (<class 'gymnasium.spaces.box.Box'>,) as action spaces but "
     "Box(-1.0, 1.0, (4,), float32) was provided", "other.sb3_action_space_unsupported",
     ["`gym.spaces` vs `gymnasium.spaces`"]),
    # https://github.com/DLR-RM/stable-baselines3/issues/1586: markdown ate the class names
    ("AssertionError: The algorithm only supports (, , ) as action spaces but Discrete(7) was provided",
     "other.sb3_action_space_unsupported", ["`Discrete(7)`", "lost the names"]),
    # https://github.com/sunnyswag/StockRL/issues/2: the warnings name what could not be read, PPO names clip_range
    ("/home/xxx/.local/lib/python3.8/site-packages/stable_baselines3/common/save_util.py:166: UserWarning: Could not "
     "deserialize object clip_range. Consider using `custom_objects` argument to replace this object.\n"
     "  warnings.warn(\nTraceback (most recent call last):\n"
     "  File \"/home/xxx/.local/lib/python3.8/site-packages/stable_baselines3/common/base_class.py\", line 687, in "
     "load\n    model._setup_model()\n"
     "  File \"/home/xxx/.local/lib/python3.8/site-packages/stable_baselines3/ppo/ppo.py\", line 158, in "
     "_setup_model\n    self.clip_range = get_schedule_fn(self.clip_range)\n"
     "  File \"/home/xxx/.local/lib/python3.8/site-packages/stable_baselines3/common/utils.py\", line 88, in "
     "get_schedule_fn\n    assert callable(value_schedule)\nAssertionError",
     "other.sb3_schedule_not_deserialized", ["`clip_range`", "Could not deserialize object clip_range"]),
    # https://github.com/HannesStark/EquiBind/issues/12: the adapter is there, torch's CUDA library is not
    ("/opt/dgl/src/runtime/tensordispatch.cc:43: TensorDispatcher: dlopen failed: libtorch_cuda.so: cannot open "
     "shared object file: No such file or directory", "other.dgl_tensoradapter_missing",
     ["`libtorch_cuda.so`", "CPU-only torch"]),
    # https://github.com/isl-org/Open3D-ML/issues/635
    ("Exception: Version mismatch: Open3D needs PyTorch version 1.8.*, but version 2.0.1+cpu is installed!",
     "other.open3d_ml_torch_unavailable", ["torch 1.8.*", "torch 2.0.1+cpu"]),
    # https://github.com/isl-org/Open3D-ML/issues/139 ... and its torch side; pyannote's 1.x API
    ("ImportError: cannot import name 'Pretrained' from 'pyannote.audio.features' (/usr/local/Caskroom/miniconda/"
     "base/envs/Pyannote/lib/python3.8/site-packages/pyannote/audio/features/__init__.py)",
     "other.pyannote_version_mismatch", ["`pyannote.audio.features.Pretrained`", "1.x"]),
    # https://github.com/pyannote/pyannote-audio/issues/1496: pyannote 3.x's wording (its typo included)
    ("RuntimeError: A pipeline must be instantiated with `pipeline.instantiate(paramaters)` before it can be applied. "
     "Tried to use parameters provided by `pipeline.default_parameters()` but those are not compatible.",
     "other.pyannote_pipeline_not_instantiated", ["`pipeline.default_parameters()`"]),
    # https://github.com/NVIDIA-NeMo/Speech/issues/3915: the older mismatch
    ("TypeError: _run_hydra() got an unexpected keyword argument 'strict'", "other.hydra_private_api_mismatch",
     ["`strict`", "hydra-core 1.1"]),
    # https://github.com/Tencent-Hunyuan/HunyuanVideo-Avatar/issues/21
    ("OSError: cannot load library 'libsndfile.so': libsndfile.so: cannot open shared object file: No such file or "
     "directory", "other.libsndfile_missing", ["`libsndfile.so`"]),
    # https://github.com/meta-pytorch/torchrec/issues/557
    (">>> import torchrec\nFile fbgemm_gpu_py.so not found", "other.ops_load_library_failed", ["`fbgemm_gpu_py.so`"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[p[1] + str(i) for i, p in enumerate(PASTED)])
def test_pasted_wordings_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


NEW = {"other.lightning_not_lightningmodule", "other.torchmdnet_version_mismatch",
       "other.deepchem_torch_models_missing", "other.sb3_action_space_unsupported",
       "other.sb3_schedule_not_deserialized", "other.dgl_tensoradapter_missing", "other.open3d_ml_torch_unavailable",
       "other.extension_wheel_build_failed", "other.pyannote_version_mismatch",
       "other.pyannote_pipeline_not_instantiated", "other.hf_hub_cached_download", "other.hydra_private_api_mismatch",
       "other.libsndfile_missing"}


@pytest.mark.parametrize("where", [
    "r7_a.yaml#55",    # a SyntaxError in pyannote's hubconf: a control
    "r17_a.yaml#30",   # GluonTS's MXNet estimator import: a control
])
def test_negative_controls_stay_unclaimed(where):
    assert not any(rules_of(corpus(where))), rules_of(corpus(where))


@pytest.mark.parametrize("where", ["r10_b.yaml#58", "dist2.yaml#98"])  # mmcv.ops' ContextBlock, deepspeed's get_accelerator
def test_imports_between_libraries_get_only_the_generic_release_rule(where):
    # controls until round 24's reading made Python's import errors `other`: no specific rule claims them
    assert rules_of(corpus(where)) == ["other.import_name_missing"], rules_of(corpus(where))


@pytest.mark.parametrize("text", [
    # Open3D's TensorFlow side (https://github.com/isl-org/Open3D-ML/issues/139)
    "Exception: Open3D was not built with TensorFlow support!",
    # pip's failed build of a package that is not a torch extension (https://github.com/abetlen/llama-cpp-python/issues/789)
    "ERROR: Could not build wheels for llama-cpp-python, which is required to install pyproject.toml-based projects",
    # a dependency's API change met while importing pyannote (https://github.com/pyannote/pyannote-audio/issues/1101)
    "ImportError: cannot import name 'VersionInfo' from 'semver'",
    # Hydra's own report on the user's class (https://github.com/xuchen-ethz/snarf/issues/5)
    "TypeError: Error instantiating 'lib.dataset.cape.CAPEDataProcessor' : __init__() missing 2 required positional "
    "arguments: 'opt'",
    # PettingZoo's wrapper assertion, in the same sumo-rl thread as SB3's (https://github.com/LucasAlegre/sumo-rl/issues/128)
    "AssertionError: should only use AssertOutOfBoundsWrapper for Discrete spaces",
    # DeepChem's TensorFlow model renamed in 2.1 (https://github.com/deepchem/deepchem/issues/1336)
    "AttributeError: module 'deepchem.models' has no attribute 'MultiTaskRegressor'",
    # TorchMD-Net's own bug in a model's __repr__ (https://github.com/torchmd/torchmd-net/issues/23)
    "AttributeError: 'TorchMD_GN' object has no attribute 'derivative'",
    # huggingface_hub 0.26's removal met at a library's import: left alone, as test_round10_other.py has it
    # (https://github.com/kijai/ComfyUI-FluxTrainer/issues/178)
    "Cannot import C:\\CondaUI\\custom_nodes\\comfyui-fluxtrainer module for custom nodes: cannot import name "
    "'cached_download' from 'huggingface_hub' (C:\\Conda\\.conda_envs\\comfyui\\Lib\\site-packages\\huggingface_hub"
    "\\__init__.py)",
    # huggingface_hub's deprecation warning (https://github.com/huggingface/hub-docs/pull/701)
    "file_download.py:629: FutureWarning: `cached_download` is the legacy way to download files from the HF hub, "
    "please consider upgrading to `hf_hub_download`",
])
def test_near_misses_are_not_claimed_by_the_new_rules(text):
    assert not set(rules_of(text)) & NEW, (text, rules_of(text))


def test_colab_library_frame_links_are_read_as_frames():
    """r17_a#16: Colab links every frame's file to localhost; the library frame under the cell is the raising one."""
    diagnosis = explain_paste(corpus("r17_a.yaml#16"))
    assert diagnosis.location is not None and diagnosis.location.code == "trainer.fit(", diagnosis.location
    assert diagnosis.facts["raised_in"]["file"].endswith("pytorch_lightning/utilities/compile.py")
    assert diagnosis.facts["raised_in"]["function"] == "_maybe_unwrap_optimized"
