"""compile rules written from round 11's misses and from wording families found beyond the corpus:
real torch calls where torch 2.x on CPU raises the error, and the wordings copied from public
threads (libtorch loaders, Inductor's Triton autotuner, torch.export, torch2trt, the ONNX exporters)
where it cannot."""

from __future__ import annotations

from typing import NamedTuple, Sequence

import torch

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said


# --- raised by real torch calls --------------------------------------------------------------------

def test_double_backward_through_a_compiled_function_names_aot_autograd():
    diagnosis = explain_fixture("fixtures/compile/compile_double_backward.py")
    assert_names(diagnosis, "compile.compile_double_backward", ["aot_autograd", "double backward", "create_graph=True"])
    assert any("torch.func" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_custom_op_returning_its_input_names_the_op():
    diagnosis = explain_fixture("fixtures/compile/custom_op_output_alias.py")
    assert_names(diagnosis, "compile.custom_op_definition", ["`passthrough`", "fresh tensors"])
    assert any("x.clone()" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_custom_op_with_a_dict_parameter_names_parameter_and_type():
    import explainer

    def define():
        @torch.library.custom_op("round11::scaled", mutates_args=())
        def scaled(x: torch.Tensor, config: dict) -> torch.Tensor:
            return x * config["scale"]

    diagnosis = explainer.explain(raised(define))
    assert_names(diagnosis, "compile.custom_op_definition", ["Parameter config has unsupported type",
                                                             "`config`", "a dict cannot cross"])


def test_onnx_export_of_a_custom_namespace_op_names_namespace_and_op():
    diagnosis = explain_fixture("fixtures/compile/onnx_custom_namespace.py")
    assert_names(diagnosis, "compile.onnx_custom_namespace", ["`fixtures::scale2`", "register_custom_op_symbolic"],
                 said(diagnosis))


class _Point(NamedTuple):
    coords: Sequence[int]


def _first_coord(p: _Point) -> int:
    return p.coords[0]


def test_torchscript_unknown_type_annotation_names_the_type():
    import explainer

    diagnosis = explainer.explain(raised(lambda: torch.jit.script(_first_coord)))
    assert_names(diagnosis, "compile.torchscript_unresolved_name", ["typing.Sequence[int]", "annotation resolver"])


# --- round 11's messages, as pasted ----------------------------------------------------------------

def test_no_valid_triton_configs_names_kernel_required_and_limit():
    diagnosis = explain_paste(
        # excerpt of https://github.com/pytorch/torchtitan/pull/1437 (fixtures/real/r11_b.yaml#59)
        "[rank0]:RuntimeError: No valid triton configs. OutOfMemoryError: out of resource: triton_flex_attention "
        "Required: 360448 Hardware limit:232448 Reducing block sizes or `num_stages` may help.")
    assert_names(diagnosis, "compile.inductor_no_valid_triton_configs",
                 ["`triton_flex_attention`", "360448", "232448", "H100"])
    assert any("kernel_options" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_triton_shared_memory_wording_stays_with_the_memory_rule():
    diagnosis = explain_paste("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 589824, "
                              "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.")
    assert diagnosis.rule != "compile.inductor_no_valid_triton_configs", diagnosis.rule


def test_item_graph_break_warning_names_the_config():
    # https://github.com/rusty1s/pytorch_scatter/issues/457
    diagnosis = explain_paste(corpus_message("r11_b.yaml#80"))
    assert_names(diagnosis, "compile.graph_break_item", ["`Tensor.item()`", "capture_scalar_outputs = False"])


def test_bare_dynamo_reason_line_names_the_called_object():
    diagnosis = explain_paste("call_function UserDefinedObjectVariable(AttnProcessor2_0) [NNModuleVariable(), "
                              "TensorVariable()] {'encoder_hidden_states': TensorVariable(), "
                              "'attention_mask': ConstantVariable(NoneType)}")
    assert_names(diagnosis, "compile.graph_break", ["`AttnProcessor2_0`"])


def test_libtorch_load_of_a_torch_save_file_names_both_functions():
    diagnosis = explain_paste(
        "terminate called after throwing an instance of 'c10::Error'\n"
        "  what():  `torch::jit::load()` received a file from `torch.save()`, but `torch::jit::load()` can only load "
        "files produced by `torch.jit.save()` (load at ../torch/csrc/jit/serialization/import.cpp:285)")
    assert_names(diagnosis, "compile.jit_load_not_torchscript", ["`torch::jit::load()`", "`torch.save()`"])


def test_libtorch_empty_stream_names_the_read_that_failed():
    diagnosis = explain_paste("error loading the model\nistream reader failed: checking archive.\n"
                              "istream reader failed: checking archive.\n"
                              "Exception raised from validate at ..\\..\\caffe2\\serialize\\istream_adapter.cc:32 "
                              "(most recent call first):")
    assert_names(diagnosis, "compile.jit_load_unreadable", ["checking archive", "path"])


def test_libtorch_model_json_field_names_the_field():
    diagnosis = explain_paste(
        # excerpt of https://github.com/pytorch/pytorch/issues/23219 (fixtures/real/r11_b.yaml#68)
        "terminate called after throwing an instance of 'c10::Error'\n"
        "  what():  INVALID_ARGUMENT:main_module.submodules[0][19]: Cannot find field. "
        "(deserialize at /home/wang/software/pytorch/torch/csrc/jit/import.cpp:95)")
    assert_names(diagnosis, "compile.jit_load_unreadable", ["`main_module.submodules[0][19]`", "different PyTorch"])


def test_export_of_an_unregistered_tensor_names_assume_constant_result():
    diagnosis = explain_paste(
        "UserError: Cannot export model which references tensors that are neither buffers/parameters/constants nor "
        "are direct inputs.  For each tensor, if you'd like this tensor to be an explicit input, add it as a dummy "
        "argument to the top-level model definition you are exporting; if you would like its value to be embedded "
        "as an exported constant, wrap its access in a function marked with @assume_constant_result.")
    assert_names(diagnosis, "compile.export_unregistered_tensor", ["@assume_constant_result", "register_buffer"],
                 said(diagnosis))


def test_export_param_mapping_pop_names_the_function():
    diagnosis = explain_paste(
        "Traceback (most recent call last):\n"
        '  File "export-openelm.py", line 16, in <module>\n'
        "    exported_program = torch.export.export(torch_model, example_inputs)\n"
        '  File ".../lib/python3.10/site-packages/torch/export/_trace.py", line 241, in _get_param_buffer_mapping\n'
        "    param_buffer_table[dynamo_name] = param_lookup[id(dynamo_param)].pop()\n"
        "IndexError: pop from empty list")
    assert_names(diagnosis, "compile.export_param_mapping", ["`_get_param_buffer_mapping`", "pop from empty list"])


def test_scripted_call_arguments_in_torch_1_0_lower_case():
    from explainer.diagnose.explain import explain_text

    # excerpt of https://github.com/intel/BigDL/issues/1829 (fixtures/real/r11_b.yaml#43)
    diagnosis = explain_text("arguments for call are not valid:\n\n  for operator aten::mean(Tensor self) -> Tensor:\n"
                             "  expected at most 1 arguments but found 3 positional arguments.")
    assert_names(diagnosis, "compile.torchscript_call_arguments", ["`aten::mean()`", "3 positional", "at most 1"])


# --- wording families beyond the corpus ------------------------------------------------------------

def test_torch2trt_missing_converter_names_the_converter():
    from explainer.diagnose.explain import explain_text

    # the converter's frame is read from the record's text (a paste's frames go to the scanner's frame facts)
    # https://github.com/NVIDIA-AI-IOT/torch2trt/issues/48
    diagnosis = explain_text(corpus_message("r33_a.yaml#85"))
    assert_names(diagnosis, "compile.torch2trt_missing_converter", ["`convert_view`", "converters/view.py"])


def test_onnx_dynamo_dispatch_error_names_op_and_overload():
    # https://github.com/microsoft/onnxscript/issues/2146 (runbooks/compile/onnx_dynamo_translation.md's example)
    diagnosis = explain_paste(
        "<class 'torch.onnx._internal.exporter._errors.DispatchError'>: No ONNX function found for "
        "<OpOverload(op='aten.min' overload='other')>. Failure message: All overloads did not match the node "
        "`%min_1 : [num_users=1] = call_function[target=torch.ops.aten.min.other](args = (%add_6 %clone) kwargs = {})`.")
    assert_names(diagnosis, "compile.onnx_dynamo_translation", ["`aten.min.other`"])


def test_onnx_dynamo_conversion_error_names_the_node():
    diagnosis = explain_paste(
        "torch.onnx._internal.exporter._errors.ConversionError: Error when translating node %fft_c2r : [num_users=1] "
        "= call_function[target=torch.ops.prims.fft_c2r.default](args = (%transpose_20,), kwargs = {dim: [2], "
        "last_dim_size: 1024}). See the stack trace for more information.")
    assert_names(diagnosis, "compile.onnx_dynamo_translation", ["`%fft_c2r`", "torch.ops.prims.fft_c2r.default"])


def test_frozen_storage_mutation_points_at_out_of_place_ops():
    # excerpt of https://github.com/pytorch/pytorch/issues/131679 (runbooks/compile/functional_frozen_storage.md's example)
    diagnosis = explain_paste("RuntimeError: cannot mutate tensors with frozen storage")
    assert_names(diagnosis, "compile.functional_frozen_storage", ["cannot mutate tensors with frozen storage"])
    assert any("masked_fill(" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_module_attribute_assignment_during_export_names_the_attribute():
    diagnosis = explain_paste("[rank0]:     self.cache_k = self.cache_k.to(xq)\n\n"
                              "[rank0]: AssertionError: Mutating module attribute cache_k during export.")
    assert_names(diagnosis, "compile.export_attribute_mutation", ["`cache_k`", "self.cache_k = ..."])
    assert any("register_buffer" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_onnx_custom_namespace_paste_names_flash_attn():
    # https://github.com/NVIDIA/TensorRT-LLM/issues/2368
    diagnosis = explain_paste(
        "UnsupportedOperatorError: ONNX export failed on an operator with unrecognized namespace "
        "flash_attn::_flash_attn_forward. If you are trying to export a custom operator, make sure you registered it "
        "with the right domain and version.")
    assert_names(diagnosis, "compile.onnx_custom_namespace", ["`flash_attn::_flash_attn_forward`", "flash-attn"])
    assert any('attn_implementation="eager"' in fix for fix in diagnosis.fixes), diagnosis.fixes
