"""Round-25 wordings for compile, device and memory (hosted and notebook runs: Hugging Face ZeroGPU Spaces, Colab TPU
runtimes, RunPod jobs, ComfyUI nodes, CI logs): each corpus message (verbatim from the opened rounds) is claimed, from its
text alone, by the right rule with the values it holds named; other wordings of the same families (from the threads
cited) are claimed too, and near misses stay unclaimed. Live calls raise the errors this CPU torch can."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste, raised


CORPUS_CASES = [
    ("r25_a.yaml#6", "device.zerogpu_cuda_init", ["Stateless GPU", "main process", "@spaces.GPU"]),
    ("r25_a.yaml#7", "device.zerogpu_cuda_init", ["`spaces`", "import spaces"]),
    ("r25_a.yaml#46", "device.zerogpu_worker_error", ["raised RuntimeError", "ZeroGPU worker error"]),
    ("r25_a.yaml#17", "device.libcuda_not_found", ["`libcuda.so.1`"]),
    ("r25_a.yaml#34", "device.tensor_no_storage", ["throw_data_ptr_access_error", "TensorImpl.cpp:307"]),
    ("r25_a.yaml#37", "device.expected_cuda_device", ["got:cuda", "`cuda:0`"]),
    ("r25_a.yaml#55", "other.bnb_cuda_setup_failed", ["CUDA detection failed", "CUDA_VERSION=122", "libbitsandbytes_cuda122"]),
    ("r25_a.yaml#58", "device.xla_not_configured", ["Missing XLA configuration", "computation_client.cc:234"]),
    ("r25_a.yaml#59", "device.xla_session_not_found", ["Session f0da3fedf34cc9e1 is not found"]),
    ("r25_b.yaml#39", "device.mps_not_implemented", ["`torchmdnet::warp_neighbor_brute_fwd`", "`torchmdnet` extension"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the title of the Speech-AI-Forge thread (lenML/Speech-AI-Forge#143)
    ("RuntimeError: CUDA must not be initialized in the main process on Spaces with Stateless GPU environment.",
     "device.zerogpu_cuda_init", ["Stateless GPU"]),
    # the worker error alone (PolyU-ChenLab/UniPixel#14) and with its class on the same line (Make-It-Animatable#12's title)
    ("ZeroGPU worker error", "device.zerogpu_worker_error", ["ZeroGPU worker error", "container logs"]),
    ("ZeroGPU worker error RuntimeError", "device.zerogpu_worker_error", ["raised RuntimeError"]),
    # torch_xla 1.12's capitalised status (pytorch/xla#1470) and XRT's other computation_client line (T2Net#2)
    ("RuntimeError: ABORTED: Session 31d27b8915fc71f2 is not found.", "device.xla_session_not_found",
     ["ABORTED", "31d27b8915fc71f2"]),
    ("RuntimeError: tensorflow/compiler/xla/xla_client/computation_client.cc:274 : Missing XLA configuration",
     "device.xla_not_configured", ["computation_client.cc:274", "XRT_TPU_CONFIG"]),
    # PJRT's wording when the device named has no plugin (unslothai/unsloth#2006, litert-torch#326)
    ("2025-03-13 15:47:31.039 EET\n*** End stack trace ***\n2025-03-13 15:47:31.039 EET\nUnknown PJRT_DEVICE 'CUDA'",
     "device.xla_not_configured", ["PJRT_DEVICE=CUDA"]),
    # verbatim from https://github.com/google-ai-edge/litert-torch/issues/326 (rule device.xla_not_configured's example)
    ("RuntimeError: torch_xla/csrc/runtime/pjrt_registry.cc:214 : Check failed: client \n*** Begin stack trace ***\n"
     "        tsl::CurrentStackTrace()\n        torch_xla::runtime::InitializePjRt(std::string const&)\n"
     "*** End stack trace ***\nUnknown PJRT_DEVICE 'CUDA'",
     "device.xla_not_configured", ["PJRT_DEVICE=CUDA"]),
    # ComfyUI's wording of the unindexed device (billwuhao/ComfyUI_StepAudioTTS#25)
    ("!!! Exception during processing !!! Expected a torch.device with a specified index or an integer, but got:cuda",
     "device.expected_cuda_device", ["got:cuda", "`cuda:0`"]),
    # a TensorRT binding importing without the driver (shouxieai/tensorRT_Pro#191)
    ('  File "/home/test/xyx/tensorRT_Pro/example-python/pytrt/__init__.py", line 335, in <module>\n'
     "    from .libpytrtc import *\nImportError: libcuda.so.1: cannot open shared object file: No such file or directory",
     "device.libcuda_not_found", ["`libcuda.so.1`"]),
    # bitsandbytes 0.41's box with the version in the make line (bitsandbytes#676) and 0.35's one-line wording (#917)
    # verbatim from https://github.com/bitsandbytes-foundation/bitsandbytes/issues/676 (rule bnb_cuda_setup_failed's example)
    ("CUDA SETUP: CUDA detection failed! Possible reasons:\n1. You need to manually override the PyTorch CUDA version. "
     "Please see: \"https://github.com/TimDettmers/bitsandbytes/blob/main/how_to_use_nonpytorch_cuda.md\n"
     "2. CUDA driver not installed\n3. CUDA not installed\n4. You have multiple conflicting CUDA libraries\n"
     "5. Required library not pre-compiled for this bitsandbytes release!\n"
     "================================================================================\n\n"
     "CUDA SETUP: Something unexpected happened. Please compile from source:\ngit clone https://github.com/TimDettmers/"
     "bitsandbytes.git\ncd bitsandbytes\nCUDA_VERSION=116 make cuda11x\npython setup.py install\nCUDA SETUP: Setup Failed!",
     "other.bnb_cuda_setup_failed", ["CUDA_VERSION=116"]),
    ("CUDA SETUP: CUDA detection failed. Either CUDA driver not installed, CUDA not installed, or you have multiple "
     "conflicting CUDA libraries!", "other.bnb_cuda_setup_failed", ["CUDA detection failed"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # torch's own fork check is not a Space's
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the "
     "'spawn' start method", "device.zerogpu_cuda_init"),
    # the bare storage message (functorch#382) is a torch.func wrapper's as often as a device's: unclaimed by the device rule
    (corpus_message("r19_b.yaml#22"), "device.tensor_no_storage"),
    # TensorFlow's import of the driver library (cvat-ai/cvat#406) and llama_cpp_cuda's ctypes loader (textgen#6632)
    ('Traceback (most recent call last):\n'
     '  File "/usr/local/lib/python3.5/dist-packages/tensorflow/python/pywrap_tensorflow.py", line 58, in <module>\n'
     "    from tensorflow.python.pywrap_tensorflow_internal import *\nImportError: libcuda.so.1: cannot open shared object "
     "file: No such file or directory", "device.libcuda_not_found"),
    ("OSError: libcuda.so.1: cannot open shared object file: No such file or directory", "device.libcuda_not_found"),
    # XRT's device-map check stays device.xla_check_failed's
    ("RuntimeError: tensorflow/compiler/xla/xla_client/xrt_computation_client.cc:258 : Check failed: "
     "default_device_target != options_.global_device_map.end() \n*** Begin stack trace ***", "device.xla_not_configured"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_a_functorch_traceback_stays_with_the_transform_rule():
    # the functorch frames make it autograd.func_transform_no_storage's (higher priority than the device rule)
    from test_round19_agnds import FUNCTORCH_TRACEBACK

    assert explain_paste(FUNCTORCH_TRACEBACK).rule == "autograd.func_transform_no_storage"


def test_live_sparse_data_ptr_is_explained():
    diagnosis = explain_fixture("fixtures/device/tensor_no_storage.py")
    assert_names(diagnosis, "device.tensor_no_storage", ["`values.data_ptr()` asked for", "sparse tensor"])


def test_live_unindexed_device_is_explained():
    import explainer
    from torch.nn.parallel import comm

    exc = raised(lambda: comm.broadcast(torch.ones(2), devices=["cuda"]))
    assert_names(explainer.explain(exc), "device.expected_cuda_device", ["got:cuda", "`cuda:0`"])
