"""Round-42 wordings for other (builds, installs, deployment libraries and configs: illegal instructions on edge
boards, a missing OpenBLAS, ultralytics' export arguments, coremltools without its native libraries, an observer that
never saw data, a linker that skipped libtorch, torchtext's C++ library, OmegaConf's mandatory values, xFormers and
flash-attn, the web UI's --lowvram, VS Code's bare assert): each corpus message (verbatim from the opened rounds) is
claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same families
(from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r42_a.yaml#1", "other.native_illegal_instruction", ["torch 1.9.0", "on CPU", "Illegal instruction (core dumped)"]),
    ("r42_a.yaml#2", "other.native_illegal_instruction", ["illegal hardware instruction (core dumped)"]),
    ("r42_a.yaml#5", "other.shared_library_missing", ["`libopenblas.so.0`", "line 422", "OpenBLAS"]),
    ("r42_a.yaml#10", "other.ultralytics_export_arg_unsupported",
     ["`nms`", "format='onnx'", "`model.export(format=\"onnx\", simplify=True, nms=True)`", "8.3.67"]),
    ("r42_a.yaml#15", "other.coremltools_native_library_missing",
     ["coremltools 6.3.0", "'NoneType' object is not callable", "Windows"]),
    ("r42_a.yaml#16", "other.coremltools_native_library_missing",
     ["coremltools 7.0", "`coremltools.libmilstoragepython`", "`BlobWriter`"]),
    ("r42_a.yaml#17", "other.coremltools_native_library_missing",
     ["`coremltools.libmilstoragepython`", "torch 1.13.0", "Linux on ARM"]),
    ("r42_a.yaml#18", "other.coremltools_native_library_missing", ["`libmodelpackage`", "`.mlpackage`"]),
    ("r42_a.yaml#27", "other.quant_observer_not_run", ["observer.py:214", "`reduce_range`", "scale 1.0"]),
    ("r42_a.yaml#47", "other.linker_incompatible_libtorch",
     ["`x86_64-conda-linux-gnu`", "`cannot find -ltorch_cpu`", "built for aarch64"]),
    ("r42_b.yaml#9", "other.accelerate_required", ["0.26.0", "training_args.py:2192", "_setup_devices"]),
    ("r42_b.yaml#27", "other.undefined_symbol",
     ["`torchtext/_torchtext.so`", "`from torchtext import data`", 'File "4 - Convolutional Sentiment Analysis.py", line 30']),
    ("r42_b.yaml#29", "other.undefined_symbol", ["`libtorchtext.so`", "torchtext/_extension.py:58", "0.18"]),
    ("r42_b.yaml#38", "other.omegaconf_missing_mandatory_value",
     ["`bpe.sentencepiece_model`", "`--sentencepiece-model PATH`", "fairseq#2783"]),
    ("r42_c.yaml#17", "other.xformers_flash_attn_version",
     ["`diffusers.pipelines.pipeline_utils`", "`>=2.7.1,<=2.7.4`", "flash-attn 2.8.0.post2"]),
    ("r42_c.yaml#49", "other.webui_train_lowvram", ["`--lowvram`", "textual_inversion/ui.py:26", "`train_embedding`"]),
    ("r42_c.yaml#60", "other.vscode_assertion_no_description",
     ["`log_validation`", "train_control.py:122", "`image = pipeline(...)`", "`assert False`"]),
    ("r42_c.yaml#84", "other.xformers_build_mismatch", ["2.1.0+cu121", "2.1.0+cu118"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_accelerate_device_cpu_is_named_next_to_the_xformers_notice():
    # the same paste: accelerate's state after the notice says the run has no CUDA device (xformers#800)
    diagnosis = explain_paste(corpus_message("r42_c.yaml#84"))
    assert_names(diagnosis, "other.xformers_build_mismatch", ["`Device: cpu`", "torch.cuda.is_available()"],
                 " ".join(diagnosis.fixes))


@pytest.mark.parametrize("text, rule, values", [
    # another YOLO banner before the shell's report: an NGC container built for AVX on a Pentium Gold (yolov5#3241)
    ("YOLOv5 🚀 v5.0-91-g17b0f71 torch 1.9.0a0+df837d0 CUDA:0 (GeForce RTX 3060, 12045.375MB)\n\nFusing layers... \n"
     "Illegal instruction (core dumped)", "other.native_illegal_instruction", ["torch 1.9.0a0+df837d0", "AVX"]),
    # MegaDetector's own banner on an Odroid N2+ (agentmorris/MegaDetector#80)
    ('`# python3 detection/run_detector.py "md_v5a.0.0.pt" --image_file "horse.jpg" --threshold 0.1\n'
     "Running detector on 1 images...\nPyTorch reports 0 available CUDA devices\nGPU available: False\n"
     "Using PyTorch version 1.13.0\nFusing layers...\nIllegal instruction\n`", "other.native_illegal_instruction",
     ["torch 1.13.0", "(Illegal instruction)"]),
    # the same refusal in another thread (ultralytics#20039)
    ("AssertionError: ERROR ❌️ argument 'nms' is not supported for format='onnx'",
     "other.ultralytics_export_arg_unsupported", ["`nms`", "format='onnx'"]),
    # coremltools' own error line, the title of apple/coremltools#2361
    ("RuntimeError: BlobWriter not loaded", "other.coremltools_native_library_missing", ["`BlobWriter`"]),
    # the warning of torch 1.5's observer.py (pytorch#40278)
    ("/home/fabian/.local/lib/python3.7/site-packages/torch/quantization/observer.py:845: UserWarning: must run "
     "observer before calling calculate_qparams.                                    Returning default scale and zero "
     "point \n  Returning default scale and zero point \"", "other.quant_observer_not_run", ["scale 1.0", "calibration"]),
    # GNU ld's wording in a Docker build of tch-rs (LaurentMazare/tch-rs#464)
    ("#0 201.2   = note: /usr/bin/ld: skipping incompatible /usr/local/libtorch/lib/libtorch_cpu.so when searching for "
     "-ltorch_cpu\n"
     "#0 201.2           /usr/bin/ld: cannot find -ltorch_cpu\n"
     "#0 201.2           /usr/bin/ld: skipping incompatible /usr/local/libtorch/lib/libtorch_cpu.so when searching for "
     "-ltorch_cpu\n"
     "#0 201.2           /usr/bin/ld: skipping incompatible /usr/local/libtorch/lib/libtorch.so when searching for -ltorch\n"
     "#0 201.2           /usr/bin/ld: cannot find -ltorch\n"
     "#0 201.2           /usr/bin/ld: skipping incompatible /usr/local/libtorch/lib/libtorch.so when searching for -ltorch\n"
     "#0 201.2           /usr/bin/ld: skipping incompatible /usr/local/libtorch/lib/libc10.so when searching for -lc10\n"
     "#0 201.2           /usr/bin/ld: cannot find -lc10\n"
     "#0 201.2           /usr/bin/ld: skipping incompatible /usr/local/libtorch/lib/libc10.so when searching for -lc10\n"
     "#0 201.2           collect2: error: ld returned 1 exit status", "other.linker_incompatible_libtorch",
     ["`/usr/local/libtorch/lib/libtorch_cpu.so`", "`cannot find -ltorch_cpu`"]),
    # torchtext built from source against another torch, on Linux (pytorch/text#1928)
    ('Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
     '  File "~/.local/lib/python3.10/site-packages/torchtext/__init__.py", line 6, in <module>\n'
     '    from torchtext import _extension  # noqa: F401\n'
     '  File "~/.local/lib/python3.10/site-packages/torchtext/_extension.py", line 64, in <module>\n'
     '    _init_extension()\n'
     '  File "~/.local/lib/python3.10/site-packages/torchtext/_extension.py", line 58, in _init_extension\n'
     '    _load_lib("libtorchtext")\n'
     '  File "~/.local/lib/python3.10/site-packages/torchtext/_extension.py", line 50, in _load_lib\n'
     '    torch.ops.load_library(path)\n'
     '  File "~/.local/lib/python3.10/site-packages/torch/_ops.py", line 568, in load_library\n'
     '    ctypes.CDLL(path)\n'
     '  File "/usr/lib/python3.10/ctypes/__init__.py", line 374, in __init__\n'
     '    self._handle = _dlopen(self._name, mode)\n'
     'OSError: ~/.local/lib/python3.10/site-packages/torchtext/lib/libtorchtext.so: undefined symbol: '
     '_ZTVN5torch8autograd12AutogradMetaE', "other.undefined_symbol",
     ["`_ZTVN5torch8autograd12AutogradMetaE`", "torchtext/_extension.py:58"]),
    # the same bug with subword-nmt's codes (a comment in fairseq#2783) and older omegaconf's layout (fairseq#1417)
    ("`omegaconf.errors.MissingMandatoryValue: Missing mandatory value: bpe.bpe_codes`",
     "other.omegaconf_missing_mandatory_value", ["`bpe.bpe_codes`", "`--bpe-codes PATH`"]),
    ("MissingMandatoryValue: Missing mandatory value: sentencepiece_model\n\tfull_key: sentencepiece_model\n"
     "\treference_type=Optional[SentencepieceConfig]\n\tobject_type=SentencepieceConfig",
     "other.omegaconf_missing_mandatory_value", ["`sentencepiece_model`", "`SentencepieceConfig`"]),
    # fairseq-hydra-train's config without a model group (the title of fairseq#5073)
    ("omegaconf.errors.MissingMandatoryValue: Missing mandatory value: model full_key: model "
     "reference_type=Optional[FairseqConfig] object_type=FairseqConfig", "other.omegaconf_missing_mandatory_value",
     ["`model`", "`FairseqConfig`", "`--config-name`"]),
    # xformers itself (xformers#1267), diffusers' HunyuanVideo VAE (FramePack#707), the bare line (flash-attention#1828)
    ('>>> from xformers.ops import memory_efficient_attention_forward\n'
     'Traceback (most recent call last):\n'
     '  File "<stdin>", line 1, in <module>\n'
     '  File "/opt/conda/lib/python3.11/site-packages/xformers/ops/__init__.py", line 9, in <module>\n'
     '    from .fmha import (\n'
     '  File "/opt/conda/lib/python3.11/site-packages/xformers/ops/fmha/__init__.py", line 10, in <module>\n'
     '    from . import (\n'
     '  File "/opt/conda/lib/python3.11/site-packages/xformers/ops/fmha/flash.py", line 78, in <module>\n'
     '    raise ImportError(\n'
     'ImportError: Requires Flash-Attention version >=2.7.1,<=2.7.4 but got 2.8.0.post2.',
     "other.xformers_flash_attn_version", ["`>=2.7.1,<=2.7.4`", "flash-attn 2.8.0.post2"]),
    ("RuntimeError: Failed to import diffusers.models.autoencoders.autoencoder_kl_hunyuan_video because of the "
     "following error (look up to see its traceback):\nRequires Flash-Attention version >=2.7.1,<=2.8.0 but got 2.8.1.",
     "other.xformers_flash_attn_version",
     ["`diffusers.models.autoencoders.autoencoder_kl_hunyuan_video`", "`>=2.7.1,<=2.8.0`", "flash-attn 2.8.1"]),
    ("Requires Flash-Attention version >=2.7.1,<=2.8.2 but got 2.8.3.", "other.xformers_flash_attn_version",
     ["`>=2.7.1,<=2.8.2`", "flash-attn 2.8.3"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # numpy's own import on a Raspberry Pi, no torch frame (dasl-/pifi#42)
    ("`ImportError: libopenblas.so.0: cannot open shared object file: No such file or directory`",
     "other.shared_library_missing"),
    # coremltools on Linux without libcoremlpython, which only predictions need (apple/coremltools#2465)
    ("Failed to load _MLModelProxy: No module named 'coremltools.libcoremlpython'",
     "other.coremltools_native_library_missing"),
    # ultralytics' NMS pipeline refusing a names/classes mismatch (tucan9389/ObjectDetection-CoreML#11)
    ("CoreML: export failure ❌ 9.9s: 1 name found for nc=8395 CoreML model is not converted.",
     "other.coremltools_native_library_missing"),
    # the reduce_range notice alone, printed at prepare (pytorch#89619)
    ("/home/yangjie/miniconda3/envs/pytorch/lib/python3.6/site-packages/torch/ao/quantization/observer.py:174: "
     "UserWarning: Please use quant_min and quant_max to specify the range for observers.                     "
     "reduce_range will be deprecated in a future release of PyTorch.\n  reduce_range will be deprecated in a future "
     "release of PyTorch.\"", "other.quant_observer_not_run"),
    # a 32-bit libcuda skipped while Triton links (the title of pytorch#123159): not libtorch
    ("skipping incompatible /usr/lib/i386-linux-gnu/libcuda.so when searching for -lcuda",
     "other.linker_incompatible_libtorch"),
    # OmegaConf's other refusal, a key a structured config lacks (fairseq#3741)
    ("omegaconf.errors.ConfigKeyError: Key 'eval_wer' not in 'AudioPretrainingConfig'\n        full_key: eval_wer\n"
     "        reference_type=Optional[AudioPretrainingConfig]\n        object_type=AudioPretrainingConfig",
     "other.omegaconf_missing_mandatory_value"),
    # an assert with its message is not VS Code's bare one (Diffusion-ColabUI#66)
    ("AssertionError: Training models with lowvram not possible", "other.vscode_assertion_no_description"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
