"""install()/uninstall(), chaining to previous hooks, the IPython extension, and containment of our own failures."""

from __future__ import annotations

import io
import re
import sys
import threading
import traceback

import pytest
import torch
from torch import nn

import explainer
from explainer.hook import install as _hook


@pytest.fixture(autouse=True)
def _restore_hooks():
    saved = sys.excepthook, threading.excepthook
    yield
    explainer.uninstall()
    sys.excepthook, threading.excepthook = saved


def _real_shape_error() -> RuntimeError:
    layer = nn.Linear(256, 10)
    activations = torch.randn(32, 512)
    try:
        layer(activations)
    except RuntimeError as exc:
        return exc
    raise AssertionError("no error")


def test_install_returns_previous_hook_chains_and_uninstall_restores(capsys):
    calls = []

    def team_hook(etype, value, tb):
        calls.append(etype)

    sys.excepthook = team_hook
    previous = explainer.install()
    assert previous is team_hook
    assert sys.excepthook is not team_hook
    assert explainer.install() is team_hook, "a second install must be harmless and return the same hook"
    exc = _real_shape_error()
    sys.excepthook(type(exc), exc, exc.__traceback__)
    assert calls == [RuntimeError], "the previous hook must run exactly once"
    err = capsys.readouterr().err
    assert "activations of shape (32, 512)" in err and "layer = Linear(in_features=256" in err
    explainer.uninstall()
    assert sys.excepthook is team_hook


def test_hook_prints_pythons_traceback_unchanged_first(capsys):
    explainer.install()
    exc = _real_shape_error()
    sys.excepthook(type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    expected = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert err.startswith(expected)
    assert err[len(expected):].startswith("torch-explainer [shape.matmul]")


def test_threading_hook_chains_and_restores(capsys):
    seen = []
    threading.excepthook = lambda args: seen.append(args.exc_type)
    explainer.install()

    def work():
        nn.Linear(3, 1)(torch.zeros(2, 5))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [RuntimeError]
    assert "[shape.matmul]" in capsys.readouterr().err
    explainer.uninstall()
    assert threading.excepthook is not _hook._thread_excepthook


def test_keyboard_interrupt_and_system_exit_are_not_explained(capsys):
    explainer.install()
    for exc in (KeyboardInterrupt(), SystemExit(3)):
        sys.excepthook(type(exc), exc, None)
    assert "torch-explainer" not in capsys.readouterr().err


def test_json_format_is_one_line(capsys):
    explainer.install(format="json")
    exc = _real_shape_error()
    sys.excepthook(type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    last = err.rstrip("\n").splitlines()[-1]
    assert last.startswith("{") and '"rule": "shape.matmul"' in last


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown format"):
        explainer.install(format="xml")


def test_internal_failure_is_one_line_and_traceback_untouched(monkeypatch, capsys):
    explainer.install()

    def broken(*args, **kwargs):
        raise ZeroDivisionError("explainer bug")

    monkeypatch.setattr(_hook, "explain", broken)
    exc = _real_shape_error()
    sys.excepthook(type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    expected = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert err.startswith(expected)
    rest = err[len(expected):]
    assert rest.count("\n") == 1 and rest.startswith("torch-explainer: internal error")
    assert "ZeroDivisionError: explainer bug" in rest


def test_failing_probe_keeps_the_text_diagnosis_and_says_so_in_one_line(monkeypatch):
    from explainer.probes import PROBES, Probe

    original = PROBES["linear_operands"]

    def crash(ctx):
        raise RuntimeError("probe bug")

    monkeypatch.setitem(PROBES, "linear_operands", Probe(original.name, crash, original.provides, original.doc))
    exc = _real_shape_error()
    stream = io.StringIO()
    _hook.report(exc, exc.__traceback__, stream)
    out = stream.getvalue()
    assert "A matrix multiply got (32x512) and (256x10)" in out
    assert out.count("torch-explainer: internal error") == 1 and "probe bug" in out


def test_explain_api_returns_diagnosis_with_contract_keys():
    exc = _real_shape_error()
    diagnosis = explainer.explain(exc)
    assert isinstance(diagnosis, explainer.Diagnosis)
    data = diagnosis.to_dict()
    assert data["rule"] == "shape.matmul"
    assert data["location"]["file"] == __file__
    assert data["culprits"][0] == {"name": "layer", "kind": "module", "type": "Linear",
                                   "repr": "Linear(in_features=256, out_features=10, bias=True)"}
    assert data["culprits"][1]["name"] == "activations" and data["culprits"][1]["shape"] == [32, 512]


def test_ipython_extension_prints_after_ipythons_traceback(capsys):
    from IPython.testing.globalipapp import get_ipython, start_ipython

    shell = start_ipython() or get_ipython()  # (the first call starts it; later ones return None)
    shell.run_cell("import torch\nfrom torch import nn\nnet = nn.Linear(8, 2)\nbatch = torch.randn(4, 6)")
    shell.run_line_magic("load_ext", "explainer")
    shell.run_cell("net(batch)")
    out, err = capsys.readouterr()
    assert "RuntimeError" in out and "mat1 and mat2 shapes cannot be multiplied (4x6 and 8x2)" in out  # IPython's
    # The diagnosis on stderr, as the hook's (in Jupyter, the cell's stderr output, shown after the traceback)
    assert "torch-explainer" not in out and err.startswith("torch-explainer [shape.matmul]")
    assert "net = Linear(in_features=8, out_features=2, bias=True) got batch of shape (4, 6)" in err
    shell.run_cell("net(batch)", silent=True)  # as `ipython script.ipy` and `%run script.ipy` run a file's cells
    assert capsys.readouterr().err.startswith("torch-explainer [shape.matmul]")
    shell.run_line_magic("unload_ext", "explainer")
    shell.run_cell("net(batch)")
    assert "torch-explainer" not in str(capsys.readouterr())


def test_a_live_notebook_cell_is_named_as_ipythons_traceback_names_it(capsys):
    from IPython.testing.globalipapp import get_ipython, start_ipython

    shell = start_ipython() or get_ipython()
    shell.run_cell("import torch\nfrom torch import nn\nnet = nn.Linear(8, 2)\nbatch = torch.randn(4, 6)")
    shell.run_line_magic("load_ext", "explainer")
    try:
        shell.run_cell("def halve(x):\n    y = x / 2\n    return net(y)\n", store_history=True)
        shell.run_cell("out = halve(batch)", store_history=True)
    finally:
        shell.run_line_magic("unload_ext", "explainer")
    out, err = capsys.readouterr()
    cell = re.search(r"^(Cell In\[\d+\]), line 3, in halve", out, re.M)  # IPython's own name for the cell
    assert cell, out
    assert f"  at {cell[1]}:3 in halve   return net(y)" in err
    assert "ipython-input" not in err


def _shell_with_a_linear_layer():
    from IPython.testing.globalipapp import get_ipython, start_ipython

    shell = start_ipython() or get_ipython()
    shell.run_cell("import torch\nfrom torch import nn\nnet = nn.Linear(8, 2)\nbatch = torch.randn(4, 6)")
    return shell


def test_a_syntax_error_raised_at_run_time_keeps_ipythons_own_traceback(capsys):
    # IPython shows one raised by running code (eval of a config string) with its frames (the new user's review of
    # 2026-12-07: under the extension they were gone); the diagnosis names its type, as the README promises.
    shell = _shell_with_a_linear_layer()
    cell = 'def parse_cfg(s):\n    return eval(s)\nparse_cfg("1 +")'
    shell.run_cell(cell)
    plain = capsys.readouterr()
    shell.run_line_magic("load_ext", "explainer")
    try:
        shell.run_cell(cell)
    finally:
        shell.run_line_magic("unload_ext", "explainer")
    explained = capsys.readouterr()
    assert ", line 2 in parse_cfg" in plain.out and "SyntaxError: invalid syntax" in plain.out, plain.out
    assert explained.out == plain.out
    assert explained.err.startswith("torch-explainer: no known pytorch failure matches this error (SyntaxError at "), (
        explained.err)


def test_the_extension_leaves_a_set_custom_exc_handler_in_place(capsys):
    shell = _shell_with_a_linear_layer()
    calls = []

    def team_handler(shell, etype, value, tb, tb_offset=None):  # e.g. one that also reports to the team's chat
        calls.append(etype)
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)

    shell.set_custom_exc((RuntimeError,), team_handler)
    try:
        shell.run_line_magic("load_ext", "explainer")
        shell.run_cell("net(batch)")
        shell.run_line_magic("unload_ext", "explainer")
        shell.run_cell("net(batch)")
        assert shell.custom_exceptions == (RuntimeError,)
    finally:
        shell.set_custom_exc((), None)
    assert calls == [RuntimeError, RuntimeError]
    out, err = capsys.readouterr()
    assert out.count("mat1 and mat2 shapes cannot be multiplied (4x6 and 8x2)") == 2
    assert err.count("torch-explainer [shape.matmul]") == 1


def test_install_in_an_ipython_cell_loads_the_extension(capsys):
    # IPython puts its own sys.excepthook back after each cell: a hook installed from a cell would never be called.
    shell = _shell_with_a_linear_layer()
    hook = sys.excepthook
    shell.run_cell("import explainer\nexplainer.install()")
    try:
        assert "explainer" in shell.extension_manager.loaded
        assert sys.excepthook is hook
        shell.run_cell("net(batch)")
    finally:
        shell.run_cell("explainer.uninstall()")
    assert "explainer" not in shell.extension_manager.loaded
    out, err = capsys.readouterr()
    assert "mat1 and mat2 shapes cannot be multiplied (4x6 and 8x2)" in out
    assert err.count("torch-explainer [shape.matmul]") == 1


def test_the_runner_explains_what_a_hook_that_replaced_ours_printed(capsys):
    # The script set a hook that does not chain to the one it found (as rich.traceback.install() does): the runner,
    # which caught the exception, explains it after that hook's output, once.
    from explainer.hook import runner

    explainer.install()

    def framework_hook(etype, value, tb):
        sys.stderr.write("framework: " + "".join(traceback.format_exception(etype, value, tb)))

    sys.excepthook = framework_hook
    exc = _real_shape_error()
    assert runner._uncaught(exc, __file__) == 1
    err = capsys.readouterr().err
    assert err.startswith("framework: Traceback") and err.count("torch-explainer [shape.matmul]") == 1
    assert err.index("mat1 and mat2") < err.index("torch-explainer")
    sys.excepthook = _hook._excepthook  # ours reached: the runner adds nothing
    exc = _real_shape_error()
    runner._uncaught(exc, __file__)
    assert capsys.readouterr().err.count("torch-explainer [shape.matmul]") == 1


def test_explain_given_text_points_to_explain_text():
    with pytest.raises(TypeError, match=r"takes an exception, not str; .* use explainer\.explain_text\(text\)"):
        explainer.explain(str(_real_shape_error()))
