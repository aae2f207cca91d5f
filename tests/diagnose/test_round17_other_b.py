"""Round-17 'other' rules, second list: C++/CUDA extension builds (nvcc's unknown architecture, torch's removed AT_CHECK
and THC, MSVC's refusal after torch's compiler check, the host compiler nvcc rejects) and the negative controls that
another framework's build or loader printed in the same words (TensorFlow's custom ops, Lua Torch's cunn, MATLAB's
mex), against verbatim messages of the opened corpus."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_paste

CASES = [
    ("r17_b.yaml#20", "other.extension_build_failed", ["detector/nms/src/nms_cuda.cpp:4:23", "`AT_CHECK`", "TORCH_CHECK"]),
    ("r17_b.yaml#21", "other.extension_build_failed", ["src/iou_cuda.cpp:4:23", "`AT_CHECK`"]),
    ("r17_b.yaml#101", "other.extension_build_failed", ["src/ball_query.cpp:10:23", "`AT_CHECK`"]),
    ("r17_b.yaml#10", "other.extension_build_failed", ["nms.cu(5)", "`THC/THC.h`", "1.11", "v11.3"]),
    ("r17_b.yaml#19", "other.extension_build_failed", ["`compute_86`", "CUDA 11.1"]),
    ("r16_b.yaml#58", "other.extension_build_failed",
     ["`compute_61`", "THC_generated_THCSleep.cu.o.cmake:207", "Building PyTorch from source"]),
    ("r17_b.yaml#43", "other.nvcc_unsupported_host_compiler",
     ["gcc versions later than 6", "`cuda-9.0`", "`host_config.h:119:2`", "`gpu_nms`"]),
    ("r17_b.yaml#25", "other.extension_toolchain_missing", ["`model._C`", "Microsoft Visual C++ 14.0 is required", "`cl`"]),
    ("r17_b.yaml#26", "other.extension_toolchain_missing", ["`linear_cpp`", "14.0 or greater"]),
    ("r17_b.yaml#42", "other.extension_cuda_version_mismatch", ["`torch-scatter`", "CUDA 10.1", "CUDA 12.1"]),
    ("r17_b.yaml#90", "other.trainer_argument_removed", ["`Trainer.__init__()`", "`gpus`"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CASES, ids=[c[0] for c in CASES])
def test_extension_build_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


# another framework's text in PyTorch's words: no PyTorch rule answers it

CONTROLS = [
    "r17_b.yaml#5",   # TensorFlow's tf.load_op_library: a symbol of TensorFlow's namespace
    "r17_b.yaml#8",   # Lua Torch's cunn built by Gentoo: THCUNN.h includes cutorch's THC/THC.h
    "r17_b.yaml#44",  # MATLAB's mex ran nvcc ("Building with 'nvcc'.")
    "r17_b.yaml#27",  # a Cython extension's setuptools build: MSVC 14.0 required, no torch compiler check
    "r17_b.yaml#18",  # darknet's Makefile: nvcc's unknown architecture with no ninja or torch build
]


@pytest.mark.parametrize("where", CONTROLS)
def test_other_frameworks_builds_are_left_to_them(where):
    diagnoses = list(explain_stream(io.StringIO(corpus_message(where))))
    assert [d.rule for d in diagnoses if d.rule is not None] == [], [d.summary for d in diagnoses]


def test_tensorflow_custom_op_is_said_to_be_tensorflows():
    diagnoses = list(explain_stream(io.StringIO(corpus_message("r17_b.yaml#5"))))
    assert any("TensorFlow custom op" in d.summary and "_ZN10tensorflow10DEVICE_CPUE" in d.summary for d in diagnoses)


def test_lua_torch_cunn_build_is_said_to_be_torch7s():
    diagnoses = list(explain_stream(io.StringIO(corpus_message("r17_b.yaml#8"))))
    assert any("Lua Torch" in d.summary for d in diagnoses), [d.summary for d in diagnoses]


def test_a_torch_extension_symbol_is_still_torchs():
    text = "ImportError: /usr/local/lib/python3.7/dist-packages/pytorch3d/_C.cpython-37m-x86_64-linux-gnu.so: undefined symbol: _ZNK2at6Tensor7is_cudaEv"
    assert_names(explain_paste(text), "other.undefined_symbol", ["`_ZNK2at6Tensor7is_cudaEv`"])
