"""compile rules written from round 10's misses and from wording families found beyond the corpus:
real torch calls where torch 2.x on CPU raises the error, and the wordings copied from public
threads (older torch, Intel XPU Triton, GPU-only Inductor and Triton failures) where it cannot."""

from __future__ import annotations

import io
from typing import Callable

import torch

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said


def _live(call) -> str:
    """The message a real torch call on this build raises, as a traceback's last line prints it."""
    exc = raised(call)
    return f"{type(exc).__name__}: {exc}"


def _scripted_callable_annotation(x: Callable[[int], int]) -> int:
    return 1


# --- raised by real torch calls --------------------------------------------------------------------

def test_fake_tensor_data_pointer_read_is_a_kernel_traced_into():
    diagnosis = explain_fixture("fixtures/compile/fake_tensor_data_access.py")
    assert_names(diagnosis, "compile.fake_tensor_data_access",
                 ["Cannot access data pointer of Tensor (e.g. FakeTensor, FunctionalTensor)", "custom"])
    assert any("register_fake" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_custom_op_with_a_wrong_fake_layout_names_op_dims_and_strides():
    diagnosis = explain_fixture("fixtures/compile/inductor_size_stride.py")
    assert_names(diagnosis, "compile.inductor_size_stride",
                 ["torch.ops.mylib.transposed_copy.default", "expected size 4==4, stride 1==3 at dim=0",
                  "the stride 1 where 3 was planned", "only the strides differ"])
    assert any("opcheck" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_torchscript_global_list_is_a_value_it_cannot_use():
    diagnosis = explain_fixture("fixtures/compile/torchscript_unresolved_name.py")
    assert_names(diagnosis, "compile.torchscript_unresolved_name",
                 ["`list`", "return x * THRESHOLD[0]", "closed-over"])


# --- round 10's messages, as pasted ----------------------------------------------------------------

def test_onnx_broadcast_of_the_old_exporter_is_an_expand_node():
    diagnosis = explain_paste("RuntimeError: ONNX export failed: Could not export a broadcasted operation; "
                              "ONNX likely does not support this form of broadcasting.")
    assert_names(diagnosis, "compile.onnx_legacy_node", ["`expand`", "Expand op (opset 8)"])
    assert any("opset_version=9" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_onnx_unpaired_pack_padded_sequence_is_a_legacy_node():
    # https://github.com/pytorch/translate/issues/61 (the traceback's last line, verbatim; no real paste with the
    # "Usage of this operation occurred at:" frame was found, so the frame is no longer checked)
    diagnosis = explain_paste("RuntimeError: ONNX export failed: Cannot export individual pack_padded_sequence "
                              "or pad_packed_sequence; these operations must occur in pairs.")
    assert_names(diagnosis, "compile.onnx_legacy_node", ["pack_padded_sequence"])


def test_xpu_triton_module_without_kernels_names_num_warps_and_the_level_zero_code():
    diagnosis = explain_paste("> ```\n> Module doesn't contain any kernels. Please attempt to tune the 'num_warps' "
                              "parameter.\n> Error during Intel loadBinary: ZE_RESULT_ERROR_INVALID_KERNEL_NAME\n> ```")
    assert_names(diagnosis, "compile.triton_xpu_load_binary", ["'num_warps'", "ZE_RESULT_ERROR_INVALID_KERNEL_NAME"])


def test_xpu_inductor_error_names_load_binary():
    diagnosis = explain_paste(
        # excerpt of https://github.com/pytorch/pytorch/pull/169167 (fixtures/real/r10_b.yaml#51)
        '  File "/workspace/triton/python/triton/backends/intel/driver.py", line 217, in load_binary\n'
        "    return self.shared_library.load_binary(args)\n"
        "torch._inductor.exc.InductorError: RuntimeError: ZE_RESULT_ERROR_INVALID_KERNEL_NAME ")
    assert_names(diagnosis, "compile.triton_xpu_load_binary", ["ZE_RESULT_ERROR_INVALID_KERNEL_NAME", "kernel name"])


def test_dynamo_explain_break_reasons_name_both_skipped_functions():
    # https://github.com/NVIDIA/TransformerEngine/issues/705
    diagnosis = explain_paste(corpus_message("r10_b.yaml#69"))
    assert_names(diagnosis, "compile.graph_break", ["`Linear.forward`", "LayerNormMLP.forward"])
    assert any("dont_skip_tracing" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_torchdynamo_2022_reasons_list_names_the_guard():
    diagnosis = explain_paste(
        "[2022-10-14 15:59:22,874] torchdynamo.convert_frame: [WARNING] torchdynamo hit config.cache_size_limit (64)\n"
        "   function: 'forward' (/usr/local/lib/python3.9/dist-packages/torchvision/models/resnet.py:284)\n"
        "   reasons:  [\"tensor 'x' strides mismatch at index 0. expected 562500, actual 2447991\"]")
    assert_names(diagnosis, "compile.recompile_limit", ["`forward`", "expected 562500, actual 2447991", "64"])


def test_recompile_reason_logged_by_another_rank_before_the_limit_line():
    # https://github.com/pytorch/pytorch/issues/139474
    diagnosis = explain_paste(corpus_message("r9_b.yaml#88"))
    assert_names(diagnosis, "compile.recompile_limit", ["`forward`", "expected 1696, actual 1248"])


def test_user_triton_kernel_compile_error_in_a_glog_prefixed_log():
    # https://github.com/pytorch/pytorch/issues/170049
    diagnosis = explain_paste(corpus_message("r10_b.yaml#49"))
    assert_names(diagnosis, "compile.triton_compilation_error",
                 ["`_kernel`", "Function argument index out of range", "identify_mutated_tensors"])


def test_triton_capability_message_cut_before_the_capability_still_names_gpu():
    # excerpt of https://github.com/2noise/ChatTTS/issues/235 (fixtures/real/r10_b.yaml#35)
    diagnosis = explain_paste("RuntimeError: Found NVIDIA GeForce GTX TITAN X which is too old to be supported by "
                              "the triton GPU compiler, which is used as the backend. Triton only supports devices "
                              "of CUDA Capability >= 7.0, but your device is of CUDA capability ")
    assert_names(diagnosis, "compile.triton_capability", ["NVIDIA GeForce GTX TITAN X", "7.0"])


# --- wording families beyond the corpus ------------------------------------------------------------

def test_fake_tensor_data_read_inside_dynamo_report_names_the_call():
    # https://github.com/tenstorrent/tt-forge-models/pull/216 (runbooks/compile/fake_tensor_data_access.md's example)
    diagnosis = explain_paste(
        "`torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node with fake tensors: call_method "
        "new_tensor(*(FakeTensor(..., size=(10000, 1, 256)), [FakeTensor(..., size=(1,), dtype=torch.float64), "
        "FakeTensor(..., size=(1,), dtype=torch.float64)]), **{}): got RuntimeError(\"The tensor has a non-zero "
        "number of elements, but its data is not allocated yet.\\nIf you're using torch.compile/export/fx, it is "
        "likely that we are erroneously tracing into a custom kernel. To fix this, please wrap the custom kernel into "
        "an opaque custom op. Please see the following for details: "
        "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html\\nIf you're using Caffe2, Caffe2 uses a "
        "lazy allocation, so you will need to call mutable_data() or raw_mutable_data() to actually allocate "
        "memory.\")`")
    assert_names(diagnosis, "compile.fake_tensor_data_access", ["`new_tensor`", "not allocated yet"])
    assert any("torch.stack" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_old_storage_wording_without_fake_tensors_is_not_a_fake_tensor_read():
    # no real paste of the old wording under a fake-tensor report was found; the bare wording, as pasted:
    # https://github.com/pytorch/functorch/issues/382 and https://github.com/wlsdml1114/Infinitetalk_Runpod_hub/issues/15
    for where in ("r19_b.yaml#22", "r25_a.yaml#34"):
        bare = [d for d in explain_stream(io.StringIO(corpus_message(where))) if d.rule]
        assert not bare or bare[0].rule != "compile.fake_tensor_data_access", (where, bare[0].rule)


def test_old_assert_size_stride_without_op_names_dim_and_strides():
    diagnosis = explain_paste("    assert_size_stride(buf4, (16, 64, 128, 128), (1048576, 1, 8192, 64))\n"
                              "AssertionError: expected size 64==64, stride 16384==1 at dim=1")
    assert_names(diagnosis, "compile.inductor_size_stride", ["at dim 1", "stride 16384 where 1 was planned"])


def test_torchscript_undefined_value_names_the_name_and_line():
    diagnosis = explain_paste("RuntimeError:\nundefined value foo:\ndef bar(x):\n    return foo(x)\n"
                              "           ~~~ <--- HERE")
    assert_names(diagnosis, "compile.torchscript_unresolved_name", ["`foo`", "`return foo(x)`"])


def test_torchscript_unknown_type_constructor_is_an_unsupported_typing_construct():
    diagnosis = explain_paste(_live(lambda: torch.jit.script(_scripted_callable_annotation)))
    assert_names(diagnosis, "compile.torchscript_unresolved_name", ["`Callable`", "typing construct"])
    assert "List" in said(diagnosis)


def test_max_autotune_without_aten_on_cpu_has_no_kernel_to_choose():
    diagnosis = explain_fixture("fixtures/compile/inductor_no_valid_choices.py")
    assert_names(diagnosis, "compile.inductor_no_valid_choices",
                 ["`aten.mm.default`", "`max_autotune_gemm_backends`", "No choices exist for backend."])
    assert any("ATEN,TRITON" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_flex_attention_without_choices_is_not_an_aten_problem():
    diagnosis = explain_paste("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                              "LoweringException: NoValidChoicesError: No choices to select, please consider adding "
                              "ATEN into max_autotune_gemm_backends config (defined in torch/_inductor/config.py) to "
                              "allow at least one choice.\n  target: flex_attention")
    assert_names(diagnosis, "compile.inductor_no_valid_choices", ["`flex_attention`", "no ATen fallback"])
    assert any("kernel_options" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_ptxas_bf16_feature_on_an_old_gpu_names_instruction_and_arch():
    # https://github.com/hiyouga/LlamaFactory/issues/7417 (runbooks/compile/triton_ptxas_feature.md's example)
    diagnosis = explain_paste("ptxas /tmp/tmpmfrp_3wp.ptx, line 277; error   : Feature 'cvt.bf16.f32' requires "
                              ".target sm_80 or higher")
    assert_names(diagnosis, "compile.triton_ptxas_feature", ["`cvt.bf16.f32`", "sm_80", "bfloat16"])
    assert any("float16" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_exported_program_called_with_another_batch_size_names_input_dim_and_size():
    diagnosis = explain_fixture("fixtures/compile/export_input_mismatch.py")
    assert_names(diagnosis, "compile.export_input_mismatch", ["`x`", "dimension 0", "not 8"])
    assert any('dynamic_shapes={"x": {0: torch.export.Dim.DYNAMIC}}' in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_exported_program_input_check_of_torch_2_3_names_expected_and_got():
    diagnosis = explain_paste("RuntimeError: Expected input at *args[0].shape[0] to be equal to 2, but got 4")
    assert_names(diagnosis, "compile.export_input_mismatch", ["`*args[0]`", "is 4", "exported with 2"])


class _AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


def test_exported_program_called_with_other_arguments_names_both_tree_specs():
    program = torch.export.export(_AddOne(), (torch.ones(2),))
    diagnosis = explain_paste(_live(lambda: program.module()(torch.ones(2), torch.ones(2))))
    assert_names(diagnosis, "compile.export_input_mismatch", ["another structure", "[*,     *]"])


def test_missing_python_h_under_aot_compile_names_the_aotinductor_api():
    diagnosis = explain_paste(
        "W1010 15:36:44.314000 6252 .venv/lib/python3.11/site-packages/torch/_export/__init__.py:228] "
        "torch._export.aot_compile() is being deprecated, please switch to directly calling "
        "torch._inductor.aoti_compile_and_package(torch.export.export()) instead.\n"
        "/tmp/tmpie2hawx7/main.c:5:10: fatal error: Python.h: No such file or directory\n"
        "    5 | #include <Python.h>\n      |          ^~~~~~~~~~\ncompilation terminated.")
    assert_names(diagnosis, "compile.triton_launcher_build", ["`Python.h`", "aot_compile"])
