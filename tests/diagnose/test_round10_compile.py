"""compile rules written from round 10's misses and from wording families found beyond the corpus:
real torch calls where torch 2.x on CPU raises the error, and the wordings copied from public
threads (older torch, Intel XPU Triton, GPU-only Inductor and Triton failures) where it cannot."""

from __future__ import annotations

from conftest import assert_names, explain_fixture, explain_paste, said


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


def test_onnx_unpaired_pack_padded_sequence_names_the_traced_frame():
    diagnosis = explain_paste("RuntimeError: ONNX export failed: Cannot export individual pack_padded_sequence "
                              "or pad_packed_sequence; these operations must occur in pairs.\n"
                              "Usage of this operation occurred at:\n"
                              "/home/u/model/rnn.py(52): forward\n"
                              "/usr/lib/python3.6/site-packages/torch/nn/modules/module.py(477): _slow_forward")
    assert_names(diagnosis, "compile.onnx_legacy_node", ["pack_padded_sequence", "`forward`", "rnn.py:52"])


def test_xpu_triton_module_without_kernels_names_num_warps_and_the_level_zero_code():
    diagnosis = explain_paste("> ```\n> Module doesn't contain any kernels. Please attempt to tune the 'num_warps' "
                              "parameter.\n> Error during Intel loadBinary: ZE_RESULT_ERROR_INVALID_KERNEL_NAME\n> ```")
    assert_names(diagnosis, "compile.triton_xpu_load_binary", ["'num_warps'", "ZE_RESULT_ERROR_INVALID_KERNEL_NAME"])


def test_xpu_inductor_error_names_load_binary():
    diagnosis = explain_paste(
        '  File "/workspace/triton/python/triton/backends/intel/driver.py", line 217, in load_binary\n'
        "    return self.shared_library.load_binary(args)\n"
        "torch._inductor.exc.InductorError: RuntimeError: ZE_RESULT_ERROR_INVALID_KERNEL_NAME ")
    assert_names(diagnosis, "compile.triton_xpu_load_binary", ["ZE_RESULT_ERROR_INVALID_KERNEL_NAME", "kernel name"])


def test_xpu_igc_build_failure_names_the_build_log():
    diagnosis = explain_paste("L0 build module failed. Log: IGC: Internal Compiler Error: Segmentation violation")
    assert_names(diagnosis, "compile.triton_xpu_load_binary", ["IGC: Internal Compiler Error: Segmentation violation"])


def test_dynamo_explain_break_reasons_name_both_skipped_functions():
    diagnosis = explain_paste(
        "  Break Reason 148:\n"
        "    Reason: inline in skipfiles: Linear.forward  | _fn /envs/lib/python3.10/site-packages/torch/_dynamo/eval_frame.py\n"
        "    User Stack:\n"
        "      <FrameSummary file /projects/esm3/oss/attention.py, line 67 in <resume in forward>>\n"
        "  Break Reason 149:\n"
        "    Reason: inline in skipfiles: LayerNormMLP.forward  | _fn /envs/lib/python3.10/site-packages/torch/_dynamo/eval_frame.py\n")
    assert_names(diagnosis, "compile.graph_break", ["`Linear.forward`", "LayerNormMLP.forward"])
    assert any("dont_skip_tracing" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_torchdynamo_2022_reasons_list_names_the_guard():
    diagnosis = explain_paste(
        "[2022-10-14 15:59:22,874] torchdynamo.convert_frame: [WARNING] torchdynamo hit config.cache_size_limit (64)\n"
        "   function: 'forward' (/usr/local/lib/python3.9/dist-packages/torchvision/models/resnet.py:284)\n"
        "   reasons:  [\"tensor 'x' strides mismatch at index 0. expected 562500, actual 2447991\"]")
    assert_names(diagnosis, "compile.recompile_limit", ["`forward`", "expected 562500, actual 2447991", "64"])


def test_recompile_reason_logged_by_another_rank_before_the_limit_line():
    diagnosis = explain_paste(
        "[rank6]:W1101 02:43:39.336000 143 site-packages/torch/_dynamo/convert_frame.py:896] [1/64]    last reason: "
        "1/0: tensor 'L['images']' size mismatch at index 2. expected 1696, actual 1248\n"
        "[rank6]:W1101 02:43:39.336000 143 site-packages/torch/_dynamo/convert_frame.py:896] [1/64] To log all "
        "recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
        "[rank3]:W1101 02:43:40.706000 140 site-packages/torch/_dynamo/convert_frame.py:896] [1/64] torch._dynamo hit "
        "config.cache_size_limit (64)\n"
        "[rank3]:W1101 02:43:40.706000 140 site-packages/torch/_dynamo/convert_frame.py:896] [1/64]    function: "
        "'forward' (/workspace/modeling/decoder/detail_capture.py:131)")
    assert_names(diagnosis, "compile.recompile_limit", ["`forward`", "expected 1696, actual 1248"])


def test_user_triton_kernel_compile_error_in_a_glog_prefixed_log():
    prefix = "W1210 08:01:33.059000 3495860 torch/_higher_order_ops/triton_kernel_wrap.py:987] [0/0] "
    diagnosis = explain_paste(
        prefix + "triton.compiler.errors.CompilationError: at 1:0:\n"
        + prefix + "def _kernel(x_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
        + prefix + "^\n"
        + prefix + "IndexError('Function argument index out of range')\n"
        + prefix + "Encountered an exception in identify_mutated_tensors, assuming every input is mutated")
    assert_names(diagnosis, "compile.triton_compilation_error",
                 ["`_kernel`", "Function argument index out of range", "identify_mutated_tensors"])


def test_triton_capability_message_cut_before_the_capability_still_names_gpu():
    diagnosis = explain_paste("RuntimeError: Found NVIDIA GeForce GTX TITAN X which is too old to be supported by "
                              "the triton GPU compiler, which is used as the backend. Triton only supports devices "
                              "of CUDA Capability >= 7.0, but your device is of CUDA capability ")
    assert_names(diagnosis, "compile.triton_capability", ["NVIDIA GeForce GTX TITAN X", "7.0"])


# --- wording families beyond the corpus ------------------------------------------------------------

def test_fake_tensor_data_read_inside_dynamo_report_names_the_call():
    diagnosis = explain_paste(
        "torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node with fake tensors: call_method "
        "new_tensor(*(FakeTensor(..., size=(10000, 1, 256)), [FakeTensor(..., size=(1,), dtype=torch.float64)]), "
        "**{}): got RuntimeError(\"The tensor has a non-zero number of elements, but its data is not allocated "
        "yet.\\nIf you're using torch.compile/export/fx, it is likely that we are erroneously tracing into a custom "
        "kernel.\")")
    assert_names(diagnosis, "compile.fake_tensor_data_access", ["`new_tensor`", "not allocated yet"])
    assert any("torch.stack" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_old_storage_wording_is_claimed_only_with_fake_tensors_in_the_text():
    diagnosis = explain_paste(
        "torch._dynamo.exc.TorchRuntimeError: Failed running call_function flashinfer_kernels.run.default("
        "*(FakeTensor(..., device='cuda:0', size=(3,), dtype=torch.int8),), **{}):\n"
        "Cannot access data pointer of Tensor that doesn't have storage")
    assert_names(diagnosis, "compile.fake_tensor_data_access", ["`flashinfer_kernels.run.default`"])
    import io

    from explainer.cli.explain import explain_stream

    bare = [d for d in explain_stream(io.StringIO("RuntimeError: Cannot access data pointer of Tensor that "
                                                  "doesn't have storage")) if d.rule]
    assert not bare or bare[0].rule != "compile.fake_tensor_data_access", bare[0].rule


def test_inductor_dtype_check_names_both_dtypes_and_the_op():
    diagnosis = explain_paste("AssertionError: expected dtype torch.float32 but got torch.bfloat16\n"
                              "Error in op: torch.ops.mylib.foo.default\n"
                              "This error most often comes from an incorrect fake (aka meta) kernel for a custom op.")
    assert_names(diagnosis, "compile.inductor_size_stride",
                 ["torch.float32", "torch.bfloat16", "`torch.ops.mylib.foo.default`"])


def test_old_assert_size_stride_without_op_names_dim_and_strides():
    diagnosis = explain_paste("    assert_size_stride(buf4, (16, 64, 128, 128), (1048576, 1, 8192, 64))\n"
                              "AssertionError: expected size 64==64, stride 16384==1 at dim=1")
    assert_names(diagnosis, "compile.inductor_size_stride", ["at dim 1", "stride 16384 where 1 was planned"])


def test_torchscript_undefined_value_names_the_name_and_line():
    diagnosis = explain_paste("RuntimeError:\nundefined value foo:\ndef bar(x):\n    return foo(x)\n"
                              "           ~~~ <--- HERE")
    assert_names(diagnosis, "compile.torchscript_unresolved_name", ["`foo`", "`return foo(x)`"])


def test_torchscript_unknown_type_constructor_is_an_unsupported_typing_construct():
    diagnosis = explain_paste("RuntimeError: \nUnknown type constructor Callable:\n"
                              '  File "m.py", line 3\ndef f(x: Callable[[int], int]) -> int:\n'
                              "         ~~~~~~~~~~~~~~~~~~~~ <--- HERE\n")
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
    diagnosis = explain_paste("RuntimeError: Internal Triton PTX codegen error: \n"
                              "ptxas /tmp/tmpmfrp_3wp.ptx, line 277; error   : Feature 'cvt.bf16.f32' requires "
                              ".target sm_80 or higher\n"
                              "ptxas /tmp/tmpmfrp_3wp.ptx, line 281; error   : Feature '.bf16' requires .target sm_80 "
                              "or higher")
    assert_names(diagnosis, "compile.triton_ptxas_feature", ["`cvt.bf16.f32`", "sm_80", "bfloat16"])
    assert any("float16" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_ptxas_feature_of_an_nvcc_extension_build_is_not_a_triton_kernel():
    import io

    from explainer.cli.explain import explain_stream

    found = [d for d in explain_stream(io.StringIO(
        "ptxas /tmp/tmpxft_00002b4f_00000000-6_kernel.ptx, line 120; error   : Feature '.bf16' requires .target "
        "sm_80 or higher")) if d.rule]
    assert not found or found[0].rule != "compile.triton_ptxas_feature", found[0].rule


def test_exported_program_called_with_another_batch_size_names_input_dim_and_size():
    diagnosis = explain_fixture("fixtures/compile/export_input_mismatch.py")
    assert_names(diagnosis, "compile.export_input_mismatch", ["`x`", "dimension 0", "not 8"])
    assert any('dynamic_shapes={"x": {0: torch.export.Dim.DYNAMIC}}' in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_exported_program_input_check_of_torch_2_3_names_expected_and_got():
    diagnosis = explain_paste("RuntimeError: Expected input at *args[0].shape[0] to be equal to 2, but got 4")
    assert_names(diagnosis, "compile.export_input_mismatch", ["`*args[0]`", "is 4", "exported with 2"])


def test_exported_program_called_with_other_arguments_names_both_tree_specs():
    diagnosis = explain_paste("ValueError: Trying to flatten user inputs with exported input tree spec: \n"
                              "TreeSpec(tuple, None, [TreeSpec(tuple, None, [*]),\n  TreeSpec(dict, [], [])])\n"
                              "but actually got inputs with tree spec of: \n"
                              "TreeSpec(tuple, None, [TreeSpec(tuple, None, [*,\n    *]),\n  TreeSpec(dict, [], [])]).\n"
                              "Please check that the inputs have the same number and type of args and kwargs as the "
                              "ones you used when tracing.")
    assert_names(diagnosis, "compile.export_input_mismatch", ["another structure", "[*,     *]"])


def test_missing_python_h_under_aot_compile_names_the_aotinductor_api():
    diagnosis = explain_paste(
        "W1010 15:36:44.314000 6252 .venv/lib/python3.11/site-packages/torch/_export/__init__.py:228] "
        "torch._export.aot_compile() is being deprecated, please switch to directly calling "
        "torch._inductor.aoti_compile_and_package(torch.export.export()) instead.\n"
        "/tmp/tmpie2hawx7/main.c:5:10: fatal error: Python.h: No such file or directory\n"
        "    5 | #include <Python.h>\n      |          ^~~~~~~~~~\ncompilation terminated.")
    assert_names(diagnosis, "compile.triton_launcher_build", ["`Python.h`", "aot_compile"])
