"""Compile rules from round 18 (deployment): TensorRT's ONNX parser and its serialized engines, ONNX Runtime refusing an
exported model's node, coremltools' missing converters, the lite interpreter, Optimum's ONNX exporter, Triton's run-time
modules on Windows, Intel XPU's Level Zero codes, Metal shaders of inductor's MPS backend and Triton 2.0's LLVM aborts.
None of these can be raised by the CPU build of torch 2.13 (they need TensorRT, onnxruntime, coremltools, optimum, a GPU
or an older torch), so the messages are real ones, verbatim from the corpus or the cited threads."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message, explain_paste


@pytest.mark.parametrize("text, values", [
    # TrojanXu/yolov5-tensorrt#12: onnx-tensorrt <= 8.2, an input no node produced
    (corpus_message("r18_a.yaml#5"), ["node 0", "`importModel`", "INVALID_GRAPH", "`tensors.count(input_name)`",
                                      "not in topological order"]),
    # qbxlvnf11/convert-pytorch-onnx-tensorrt#1: the node's name, then the host allocation failure
    (corpus_message("r18_a.yaml#7"), ["node 614", "`/ArgMax`", "INVALID_NODE", "`std::bad_alloc`"]),
    # NVIDIA/TensorRT#3728: TensorRT >= 8.4's layout, the ErrorCode's number read as its name
    (corpus_message("r18_a.yaml#8"), ["`/Where`", "(ModelImporter.cpp:195)", "[6] INVALID_NODE",
                                      "[graphShapeAnalyzer.cpp::checkCalculationStatusSanity::1503] Error Code 2"]),
    # open-mmlab/mmdeploy#926: TensorRT's reason after "; " on the same line
    ("RuntimeError: Failed to parse onnx, In node 28 (parseGraph): INVALID_NODE: Invalid Node - Conv_28; Conv_28: two "
     "inputs (data and weights) are allowed only in explicit-quantization mode.",
     ["node 28", "`Conv_28`", "explicit-quantization mode"]),
    # NVIDIA/TensorRT#376: the build after an unchecked parse
    (corpus_message("r18_a.yaml#9"), ["`[TensorRT]`", "Network must have at least one output", "EXPLICIT_BATCH"]),
])
def test_tensorrt_onnx_parser_names_node_importer_and_reason(text, values):
    assert_names(explain_paste(text), "compile.tensorrt_onnx_parse", values)


@pytest.mark.parametrize("text, values", [
    (corpus_message("r18_a.yaml#47"), ["TensorRT 8.0.1", "is 8.0.0", "[runtime.cpp::deserializeCudaEngine::74] Error Code 4"]),
    # smellslikeml/ActionAI#17: torch2trt's load_state_dict, then the None engine
    (corpus_message("r18_a.yaml#48"), ["TensorRT 5.1.6", "is 5.1.5", "create_execution_context"]),
    # NVIDIA/TensorRT#2041: TensorRT 8's serialization tag
    ("[06/08/2022-15:28:47] [TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::40] Error Code 1: Serialization "
     "(Serialization assertion stdVersionRead == serializationVersion failed.Version tag does not match. Note: Current "
     "Version: 213, Serialized Engine Version: 205)\n[06/08/2022-15:28:47] [TRT] [E] 4: "
     "[runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)",
     ["is 205", "reads 213", "`stdVersionRead == serializationVersion`"]),
    # seanavery/yolov5-tensorrt#7: TensorRT 7's header check, no numbers
    ("[TensorRT] ERROR: coreReadArchive.cpp (38) - Serialization Error in verifyHeader: 0 (Version tag does not match)",
     ["Version tag does not match"]),
])
def test_tensorrt_engine_version_names_both_versions(text, values):
    assert_names(explain_paste(text), "compile.tensorrt_engine_version", values)


def test_an_engine_built_for_another_gpu_is_not_a_version_mismatch():
    # NVIDIA/TensorRT#2176: the compute capability, not the TensorRT release (the device's family)
    from explainer.rules.base import default_rulebase

    found = default_rulebase().match("The engine plan file is generated on an incompatible device, expecting compute 8.6 "
                                     "got compute 7.5, please rebuild.")
    assert found is None or found.rule.id != "compile.tensorrt_engine_version"


@pytest.mark.parametrize("text, values", [
    (corpus_message("r18_a.yaml#24"), ["`ConstantFill`", "ocr_model.onnx", "removed op"]),
    # aharley/simple_bev#58: torch.onnx.export's ATen fallback
    (corpus_message("r18_a.yaml#25"), ["`org.pytorch.aten:instance_norm(-1)`", "simple_bev.onnx", "ONNX_ATEN_FALLBACK"]),
    # OpenGVLab/InternImage#256: mmdeploy's custom op domain
    (corpus_message("r18_a.yaml#26"), ["`mmdeploy:GatherTopk(-1)`", "end2end.onnx", "register_custom_ops_library"]),
    # elixir-nx/ortex#16: a node in another opset's form, loaded from Elixir
    (corpus_message("r18_a.yaml#60"), ["`MaskReduceSum_0`", "`axes`", "ReduceSum", "lib/ortex/model.ex:28"]),
    # microsoft/onnxruntime#24441: no kernel for the op at that version
    ("onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not "
     "find an implementation for EyeLike(9) node with name '/blocks.0/intra_mossformer/EyeLike'",
     ["`EyeLike`", "opset version 9", "`/blocks.0/intra_mossformer/EyeLike`"]),
])
def test_onnxruntime_refusing_an_exported_node_is_explained(text, values):
    assert_names(explain_paste(text), "compile.ort_model_load", values)


def test_onnxruntime_failing_a_cuda_call_stays_foreign():
    # https://github.com/microsoft/onnxruntime/issues/14211: the runtime's own failure, not the exported model's
    import io

    from explainer.cli.explain import explain_stream

    text = ("RuntimeError: /onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:122 bool onnxruntime::CudaCall("
            "ERRTYPE, const char*, const char*, ERRTYPE, const char*) [with ERRTYPE = cudaError; bool THRW = true] "
            "/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:116 bool onnxruntime::CudaCall(ERRTYPE, "
            "const char*, const char*, ERRTYPE, const char*) [with ERRTYPE = cudaError; bool THRW = true] "
            "CUDA failure 999: unknown error ; GPU=192915439 ; expr=cudaSetDevice(info_.device_id); ")
    diagnosis = explain_stream(io.StringIO(text))[0]
    assert diagnosis.rule is None and "ONNX Runtime" in diagnosis.title


@pytest.mark.parametrize("where, op", [("r18_a.yaml#17", "type_as"), ("r18_a.yaml#18", "numel")])
def test_coremltools_missing_converter_names_the_op(where, op):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, "compile.coreml_op_not_implemented", [f"`{op}`"])
    assert f"def {op}(context, node)" in " ".join(diagnosis.fixes)


def test_coreml_converter_frame_is_named():
    assert_names(explain_paste(corpus_message("r18_a.yaml#17")), "compile.coreml_op_not_implemented",
                 ["ops.py in convert_nodes"])


def test_lite_interpreter_given_a_full_torchscript_file():
    assert_names(explain_paste(corpus_message("r18_a.yaml#43")), "compile.lite_interpreter_not_saved",
                 ["`_save_for_lite_interpreter`", "scripted_module._save_for_lite_interpreter('model.ptl')"])


def test_the_android_app_of_a_missing_bytecode_pkl_is_named():
    assert_names(explain_paste(corpus_message("r18_a.yaml#42")), "other.jit_load_open_failed",
                 ["org.pytorch.demo.objectdetection", "bytecode.pkl"])


@pytest.mark.parametrize("text, values", [
    (corpus_message("r18_a.yaml#59"), ["`qwen`", "`custom_onnx_configs`"]),
    # huggingface/optimum#2380: optimum >= 1.17 names the task
    ("Trying to export a qwen3 model, that is a custom or unsupported architecture for the task "
     "text-generation-with-past, but no custom onnx configuration was passed as `custom_onnx_configs`.",
     ["`qwen3`", "`text-generation-with-past`"]),
])
def test_optimum_names_model_type_and_task(text, values):
    assert_names(explain_paste(text), "compile.optimum_unsupported_architecture", values)


def test_protobuf_size_log_line_of_an_old_export():
    assert_names(explain_paste(corpus_message("r18_a.yaml#56")), "compile.onnx_protobuf_limit",
                 ["2193606791 bytes", "2.04 GiB", "message_lite.cc:289"])


def test_torch2trt_output_that_is_a_list():
    diagnosis = explain_paste(corpus_message("r18_a.yaml#58"))
    assert_names(diagnosis, "compile.torch2trt_missing_converter", ["mark_outputs", "`list`", "'_trt'"])
    assert "tuple of tensors" in diagnosis.fixes[0]


def test_triton_windows_run_time_module_that_does_not_load():
    assert_names(explain_paste(corpus_message("r18_b.yaml#73")), "compile.triton_windows_module_dll",
                 ["`cuda_utils`", "The specified module could not be found"])


def test_level_zero_decimal_code_is_shown_in_hex():
    assert_names(explain_paste(corpus_message("r18_b.yaml#79")), "compile.triton_xpu_load_binary",
                 ["2013265944", "0x78000018"])


def test_inductor_metal_shader_names_kernel_and_header():
    assert_names(explain_paste(corpus_message("r18_b.yaml#77")), "compile.inductor_metal_shader",
                 ["`generated_kernel`", "<c10/metal/reduction_utils.h>", "SyntaxError"])


def test_triton_llvm_abort_names_op_pool_and_wrapper():
    assert_names(explain_paste(corpus_message("r18_b.yaml#80")), "compile.triton_passmanager",
                 ["`tt.load`", "Failed to translate TritonGPU to LLVM IR", "BrokenProcessPool", "debug_wrapper"])


@pytest.mark.parametrize("where, rule, values", [
    ("r18_b.yaml#75", "compile.backend_compiler_failed", ["backend='inductor' raised AssertionError: Device mps not supported",
                                                          "no code generation for that device"]),
    ("r18_b.yaml#81", "compile.triton_ptxas_arch", ["backend='inductor' raised it", "sm_110"]),
    ("r18_a.yaml#1", "compile.onnx_unsupported_opset", ["onnx 1.10.1", "opset_version=13"]),
    ("r18_a.yaml#14", "compile.torchscript_unresolved_name",
     ["code/__torch__/torch/nn/modules/module/___torch_mangle_460.py:5:13"]),
])
def test_widened_compile_rules_name_the_values_round_18_adds(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)
