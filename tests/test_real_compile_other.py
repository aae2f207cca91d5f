"""compile and other rules against errors raised by real torch calls (no C++ compiler needed:
backend="eager" and torch.export trace without generating code), and against corpus wordings."""

from __future__ import annotations

import pytest
import torch

from explainer import explain
from explainer._explain import explain_text

from conftest import raise_fixture, raised


def test_data_dependent_branch_under_export_names_the_expression():
    diagnosis = explain(raise_fixture("fixtures/compile/data_dependent.py"))
    assert diagnosis.rule == "compile.data_dependent"
    assert "u0 > 0" in diagnosis.summary
    assert "forward" in diagnosis.summary


def test_specialised_dynamic_dim_names_dim_and_constant():
    class Reshaper(torch.nn.Module):
        def forward(self, x):
            return x.reshape(3, -1)

    batch = torch.export.Dim("batch", max=128)
    exc = raised(lambda: torch.export.export(Reshaper(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: batch}}))
    diagnosis = explain(exc)
    assert diagnosis.rule == "compile.export_constraints"
    assert "`batch`" in diagnosis.summary and "constant (3)" in diagnosis.summary


def test_fullgraph_data_dependent_branch_is_a_graph_break():
    @torch.compile(backend="eager", fullgraph=True)
    def clip(x):
        if x.sum() > 0:
            return x
        return -x

    torch._dynamo.reset()
    diagnosis = explain(raised(lambda: clip(torch.randn(4))))
    assert diagnosis.rule == "compile.graph_break"
    assert "Data-dependent branching" in diagnosis.summary and "TensorVariable()" in diagnosis.summary


def test_vmap_randomness():
    diagnosis = explain(raised(lambda: torch.vmap(lambda x: x + torch.randn_like(x))(torch.zeros(4, 3))))
    assert diagnosis.rule == "other.vmap_randomness"
    assert "'same' or 'different'" in diagnosis.summary


@pytest.mark.parametrize("message, rule, values", [
    ("W1021 10:44:18.989000 2926727 torch/_dynamo/convert_frame.py:1355] [0/8] torch._dynamo hit config.recompile_limit (8)\n"
     "W1021 10:44:18.989000 2926727 torch/_dynamo/convert_frame.py:1355] [0/8]    function: 'step' (/tmp/t.py:4)\n"
     "W1021 10:44:18.989000 2926727 torch/_dynamo/convert_frame.py:1355] [0/8]    last reason: 0/7: t == 7",
     "compile.recompile_limit", ["recompile_limit (8)", "`step`", "t == 7"]),
    ("OSError: [WinError 126] The specified module could not be found. Error loading "
     "\"C:\\Python311\\Lib\\site-packages\\torch\\lib\\c10.dll\" or one of its dependencies.",
     "other.dll_load_failed", ["WinError 126", "c10.dll"]),
    ("OSError: /venv/lib/python3.10/site-packages/torch_scatter/_scatter_cuda.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev",
     "other.undefined_symbol", ["_scatter_cuda.so", "_ZN3c1017RegisterOperatorsD1Ev", "extension"]),
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
     "other.shared_library_missing", ["libcudart.so.11.0"]),
])
def test_message_only_summaries_name_the_values(message, rule, values):
    diagnosis = explain_text(message)
    assert diagnosis.rule == rule
    for value in values:
        assert value in diagnosis.summary, (value, diagnosis.summary)


@pytest.mark.parametrize("message", [
    "ERROR: Could not find a version that satisfies the requirement triton (from versions: none)",
    "ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
    "ImportError: /usr/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12",
    "TypeError: 'NoneType' object is not iterable",
])
def test_near_misses_stay_with_no_compile_or_other_rule(message):
    rule = explain_text(message).rule
    assert rule is None or not rule.startswith(("compile.", "other.")), rule


# --- TorchScript, tracing and export wordings raised by real torch calls -------------------------

def test_torchscript_unannotated_int_argument_names_argument_and_types():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)

        @torch.jit.script
        def resize(image, height):
            return image * height

    diagnosis = explain(raised(lambda: resize(torch.ones(2), 4)))
    assert diagnosis.rule == "compile.torchscript_value_type"
    for value in ("`resize()`", "`height`", "Tensor (inferred)", "int", "no type annotation"):
        assert value in diagnosis.summary, (value, diagnosis.summary)
    assert any("height: int" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_torchscript_comprehension_if_names_feature_and_line():
    import warnings

    def large_indices(n: int):
        return [i for i in range(n) if i > 4]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        diagnosis = explain(raised(lambda: torch.jit.script(large_indices)))
    assert diagnosis.rule == "compile.torchscript_unsupported"
    assert "Comprehension ifs" in diagnosis.summary
    assert "return [i for i in range(n) if i > 4]" in diagnosis.summary


def test_trace_of_non_tensor_output_is_explained():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        diagnosis = explain(raised(lambda: torch.jit.trace(lambda x: (x * 2, 3), torch.ones(2))))
    assert diagnosis.rule == "compile.trace_output_type"
    assert "returns something that is not a tensor" in diagnosis.summary


def test_export_with_a_bare_tensor_asks_for_a_tuple():
    exc = raised(lambda: torch.export.export(torch.nn.Linear(4, 2), torch.ones(3, 4)))
    diagnosis = explain(exc)
    assert diagnosis.rule == "compile.export_args_tuple"
    assert "torch.Tensor" in diagnosis.summary and "`args`" in diagnosis.summary
    assert any("(x,)" in fix for fix in diagnosis.fixes)


@pytest.mark.parametrize("message, rule, values", [
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nCppCompileError: C++ compile error",
     "compile.cpp_compile_error", ["inductor", "CppCompileError"]),
    ("AssertionError: libcuda.so cannot found!\nPossible files are located at ['/lib/x86_64-linux-gnu/libcuda.so.1']."
     "Please create a symlink of libcuda.so to any of the file.",
     "compile.libcuda_missing", ["libcuda.so", "/lib/x86_64-linux-gnu/libcuda.so.1"]),
    ("torch.fx.experimental.symbolic_shapes.ConstraintViolationError: Constraints violated (L['x'].size()[0])! "
     "For more information, run with TORCH_LOGS=\"+dynamic\".\n  - You marked L['x'].size()[0] as dynamic but your "
     "code specialized it to be a constant (5). Either remove the mark_dynamic or use a less strict API.",
     "compile.export_constraints", ["L['x'].size()[0]", "constant (5)"]),
    ("forward(__torch__.Block self, Tensor input) -> Tensor:\n"
     "Expected a value of type 'Tensor (inferred)' for argument 'input' but instead found type 'Optional[Tensor]'.\n"
     "Inferred 'input' to be of type 'Tensor' because it was not annotated with an explicit type.\n"
     "  File \"model.py\", line 12\n        x = self.tcm(x)\n            ~~~~~~~~ <--- HERE\n",
     "compile.torchscript_value_type", ["`input`", "Optional[Tensor]", "self.tcm(x)"]),
    ("RuntimeError: \nTried to access nonexistent attribute or method 'kernel_size' of type "
     "'__torch__.torch.nn.modules.conv.Conv1d (of Python compilation unit at: 0x55)'. Did you forget to initialize "
     "an attribute in __init__()?:\n  File \"m.py\", line 3\n    print(layer.kernel_size)\n          ~~~~~~~~~~~~~~~~~ <--- HERE",
     "compile.torchscript_unsupported", ["kernel_size", "__torch__.torch.nn.modules.conv.Conv1d"]),
    ("TracerWarning: Converting a tensor to a Python boolean might cause the trace to be incorrect. We can't record "
     "the data flow of Python values, so this value will be treated as a constant in the future. This means that the "
     "trace might not generalize to other inputs!\n  if input.size(0) != target.size(0):",
     "compile.tracer_warning", ["boolean", "if input.size(0) != target.size(0):"]),
    ("Dynamo failed to run FX node with fake tensors: call_function <built-in function add>(*(FakeTensor(..., "
     "size=(2, 3)), FakeTensor(..., size=(4, 3))), **{}): got RuntimeError('The size of tensor a (2) must match the "
     "size of tensor b (4) at non-singleton dimension 0')\n\nfrom user code:\n   File \"m.py\", line 7, in forward\n"
     "    return x + y\n",
     "compile.fake_tensor_failed", ["`add`", "return x + y", "tensor a (2)"]),
    ("AssertionError: torch.* op returned non-Tensor int call_function aten.len",
     "compile.non_tensor_op", ["aten.len", "int"]),
])
def test_new_compile_wordings_name_their_values(message, rule, values):
    diagnosis = explain_text(message)
    assert diagnosis.rule == rule, (diagnosis.rule, message[:80])
    for value in values:
        assert value in diagnosis.summary, (value, diagnosis.summary)
