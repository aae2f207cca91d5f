"""compile and other rules against errors raised by real torch calls (no C++ compiler needed:
backend="eager" and torch.export trace without generating code), and against corpus wordings."""

from __future__ import annotations

import re
import traceback

import pytest
import torch

from explainer import explain
from explainer.diagnose.explain import explain_text

from conftest import assert_names, corpus_message, hooks_kept, raise_fixture, raised

ADDRESS_RE = re.compile(r"0x[0-9a-f]+")  # a live object's address in a message raised here


def _main_pickles_a_lambda() -> str:
    """The last line of a real traceback: a script, run as __main__, that pickles a lambda."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import pickle\nf = lambda x: x\npickle.dumps(f)"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0, done.stdout
    return done.stderr.strip().splitlines()[-1]


def _tracer_warning() -> str:
    """A real TracerWarning of torch.jit.trace, printed as Python prints a warning (path, line, source line)."""
    import warnings

    def fn(input, target):
        if input.size(0) != target.size(0):
            return input
        return target

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.jit.trace(fn, (torch.ones(2), torch.ones(2)))
    hit = next(w for w in caught if w.category.__name__ == "TracerWarning")
    return warnings.formatwarning(hit.message, hit.category, hit.filename, hit.lineno)


def _fake_tensor_error(call) -> str:
    """The error a real op raises under FakeTensorMode, with its exception's full name as a traceback ends."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    def run():
        with FakeTensorMode():
            call()
    error = raised(run)
    return f"{type(error).__module__}.{type(error).__name__}: {error}"


def _script_sum_with_a_tensor_dim() -> None:
    @torch.jit.script
    def reduce(x: torch.Tensor, d: torch.Tensor):
        return torch.sum(x, dim=d)


def _live(call) -> str:
    """The error line a real call raises on this machine, as its traceback ends."""
    error = raised(call)
    return f"{type(error).__name__}: {error}"


def _script_full_like_with_a_grad_tensor() -> None:
    @torch.jit.script
    def filled(x: torch.Tensor, v: torch.Tensor):
        return torch.full_like(x, v)  # v is converted to a Scalar at run time: it must not require grad

    filled(torch.zeros(2), torch.tensor(1.0, requires_grad=True))


def _ddp_wrapped_linear_generate() -> str:
    """The AttributeError a real DDP wrapper (gloo, one CPU process) raises for a method only the model has."""
    import socket

    import torch.distributed as dist

    with socket.socket() as probe:  # a free local port for the one-process store
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with hooks_kept("ddp_wrapped_linear_generate"):
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
        try:
            model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
            return _live(lambda: model.generate)
        finally:
            dist.destroy_process_group()


def _python_315_check() -> str:
    """torch's own check_if_dynamo_supported(), run as if on Python 3.15 (sys.version_info patched)."""
    import sys
    from unittest import mock

    from torch._dynamo.eval_frame import check_if_dynamo_supported

    with mock.patch.object(sys, "version_info", (3, 15, 0, "final", 0)):
        return _live(check_if_dynamo_supported)


def _main_unpickles_a_missing_class() -> str:
    """The last line of a real traceback: a script, run as __main__, unpickles a `__main__.Net` it does not define."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import pickle\npickle.loads(b'c__main__\\nNet\\n.')"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0, done.stdout
    return done.stderr.strip().splitlines()[-1]


def _pickle_open_file():
    import pickle
    import tempfile

    with tempfile.TemporaryFile("w") as handle:
        pickle.dumps(handle)


class _BufferBeforeInit(torch.nn.Module):
    def __init__(self):  # noqa: D107 - super().__init__() left out on purpose
        self.register_buffer("running", torch.zeros(1))


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
    # https://github.com/pytorch/pytorch/issues/164119
    (corpus_message("r23_a.yaml#57"), "compile.recompile_limit", ["recompile_limit (1)", "`fn`", "_test_recompile1.py:14"]),
    # https://github.com/modelscope/FunClip/issues/105
    (corpus_message("data_dist.yaml#136"), "other.dll_load_failed", ["WinError 126", "fbgemm.dll"]),
    # https://github.com/rusty1s/pytorch_scatter/issues/248
    (corpus_message("r13_b.yaml#30"), "other.undefined_symbol", ["_scatter_cuda.so", "_ZNK3c107SymBool10guard_boolEPKcl",
                                                                 "extension"]),
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
     "other.shared_library_missing", ["libcudart.so.11.0"]),
    # https://github.com/openai/CLIP/pull/151
    (corpus_message("r10_a.yaml#63"), "other.pickle_local_object",
     ["_transform.<locals>.<lambda>", "a lambda", "`_transform()`"]),
    # raised live: a script run as __main__ pickles a lambda (a subprocess, so the lambda lives in __main__)
    (_main_pickles_a_lambda(), "other.pickle_local_object", ["`__main__`", "lambda"]),
    # raised live: pickling an open file, bool() of an empty tensor, a buffer registered before Module.__init__()
    (_live(_pickle_open_file), "other.pickle_unpicklable", ["`_io.TextIOWrapper`", "open file"]),
    (_live(lambda: bool(torch.tensor([]))), "other.tensor_bool_ambiguous", ["empty tensor"]),
    (_live(_BufferBeforeInit), "other.module_assign_before_init", ["buffer", "super().__init__()"]),
    # verbatim from https://github.com/Lightning-AI/litgpt/issues/241 (the error line of its traceback)
    ("ValueError: Precision 'bf16-true' is invalid. Allowed precision values: ('16-mixed', 'bf16-mixed', '32-true', "
     "'64-true', 64, 32, 16, '64', '32', '16', 'bf16')",
     "other.lightning_precision_invalid", ["does not know `precision='bf16-true'`", "'16-mixed'"]),
    # https://github.com/simchowitzlabpublic/nano-world-model/pull/17
    (corpus_message("r4_b.yaml#93"), "other.lightning_precision_invalid",
     ["'bf16-mixed'", "older than 2.0"]),
    # https://github.com/dasayan05/chirodiff/issues/1
    (corpus_message("r10_b.yaml#9"), "other.lightning_cli_unknown_key", ["`trainer.process_position`", "`process_position`"]),
], ids=lambda value: ADDRESS_RE.sub("0x...", value) if isinstance(value, str) else None)  # ids alike in every process
def test_message_only_summaries_name_the_values(message, rule, values):
    assert_names(explain_text(message), rule, values)


@pytest.mark.parametrize("message", [
    "ERROR: Could not find a version that satisfies the requirement triton (from versions: none)",
    "ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
    "ImportError: /usr/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12",
    "ValueError: The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()",
    # raised live: a `python -c` script unpickling a class its __main__ does not define
    _main_unpickles_a_missing_class(),
])
def test_near_misses_stay_with_no_compile_or_other_rule(message):
    rule = explain_text(message).rule
    assert rule is None or not rule.startswith(("compile.", "other.")), rule


def test_ddps_wrapper_without_the_models_method_says_model_module():
    # raised live: a real DistributedDataParallel (gloo, world_size=1) asked for its model's `generate`
    message = _ddp_wrapped_linear_generate()
    assert message == "AttributeError: 'DistributedDataParallel' object has no attribute 'generate'"
    diagnosis = explain_text(message)
    assert diagnosis.rule == "other.object_has_no_attribute"
    assert "DistributedDataParallel wrapper" in diagnosis.summary
    assert any("`model.module.generate`" in fix for fix in diagnosis.fixes)


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
    # https://github.com/pytorch/pytorch/pull/152924
    (corpus_message("compile2.yaml#4"), "compile.export_constraints", ["L['x'].size()[0]", "constant (5)"]),
    # https://github.com/wenet-e2e/wespeaker/issues/422
    (corpus_message("compile2.yaml#16"), "compile.torchscript_value_type", ["`input`", "Optional[Tensor]", "self.tcm(x)"]),
    # https://github.com/pytorch/pytorch/issues/55312
    (corpus_message("compile2.yaml#19"), "compile.torchscript_unsupported",
     ["kernel_size", "__torch__.torch.nn.modules.conv.Conv1d", "print(layer.kernel_size)"]),
    # raised live: torch.jit.trace of a branch on a tensor, printed as Python prints the warning
    (_tracer_warning(), "compile.tracer_warning", ["boolean", "if input.size(0) != target.size(0):"]),
    ("AssertionError: torch.* op returned non-Tensor int call_function aten.len",
     "compile.non_tensor_op", ["aten.len", "int"]),
])
def test_new_compile_wordings_name_their_values(message, rule, values):
    assert_names(explain_text(message), rule, values)


# --- compile wordings added from the corpus (older torch, bare asserts, cut pastes) ----------------

@pytest.mark.parametrize("message, rule, values", [
    # the torchbench pyhpc_isoneutral_mixing lowering failure, from the corpus
    (corpus_message("modern.yaml#47"), "compile.inductor_lowering", ["`aten.slice_scatter.default`", "AssertionError", "size=[0, 2, 1, 2, 2]", "size 0"]),
    ("torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with fullgraph=True. Excessive recompilations",
     "compile.recompile_limit", ["recompile_limit", "fullgraph=True"]),
    # raised live: .item() and nonzero() under FakeTensorMode
    (_fake_tensor_error(lambda: torch.randn(1).item()),
     "compile.data_dependent", ["aten._local_scalar_dense.default", ".item()", "DataDependentOutputException"]),
    (_fake_tensor_error(lambda: torch.nonzero(torch.randn(3))),
     "compile.data_dependent", ["aten.nonzero.default", "output shape"]),
    # https://github.com/pytorch/torchdynamo/issues/1953
    (corpus_message("modern.yaml#1"), "compile.dynamo_internal_error", ["KeyError: 'source'"]),
    # https://github.com/BobJohnson24/ComfyUI-INT8-Fast/issues/63 (a paste cut after the call's arguments)
    (corpus_message("modern.yaml#63"), "compile.fake_tensor_failed", ["`linear`", "size=(4096, 3072)", "cut off", "in_features"]),
    # https://github.com/pytorch/pytorch/issues/120233
    (corpus_message("r9_b.yaml#60"), "compile.python_unsupported", ["Python 3.12+", "check_if_dynamo_supported"]),
    # raised live: torch's check_if_dynamo_supported() with sys.version_info patched to 3.15
    (_python_315_check(), "compile.python_unsupported", ["Python 3.15+"]),
    ("RuntimeError: hi() expected value of type Tensor for argument 'x' in position 0, but instead got value of type int.",
     "compile.torchscript_value_type", ["`hi()`", "`x`", "Tensor", "int"]),
    # raised live: torch.jit.script of torch.sum with a Tensor dim
    (_live(_script_sum_with_a_tensor_dim), "compile.torchscript_value_type",
     ["`aten::sum`", "dim_IntList", "`dim`", "List[int]", "Tensor"]),
    # raised live: a scripted torch.full_like given a fill value that requires grad
    (_live(_script_full_like_with_a_grad_tensor), "compile.torchscript_scalar_argument", ["requires grad", "scalar argument"]),
])
def test_compile_wordings_from_the_corpus_name_their_values(message, rule, values):
    assert_names(explain_text(message), rule, values)


def _fake_tensor_error() -> str:
    """torch.compile's fake-tensor run of an add of (2, 3) and (4, 3), live, as Python prints the error."""
    def add(x, y):
        return x + y

    try:
        torch.compile(add, backend="eager")(torch.zeros(2, 3), torch.zeros(4, 3))
    except Exception as exc:  # noqa: BLE001 - torch._dynamo.exc.TorchRuntimeError
        return "".join(traceback.format_exception_only(exc))
    finally:
        torch._dynamo.reset()
    raise AssertionError("the add did not fail")


def test_fake_tensor_call_with_its_error_is_not_read_as_cut():
    text = _fake_tensor_error()
    assert "Dynamo failed to run FX node with fake tensors: call_function <built-in function add>" in text
    diagnosis = explain_text(text)
    assert diagnosis.rule == "compile.fake_tensor_failed"
    assert "`add`" in diagnosis.summary and "Attempting to broadcast" in diagnosis.summary
    assert "cut off" not in diagnosis.summary


def test_torchscript_scalar_argument_from_a_real_scripted_call():
    diagnosis = explain(raise_fixture("fixtures/compile/torchscript_scalar_argument.py"))
    assert diagnosis.rule == "compile.torchscript_scalar_argument"
    assert "dimension other than 0" in diagnosis.summary and "0-dim" in diagnosis.summary
    assert any("t[0]" in fix for fix in diagnosis.fixes)


def test_torchscript_attribute_lookup_on_a_plain_python_object(tmp_path, monkeypatch):
    import importlib

    # TorchScript reads the function's source from its file, so the scripted code lives in one.
    (tmp_path / "ts_attribute_lookup.py").write_text(
        "class Backend:\n"
        "    def __init__(self):\n"
        "        self.scale = 2.0\n\n\n"
        "backend = Backend()\n\n\n"
        "def f(a):\n"
        "    return a * backend.scale\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("ts_attribute_lookup")
    monkeypatch.delitem(__import__("sys").modules, "ts_attribute_lookup")
    diagnosis = explain(raised(lambda: torch.jit.script(module.f)))
    assert diagnosis.rule == "compile.torchscript_unsupported"
    assert "'Backend'" in diagnosis.summary and "a * backend.scale" in diagnosis.summary


# --- ONNX export and TorchScript typing, from real calls and the corpus ----------------------------

def test_onnx_operator_without_conversion_names_operator_and_opsets():
    diagnosis = explain(raise_fixture("fixtures/compile/onnx_unsupported_operator.py"))
    assert diagnosis.rule == "compile.onnx_unsupported_operator"
    assert "`aten::tril`" in diagnosis.summary and "opset 13" in diagnosis.summary
    assert "opset_version=14" in diagnosis.summary


def test_onnx_opset_newer_than_torch_names_the_opset():
    diagnosis = explain(raise_fixture("fixtures/compile/onnx_unsupported_opset.py"))
    assert diagnosis.rule == "compile.onnx_unsupported_opset"
    assert "opset_version=99" in diagnosis.summary


def test_torchscript_default_value_names_parameter_and_signature():
    diagnosis = explain(raise_fixture("fixtures/compile/torchscript_default_value_type.py"))
    assert diagnosis.rule == "compile.torchscript_default_value_type"
    assert "`p`" in diagnosis.summary and "def gem(x, p=3):" in diagnosis.summary
    assert "no type annotation" in diagnosis.summary


def test_torchscript_return_type_names_both_types_and_the_return():
    diagnosis = explain(raise_fixture("fixtures/compile/torchscript_return_type.py"))
    assert diagnosis.rule == "compile.torchscript_return_type"
    assert "return str" in diagnosis.summary and "`return x` returns Tensor" in diagnosis.summary


@pytest.mark.parametrize("message, rule, values", [
    ("RuntimeError: Exporting the operator uniform to ONNX opset version 12 is not supported. Please feel free to "
     "request support or submit a pull request on PyTorch GitHub.",
     "compile.onnx_unsupported_operator", ["`uniform`", "opset 12"]),
    ("torch.onnx.symbolic_registry.UnsupportedOperatorError: Exporting the operator prim::DictConstruct to ONNX opset "
     "version 14 is not supported.", "compile.onnx_unsupported_operator", ["`prim::DictConstruct`", "dict"]),
    # verbatim from https://github.com/pytorch/pytorch/issues/25515 (the warning line above its traceback)
    ("/export/liuxiao/local/anaconda3/lib/python3.7/site-packages/torch/onnx/utils.py:562: UserWarning: ONNX export "
     "failed on ATen operator upsample_bilinear2d because torch.onnx.symbolic_opset9.upsample_bilinear2d does not exist",
     "compile.onnx_unsupported_operator", ["`upsample_bilinear2d`", "opset 9"]),
    ("ValueError: Unsupported ONNX opset version: 16", "compile.onnx_unsupported_opset", ["opset_version=16"]),
    ('Expected a default value of type Tensor on parameter "pos"', "compile.torchscript_default_value_type",
     ["`pos`", "Tensor"]),
    ("RuntimeError:\nReturn value was annotated as having type Tuple[List[str], List[List[str]]] but is actually of "
     "type Tuple[List[Tensor], List[Tensor]]:\nat code/test.py:2:12\nop_version_set = 1\n",
     "compile.torchscript_return_type", ["torch.jit.load", "Tuple[List[Tensor], List[Tensor]]"]),
    ("W0213 09:47:01.171000 226363 site-packages/torch/fx/experimental/symbolic_shapes.py:6578] failed during "
     "evaluate_expr(Ne(u0, 589824), hint=None, size_oblivious=False, forcing_spec=False",
     "compile.data_dependent", ["`Ne(u0, 589824)`"]),
    ("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard on data-dependent expression "
     "u1 > u0 (unhinted: u1 > u0).  (Size-like symbols: u0, u1)",
     "compile.data_dependent", ["`u1 > u0`", "GuardOnDataDependentSymNode"]),
    ("BackendCompilerFailed: backend='inductor' raised: RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
     "compile.backend_compiler_failed", ["device kernel image is invalid", "driver"]),
])
def test_onnx_torchscript_and_guard_wordings_name_their_values(message, rule, values):
    assert_names(explain_text(message), rule, values)




# --- other: pickling, nn.Module wrappers and __init__, bool of a tensor (fixtures raise them live) ---

@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/other/pickle_local_object.py", "other.pickle_local_object", ["build.<locals>.Encoder", "`build()`"]),
    ("fixtures/other/pickle_unpicklable.py", "other.pickle_unpicklable", ["`_thread.RLock`", "thread lock"]),
    ("fixtures/other/dataparallel_attribute.py", "other.dataparallel_attribute", ["`model.module.encode`"]),
    ("fixtures/other/module_assign_before_init.py", "other.module_assign_before_init", ["submodule", "super().__init__()"]),
    ("fixtures/other/tensor_bool_ambiguous.py", "other.tensor_bool_ambiguous", ["more than one element"]),
])
def test_other_fixtures_name_the_values(fixture, rule, values):
    diagnosis = explain(raise_fixture(fixture))
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


# --- round 5: removed or missing torch names, nn.Module wrappers, build and install failures --------

@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/other/removed_private_module.py", "other.removed_private_module", ["`torch._six`", "2.0"]),
    ("fixtures/other/torch_attribute_missing.py", "other.torch_attribute_missing",
     ["`torch.compiler.is_compiling_v2`"]),
    ("fixtures/other/module_attribute_missing.py", "other.module_attribute_missing", ["`Net`", "DataParallel"]),
])
def test_round5_other_fixtures_name_the_values(fixture, rule, values):
    assert_names(explain(raise_fixture(fixture)), rule, values)


@pytest.mark.parametrize("message, rule, values", [
    ("from torch._six import PY3\nModuleNotFoundError: No module named 'torch._six'",
     "other.removed_private_module", ["`PY3`", "`torch._six`"]),
    ("ImportError: cannot import name 'container_abcs' from 'torch._six' (/opt/conda/lib/python3.8/site-packages/torch/_six.py)",
     "other.removed_private_module", ["`container_abcs`", "1.9"]),
    ("ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead.",
     "other.removed_private_module", ["`torch.utils.ffi`", "1.0"]),
    ("AttributeError: module 'torch' has no attribute 'compiler'", "other.torch_attribute_missing",
     ["`torch.compiler`", "2.1"]),
    ("ImportError: cannot import name 'return_and_correct_aliasing' from 'torch.utils._python_dispatch'",
     "other.torch_attribute_missing", ["`torch.utils._python_dispatch.return_and_correct_aliasing`"]),
    ("torch.nn.modules.module.ModuleAttributeError: 'SiamRPNRes22' object has no attribute 'module'",
     "other.module_attribute_missing", ["`SiamRPNRes22`", "`model.module`"]),
    ("AttributeError: type object 'object' has no attribute '__getattr__'", "other.module_attribute_missing",
     ["`__getattr__`", "0.1"]),
    ("`RuntimeError: Error building extension 'fused_adam'`", "other.extension_build_failed", ["`fused_adam`", "ninja"]),
    # https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1614
    (corpus_message("r31_c.yaml#10"), "other.bnb_native_library_missing", ["`libbitsandbytes_cuda121.so`", "CUDA"]),
])
def test_round5_other_wordings_name_their_values(message, rule, values):
    assert_names(explain_text(message), rule, values)


@pytest.mark.parametrize("message, rule, values", [
    ("RuntimeError: ONNX export failed: Couldn't export Python operator SigmoidGeometricMean",
     "compile.onnx_python_operator", ["`SigmoidGeometricMean`", "symbolic"]),
    ("RuntimeError: ONNX export failed: Couldn’t export Python operator qfn", "compile.onnx_python_operator", ["`qfn`"]),
    ("torch.onnx.OnnxExporterError: Failed to export the model to ONNX. Generating SARIF report at "
     "'report_dynamo_export.sarif'. SARIF is a standard format", "compile.onnx_export_failed",
     ["OnnxExporterError", "'report_dynamo_export.sarif'", "dynamo_export"]),
    # https://github.com/pasteurlabs/tesseract-core/issues/425
    (corpus_message("r5_b.yaml#100"), "compile.onnx_export_failed", ["step 1/3", "TorchExportError", "'getpwuid(): uid not found: 501'"]),
    ("skipping cudagraphs due to mutated inputs (2 instances)", "compile.cudagraphs_skipped",
     ["mutated inputs", "2 instances"]),
    ("RuntimeError: Detected 6 tensor(s) in the cudagraph pool not tracked as outputs.\n"
     "All live allocations must be tracked for correctness.", "compile.cudagraph_pool_untracked",
     ["6 tensor(s)", "cudagraph pool"]),
    ("RuntimeError: \nunknown builtin op:\n@torch.jit.script\ndef f(x):\n    return torch.unique(x)\n"
     "           ~~~~~~~~~~~~ <--- HERE", "compile.torchscript_unsupported", ["`return torch.unique(x)`"]),
    ("RuntimeError: \nPython builtin <built-in method _get_tracing_state of PyCapsule object at 0x7fbe4014c1e0> is "
     "currently not supported in Torchscript:\nat /anaconda3/lib/python3.7/site-packages/torch/nn/utils/rnn.py:251:8\n",
     "compile.torchscript_unsupported", ["`_get_tracing_state()`", "rnn.py:251:8"]),
    ("V0812 15:05:52.194000 1848694 torch/_dynamo/symbolic_convert.py:556] [4/0] [__graph_breaks] Graph Break Reason: "
     "Unsupported method call\nV0812 15:05:52.194000 1848694 torch/_dynamo/symbolic_convert.py:556] [4/0] "
     "[__graph_breaks]   Explanation: Dynamo does not know how to trace method `__eq__` of class `<unknown type>`",
     "compile.graph_break", ["`__eq__`", "`<unknown type>`", "Unsupported method call"]),
])
def test_round5_compile_wordings_name_their_values(message, rule, values):
    assert_names(explain_text(message), rule, values)


@pytest.mark.parametrize("message", [
    "ImportError: cannot import name 'nn' from 'torch' (unknown location)",
    _live(lambda: None.module),  # raised live: an attribute looked up on None
    "AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'",
])
def test_round5_near_misses_are_not_claimed(message):
    rule = explain_text(message).rule
    assert rule not in ("other.torch_attribute_missing", "other.module_attribute_missing"), rule
