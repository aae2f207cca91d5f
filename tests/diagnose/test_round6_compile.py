"""compile rules written from round 6's misses: real torch calls where torch 2.x on CPU raises the
error, and the wordings copied from public threads (several torch and Triton releases) where it
cannot (GPU-only Triton and CUDA graph failures)."""

from __future__ import annotations

import io
import runpy
import sys
import warnings

import pytest

from explainer import explain
from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import explain_text

from conftest import ROOT


def raise_fixture(relative: str) -> BaseException:
    """Run fixtures/<relative> as __main__ and return the exception it raises (with its traceback)."""
    saved_argv, saved_excepthook = sys.argv[:], sys.excepthook
    sys.argv = [str(ROOT / relative)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(str(ROOT / relative), run_name="__main__")
    except Exception as exc:  # noqa: BLE001 - the error is the point
        return exc
    finally:
        sys.argv, sys.excepthook = saved_argv, saved_excepthook
    raise AssertionError(f"{relative} did not raise")


def assert_names(diagnosis, rule: str, values) -> None:
    """The diagnosis is `rule`'s, and its summary names every value."""
    assert diagnosis.rule == rule, (diagnosis.rule, diagnosis.summary)
    missing = [value for value in values if value not in diagnosis.summary]
    assert not missing, (missing, diagnosis.summary)


def first_answer(message: str):
    """What `explainer explain -` answers for a pasted message: its first diagnosis with a rule."""
    return next((d for d in explain_stream(io.StringIO(message)) if d.rule is not None), None)


# --- raised by real torch calls --------------------------------------------------------------------

def test_scripted_module_attribute_of_numpy_type_names_module_attribute_and_type():
    diagnosis = explain(raise_fixture("fixtures/compile/torchscript_module_attribute.py"))
    assert_names(diagnosis, "compile.torchscript_module_attribute",
                 ["`width`", "`Head`", "`numpy.int64`", "return x[:, : self.width]"])
    assert any("width: int" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_trace_of_a_wrapper_object_says_it_has_no_name():
    diagnosis = explain(raise_fixture("fixtures/compile/torchscript_unnamed_object.py"))
    assert_names(diagnosis, "compile.torchscript_unnamed_object",
                 ["torch.jit", "`__name__`", "Could not get name of python class object"])


def test_func_of_a_scripted_method_names_type_and_attribute():
    diagnosis = explain(raise_fixture("fixtures/compile/script_object_attribute.py"))
    assert_names(diagnosis, "compile.script_object_attribute", ["`__func__`", "`torch._C.ScriptMethod`"])


def test_onnx_pad_with_computed_sizes_at_opset_9_names_operator_and_opset():
    pytest.importorskip("torch.onnx")
    diagnosis = explain(raise_fixture("fixtures/compile/onnx_unsupported_use.py"))
    assert_names(diagnosis, "compile.onnx_unsupported_use", ["`Pad`", "opset 9", "opset 11", "must be constant"])


# --- wordings from public threads (what `explainer explain -` answers) ----------------------------

@pytest.mark.parametrize("message, rule, values", [
    ("`Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1`",
     "compile.triton_capability", ["7.0", "6.1", "Volta"]),
    ("RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, which is "
     "used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA "
     "capability 6.0.", "compile.triton_capability", ["Tesla P100-PCIE-16GB", "6.0"]),
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Found NVIDIA GeForce GTX 1070 "
     "which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only supports "
     "devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1",
     "compile.triton_capability", ["NVIDIA GeForce GTX 1070", "6.1"]),
    ("RuntimeError: PassManager::run failed", "compile.triton_passmanager", ["PassManager::run failed"]),
    ("RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run. "
     "Stack trace: File \".../bug.py\", line 7, in my_model\n    y = torch.matmul(x, x). To prevent overwriting, clone "
     "the tensor outside of torch.compile() or call torch.compiler.cudagraph_mark_step_begin() before each model "
     "invocation.", "compile.cudagraph_output_overwritten",
     ["y = torch.matmul(x, x)", "`my_model`", "cudagraph_mark_step_begin"]),
    ("RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run. "
     "Stack trace: File \"/w/foo.py\", line 5, in foo", "compile.cudagraph_output_overwritten",
     ["`foo`", "/w/foo.py:5", "clone it"]),
    ("[2023-03-29 07:54:55,549] torch._dynamo.output_graph: [WARNING] Graph break: call_function graph_break in "
     "skip_files /pytorch/torch/_dynamo/__init__.py from user code at:\n  File \"/t.py\", line 20, in g\n"
     "    return f(x)", "compile.graph_break", ["`graph_break`", "call_function"]),
    ("Torchdynamo: [WARNING] Graph break: call_function BuiltinVariable(print) [ConstantVariable(str)] {} from user "
     "code at:\n   File \"test/test_nn.py\", line 22085, in <module>", "compile.graph_break",
     ["BuiltinVariable(print)"]),
    ("ERROR：torch._dynamo.exc.UserError: Dynamic control flow is not supported at the moment, Please use "
     "functorch.experimental.control_flow.cond to explicitly capture the control flow.",
     "compile.graph_break", ["functorch.experimental.control_flow.cond"]),
    ("File ~/torch/_dynamo/exc.py:190, in unimplemented(msg)\n    188 def unimplemented(msg: str) -> NoReturn:\n"
     "--> 190     raise Unsupported(msg)\n\nUnsupported: NYI", "compile.graph_break", ["NYI", "`unimplemented()`"]),
    ("RuntimeError: Exporting the operator deform_conv2d to  opset version 11 is not supported. Please open a bug to "
     "request ONNX export support for the missing operator", "compile.onnx_unsupported_operator",
     ["`deform_conv2d`", "opset 11", "torchvision"]),
    ("RuntimeError: Unsupported: ONNX export of operator interpolate (with scales), missing input shape.",
     "compile.onnx_unsupported_use", ["`interpolate`", "missing input shape"]),
    ("attribute 'whatisgoingon' of type 'NoneType' is not usable in a script method (did you forget to add it "
     "__constants__?):\n@torch.jit.script_method\ndef forward(self, x):\n    return x + self.whatisgoingon\n"
     "               ~~~~~~~~~~~~~~~~~~ <--- HERE", "compile.torchscript_module_attribute",
     ["`whatisgoingon`", "`NoneType`", "__constants__", "return x + self.whatisgoingon"]),
    ("RuntimeError: \nModule 'Sequential' has no attribute '_modules' :\n  File \"/torch/nn/modules/container.py\", "
     "line 251\n    @property\n    def modules(self):\n        return self._modules\n"
     "               ~~~~~~~~~~~~~ <--- HERE", "compile.torchscript_module_attribute", ["`Sequential`", "`_modules`"]),
    ("RuntimeError: Could not get name of python class object", "compile.torchscript_unnamed_object",
     ["Could not get name of python class object"]),
    ("AttributeError: 'torch._C.ScriptMethod' object has no attribute '__func__'", "compile.script_object_attribute",
     ["`torch._C.ScriptMethod`", "`__func__`"]),
    ("AttributeError: 'RecursiveScriptModule' object has no attribute 'copy'", "compile.script_object_attribute",
     ["`copy`", "state dict"]),
    ("> RuntimeError: Unable to cast Python instance of type <class 'int'> to C++ type 'at::Tensor'",
     "compile.torchscript_cast_error", ["`int`", "`at::Tensor`"]),
    ("RuntimeError: Cannot backprop through mirrored meta, file a bug in PyTorch", "compile.mirrored_meta_backprop",
     ["Cannot backprop through mirrored meta"]),
    ("torch.jit.frontend.NotSupportedError: slicing multiple dimensions at the same time isn't supported yet",
     "compile.torchscript_unsupported", ["slicing multiple dimensions at the same time is not supported"]),
    ("torch.jit.frontend.UnsupportedNodeError: GeneratorExp aren't supported:\n  File \"nets/nn.py\", line 51\n"
     "    def forward(self, x):\n        y.extend(m(y[-1]) for m in self.res_m)\n                ~ <--- HERE",
     "compile.torchscript_unsupported", ["GeneratorExp", "y.extend(m(y[-1]) for m in self.res_m)"]),
    ("RuntimeError: Cannot call sizes() on tensor with symbolic sizes/strides", "compile.symbolic_sizes",
     ["`sizes()`", "dynamic shapes"]),
    ("triton.compiler.errors.CompilationError: at 8:11:\ndef triton_(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"
     "    xoffset = tl.program_id(0) * XBLOCK\n    tmp1 = tmp0.to(tl.float32)\n           ^",
     "compile.triton_compilation_error", ["8:11", "`triton_`", "tmp1 = tmp0.to(tl.float32)", "inductor"]),
])
def test_round6_wordings_name_their_values(message, rule, values):
    diagnosis = first_answer(message)
    assert diagnosis is not None, message
    assert_names(diagnosis, rule, values)


@pytest.mark.parametrize("message", [
    # a setuptools build of a non-torch C extension that links -lcuda is not Triton
    "/usr/bin/ld: cannot find -lcuda\ncollect2: ld returned 1 exit status\nerror: command 'gcc' failed with exit status 1",
    # pybind11's generic cast failure is printed by every pybind11 library (JAX, Paddle, pygmo)
    "ValueError: Unable to cast Python instance to C++ type (compile in debug mode for details)",
    "RuntimeError: Unable to cast Python instance of type <class 'numpy.ndarray'> to C++ type '?'",
    # a torch/torchvision version mismatch when loading, not a missing attribute of a scripted module
    "AttributeError: type object 'RecursiveScriptModule' has no attribute '_construct'",
    "RuntimeError: Triton only support CUDA 10.0 or higher, but got CUDA version: 12.8",
    "AttributeError: 'Sequential' object has no attribute '_modules'",
])
def test_near_misses_are_not_claimed_by_the_new_compile_rules(message):
    new_rules = {"compile.libcuda_missing", "compile.torchscript_cast_error", "compile.script_object_attribute",
                 "compile.triton_capability", "compile.torchscript_module_attribute"}
    diagnosis = first_answer(message)
    assert diagnosis is None or diagnosis.rule not in new_rules, (diagnosis.rule, message)


def test_triton_link_failure_with_its_compiler_call_is_still_libcuda():
    message = ("/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status\n\n"
               "subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpe7nu9b0l/main.c', '-O3', '-shared', "
               "'-fPIC', '-Wno-psabi', '-o', '/tmp/tmpe7nu9b0l/cuda_utils.cpython-312-x86_64-linux-gnu.so', '-lcuda']' "
               "returned non-zero exit status 1.")
    assert explain_text(message).rule == "compile.libcuda_missing"


@pytest.mark.parametrize("message, stage", [
    ("  File \"/venv/lib/python3.11/site-packages/triton/backends/nvidia/compiler.py\", line 341, in make_llir\n"
     "    pm.run(mod)\nRuntimeError: PassManager::run failed", "make_llir"),
    ("  File \"/x/site-packages/triton/backends/intel/compiler.py\", line 304, in make_ttgir\n"
     "    pm.run(mod, 'make_ttgir')\nRuntimeError: PassManager::run failed", "make_ttgir"),
])
def test_triton_pass_failure_names_the_stage_when_its_frame_is_in_the_text(message, stage):
    assert_names(explain_text(message), "compile.triton_passmanager", [stage])
