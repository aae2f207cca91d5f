"""compile rules written from round 13's misses and the wording families found beyond the corpus: real torch
calls where torch 2.x on CPU raises the error (range() of an unannotated argument, a TorchScript model whose
custom class is not registered, a tensor method traced on a NumPy value), and the wordings copied from public
threads where it cannot (torch 0.4's TorchScript, pybind11 without types, Inductor's internal checks, Windows
cache renames, Torch-TensorRT engines)."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said

# --- raised by real torch calls --------------------------------------------------------------------


def test_range_of_an_unannotated_argument_names_range_the_type_and_the_loop():
    diagnosis = explain_fixture("fixtures/compile/torchscript_range_argument.py")
    assert_names(diagnosis, "compile.torchscript_value_type",
                 ["`range()`", "argument 0", "Tensor (inferred)", "`for _ in range(times):`", "without a type annotation"])
    assert any("range(int(n))" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_model_with_an_unregistered_custom_class_names_the_class_and_says_load_the_library():
    diagnosis = explain_fixture("fixtures/compile/jit_custom_class_missing.py")
    assert_names(diagnosis, "compile.jit_custom_class_missing",
                 ["`torch.classes.mylib.Engine`", "Class Namespace cannot be used as a value", "no library loaded"])
    assert any("torch.classes.load_library" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_tensor_method_on_a_numpy_value_under_compile_says_it_is_the_numpy_value():
    diagnosis = explain_fixture("fixtures/compile/fake_tensor_numpy_value.py")
    assert_names(diagnosis, "compile.fake_tensor_failed",
                 ["`div`", "'ndarray' object has no attribute 'div'", "NumPy value", "torch.Tensor.div(total, math.pi)"])
    assert not any("fails the same way" in fix for fix in diagnosis.fixes), diagnosis.fixes


# --- round 13's messages, as pasted ----------------------------------------------------------------

def test_torch_04_script_returning_an_int_names_the_types_and_the_return():
    diagnosis = explain_paste("RuntimeError:\nexpected a tensor value but found a int:\n@torch.jit.script\ndef fn():\n"
                              "    return 0\n    ~~~~~~~~ <--- HERE")
    assert_names(diagnosis, "compile.torchscript_value_type", ["tensor value", "a int", "`return 0`", "returned"])
    assert any("torch.tensor(0)" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_range_of_a_tensor_in_an_ipython_cell_names_the_call():
    diagnosis = explain_paste(
        'RuntimeError: \nall inputs of range must be ints, found Tensor in argument 0:\n'
        '  File "<ipython-input-13-8c4279680b35>", line 2\ndef foo(x: torch.Tensor, y):  # Missing "y: int"\n'
        "    for _ in range(y):\n             ~~~~~~~ <--- HERE\n        x = x + 1\n    return x")
    assert_names(diagnosis, "compile.torchscript_value_type", ["`range()`", "a Tensor", "`for _ in range(y):`"])


@pytest.mark.parametrize("where", [
    "r13_a.yaml#49",  # https://github.com/pytorch/pytorch/issues/8764 (IPython's cell frame of `fn(1)`)
    "r4_b.yaml#38",  # https://github.com/pytorch/pytorch/issues/6073 (IPython's cell frame of `add(x, y)`)
])
def test_pybind11_cast_without_types_is_the_torchscript_cast_family(where):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, "compile.torchscript_cast_error",
                 ["Unable to cast Python instance to C++ type", "compile in debug mode", "TorchScript function"])
    assert any("torch.tensor(1)" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_the_same_sentence_re_raised_as_a_valueerror_by_jax_is_not_claimed():
    from explainer.diagnose.explain import explain_text

    text = "ValueError: Unable to cast Python instance to C++ type (compile in debug mode for details)"
    assert explain_text(text).rule != "compile.torchscript_cast_error"


def test_torchaudio_class_missing_at_jit_load_names_the_class_and_torchaudio():
    diagnosis = explain_paste(
        'RuntimeError: \nClass Namespace cannot be used as a value:\n'
        'Serialized   File "code/__torch__/torchaudio/sox_effects/sox_effects.py", line 5\n'
        "    effects: List[List[str]],\n    channels_first: bool=True) -> Tuple[Tensor, int]:\n"
        "  in_signal = __torch__.torch.classes.torchaudio.TensorSignal.__new__(__torch__.torch.classes.torchaudio.TensorSignal)\n"
        "                                                                      ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE")
    assert_names(diagnosis, "compile.jit_custom_class_missing",
                 ["`torch.classes.torchaudio.TensorSignal`", "Class Namespace", "version the model was saved with"])
    assert any("`import torchaudio` before `torch.jit.load" in fix and "TensorSignal" in fix for fix in diagnosis.fixes)


def test_torch_tensorrt_engine_unknown_at_load_says_import_torch_tensorrt():
    diagnosis = explain_paste(
        # an excerpt, verbatim, of runbooks/compile/jit_custom_class_missing.md example #3
        # (https://github.com/pytorch/TensorRT/issues/632)
        "terminate called after throwing an instance of 'torch::jit::ErrorReport'\n  what():  \n"
        "Unknown type name '__torch__.torch.classes.tensorrt.Engine':\n"
        'Serialized   File "code/__torch__/models/backbone.py", line 4\n  __parameters__ = []\n  __buffers__ = []\n'
        "  __torch___models_backbone_Backbone_trt_engine_ : __torch__.torch.classes.tensorrt.Engine\n"
        "                                                   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE")
    assert_names(diagnosis, "compile.jit_custom_class_missing", ["`torch.classes.tensorrt.Engine`", "Torch-TensorRT"])
    assert any("import torch_tensorrt" in fix and "libtorchtrt_runtime.so" in fix for fix in diagnosis.fixes)


class _AnnotatedWithTheFactory(torch.nn.Module):
    def forward(self, x: torch.tensor) -> torch.tensor:
        return x


def test_an_unknown_python_annotation_stays_with_unresolved_name():
    # `torch.tensor` (the factory function) used as a type annotation, scripted live
    from explainer.diagnose.explain import explain_text

    exc = raised(lambda: torch.jit.script(_AnnotatedWithTheFactory()))
    text = f"{type(exc).__name__}: {exc}"
    assert "Unknown type name 'torch.tensor'" in text, text
    assert explain_text(text).rule == "compile.torchscript_unresolved_name", text


def test_numpy_value_under_compile_from_tt_xla_names_the_op_and_error():
    diagnosis = explain_paste(
        "torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node with fake tensors: call_function "
        "<Wrapped method <original div>>(*(FakeTensor(..., size=(), dtype=torch.float64), 3.141592653589793), **{}): "
        "got AttributeError(\"'ndarray' object has no attribute 'div'\")")
    assert_names(diagnosis, "compile.fake_tensor_failed", ["`div`", "'ndarray' object has no attribute 'div'", "NumPy"])


def test_fake_tensor_call_of_a_torch_function_shown_as_a_builtin_method_names_it():
    import explainer

    @torch.compile(backend="eager")
    def join(x, y):
        return torch.cat([x, y], dim=1)

    diagnosis = explainer.explain(raised(lambda: join(torch.ones(1, 2, 4), torch.ones(1, 3, 8))))
    assert "<built-in method cat of type object" in diagnosis.error
    assert_names(diagnosis, "compile.fake_tensor_failed",
                 ["`cat`", "Expected 4 in dimension 2 but got 8 for tensor number 1", "torch.cat([x, y], dim=1)"])


def test_old_torchinductor_ir_check_names_the_view_nodes():
    diagnosis = explain_paste(
        'Traceback (most recent call last):\n'
        '  File "/fsx/users/binbao/torchdynamo/torchinductor/ir.py", line 1570, in unwrap_storage\n'
        "    assert isinstance(x, (Buffer, ReinterpretView)), x\nAssertionError: View(\n  ReinterpretView(\n"
        "    StorageBox(\n      InputBuffer(name='view_default_4', layout=FixedLayout('cuda', torch.float16, "
        "size=[1, 30, 256], stride=[7680, 256, 1]))\n    ),")
    assert_names(diagnosis, "compile.inductor_internal_error", ["View(ReinterpretView(...))", "Inductor"])
    assert "aot_eager" in said(diagnosis)


def test_inductor_error_wrapping_an_assertion_names_it():
    diagnosis = explain_paste("torch._inductor.exc.InductorError: AssertionError: vr must not be None for symbol q3")
    assert_names(diagnosis, "compile.inductor_internal_error", ["vr must not be None for symbol q3", "InductorError"])


def test_inductor_frames_under_backend_compiler_failed_name_the_function():
    # an excerpt, verbatim (its frames unindented as the thread shows them), of
    # https://github.com/pytorch/pytorch/issues/108323
    diagnosis = explain_paste(
        'File "/workspace/pytorch/torch/_inductor/scheduler.py", line 1613, in codegen_extern_call\n'
        "node.codegen(V.graph.wrapper_code)\n"
        'File "/workspace/pytorch/torch/_inductor/ir.py", line 3705, in codegen\n'
        "super().codegen(wrapper)\n"
        'File "/workspace/pytorch/torch/_inductor/ir.py", line 3334, in codegen\n'
        "args = [*self.codegen_args(), *self.codegen_kwargs()]\n"
        'File "/workspace/pytorch/torch/_inductor/ir.py", line 3203, in codegen_kwargs\n'
        "assert (\n"
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "AssertionError: ordered_kwargs_for_cpp_kernel has to be provided")
    assert_names(diagnosis, "compile.inductor_internal_error",
                 ["ir.py:3203", "`codegen_kwargs`", "ordered_kwargs_for_cpp_kernel has to be provided"])


@pytest.mark.parametrize("text, rule", [
    ("torch._inductor.exc.InductorError: RuntimeError: Compiler: cl is not found.", "compile.cxx_compiler_missing"),
    # an excerpt, verbatim, of r3_compile_dtype.yaml#3
    # (https://github.com/pytorch/pytorch/issues/103587)
    ("torch._inductor.exc.LoweringException: AssertionError: Found <class 'sympy.core.relational.Unequality'>, which is "
     "not a supported top level IR node. See [Note: Inductor IR]\n  target: <built-in function ne>", "compile.inductor_lowering"),
])
def test_inductor_errors_with_a_rule_of_their_own_keep_it(text, rule):
    assert explain_paste(text).rule == rule


def test_windows_cache_rename_names_the_winerror():
    diagnosis = explain_paste(
        "- **Exception Message:** backend='inductor' raised:\nFileExistsError: [WinError 183] 当文件已存在时，无法创建该文件。: "
        "'C:\\\\Users\\\\14424\\\\AppData\\\\Local\\\\Temp\\\\torchinductor_14424\\\\cache\\\\.65400.61844.tmp' -> "
        "'C:\\\\Users\\\\14424\\\\AppData\\\\Local\\\\Temp\\\\torchinductor_14424\\\\cache\\\\"
        "4b3b371057b51fa891d04edc1fde0046fd4fb8bebfe395d55b3b42b2e8330c28'")
    assert_names(diagnosis, "compile.inductor_cache_file", ["FileExistsError [WinError 183]", "torchinductor_14424",
                                                              "rename onto an existing file"])


def test_scripted_dataparallel_names_its_forward_and_says_script_the_inner_module():
    diagnosis = explain_paste(
        # an excerpt, verbatim, of the corpus entry r10_b.yaml#64 (https://github.com/pytorch/pytorch/issues/29637)
        "torch.jit.frontend.NotSupportedError: Compiled functions can't take variable number of arguments or use "
        "keyword-only arguments with defaults:\nat /usr/local/lib/python3.6/dist-packages/torch/nn/parallel/"
        "data_parallel.py:138:32\n    def forward(self, *inputs, **kwargs):\n                                ~~~~~~~ <--- HERE")
    assert_names(diagnosis, "compile.torchscript_unsupported", ["data_parallel.py:138:32", "DataParallel", "**kwargs"])
    assert any("torch.jit.script(model.module)" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_unsupported_builtin_names_file_and_line_of_the_call():
    diagnosis = explain_paste(
        'RuntimeError: \nPython builtin <built-in function next> is currently not supported in Torchscript:\n'
        '  File "/home/penghao/parseq/strhub/models/parseq/model.py", line 75\n    @property\n'
        "    def _device(self) -> torch.device:\n        return next(self.head.parameters(recurse=False)).device\n"
        "               ~~~~ <--- HERE")
    assert_names(diagnosis, "compile.torchscript_unsupported", ["`next()`", "model.py, line 75"])


# --- compile families checked against more real wordings (beyond round 13's entries) ----------------

def test_modulelist_indexed_by_a_loop_variable_names_the_container_and_says_iterate():
    diagnosis = explain_fixture("fixtures/compile/torchscript_modulelist_index.py")
    assert_names(diagnosis, "compile.torchscript_modulelist_index",
                 ["`self.layers`", "`self.layers[i]`", "integer literal", "`x = self.layers[i](x)`"])
    assert any("for i, layer in enumerate(self.layers):" in fix for fix in diagnosis.fixes), diagnosis.fixes


@pytest.mark.parametrize("text, values", [
    # torch 1.6-2.0: an excerpt, verbatim up to its HERE line, of https://github.com/nnzhan/MTGNN/issues/30
    ("RuntimeError: \nExpected integer literal for index. ModuleList/Sequential indexing is only supported with integer "
     "literals. Enumeration is supported, e.g. 'for index, v in enumerate(self): ...':\n  File \"D:\\pyyj\\MTGNN\\layer.py\", "
     "line 146\n\t\t\t\tx = []\n\t\t\t\tfor i in range(len(self.kernel_set)):\n\t\t\t\t\t\tx.append( self.tconv[i](input))\n"
     "                ~~~~~~~~~~~~~ <--- HERE", ["`self.tconv[i]`", "integer literal"]),
    # torch 1.0 (https://github.com/pytorch/pytorch/issues/16123)
    ("RuntimeError:\npython value of type 'ModuleList' cannot be used as a value:\n@torch.jit.script_method\n"
     "def forward(self, input, index):\n    return self.layers[index](input)\n           ~~~~~~~~~~~ <--- HERE",
     ["ModuleList", "torch 1.0 to 1.3", "`return self.layers[index](input)`"]),
])
def test_modulelist_index_wordings_of_older_torch(text, values):
    assert_names(explain_paste(text), "compile.torchscript_modulelist_index", values)


def test_a_global_list_is_still_an_unresolved_name_not_a_modulelist():
    diagnosis = explain_paste(
        "RuntimeError: \npython value of type 'list' cannot be used as a value. Perhaps it is a closed over global variable? "
        "If so, please consider passing it in as an argument or use a local variable instead.:\n  File \"/work/main/fixtures/"
        "compile/torchscript_unresolved_name.py\", line 14\n    def forward(self, x):\n        return x * THRESHOLD[0]\n"
        "                   ~~~~~~~~~ <--- HERE")
    assert diagnosis.rule == "compile.torchscript_unresolved_name", diagnosis.rule


def test_method_on_an_optional_tensor_says_rule_out_none():
    diagnosis = explain_fixture("fixtures/compile/torchscript_optional_method.py")
    assert_names(diagnosis, "compile.torchscript_unsupported", ["`.to`", "`Optional[Tensor]`", "may be None"])
    assert any("assert x is not None" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_python_only_tensor_method_in_scripted_code_names_it():
    import explainer

    def pointer(x: torch.Tensor):
        return x.data_ptr()

    diagnosis = explainer.explain(raised(lambda: torch.jit.script(pointer)))
    assert_names(diagnosis, "compile.torchscript_unsupported", ["`.data_ptr`", "`Tensor`", "return x.data_ptr()"])


def test_scripted_class_attribute_set_outside_init_names_it():
    diagnosis = explain_fixture("fixtures/compile/torchscript_class_attribute.py")
    assert_names(diagnosis, "compile.torchscript_unsupported", ["`self.total`", "`__init__`", "`self.total = 0`"])
    assert any("Assign `self.total` in `__init__`" in fix for fix in diagnosis.fixes), diagnosis.fixes


@pytest.mark.parametrize("text, values", [
    # torch 1.1 (https://github.com/pytorch/pytorch/issues/20004)
    ("RuntimeError: \nTried to access to nonexistent attribute first. Did you forget to initialize it in __init__()?:\n"
     "def __getitem__(self, k):\n    return self.first\n           ~~~~~~~~~~ <--- HERE", ["`self.first`", "`return self.first`"]),
    # torch 1.2 (https://github.com/pytorch/pytorch/issues/25547)
    ("RuntimeError: \nTried to access nonexistent attribute __class__. Did you forget to initialize it in __init__()?:",
     ["`self.__class__`", "special attributes"]),
])
def test_scripted_class_attribute_read_without_init_names_it(text, values):
    assert_names(explain_paste(text), "compile.torchscript_unsupported", values)


def test_torch_11_missing_attribute_of_a_script_module_names_it():
    # https://github.com/pytorch/pytorch/pull/20779
    diagnosis = explain_paste("RuntimeError: \nattribute 'whatisgoingon' does not exist:\n@torch.jit.script_method\n"
                              "def forward(self, x):\n    return x + self.whatisgoingon\n               ~~~~~~~~~~~~~~~~~~ <--- HERE")
    assert_names(diagnosis, "compile.torchscript_module_attribute", ["`whatisgoingon`", "never set in `__init__`"])


@pytest.mark.parametrize("text, values", [
    # torch 2.0 (https://github.com/pytorch/pytorch/issues/99752)
    ("[2023-04-23 21:07:17,183] torch._dynamo.symbolic_convert: [WARNING] Graph break: torch.* op returned non-Tensor dtype "
     "call_function <built-in function get_autocast_gpu_dtype> from user code at   File \"/home/dwood/v1111/repositories/"
     "stable-diffusion-stability-ai/ldm/modules/diffusionmodules/util.py\", line 133, in forward\n"
     "    \"dtype\": torch.get_autocast_gpu_dtype(),", ["`torch.get_autocast_gpu_dtype()`", "a dtype", "broke the graph"]),
    # torch 2.3 (https://github.com/pytorch/pytorch/issues/126026)
    ("Graph break: Unsupported: torch.* op returned non-Tensor bool call_function <built-in function _is_any_autocast_enabled>",
     ["`torch._is_any_autocast_enabled()`", "a bool", "fullgraph=True"]),
])
def test_graph_break_on_a_torch_call_returning_a_python_value_names_the_call(text, values):
    assert_names(explain_paste(text), "compile.non_tensor_op", values)


def test_export_dim_related_to_another_names_the_guard_and_the_suggested_fix():
    import explainer
    from torch.export import Dim

    class Flatten(torch.nn.Module):
        def forward(self, x, y):
            return x.reshape([-1]) + y

    dy = Dim("dy", min=6)
    diagnosis = explainer.explain(raised(lambda: torch.export.export(
        Flatten(), (torch.randn(6, 2), torch.randn(12)), dynamic_shapes={"x": (dy - 6, 2), "y": (dy,)})))
    assert_names(diagnosis, "compile.export_constraints", ["L['x'].size()[0]", "export suggests `dy = 12`"])


def test_specializations_unexpectedly_required_names_the_dim_and_its_value():
    # https://github.com/pytorch/pytorch/issues/126127 (torch 2.3)
    diagnosis = explain_paste(
        "Specializations unexpectedly required (batch, audio_signal__2)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
        "  - batch = L['args'][0][0].size()[0] must be specialized to 4 because the guards generated for it are too complex.\n"
        "  - audio_signal__2 = L['args'][0][0].size()[2] must be specialized to 256 because the guards generated for it are "
        "too complex.")
    assert_names(diagnosis, "compile.export_constraints",
                 ["`batch, audio_signal__2`", "`batch`", "L['args'][0][0].size()[0]", "to 4"])
