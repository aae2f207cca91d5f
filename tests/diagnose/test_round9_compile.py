"""compile rules written from round 9's misses and from wording families found beyond the corpus:
real torch calls where torch 2.x on CPU raises the error, and the wordings copied from public
threads (older torch, libtorch, GPU-only Inductor and Triton failures) where it cannot."""

from __future__ import annotations

from explainer.diagnose.explain import explain_text

from conftest import assert_names, explain_fixture, explain_paste, said


# --- raised by real torch calls --------------------------------------------------------------------

def test_jit_load_of_a_torch_save_checkpoint_is_not_a_corrupt_file():
    diagnosis = explain_fixture("fixtures/compile/jit_load_not_torchscript.py")
    assert_names(diagnosis, "compile.jit_load_not_torchscript", ["`constants.pkl`", "torch.save", "not corrupt"])
    assert any("load_state_dict" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_fail_on_recompile_stance_names_function_guard_and_sizes():
    diagnosis = explain_fixture("fixtures/compile/recompile_reason.py")
    assert_names(diagnosis, "compile.recompile_reason",
                 ["`fail_on_recompile`", "`scale`", "size mismatch at index 0", "4 when compiled, 7 now"])
    assert any("mark_dynamic(x, 0)" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_trace_of_a_dict_output_names_the_container():
    diagnosis = explain_fixture("fixtures/compile/trace_container_output.py")
    assert_names(diagnosis, "compile.trace_container_output", ["returns a dict", "strict=True"])
    assert any("NamedTuple" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_trace_of_an_unregistered_requires_grad_tensor_names_its_type_and_size():
    diagnosis = explain_fixture("fixtures/compile/trace_constant_requires_grad.py")
    assert_names(diagnosis, "compile.trace_constant_requires_grad", ["torch.FloatTensor", "{3}"])
    assert any("nn.Parameter" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_onnx_kernel_size_from_the_input_shape_names_the_gather_node():
    diagnosis = explain_fixture("fixtures/compile/onnx_non_constant_attribute.py")
    assert_names(diagnosis, "compile.onnx_non_constant_attribute",
                 ["`onnx::Gather`", "onnx_non_constant_attribute.py:18"])
    assert any("adaptive_avg_pool2d" in fix for fix in diagnosis.fixes), diagnosis.fixes


# --- round 9's messages, as pasted -----------------------------------------------------------------

def test_libtorch_terminate_on_constants_pkl_is_a_torchscript_loader_problem():
    diagnosis = explain_paste("terminate called after throwing an instance of 'c10::Error'\n"
                              "  what():  PytorchStreamReader failed locating file constants.pkl: file not found\n"
                              "Exception raised from valid at ../caffe2/serialize/inline_container.cc:158 "
                              "(most recent call first):")
    assert_names(diagnosis, "compile.jit_load_not_torchscript", ["`constants.pkl`", "torch::jit::load"])


def test_old_enforce_wording_for_constants_pkl_names_the_archive():
    diagnosis = explain_paste("ai.djl.engine.EngineException: [enforce fail at inline_container.cc:222] . "
                              "file not found: archive/constants.pkl")
    assert_names(diagnosis, "compile.jit_load_not_torchscript", ["`archive`", "`constants.pkl`"])


def test_missing_data_pkl_stays_a_checkpoint_problem():
    assert explain_text("RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central "
                        "directory").rule != "compile.jit_load_not_torchscript"


def test_recompiles_log_of_torch_2_1_names_function_and_first_guard():
    diagnosis = explain_paste(
        "[2023-11-06 14:54:54,691] torch._dynamo.guards.__recompiles: [DEBUG] Recompiling function _forward_impl in "
        "/data/users/williamwen/torchvision/torchvision/models/resnet.py:266\n"
        "[2023-11-06 14:54:54,691] torch._dynamo.guards.__recompiles: [DEBUG]     triggered by the following guard "
        "failure(s):\n"
        "[2023-11-06 14:54:54,691] torch._dynamo.guards.__recompiles: [DEBUG]     - tensor 'L['x']' size mismatch at "
        "index 0. expected 25, actual 26")
    assert_names(diagnosis, "compile.recompile_reason",
                 ["`_forward_impl`", "resnet.py:266", "25 when compiled, 26 now", "log line, not an error"])


def test_recompiles_log_on_a_parameter_points_at_force_parameter_static_shapes():
    diagnosis = explain_paste(
        "V0812 03:18:23.088000 19120 Lib\\site-packages\\torch\\_dynamo\\guards.py:3508] [6/2] [__recompiles] "
        "Recompiling function forward in C:\\AI\\ComfyUI\\comfy\\ldm\\qwen_image\\model.py:221\n"
        "V0812 03:18:23.088000 19120 Lib\\site-packages\\torch\\_dynamo\\guards.py:3508] [6/2] [__recompiles]     "
        "triggered by the following guard failure(s):\n"
        "V0812 03:18:23.088000 19120 Lib\\site-packages\\torch\\_dynamo\\guards.py:3508] [6/2] [__recompiles]     "
        "- 6/0: tensor 'self._parameters['weight']' size mismatch at index 1. expected 1728, actual 2112. Guard "
        "failed on a parameter, consider using torch._dynamo.config.force_parameter_static_shapes = False to allow "
        "dynamism on parameters.")
    assert_names(diagnosis, "compile.recompile_reason", ["1728 when compiled, 2112 now", "a parameter"])
    assert any("force_parameter_static_shapes = False" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_recompile_limit_warning_stays_with_its_rule():
    assert explain_text("W1021 10:44:18.989000 2926727 torch/_dynamo/convert_frame.py:1355] [0/8] torch._dynamo hit "
                        "config.recompile_limit (8)").rule == "compile.recompile_limit"


def test_aoti_missing_c_shim_names_the_shim_and_the_op():
    diagnosis = explain_paste(
        "/tmp/cmezixbshurefmdsgmafaulooifjf4hu5ofsldijijfkuo5iwvvs.cpp:384:33: error: ‘aoti_torch__embedding_bag’ "
        "was not declared in this scope")
    assert_names(diagnosis, "compile.aoti_shim_missing", ["`aoti_torch__embedding_bag`", "`_embedding_bag`"])


def test_aoti_missing_device_shim_names_device_and_suggestion():
    diagnosis = explain_paste("error: ‘aoti_torch_cpu_normal_functional’ was not declared in this scope; did you mean "
                              "‘aoti_torch_cpu_norm_out’?")
    assert_names(diagnosis, "compile.aoti_shim_missing", ["`normal_functional`", "on cpu", "`aoti_torch_cpu_norm_out`"])


def test_inductor_block_size_assertion_names_block_and_maximum():
    diagnosis = explain_paste("`AssertionError: TritonKernel.indexing assumes YBLOCK divides "
                              "config.triton.max_block[\"Y\"] but YBLOCK=2048 and config.triton.max_block[\"Y\"]=1024 "
                              "(cfg={'XBLOCK': 2, 'YBLOCK': 2048}).`")
    assert_names(diagnosis, "compile.inductor_block_size", ["YBLOCK=2048", "=1024", "larger than", "TritonKernel.indexing"])


def test_increase_triton_max_block_names_axis_and_size():
    diagnosis = explain_paste("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                              "AssertionError: increase TRITON_MAX_BLOCK['X'] to 4096")
    assert_names(diagnosis, "compile.inductor_block_size", ["axis X", "4096"])


def test_triton_numel_limit_names_both_sizes():
    diagnosis = explain_paste("ValueError: numel (2097152) exceeds triton maximum tensor numel (1048576)")
    assert_names(diagnosis, "compile.inductor_block_size", ["2097152", "1048576"])


def test_torchscript_range_check_reads_the_unsigned_index_as_minus_one():
    diagnosis = explain_paste(
        "RuntimeError: The following operation failed in the TorchScript interpreter.\n"
        "Traceback of TorchScript (most recent call last):\n"
        "RuntimeError: vector::_M_range_check: __n (which is 18446744073709551615) >= this->size() (which is 3)")
    assert_names(diagnosis, "compile.torchscript_range_check",
                 ["vector::_M_range_check", "18446744073709551615", "-1", "3 elements"])


def test_onnxruntime_range_check_is_not_torchscript():
    assert explain_text("ONNXRuntimeError FAIL : Load model from model.onnx failed:vector::_M_range_check: __n (which "
                        "is 1) >= this->size() (which is 1)").rule != "compile.torchscript_range_check"


def test_yolov5_list_output_tracer_warning():
    diagnosis = explain_paste(
        "D:\\Anaconda\\lib\\site-packages\\torch\\jit\\_trace.py:940: _**TracerWarning: Encountering a list at the "
        "output of the tracer might cause the trace to be incorrect, this is only valid if the container structure "
        "does not change based on the module's inputs.")
    assert_names(diagnosis, "compile.trace_container_output", ["returns a list", "TracerWarning", "not an error"])


def test_inductor_lowering_assert_read_from_the_raising_frame():
    diagnosis = explain_paste(
        "Traceback (most recent call last):\n"
        '  File "/fsx/users/binbao/pytorch/torch/_inductor/graph.py", line 241, in call_function\n'
        "    out = lowerings[target](*args, **kwargs)\n"
        '  File "/fsx/users/binbao/pytorch/torch/_inductor/lowering.py", line 168, in wrapped\n'
        "    assert not any(isinstance(x, TensorBox) for x in kwargs.values())\n"
        "AssertionError")
    assert_names(diagnosis, "compile.inductor_lowering", ["AssertionError", "`wrapped`"])


# --- wording families beyond the corpus ------------------------------------------------------------

def test_onnx_protobuf_limit_names_the_size():
    diagnosis = explain_paste("ValueError: Message onnx.ModelProto exceeds maximum protobuf size of 2GB: 2215159045")
    assert_names(diagnosis, "compile.onnx_protobuf_limit", ["2215159045 bytes", "2.06 GiB", "2GB"])


def test_onnx_export_to_a_buffer_above_2gib():
    diagnosis = explain_paste("RuntimeError: The serialized model is larger than the 2GiB limit imposed by the "
                              "protobuf library. Therefore the output file must be a file path, so that the ONNX "
                              "external data can be written to the same directory. Please specify the output file name.")
    assert_names(diagnosis, "compile.onnx_protobuf_limit", ["2GiB", "not a file path"])


def test_tensorflow_protobuf_limit_is_not_onnx():
    assert explain_text("tensorflow.GraphDef exceeds maximum protobuf size of 2GB").rule != "compile.onnx_protobuf_limit"


def test_old_onnx_attribute_wording_names_the_gather_node():
    diagnosis = explain_paste("Failed to export an ONNX attribute 'onnx::Gather', since it's not constant, please try "
                              "to make things (e.g., kernel size) static if possible")
    assert_names(diagnosis, "compile.onnx_non_constant_attribute", ["`onnx::Gather`", "tensor's shape"])


def test_trace_constant_requires_grad_pasted_without_the_tensor():
    diagnosis = explain_paste("RuntimeError: Cannot insert a Tensor that requires grad as a constant. Consider making "
                              "it a parameter or input, or detaching the gradient")
    assert diagnosis.rule == "compile.trace_constant_requires_grad"
    assert "add_graph" in said(diagnosis)


def test_onnx_export_of_a_complex_buffer_names_the_dtype():
    diagnosis = explain_fixture("fixtures/compile/onnx_complex_dtype.py")
    assert_names(diagnosis, "compile.onnx_complex_dtype", ["ComplexFloat", "torch.polar"])
    assert any("dynamo=True" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_old_unexpected_scalar_type_wording_reads_as_complex():
    diagnosis = explain_paste("RuntimeError: unexpected tensor scalar type")
    assert_names(diagnosis, "compile.onnx_complex_dtype", ["complex tensor", "1.8-1.11"])


def test_torch_tensorrt_missing_converter_names_the_operator_and_node():
    diagnosis = explain_paste(
        "Unable to convert node: %result.2 : Tensor = aten::elu(%x.1, %2, %3, %3) # "
        "/home/bowa/.local/lib/python3.6/site-packages/torch/nn/functional.py:1227:17 (conversion.AddLayer)\n"
        "Schema: aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> (Tensor)\n"
        "Converter for aten::elu requested, but no such converter was found.")
    assert_names(diagnosis, "compile.torch_tensorrt_conversion", ["`aten::elu`", "%result.2", "functional.py:1227"])
    assert any('torch_executed_ops=["aten::elu"]' in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_torch_tensorrt_partitioning_check_names_condition_and_file():
    diagnosis = explain_paste("RuntimeError: [Error thrown at core/partitioning/shape_analysis.cpp:66] Expected "
                              "ivalues_maps.count(input) to be true but got false Could not find torch::jit::Value*")
    assert_names(diagnosis, "compile.torch_tensorrt_conversion",
                 ["partitioning", "`ivalues_maps.count(input)`", "core/partitioning/shape_analysis.cpp:66"])


def test_torch_tensorrt_device_check_is_not_a_conversion_failure():
    assert explain_text("RuntimeError: [Error thrown at core/runtime/execute_engine.cpp:132] Expected "
                        "inputs[i].is_cuda() to be true but got false Expected input tensors to have device cuda, "
                        "found device cpu").rule != "compile.torch_tensorrt_conversion"


def test_real_tensor_under_fake_mode_names_the_operator_and_size():
    diagnosis = explain_fixture("fixtures/compile/fake_tensor_real_input.py")
    assert_names(diagnosis, "compile.fake_tensor_real_input", ["`aten.view.default`", "size (3,)"])
    assert any("register_buffer" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_real_parameter_in_a_custom_backend_points_at_make_fx():
    diagnosis = explain_paste("Exception: Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode "
                              "with 'allow_non_fake_inputs'. Found in aten.t.default(Parameter containing:\n"
                              "tensor([...], size=(64, 64), requires_grad=True))")
    assert_names(diagnosis, "compile.fake_tensor_real_input", ["`aten.t.default`", "a Parameter", "make_fx"])


def test_export_of_a_plain_class_input_names_the_class():
    diagnosis = explain_fixture("fixtures/compile/export_unsupported_type.py")
    assert_names(diagnosis, "compile.export_unsupported_type", ["an input", "`__main__.Box`"])
    assert any("register_dataclass(Box)" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_export_signature_metadata_wording_names_the_class():
    diagnosis = explain_paste("AssertionError: Encountered an unsupported object of type <class '__main__.MyStaticInput'> "
                              "while writing the metadata for exported program")
    assert_names(diagnosis, "compile.export_unsupported_type", ["`__main__.MyStaticInput`"])


def test_inductor_cache_rename_race_names_the_cache_and_path():
    diagnosis = explain_paste(
        "FileNotFoundError: [Errno 2] No such file or directory: "
        "'/tmp/torchinductor_dberard/hb/chbtiqye637eosh5eyoh7t3ve4mviybimx2m2uudsrm6bt22x3nd.py.1571306751' -> "
        "'/tmp/torchinductor_dberard/hb/chbtiqye637eosh5eyoh7t3ve4mviybimx2m2uudsrm6bt22x3nd.py'")
    assert_names(diagnosis, "compile.inductor_cache_file", ["torchinductor_dberard", "FileNotFoundError [Errno 2]"])
    assert any("TORCHINDUCTOR_CACHE_DIR" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_windows_access_denied_in_the_inductor_cache_beats_the_generic_backend_rule():
    diagnosis = explain_paste("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: PermissionError: "
                              "[WinError 5] Access is denied: 'C:\\Users\\x\\AppData\\Local\\Temp\\torchinductor_x\\triton'")
    assert_names(diagnosis, "compile.inductor_cache_file", ["PermissionError [WinError 5]", "not writable"])


def test_a_missing_data_file_is_not_the_inductor_cache():
    assert explain_text("FileNotFoundError: [Errno 2] No such file or directory: 'data/train/0001.png'").rule \
        != "compile.inductor_cache_file"
