"""compile rules written from round 7's misses and from wording families found beyond the corpus:
real torch calls where torch 2.x on CPU raises the error, and the wordings copied from public
threads (older torch, Windows, GPU-only Triton and NVRTC failures) where it cannot."""

from __future__ import annotations

from explainer.diagnose.explain import explain_text

from conftest import assert_names, explain_fixture, explain_paste, said


# --- raised by real torch calls --------------------------------------------------------------------

def test_branches_of_another_type_name_the_variable_and_both_types():
    diagnosis = explain_fixture("fixtures/compile/torchscript_branch_type.py")
    assert_names(diagnosis, "compile.torchscript_variable_type", ["`pad`", "List[int]", "int", "true branch"])
    assert any("`pad = [1]`" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_missing_argument_of_a_scripted_call_names_callee_argument_and_call():
    diagnosis = explain_fixture("fixtures/compile/torchscript_argument_missing.py")
    assert_names(diagnosis, "compile.torchscript_call_arguments",
                 ["`factor`", "`scale()`", "return scale(x)", "Tensor x, float factor"])


def test_scripting_without_source_names_the_function_and_frozen_apps():
    diagnosis = explain_fixture("fixtures/compile/torchscript_source_missing.py")
    assert_names(diagnosis, "compile.torchscript_source_missing", ["`swish`", "PyInstaller"])
    assert "PYTORCH_JIT=0" in said(diagnosis)


def test_fx_trace_of_a_branch_on_a_tensor_says_proxies_hold_no_values():
    diagnosis = explain_fixture("fixtures/compile/fx_trace_control_flow.py")
    assert_names(diagnosis, "compile.fx_trace_control_flow",
                 ["symbolically traced variables cannot be used as inputs to control flow", "Proxy"])
    assert "concrete_args" in said(diagnosis)


def test_trace_check_mismatch_from_dropout_names_the_output():
    diagnosis = explain_fixture("fixtures/compile/trace_output_mismatch.py")
    assert_names(diagnosis, "compile.tracer_warning", ["Output nr 1.", "check_trace"])
    assert any("model.eval()" in fix for fix in diagnosis.fixes), diagnosis.fixes


# --- round 7's messages, as pasted -----------------------------------------------------------------

def test_windows_without_msvc_names_cl():
    diagnosis = explain_paste(
        '  File "F:\\core_zonos\\venv\\Lib\\site-packages\\torch\\_inductor\\cpp_builder.py", line 139, in check_compiler_exist_windows\n'
        '    raise RuntimeError(f"Compiler: {compiler} is not found.") from exc\n'
        "torch._inductor.exc.InductorError: RuntimeError: Compiler: cl is not found.")
    assert_names(diagnosis, "compile.cxx_compiler_missing", ["`cl`", "vcvarsall.bat"])
    assert any("Visual Studio Build Tools" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_no_cxx_compiler_on_linux_names_what_was_tried():
    diagnosis = explain_paste("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                              "InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')")
    assert_names(diagnosis, "compile.cxx_compiler_missing", ["(None, 'g++')"])
    assert any("apt-get install g++" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_triton_without_a_c_compiler_is_told_apart_from_inductor():
    diagnosis = explain_paste("torch._inductor.exc.InductorError: RuntimeError: Failed to find C compiler. "
                              "Please specify via CC environment variable or set triton.knobs.build.impl.")
    assert_names(diagnosis, "compile.cxx_compiler_missing", ["Triton", "CC"])
    assert not any("apt-get install g++" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_recompile_limit_record_split_over_lines_names_function_and_guard():
    prefix = "W1112 05:36:47.251000 61915 site-packages/torch/_dynamo/convert_frame.py:1016] [2/128]"
    diagnosis = explain_paste(
        f"{prefix} torch._dynamo hit config.recompile_limit (128)\n\n{prefix}    \n"
        "function: 'forward' (/opt/ComfyUI/custom_nodes/ComfyUI-WanVideoWrapper/custom_linear.py:140)\n\n"
        f"{prefix}    \nlast reason: 2/127: tensor 'self._parameters['bias']' size mismatch at index 0. expected 5120, "
        "actual 13824. Guard failed on a parameter, consider using "
        "torch._dynamo.config.force_parameter_static_shapes = False to allow dynamism on parameters.\n")
    assert_names(diagnosis, "compile.recompile_limit", ["`forward`", "recompile_limit (128)", "expected 5120, actual 13824"])
    assert any("force_parameter_static_shapes = False" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_onnx_unsupported_use_names_the_node_that_produced_the_value():
    diagnosis = explain_paste(
        "Unsupported: ONNX export of operator Unfold, input size not accessible. [Caused by the value '1261 defined in "
        "(%1261 : Float(*, *, *, *, strides=[86016, 168, 4, 1], requires_grad=0, device=cpu) = onnx::Pad[mode=\"constant\"]"
        "(%907, %1259, %1260), scope: CARAFE::model.11 # CARAFE.py:34:0\n)' (type 'Tensor') in the TorchScript graph. "
        "The containing node has kind 'onnx::Pad'.]")
    assert_names(diagnosis, "compile.onnx_unsupported_use", ["`Unfold`", "`onnx::Pad`", "`%1261`"])


def test_backend_failure_logged_as_a_warning_names_the_undefined_size_symbol():
    diagnosis = explain_paste(
        "[01:17:10.938]: W1024 01:17:10.936000 140404233111360 torch/_dynamo/convert_frame.py:1009] "
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "[01:17:10.938]: W1024 01:17:10.936000 140404233111360 torch/_dynamo/convert_frame.py:1009] "
        "NameError: name 's4' is not defined")
    assert_names(diagnosis, "compile.backend_compiler_failed", ["`s4`", "dynamic"])
    assert any("dynamic=False" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_data_dependent_guard_in_the_onnx_exporters_report_names_the_class():
    diagnosis = explain_paste(
        "## Exception summary\n\n<class 'torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode'>: "
        "Could not guard on data-dependent expression Ne(u0, 12) (unhinted: Ne(u0, s70)).  (Size-like symbols: none)")
    assert_names(diagnosis, "compile.data_dependent", ["Ne(u0, 12)", "GuardOnDataDependentSymNode"])


def test_trace_check_report_of_torch_1_names_tolerance_and_difference():
    diagnosis = explain_paste(
        "TracerWarning: Output nr 1. of the traced function does not match the corresponding output of the Python "
        "function. Detailed error:    \nWith rtol=1e-05 and atol=1e-05, found 2 element(s) (out of 2) whose "
        "difference(s) exceeded the margin of error (including \n0 nan comparisons). The greatest difference was "
        "0.5916104316711426 (-6.0773491859436035 vs. -5.485738754272461), which occurred at index (0, 0).")
    assert_names(diagnosis, "compile.tracer_warning",
                 ["Output nr 1.", "rtol=1e-05", "0.5916104316711426", "2 of 2", "(0, 0)"])


def test_old_varargs_valueerror_is_torchscript_unsupported():
    diagnosis = explain_paste("ValueError: Compiled functions can't take variable number of arguments, have default "
                              "values for arguments, nor keyword-only arguments")
    assert diagnosis.rule == "compile.torchscript_unsupported", diagnosis.rule


def test_graph_break_without_module_path_is_claimed_when_dynamo_user_code_follows():
    diagnosis = explain_paste(
        "Unsupported: inline in skipfiles: FunctionCtx.set_materialize_grads  | set_materialize_grads "
        "/raid/pt/torch/autograd/function.py\n\nfrom user code:\n"
        '   File "<ipython-input-15-a5d3bf1fb962>", line 8, in forward\n    ctx.set_materialize_grads(False)')
    assert_names(diagnosis, "compile.graph_break", ["set_materialize_grads"])


def test_nvrtc_failure_of_the_fuser_names_the_generated_line():
    diagnosis = explain_paste(
        "RuntimeError: default_program(35): error: extra text after expected end of number\n\n"
        "default_program(35): error: extra text after expected end of number\n\n"
        '2 errors detected in the compilation of "default_program".\n\nnvrtc compilation failed:')
    assert_names(diagnosis, "compile.jit_fuser_nvrtc", ["default_program(35)", "extra text after expected end of number"])
    assert any("_jit_override_can_fuse_on_gpu(False)" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_segfault_of_yolo_onnx_export_names_weights_and_shape():
    diagnosis = explain_paste(
        "\"PyTorch: starting from 'yolov8n.pt' with input shape (1, 3, 640, 640) BCHW and output shape(s) "
        "(1, 84, 8400) (6.2 MB)\n[1]    36482 segmentation fault  yolo export model=yolov8n.pt format=onnx\"")
    assert_names(diagnosis, "compile.onnx_export_segfault",
                 ["segmentation fault", "`yolov8n.pt`", "(1, 3, 640, 640)", "yolo export model=yolov8n.pt format=onnx"])


def test_ptxas_too_old_for_the_gpu_names_the_architecture():
    diagnosis = explain_paste(
        "0000-steps/0 [default6]:[rank6]: RuntimeError: Internal Triton PTX codegen error:\n\n"
        "0000-steps/0 [default6]:[rank6]: ptxas fatal   : Value 'sm_100' is not defined for option 'gpu-name'\n")
    assert_names(diagnosis, "compile.triton_ptxas_arch", ["sm_100", "Blackwell"])
    assert "TRITON_PTXAS_PATH" in said(diagnosis)


# --- the scanner keeps only 'RuntimeError:' of a TorchScript error whose text follows a blank line;
# --- the rules explain the whole message

def test_torchscript_type_mismatch_message_names_variable_and_types():
    diagnosis = explain_text("RuntimeError: \n\nType mismatch: padding0 is set to type List[int] in the true branch "
                             'and type int in the false branch:\n  File "code/__torch__.py", line 9')
    assert_names(diagnosis, "compile.torchscript_variable_type", ["`padding0`", "List[int]", "int"])


def test_argument_not_provided_to_a_scripted_class_names_class_and_argument():
    diagnosis = explain_text(
        "RuntimeError: \n\n__init__(__torch__.TypedDataDict self, Dict(str, Tensor)? str_to_tensor, "
        "Dict(str, str[])? str_to_list_of_str) -> (None):\nArgument str_to_tensor not provided.\n:\n"
        '  File "test.py", line 18\n  def forward(self, input: torch.Tensor):\n    return TypedDataDict()\n'
        "           ~~~~~~~~~~~~~ <--- HERE")
    assert_names(diagnosis, "compile.torchscript_call_arguments",
                 ["`str_to_tensor`", "`TypedDataDict()`", "return TypedDataDict()"])


# --- near misses stay with their own rules or unexplained --------------------------------------------

def test_overload_listing_stays_with_the_value_type_rule():
    diagnosis = explain_text(
        "RuntimeError: \nArguments for call are not valid.\nThe following variants are available:\n  \n"
        "  aten::sigmoid(Tensor self) -> (Tensor):\n  Argument self not provided.\n")
    assert diagnosis.rule == "compile.torchscript_value_type", diagnosis.rule


def test_bare_inspect_error_and_nvcc_arch_error_are_not_claimed():
    assert explain_text("OSError: could not get source code").rule is None
    assert explain_text("nvcc fatal   : Unsupported gpu architecture 'compute_120'").rule != "compile.triton_ptxas_arch"


def test_saving_a_trace_with_an_autograd_function_names_it_and_the_calling_line():
    diagnosis = explain_fixture("fixtures/compile/torchscript_python_call_export.py")
    assert_names(diagnosis, "compile.torchscript_python_call_export",
                 ["`ScaleGrad`", "`forward`", "torchscript_python_call_export.py:26", "autograd.Function"])
