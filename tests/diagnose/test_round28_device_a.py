"""Round-28 device wordings of macOS, Windows/WSL and CPU-only users (MPS's and MPSGraph's assertions, MPS's
macOS checks and CPU fallbacks, 3D convolutions on MPS, cudaGetDeviceCount failing under WSL, a program that falls
back to the CPU without a driver): each corpus message (verbatim from the opened rounds) is claimed, from its text
alone, by the right rule with the values it holds named; other wordings of the same families (from the threads
cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r28_a.yaml#20", "device.mps_not_implemented", ["Conv3D", "MPS"]),
    ("r28_a.yaml#21", "device.mps_ndarray_assertion", ["2**32", "MPSNDArray initWithDevice:descriptor:"]),
    ("r28_a.yaml#61", "device.mps_ndarray_assertion",
     ["MPSNDArray.mm:724", "2**32", "MPSTemporaryNDArray initWithDevice:descriptor:"]),
    ("r28_a.yaml#62", "device.mps_ndarray_assertion", ["INT_MAX", "nodes.py"]),
    ("r28_a.yaml#80", "device.mps_ndarray_assertion",
     ["sliceDimension:withSubrange:", "dimension[2] (2)", "MPSNDArray.mm:88"]),
    ("r28_a.yaml#81", "device.mps_ndarray_assertion",
     ["expected 1", "tensorData with 3", "dimIdx = 2", "MPSGraph.mm:673"]),
    ("r28_a.yaml#33", "device.no_cuda_device", ["NVIDIA driver", "cuda=False"]),
    ("r28_a.yaml#35", "device.cuda_device_count_error", ["cudaGetDeviceCount()", "Error 2", "CUDAFunctions.cpp:109"]),
    ("r28_a.yaml#36", "device.cuda_device_count_error", ["cudaGetDeviceCount()", "Error 2", "CUDAFunctions.cpp:109"]),
    ("r28_a.yaml#49", "device.cpu_fallback_warning", ["aten::nonzero", "MPSFallback.mm:11"]),
    ("r28_a.yaml#51", "device.mps_unavailable", ["nonzero", "macOS 13.0", "Indexing.mm:335"]),
    ("r28_a.yaml#65", "device.backend_not_available", ["aten::_slow_conv2d_forward", "SparseCPU"]),
    ("r28_a.yaml#73", "device.mps_unavailable", ["macOS 14.0+"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # torch 2.1's Conv3D check (the title of https://github.com/kreshuklab/panseg/issues/385)
    ("RuntimeError: Conv3D is not supported on MPS", "device.mps_not_implemented", ["Conv3D"]),
    # the same cudaGetDeviceCount failure raised, and another code (NVIDIA MPS daemon, ApeRAG#120)
    ("Traceback (most recent call last):\nRuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some "
     "cuda functions before calling NumCudaDevices() that might have already set an error? Error 2: out of memory",
     "device.cuda_device_count_error", ["Error 2", "out of memory", "WSL2"]),
    ("/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:107: UserWarning: CUDA initialization: Unexpected "
     "error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have "
     "already set an error? Error 805: MPS client failed to connect to the MPS control daemon or the MPS server "
     "(Triggered internally at /opt/conda/conda-bld/pytorch_1682343967769/work/c10/cuda/CUDAFunctions.cpp:109.)",
     "device.cuda_device_count_error", ["Error 805", "Multi-Process Service", "CUDAFunctions.cpp:109"]),
    # the older spelling of the macOS check
    ("RuntimeError: The MPS backend is supported on MacOS 12.3+.\nCurrent OS version can be queried using `sw_vers`.",
     "device.mps_unavailable", ["MacOS 12.3+"]),
    # the 2**31 limit quoted without file and line
    ("[MPSNDArray initWithDevice:descriptor:] Error: product of dimension sizes > 2**31", "device.mps_ndarray_assertion",
     ["product of dimension sizes > 2**31"]),
])
def test_other_wordings_are_claimed(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_codes_other_rules_name_stay_theirs():
    # https://github.com/PKU-YuanGroup/Video-LLaVA/issues/22 (device/cuda_runtime_error's example)
    assert claimed_by("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
                      "calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility "
                      "was attempted on non supported HW")[:1] == ["device.cuda_runtime_error"]
    # https://github.com/shariqfarooq123/AdaBins/issues/79
    assert claimed_by("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
                      "calling NumCudaDevices() that might have already set an error? Error 101: invalid device "
                      "ordinal")[:1] == ["device.invalid_ordinal"]


@pytest.mark.parametrize("text", [
    # a CUDA sample's own check of the same call (https://github.com/microsoft/WSL/issues/7852)
    "./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
    "cudaGetDeviceCount returned 2\n-> out of memory\nResult = FAIL",
    # the backends list inside a full dispatcher message of a quantized op stays the quantized rule's (optimum#24)
    corpus_message("r6_b.yaml#110"),
    # another "X is not supported on MPS" wording (a dtype's, textgen#5216) is not the 3D-convolution check
    corpus_message("r18_b.yaml#61"),
    # a program's own flag print without the driver warning (an excerpt: one line of r28_a.yaml#33)
    "# using device=0 with cuda=False",
])
def test_near_misses_stay_unclaimed_by_these_rules(text):
    mine = {"device.cuda_device_count_error", "device.backend_not_available", "device.mps_not_implemented",
            "device.no_cuda_device"}
    assert not set(claimed_by(text)) & mine
