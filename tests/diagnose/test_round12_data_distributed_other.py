"""Round 12 data, distributed and other rules: the round's misses and the wording families around them. Real
torch calls where CPU torch raises the error (a strided RNG state, a truncated checkpoint in torch.hub's cache,
a quantized accessor on a float tensor); elsewhere the messages as pasted in their threads (extension
CHECK_CONTIGUOUS asserts, PyPI's placeholder `pytorch` package, a torch._C of another release, PyG extensions
built for another torch, glibc's heap checks, FSDP's internal asserts, Lua Torch's luajit)."""

from __future__ import annotations

import io
import warnings

import pytest
import torch

from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import explain_text

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised


def _live(call) -> str:
    """The message a real torch call on this build raises, as a traceback's last line prints it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.nested's prototype warning
        exc = raised(call)
    return f"{type(exc).__name__}: {exc}"


# --- raised by real torch calls --------------------------------------------------------------------

def test_rng_state_from_a_strided_view_names_the_argument_and_the_copy():
    d = explain_fixture("fixtures/other/input_not_contiguous.py")
    assert_names(d, "other.input_not_contiguous", ["`RNG state` must be contiguous", "torch.set_rng_state"])
    assert any(".contiguous()" in fix for fix in d.fixes), d.fixes
    assert d.location is not None and d.location.line == 6, d.location


def test_truncated_file_in_the_hub_cache_names_the_cached_file_and_its_size():
    d = explain_fixture("fixtures/data/hub_checkpoint_corrupt.py")
    assert_names(d, "data.hub_checkpoint_corrupt",
                 ["torch.hub.load_state_dict_from_url", "explainer-fixture-hub", "resnet18-f37072fd.pth", "2.0 KB",
                  "failed finding central directory"])
    assert any(fix.startswith("Delete the cached file") and "rm " in fix for fix in d.fixes), d.fixes


def test_the_same_truncated_checkpoint_opened_directly_stays_a_plain_corrupt_checkpoint(tmp_path):
    import explainer

    saved = io.BytesIO()
    torch.save({"w": torch.zeros(1000)}, saved)
    path = tmp_path / "model.pth"
    path.write_bytes(saved.getvalue()[:2000])
    d = explainer.explain(raised(lambda: torch.load(path)))
    assert d.rule == "data.checkpoint_corrupt", (d.rule, d.summary)


def test_int_repr_of_a_float_tensor_names_the_accessor_and_the_quantized_backend():
    d = explain_fixture("fixtures/other/quantized_accessor_float.py")
    assert_names(d, "other.quantized_backend_mismatch", ["`Tensor.int_repr()`", "'CPU' backend", "QuantizedCPU"])
    assert any("is_quantized" in fix for fix in d.fixes), d.fixes
    assert not any("FloatFunctional" in fix for fix in d.fixes), d.fixes


def test_q_scale_of_a_float_tensor_from_a_live_call():
    import explainer

    d = explainer.explain(raised(lambda: torch.randn(3).q_scale()))
    assert_names(d, "other.quantized_backend_mismatch", ["`Tensor.q_scale()`", "aten::q_scale"])


# --- round 12's misses and their families, as pasted ------------------------------------------------

PASTED = [
    # other.input_not_contiguous: an extension's CHECK_CONTIGUOUS, its AT_ASSERTM form, torch 0.4's own check
    # an excerpt, verbatim, of runbooks/other/input_not_contiguous.md example #2
    # (https://github.com/ClementPinard/FlowNetPytorch/issues/116)
    ("RuntimeError: input1 must be contiguous", "other.input_not_contiguous", ["`input1` must be contiguous"]),
    ("> RuntimeError: input.is_contiguous() INTERNAL ASSERT FAILED at \"shift_cuda.cpp\":21, please report a bug to "
     "PyTorch. input must be contiguous", "other.input_not_contiguous",
     ["`input.is_contiguous()`", "shift_cuda.cpp:21", "not a PyTorch bug"]),
    ("RuntimeError: Expected contiguous tensor, but got non-contiguous tensor for argument #1 'input' (while checking "
     "arguments for cudnn_batch_norm)", "other.input_not_contiguous", ["`cudnn_batch_norm`", "#1 'input'"]),
    # other.pypi_placeholder_package
    # an excerpt, verbatim, of the corpus entry r12_a.yaml#77 (https://github.com/pytorch/pytorch/issues/707)
    ("Collecting pytorch\n  Using cached pytorch-0.1.tar.gz\n    Complete output from command python setup.py egg_info:\n"
     "    Traceback (most recent call last):\n      File \"<string>\", line 1, in <module>\n      File \"/private/var/"
     "folders/d8/8mxqq9894596k_kkx5n4vrjw0000gn/T/pip-build-h08vn10j/pytorch/setup.py\", line 12, in <module>\n"
     "        from tools.setup_helpers.env import check_env_flag\n    ImportError: No module named 'tools.setup_helpers'",
     "other.pypi_placeholder_package", ["`pytorch-0.1.tar.gz`", "`tools.setup_helpers`", "`torch`"]),
    ("  Exception: You tried to install \"pytorch\". The package named for PyTorch is \"torch\"",
     "other.pypi_placeholder_package", ["`pip install pytorch`", "named `torch`"]),
    ("        from tools.nnwrap import generate_wrappers as generate_nn_wrappers\n"
     "    ModuleNotFoundError: No module named 'tools.nnwrap'", "other.pypi_placeholder_package",
     ["`tools.nnwrap`", "32-bit"]),
    # other.torch_install_mixed
    ("  File \"/home/lcc/anaconda2/lib/python2.7/site-packages/torch/__init__.py\", line 158, in <module>\n"
     "    class DoubleTensor(_C.DoubleTensorBase, _TensorBase):\nAttributeError: 'module' object has no attribute "
     "'DoubleTensorBase'", "other.torch_install_mixed", ["`torch._C.DoubleTensorBase`", "Python 2", "different releases"]),
    # an excerpt, verbatim, of runbooks/other/torch_install_mixed.md example #2
    # (https://github.com/pytorch/pytorch/issues/8088)
    ("AttributeError: module 'torch._C' has no attribute '_TensorBase'", "other.torch_install_mixed",
     ["`torch._C._TensorBase`"]),
    # other.pyg_extension_torch_version, other.domain_library_cuda_mismatch (torchvision 0.16+: "CUDA major versions")
    ("RuntimeError: Expected PyTorch version 1.4 but found version 1.7.", "other.pyg_extension_torch_version",
     ["PyTorch 1.4", "torch is 1.7", "torch_scatter"]),
    ("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch "
     "has CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your "
     "PyTorch install.", "other.domain_library_cuda_mismatch", ["CUDA 12.1", "torchvision with CUDA 11.8"]),
    # other.native_heap_corruption: glibc's check with the shell's report, and old glibc's "*** Error in `python'"
    # an excerpt, verbatim, of the corpus entry r12_b.yaml#18 (https://github.com/pytorch/pytorch/issues/5876)
    ("$ python3 x.py \n0.3.1\nfree(): invalid pointer\nfish: “python3 x.py” terminated by signal SIGABRT (Abort)",
     "other.native_heap_corruption", ["`free(): invalid pointer`", "SIGABRT", "import order"]),
    ("*** Error in `/usr/bin/python2.7': free(): invalid pointer: 0x00007f801fcdbb80 ***",
     "other.native_heap_corruption", ["`/usr/bin/python2.7`", "`free(): invalid pointer`"]),
    # distributed.fsdp_internal_assert
    ("AssertionError: Expects tensor to be on the compute device cuda:1", "distributed.fsdp_internal_assert",
     ["compute device (cuda:1)", "device_id"]),
    # verbatim from https://github.com/verl-project/verl/pull/4799 (runbooks/distributed/fsdp_internal_assert.md)
    ("  (WorkerDict pid=42417, ip=[fdbd:dccd:cdd2:2207::30f])   File \"/usr/local/lib/python3.12/dist-packages/torch/"
     "distributed/fsdp/_flat_param.py\", line 2582, in _check_on_compute_device\n"
     "  (WorkerDict pid=42417, ip=[fdbd:dccd:cdd2:2207::30f])     _p_assert(\n"
     "  (WorkerDict pid=42417, ip=[fdbd:dccd:cdd2:2207::30f])   File \"/usr/local/lib/python3.12/dist-packages/torch/"
     "distributed/utils.py\", line 159, in _p_assert\n"
     "  (WorkerDict pid=42417, ip=[fdbd:dccd:cdd2:2207::30f])     raise AssertionError(s)\n"
     "  (WorkerDict pid=42417, ip=[fdbd:dccd:cdd2:2207::30f]) AssertionError: Expects tensor to be on the compute "
     "device cuda:0, was on cpu",
     "distributed.fsdp_internal_assert", ["compute device (cuda:0)", "it was on cpu"]),
    # data.checkpoint_corrupt: torch 0.3-0.4's EOF without a byte count
    ("    deserialized_objects[key]._set_from_file(f, offset)\nRuntimeError: unexpected EOF. The file might be corrupted",
     "data.checkpoint_corrupt", ["unexpected EOF. The file might be corrupted", "truncated"]),
    # other.extension_build_failed: quotes curled and the colon lost by the paste
    ("error command “/usr/bin/nvcc” failed with exit status1", "other.extension_build_failed",
     ["`nvcc` (/usr/bin/nvcc)", "exit status 1"]),
    # other.torch_attribute_missing: Python 2's unnamed module, for a name only torch has
    ("File \"submission.py\", line 79, in test with torch.no_grad():   AttributeError: 'module' object has no "
     "attribute 'no_grad'", "other.torch_attribute_missing", ["`torch.no_grad`", "Python 2", "torch 0.4"]),
]


@pytest.mark.parametrize(("message", "rule", "values"), PASTED, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(PASTED)])
def test_pasted_messages_name_their_values(message, rule, values):
    assert_names(explain_paste(message), rule, values)


def test_fsdp_printed_assertion_names_the_check_that_failed():
    # FSDP's _p_assert printed a stack and its message, no exception line (https://github.com/huggingface/accelerate/issues/2301)
    assert_names(explain_paste(corpus("r12_b.yaml#20")), "distributed.fsdp_internal_assert",
                 ["`_check_storage_allocated`", "Expects storage to be allocated", "freed where it should have been"])


def test_hub_frames_turn_a_truncated_legacy_checkpoint_into_the_hub_reading():
    text = ("  File \"/training/nong/app/miniconda3/envs/efficient-evolution/lib/python3.9/site-packages/torch/hub.py\", "
            "line 731, in load_state_dict_from_url\n    return torch.load(cached_file, map_location=map_location)\n"
            "  File \"/training/nong/app/miniconda3/envs/efficient-evolution/lib/python3.9/site-packages/torch/"
            "serialization.py\", line 713, in load\n    return _legacy_load(opened_file, map_location, pickle_module, "
            "**pickle_load_args)\n  File \"/training/nong/app/miniconda3/envs/efficient-evolution/lib/python3.9/"
            "site-packages/torch/serialization.py\", line 938, in _legacy_load\n    typed_storage._storage._set_from_file(\n"
            "RuntimeError: unexpected EOF, expected 1056959984 more bytes. The file might be corrupted.")
    d = explain_paste(text)
    assert_names(d, "data.hub_checkpoint_corrupt", ["`torch.hub.load_state_dict_from_url`", "1056959984 bytes short",
                                                    "~/.cache/torch/hub/checkpoints/"])


def test_q_scale_paste_names_op_backend_and_quantized_backend():
    d = explain_paste(corpus("r12_b.yaml#30"))
    assert_names(d, "other.quantized_backend_mismatch", ["aten::q_scale", "'CPU' backend", "QuantizedCPU"])


def test_weights_only_refusal_names_the_unpickling_error_and_the_comfyui_node():
    d = explain_paste(corpus("r12_b.yaml#70"))
    assert_names(d, "data.weights_only_load", ["_pickle.UnpicklingError", "weights_only=True"])
    assert d.facts.get("comfyui_node") == "Stage2_load", d.facts


def test_bitsandbytes_setup_failure_in_a_rich_traceback_box():
    # rich's box keeps the message in its code panel; the last line is a bare "RuntimeError:"
    d = explain_paste(corpus("r4_b.yaml#64"))
    assert d.rule == "other.bnb_cuda_setup_failed", (d.rule, d.summary)
    assert "bitsandbytes/cextension.py" in d.location.file, d.location


def test_luajit_stack_traceback_is_lua_torch_not_pytorch():
    diagnoses = list(explain_stream(io.StringIO(corpus("r12_a.yaml#99"))))
    assert diagnoses and all(d.rule is None for d in diagnoses), [(d.rule, d.title) for d in diagnoses]
    assert "Lua Torch" in diagnoses[0].title, diagnoses[0].title


# --- near misses ----------------------------------------------------------------------------------

NEAR_MISSES = [
    ("RuntimeError: Tensors must be contiguous", "other.input_not_contiguous"),
    # raised live: a unary op on a transposed (non-contiguous) nested tensor
    (_live(lambda: torch.nested.nested_tensor([torch.zeros(2, 3), torch.zeros(4, 3)]).transpose(1, 2).relu()),
     "other.input_not_contiguous"),
    ("ModuleNotFoundError: No module named 'tools'", "other.pypi_placeholder_package"),
    ("ERROR: Could not find a version that satisfies the requirement torch==2.1.0 (from versions: none)\n"
     "ERROR: No matching distribution found for torch==2.1.0", "other.pypi_placeholder_package"),
    ("AttributeError: module 'torch' has no attribute '_TensorBase'", "other.torch_install_mixed"),
    ("AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'", "other.torch_install_mixed"),
    ("*** Error in `./main': free(): invalid pointer: 0x00007ff95efac970 ***", "other.native_heap_corruption"),
    ("ValueError: Inconsistent compute device and `device_id` on rank 0: cuda:1 vs cuda:0",
     "distributed.fsdp_internal_assert"),
]


@pytest.mark.parametrize(("message", "rule"), NEAR_MISSES, ids=[f"{r}-{i}" for i, (_, r) in enumerate(NEAR_MISSES)])
def test_near_misses_are_not_claimed(message, rule):
    assert explain_text(message).rule != rule, message
