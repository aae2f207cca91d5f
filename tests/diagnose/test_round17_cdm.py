"""Compile, device and memory rules from round 17: Thrust's out-of-memory in a CUDA extension (3D Gaussian Splatting's
distCUDA2, MinkowskiEngine), every tensor torch 1.x's checkAllSameGPU names, the argument types TorchScript's alias
analysis prints, the script's own device flag above an input/weight type error, torch.onnx.export's banner above a
TorchScript source error, an application's report of a cuDNN frontend error, and a cudagraph error whose message
carries its own stack trace. None of these can be raised by the CPU build of torch 2.13 (they need a GPU, CUDA
extensions or torch 1.x), so the messages are real ones, verbatim from the corpus or the cited threads."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message, explain_paste, ruled_diagnoses


@pytest.mark.parametrize("text, values", [
    # graphdeco-inria/gaussian-splatting#99: MSVC's std::bad_alloc text, raised by pybind11 as MemoryError
    (corpus_message("r17_a.yaml#58"),
     ["`bad allocation: cudaErrorMemoryAllocation: out of memory`", "`MemoryError`", "`distCUDA2`"]),
    # JonasSchult/Mask3D#58: libstdc++'s spelling
    ("MemoryError: std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
     ["`std::bad_alloc: cudaErrorMemoryAllocation: out of memory`", "`MemoryError`"]),
    # NVIDIA/cccl#2092: uncaught, with Thrust's versioned namespace
    ("terminate called after throwing an instance of 'thrust::THRUST_200400_860_NS::system::detail::bad_alloc'\n"
     "  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
     ["`thrust::THRUST_200400_860_NS::system::detail::bad_alloc`", "the process aborted"]),
    # NVIDIA/MinkowskiEngine#357: an algorithm's temporary storage (thrust::system::system_error)
    ("CUDA error 2 [/usr/local/cuda/include/thrust/system/cuda/detail/parallel_for.h, 143]: out of memory\n"
     "terminate called after throwing an instance of 'thrust::system::system_error'\n"
     "  what():  parallel_for failed: cudaErrorMemoryAllocation: out of memory",
     ["`parallel_for`", "`parallel_for failed: cudaErrorMemoryAllocation: out of memory`",
      "`thrust::system::system_error`"]),
])
def test_thrust_out_of_memory_names_its_spelling(text, values):
    assert_names(explain_paste(text), "memory.thrust_bad_alloc", values)


def test_the_gaussian_splatting_report_is_placed_at_the_distcuda2_line():
    diagnosis = ruled_diagnoses("r17_a.yaml#58")[0]
    assert (diagnosis.location.line, diagnosis.location.function) == (134, "create_from_pcd")
    assert "distCUDA2" in diagnosis.location.code


@pytest.mark.parametrize("text, rule", [
    # pytorch/torchdynamo#1150: a host allocation (pybind11's std::bad_alloc alone)
    ("MemoryError: std::bad_alloc", "memory.host_memory_error"),
    # bluer555/CR-GAN#8: the CUDA runtime's own out of memory
    ("RuntimeError: CUDA error: out of memory", "memory.cuda_error_oom"),
])
def test_other_out_of_memory_spellings_keep_their_rules(text, rule):
    assert explain_paste(text).rule == rule


@pytest.mark.parametrize("text, values", [
    # isl-org/Open3D-ML#584: two tensors named, both on the CPU
    (corpus_message("r17_a.yaml#40"),
     ["`addmm` ran on the GPU", "`out`, argument #1 `self` are on the CPU", "Linear layer's bias"]),
    # one tensor named (https://github.com/unit8co/darts/issues/492, verbatim)
    ("RuntimeError: Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking arguments "
     "for addmm)", ["argument #2 `mat1` of `addmm`, which is on CPU"]),
])
def test_check_all_same_gpu_names_every_tensor_it_lists(text, values):
    assert_names(explain_paste(text), "device.mismatch", values)


def test_alias_analysis_assert_names_the_argument_types():
    # alokprasad/fastspeech_squeezewave#3
    assert_names(explain_paste(corpus_message("r17_a.yaml#66")), "compile.jit_internal_assert",
                 ["`aten::to`", "(Tensor, None, int, Device, bool, bool, bool, int)", "alias_analysis.cpp:318"])


def test_the_scripts_device_flag_printed_above_a_type_error_is_named():
    # pytorch/examples#599: the argparse Namespace the script printed, then the error
    assert_names(explain_paste(corpus_message("r17_b.yaml#93")), "device.input_weight_type",
                 ["`cuda=False`", "torch.FloatTensor", "torch.cuda.FloatTensor", "restored on the device it was saved"])


def test_the_onnx_export_banner_above_a_source_error_names_the_exporter_and_version():
    # w-okada/voice-changer#354
    assert_names(explain_paste(corpus_message("r17_a.yaml#67")), "compile.torchscript_source_missing",
                 ["`fused_add_tanh_sigmoid_multiply`", "`torch.onnx.export` (torch 2.0.1+cu118"])


def test_an_applications_report_of_a_cudnn_frontend_error_is_named():
    # jax-explorer/ComfyUI-UNO#20
    assert_names(explain_paste(corpus_message("r16_b.yaml#29")), "device.cudnn_frontend_error",
                 ["'Error generating image with UNO'", "No execution plans support the graph"])


@pytest.mark.parametrize("text", [
    "RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support the graph",  # ostris/ai-toolkit#203
])
def test_an_exception_type_or_log_level_before_a_cudnn_frontend_error_is_not_taken_for_an_application(text):
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "device.cudnn_frontend_error"
    assert "caller_said" not in diagnosis.facts


def test_a_cudagraph_error_keeps_the_stack_trace_its_message_carries():
    # meta-pytorch/gpt-fast#232: "Stack trace:" ends the first line, and the frames under it are the message's
    diagnosis = explain_paste(corpus_message("r6_b.yaml#130"))
    assert_names(diagnosis, "compile.cudagraph_output_overwritten",
                 ["`multinomial_sample_one_no_sync`", "generate.py:42", "`torch.compiler.cudagraph_mark_step_begin()`"])
    assert "To prevent overwriting" in diagnosis.error
