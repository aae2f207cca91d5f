"""compile rules written from round 8's misses and from wording families found beyond the corpus:
real torch calls where torch 2.x on CPU raises the error, and the wordings copied from public
threads (older torch, Windows, GPU-only Triton failures) where it cannot."""

from __future__ import annotations

from explainer.diagnose.explain import explain_text

from conftest import assert_names, explain_fixture, explain_paste, said


# --- raised by real torch calls --------------------------------------------------------------------

def test_trace_check_names_the_first_diverging_operator_and_line():
    diagnosis = explain_fixture("fixtures/compile/trace_graphs_differ.py")
    assert_names(diagnosis, "compile.trace_check_failed",
                 ["Graphs differed across invocations", "`aten::mul`", "trace_graphs_differ.py:20"])
    assert "check_trace=False" in said(diagnosis)


def test_script_then_trace_of_one_instance_names_class_and_method():
    diagnosis = explain_fixture("fixtures/compile/torchscript_method_redefined.py")
    assert_names(diagnosis, "compile.torchscript_method_redefined", ["`MyModule.sin`"])
    assert "copy.deepcopy" in said(diagnosis)


def test_backward_through_a_custom_op_names_the_op_and_register_autograd():
    diagnosis = explain_fixture("fixtures/compile/custom_op_no_autograd.py")
    assert_names(diagnosis, "compile.custom_op_no_autograd", ["`mylib.twice.default`", "`mylib`"])
    assert any('register_autograd("mylib::twice"' in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_output_not_computed_from_inputs_names_output_and_size():
    diagnosis = explain_fixture("fixtures/compile/trace_output_not_traced.py")
    assert_names(diagnosis, "compile.trace_untraced_value", ["output 1", "torch.FloatTensor", "[2,3]"])


def test_module_called_during_a_trace_but_not_registered():
    diagnosis = explain_fixture("fixtures/compile/trace_module_not_registered.py")
    assert_names(diagnosis, "compile.trace_untraced_value", ["not part of the active trace", "submodules"])
    assert "nn.ModuleList" in said(diagnosis)


def test_tracing_a_script_module_is_a_no_op():
    diagnosis = explain_fixture("fixtures/compile/trace_scripted_module.py")
    assert_names(diagnosis, "compile.trace_scripted_module", ["already a ScriptModule", "no-op"])


def test_custom_op_without_fake_impl_under_compile_names_op_and_register_fake():
    diagnosis = explain_fixture("fixtures/compile/fake_impl_missing.py")
    assert_names(diagnosis, "compile.fake_impl_missing", ["`mylib::scale`", "`mylib`"])
    assert any("@scale.register_fake" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_graph_break_inside_torch_cond_names_the_operator_and_the_break():
    diagnosis = explain_fixture("fixtures/compile/higher_order_op_graph_break.py")
    assert_names(diagnosis, "compile.higher_order_op_uncaptured", ["`torch.cond`", "Tensor.item()"])
    assert "capture_scalar_outputs = True" in said(diagnosis)


# --- round 8's messages, as pasted -----------------------------------------------------------------

def test_export_constraint_bullet_without_its_header():
    diagnosis = explain_paste("  - Not all values of x1 = L['args'][1]['input_ids'].size()[1] in the specified range "
                              "x1 <= 512 satisfy the generated guard Ne(512, L['args'][1]['input_ids'].size()[1]).")
    assert_names(diagnosis, "compile.export_constraints", ["`x1`", "x1 <= 512", "Ne(512,"])


def test_msvc_syntax_error_in_triton_launcher_names_file_line_and_code():
    diagnosis = explain_paste(
        "PS C:\\Users\\solom\\Documents\\comfy> python test_triton.py\n__triton_launcher.c\n"
        "C:\\Users\\solom\\AppData\\Local\\Temp\\tmpjq12u9wr\\__triton_launcher.c(123): error C2059: syntax error: '}'\n"
        "C:\\Users\\solom\\AppData\\Local\\Temp\\tmpjq12u9wr\\__triton_launcher.c(131): error C2059: syntax error: '}'")
    assert_names(diagnosis, "compile.triton_launcher_build", ["`__triton_launcher.c`", "C2059", "line 123"])
    assert any("Visual Studio 2022" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_missing_python_headers_for_triton_launcher():
    diagnosis = explain_paste("/tmp/tmps1rkq3y3/main.c:5:10: fatal error: Python.h: No such file or directory\n"
                              "    5 | #include <Python.h>\n      |          ^~~~~~~~~~\ncompilation terminated.")
    assert_names(diagnosis, "compile.triton_launcher_build", ["`main.c`", "`Python.h`"])
    assert any("python3-dev" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_an_ordinary_main_c_build_is_not_triton():
    assert explain_text("src/main.c:5:10: fatal error: Python.h: No such file or directory").rule is None


def test_undefined_size_symbol_in_an_inductor_kernel():
    diagnosis = explain_paste("Triton compilation error:\nNameError('s10 is not defined')")
    assert_names(diagnosis, "compile.triton_kernel_failed", ["`s10`", "dynamic shapes"])
    assert any("dynamic=False" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_triton_heuristics_log_record_names_the_kernel():
    diagnosis = explain_paste(
        "E0429 11:10:24.821000 558924 site-packages\\torch\\_inductor\\runtime\\triton_heuristics.py:539] [0/0] "
        "Triton compilation failed: triton_red_fused__to_copy_add_index_linalg_vector_norm_mean_mse_loss_mul_pow_sub_43")
    assert_names(diagnosis, "compile.triton_kernel_failed",
                 ["triton_red_fused__to_copy_add_index_linalg_vector_norm_mean_mse_loss_mul_pow_sub_43", "a reduction"])


def test_python_name_error_is_not_a_triton_kernel():
    assert explain_text("NameError: name 's10' is not defined").rule != "compile.triton_kernel_failed"


def test_tracing_check_error_header_alone():
    diagnosis = explain_paste("torch.jit.TracingCheckError: Tracing failed sanity checks!\n"
                              "ERROR: Graphs differed across invocations!")
    assert diagnosis.rule == "compile.trace_check_failed"
    assert "model.eval()" in said(diagnosis)


def test_trace_of_a_scripted_module_as_mangled_name():
    diagnosis = explain_paste("RuntimeError: method '__torch__.dl_research.pytorch.projects.guidance.full_model."
                              "___torch_mangle_56.FullGuidanceModel.forward' already defined.")
    assert_names(diagnosis, "compile.torchscript_method_redefined", ["FullGuidanceModel.forward"])


def test_redefine_after_a_failed_script_names_the_class():
    diagnosis = explain_paste("RuntimeError: Can't redefine method: forward on class: __torch__.SoSadModule "
                              "(of Python compilation unit at: 0x530d560)")
    assert_names(diagnosis, "compile.torchscript_method_redefined", ["`SoSadModule.forward`", "failed half way"])


def test_prims_op_without_autograd_is_a_compiler_problem():
    diagnosis = explain_paste("E       RuntimeError: Trying to backward through prims.convert_element_type.default but no "
                              "autograd formula was registered. Please use register_autograd to add one.")
    assert_names(diagnosis, "compile.custom_op_no_autograd", ["prims.convert_element_type.default", "prims operator"])


def test_jit_internal_assert_names_condition_and_location():
    diagnosis = explain_paste(
        "RuntimeError: v->type()->isSubtypeOf(elem_type) ASSERT FAILED at ..\\torch\\csrc\\jit\\ir.cpp:1272, please "
        "report a bug to PyTorch. (createList at ..\\torch\\csrc\\jit\\ir.cpp:1272)")
    assert_names(diagnosis, "compile.jit_internal_assert", ["v->type()->isSubtypeOf(elem_type)", "ir.cpp:1272", "createList"])


def test_jit_internal_assert_while_loading_blames_the_torch_version():
    diagnosis = explain_paste(
        "RuntimeError: it != value_type_map_.end() ASSERT FAILED at /opt/conda/conda-bld/pytorch-nightly_1538471633750/"
        "work/torch/csrc/jit/import.cpp:281, please report a bug to PyTorch. (buildIntermediateValue at "
        "/opt/conda/conda-bld/pytorch-nightly_1538471633750/work/torch/csrc/jit/import.cpp:281)")
    assert_names(diagnosis, "compile.jit_internal_assert", ["import.cpp:281", "torch.jit.load"])


def test_alias_analysis_assert_names_the_op():
    diagnosis = explain_paste(
        "RuntimeError: hasSpecialCase INTERNAL ASSERT FAILED at /pytorch/torch/csrc/jit/passes/alias_analysis.cpp:300, "
        "please report a bug to PyTorch. We don't have an op for aten::to but it isn't a special case. "
        "(analyzeImpl at /pytorch/torch/csrc/jit/passes/alias_analysis.cpp:300)")
    assert_names(diagnosis, "compile.jit_internal_assert", ["`aten::to`", "alias_analysis.cpp:300"])


def test_internal_assert_outside_the_jit_is_not_claimed():
    assert explain_text('RuntimeError: t == DeviceType::CUDA INTERNAL ASSERT FAILED at '
                        '"../c10/cuda/impl/CUDAGuardImpl.h":25, please report a bug to PyTorch.').rule \
        != "compile.jit_internal_assert"


def test_error_from_lowering_names_the_lowering():
    diagnosis = explain_paste(
        "[2023-03-20 07:29:05,653] torch._inductor.graph: [ERROR] Error from lowering\n"
        "Traceback (most recent call last):\n"
        '  File "/x/torch/_inductor/graph.py", line 333, in call_function\n'
        "    out = lowerings[target](*args, **kwargs)\n"
        '  File "/x/torch/_inductor/lowering.py", line 225, in wrapped\n'
        "    out = decomp_fn(*args, **kwargs)\n"
        '  File "/x/torch/_inductor/lowering.py", line 2020, in index_put\n'
        "    return index_put_(clone(x), indices, values, accumulate)")
    assert_names(diagnosis, "compile.inductor_lowering", ["`index_put`", "Error from lowering"])


def test_untraced_buffer_of_the_old_onnx_exporter():
    diagnosis = explain_paste("    torch._C._jit_pass_onnx(trace)\nRuntimeError: untraced buffer")
    assert_names(diagnosis, "compile.trace_untraced_value", ["untraced buffer", "torch.onnx.export"])


def test_cudagraph_stack_trace_on_one_line_names_the_call_and_the_step_api():
    diagnosis = explain_paste(
        "> accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run. Stack trace: File "
        '"/w/model.py", line 1229, in torch_dynamo_resume_in_forward_at_1168 x = self.cross_attn_ffn(x, context, '
        'File "/w/model.py", line 1300, in cross_attn_ffn x = x.addcmul(y, gate_mlp). To prevent overwriting, clone '
        "the tensor outside of torch.compile() or call torch.compiler.cudagraph_mark_step_begin() before each model "
        "invocation.")
    assert_names(diagnosis, "compile.cudagraph_output_overwritten",
                 ["`x = x.addcmul(y, gate_mlp)`", "model.py:1300", "cudagraph_mark_step_begin"])


def test_pybind_cast_names_the_python_class():
    diagnosis = explain_paste("RuntimeError: Unable to cast Python instance of type <class 'int'> to C++ type "
                              "'torch::autograd::Variable'")
    assert_names(diagnosis, "compile.torchscript_cast_error", ["<class 'int'>", "torch::autograd::Variable"])


# --- wording families beyond the corpus --------------------------------------------------------------

def test_triton_api_mismatch_names_the_import_and_module():
    diagnosis = explain_paste("ImportError: cannot import name 'libcuda_dirs' from 'triton.backends.nvidia.driver' "
                              "(/venv/lib/python3.10/site-packages/triton/backends/nvidia/driver.py)")
    assert_names(diagnosis, "compile.triton_api_mismatch", ["`libcuda_dirs`", "`triton.backends.nvidia.driver`"])


def test_triton_namespace_package_is_a_broken_install():
    diagnosis = explain_paste("ImportError: cannot import name 'Config' from 'triton' (unknown location)")
    assert_names(diagnosis, "compile.triton_api_mismatch", ["`Config`", "namespace package"])


def test_jit_flatten_of_none_names_the_type():
    diagnosis = explain_paste(
        "RuntimeError: Only tuples, lists and Variables supported as JIT inputs/outputs. Dictionaries and strings are "
        "also accepted but their usage is not recommended. But got unsupported type NoneType")
    assert_names(diagnosis, "compile.trace_output_type", ["NoneType", "None"])


def test_meta_kernel_missing_for_an_aten_op():
    diagnosis = explain_paste("NotImplementedError: could not find kernel for aten.__rshift__.Tensor at dispatch key "
                              "DispatchKey.Meta")
    assert_names(diagnosis, "compile.fake_impl_missing", ["`aten.__rshift__.Tensor`", "built-in operator"])


def test_local_scalar_dense_has_no_fake_impl_because_it_reads_data():
    diagnosis = explain_paste(
        "NotImplementedError: aten::_local_scalar_dense: attempted to run this operator with Meta tensors, but there "
        "was no abstract impl or Meta kernel registered.")
    assert_names(diagnosis, "compile.fake_impl_missing", ["`aten::_local_scalar_dense`", ".item()"])
    assert any("capture_scalar_outputs" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_onnx_export_without_onnxscript_names_the_package():
    diagnosis = explain_fixture("fixtures/compile/onnx_package_missing.py")
    assert_names(diagnosis, "compile.onnx_package_missing", ["`onnxscript`", "dynamo=True"])
    assert any("pip install onnx onnxscript" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_onnx_not_installed_also_points_at_a_failed_import():
    diagnosis = explain_paste("torch.onnx.OnnxExporterError: Module onnx is not installed!")
    assert_names(diagnosis, "compile.onnx_package_missing", ["`onnx`", "DLL load failure"])


def test_cond_from_torch_2_1_asks_to_scroll_up():
    diagnosis = explain_paste("torch._dynamo.exc.UncapturedHigherOrderOpError: Cond doesn't work unless it is captured "
                              "completely with torch.compile. Scroll up to find out what causes the graph break.")
    assert_names(diagnosis, "compile.higher_order_op_uncaptured", ["`Cond`", "Scroll up"])


def test_unregistered_backend_names_it_and_the_package_that_registers_it():
    diagnosis = explain_fixture("fixtures/compile/invalid_backend.py")
    assert_names(diagnosis, "compile.invalid_backend", ["'tensorrt'", "import torch_tensorrt"])
    assert "list_backends()" in said(diagnosis)


def test_misspelt_backend_repeats_the_suggestion():
    diagnosis = explain_paste("Invalid backend: 'indutcor', did you mean: 'inductor'? See `torch._dynamo.list_backends()` "
                              "for available backends.")
    assert_names(diagnosis, "compile.invalid_backend", ["'indutcor'", "'inductor'"])


def test_compile_worker_failure_names_the_kernel_and_the_way_to_see_the_error():
    diagnosis = explain_paste("torch._inductor.exc.InductorError: SubprocException: An exception occurred in a "
                              "subprocess:\n\nName=triton_poi_fused_add_0")
    assert_names(diagnosis, "compile.inductor_subprocess_failed", ["`triton_poi_fused_add_0`"])
    assert "TORCHINDUCTOR_COMPILE_THREADS=1" in said(diagnosis)


def test_compile_worker_failure_with_its_error_is_answered_by_the_error():
    assert explain_text("torch._inductor.exc.InductorError: SubprocException: An exception occurred in a subprocess:\n\n"
                        "Name=triton_poi_fused_add_0\nTraceback (most recent call last):\n"
                        '  File "x/subproc_pool.py", line 327, in do_job\nRuntimeError: PassManager::run failed'
                        ).rule == "compile.triton_passmanager"


def test_loading_a_model_whose_library_op_is_not_registered_says_import_the_library():
    diagnosis = explain_fixture("fixtures/compile/torchscript_unknown_op.py")
    assert_names(diagnosis, "compile.torchscript_unsupported", ["`visionlib::nms`", "import visionlib"])


def test_unknown_torchvision_op_says_import_torchvision():
    diagnosis = explain_paste(
        "RuntimeError: \nUnknown builtin op: torchvision::nms.\nCould not find any similar ops to torchvision::nms. "
        "This op may not exist or may not be currently supported in TorchScript.\n:\n"
        '  File "/venv/lib/python3.6/site-packages/torchvision/ops/boxes.py", line 35\n'
        "    return torch.ops.torchvision.nms(boxes, scores, iou_threshold)\n"
        "           ~~~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE")
    assert_names(diagnosis, "compile.torchscript_unsupported", ["torchvision::nms", "import torchvision"])


def test_triton_2_0_compilation_error_with_source_on_the_header_line_keeps_the_reason():
    diagnosis = explain_paste(
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "CompilationError: at 13:15:    xoffset = tl.program_id(0) * XBLOCK\n"
        "    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]\n"
        "        tmp1 = math.sqrt(ks1)\n"
        "               ^\n"
        "NameError('math is not defined')")
    assert_names(diagnosis, "compile.triton_compilation_error", ["13:15", "`tmp1 = math.sqrt(ks1)`", "math is not defined"])
