"""Where a NaN/Inf first appears: re-run one forward with temporary hooks, then read the gradients.

Far cheaper than training under `torch.autograd.detect_anomaly`: nothing is hooked on the normal
steps; on the one bad step the model's forward runs once more with forward hooks on every submodule
and a torch-function mode that sees every tensor operation, all removed as soon as it returns.

The re-run follows the non-finite values themselves: every operation whose output holds a NaN/Inf
is recorded with where its non-finite input came from, so the value that reaches the model's output
is traced back to the operation that made it from finite inputs (and the module whose code ran it),
or to the model's input (the data) or a parameter (the weights). A -inf attention mask that softmax
absorbs never reaches the output and is never blamed; a `torch.log` in a parent's own forward is
blamed on the parent, not on the child that receives its result.

When the forward is finite but the gradients are not, the same re-run keeps its graph and a backward
from a finite output gradient is run with a hook on every autograd node: the first node that turns
finite incoming gradients into non-finite ones is the operation whose derivative made the NaN, and
its module is the one that ran that operation in the forward. Backward is linear in the output
gradient, so where a unit output gradient stays finite it is replayed once more at the real step's
scale (read off the parameters whose real gradients stayed finite): a node that overflows there is
the model's backward overflowing from a finite output gradient; where none does, the output gradient
itself was non-finite (the loss's backward made it).
"""

from __future__ import annotations

import math
import sys
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from explainer._inspect import dtype_name, is_user_file, module_repr
from explainer._pycode import module_expression

from .curves import significant
from .places import place_text, user_place

# Operators shown by the symbol a user writes.
_OP_SYMBOLS = {"div": "/", "true_divide": "/", "mul": "*", "pow": "**", "matmul": "@", "sub": "-", "add": "+",
               "__truediv__": "/", "__rtruediv__": "/", "__mul__": "*", "__rmul__": "*", "__pow__": "**",
               "__rpow__": "**", "__matmul__": "@", "__sub__": "-", "__rsub__": "-", "__add__": "+",
               "__radd__": "+", "__itruediv__": "/=", "__imul__": "*=", "__iadd__": "+=", "__isub__": "-="}


# Operations that make a NaN/Inf from finite inputs at a point of their domain (log 0, x / 0, sqrt of a negative,
# exp of a large value): an eps or a clamp guards them. Any other operation (`linear`, `@`, `conv2d`, `*`) makes
# one only by overflowing: its operands are too large, and no eps helps.
DOMAIN_OPS = {"log", "log2", "log10", "log1p", "log_", "/", "/=", "div", "div_", "true_divide", "reciprocal",
              "sqrt", "rsqrt", "**", "pow", "pow_", "exp", "exp_", "expm1", "exp2", "acos", "asin", "atanh",
              "acosh", "lgamma", "digamma", "polygamma", "xlogy", "logit", "erfinv", "tan"}
# Operations whose derivative is infinite where their value is finite (the gradient of sqrt, a norm, log or a
# fractional power at 0, of a division by ~0, of acos/asin at +-1): an eps guards the backward.
SINGULAR_DERIVATIVE_OPS = {"sqrt", "rsqrt", "norm", "vector_norm", "linalg_norm", "log", "log2", "log10", "log1p",
                           "**", "pow", "/", "/=", "div", "div_", "true_divide", "reciprocal", "acos", "asin",
                           "atanh", "cdist", "pdist", "std", "where", "logit", "xlogy", "normalize", "cosine_similarity",
                           "atan2", "sqrt_"}


def _float_tensors(value: Any) -> list[torch.Tensor]:
    leaves, _ = tree_flatten(value)
    return [t for t in leaves if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())]


def _finite(tensor: torch.Tensor) -> bool:
    return bool(torch.isfinite(tensor).all())


def _all_finite(tensors: list[torch.Tensor]) -> bool:
    return all(_finite(t) for t in tensors)


def _kind(tensors: list[torch.Tensor]) -> str:
    return "nan" if any(bool(torch.isnan(t).any()) for t in tensors) else "inf"


def op_name(func: Any) -> str:
    """`log`, `/`, `softmax`: how the user wrote the operation (torch's own function names only)."""
    name = getattr(func, "__name__", None) or "?"
    return _OP_SYMBOLS.get(name, name)


def nonfinite_names(named: list[tuple[str, torch.Tensor]]) -> list[str]:
    """Names of the tensors with a NaN or Inf, in the given order, with one device sync."""
    present = [(n, t) for n, t in named if t is not None]
    if not present:
        return []
    with torch.no_grad():
        norms = torch._foreach_norm([t.detach() for _, t in present])
        flags = torch.isfinite(torch.stack([n.float().to(norms[0].device) for n in norms])).tolist()
    return [name for (name, _), ok in zip(present, flags) if not ok]


def param_owner(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def display_name(name: str) -> str:
    return name or "model"  # the model itself, as the user's code most often names it


def locate(model: torch.nn.Module, args: tuple | None, kwargs: dict | None, *,
           loss_finite: bool | None = None, call_site: tuple[str, int] | None = None) -> dict[str, Any]:
    """Facts and culprits about where the first non-finite value was made, forward or backward.

    `call_site` is (file, line) of the user's code that called the model in the real step: named when the
    operation ran in no forward of the user's.

    The re-run keeps the caller's state: random number generators are forked, buffers (BatchNorm
    running statistics) are restored afterwards and no `.grad` is touched.
    """
    facts: dict[str, Any] = {}
    culprits: list[dict[str, Any]] = []
    named = list(model.named_parameters())
    bad_weights = nonfinite_names(named)
    if bad_weights:
        facts["nonfinite_params"] = bad_weights[:10]
        facts["nonfinite_param_count"] = len(bad_weights)
    # Backward reaches the parameters nearest the output first: the last non-finite gradient in
    # registration order is the one closest to where the NaN/Inf was made.
    bad_grads = nonfinite_names([(n, p.grad) for n, p in named])
    if bad_grads:
        facts["grad_param"] = bad_grads[-1]
        facts["nonfinite_grad_count"] = len(bad_grads)
    if args is not None:
        trace = trace_step(model, args, kwargs or {}, backward=bool(bad_grads))
        origin = trace.forward_origin()
        if origin is not None:
            facts.update(origin_facts(origin))
            if "op_place" not in facts and call_site is not None and is_user_file(call_site[0]):
                facts["call_place"] = place_text(*call_site)
            if trace.first_output and trace.first_output.name != origin["frame"]:
                facts["first_output_module"] = display_name(trace.first_output.name)
            culprits.append({"name": origin["frame"] or "model", "kind": "module", "type": origin["module_type"],
                             "repr": module_repr(origin["module"]),
                             "note": _culprit_note(origin)})
        elif trace.completed:
            facts["forward_finite"] = True
            facts.update(_output_facts(trace.outputs, loss_finite))
            # A non-finite loss whose backward, not the model's, made the gradients non-finite: the loss's forward
            # made the NaN/Inf (a NaN loss has a NaN gradient), so there is no backward verdict to give.
            loss_made_it = loss_finite is False and trace.backward == {"backward_source": "loss"}
            if trace.backward is not None and not loss_made_it:
                facts.update(trace.backward)
                op = trace.backward.get("backward_forward_op")
                if trace.backward.get("backward_source") == "module" and op not in SINGULAR_DERIVATIVE_OPS:
                    facts["backward_overflow"] = True  # a derivative finite everywhere: large values overflowed
                if "backward_module" in trace.backward:
                    culprits.append({"name": trace.backward["backward_module"], "kind": "module",
                                     "type": trace.backward["backward_module_type"],
                                     "note": f"its backward {'overflowed' if trace.backward['backward_source'] == 'overflow' else 'made the non-finite gradient'} ({trace.backward['backward_op']})"})
    # From a finite forward, a non-finite loss whose backward made every non-finite gradient: none is a culprit.
    loss_made_it = facts.get("forward_finite") and loss_finite is False and "backward_source" not in facts
    if "module" not in facts and bad_grads and not loss_made_it:
        facts["grad_module"] = param_owner(bad_grads[-1])
        culprits.append({"name": bad_grads[-1], "kind": "parameter", "note": "non-finite gradient nearest the output"})
    return {"facts": facts, "culprits": culprits}


def origin_facts(origin: dict[str, Any]) -> dict[str, Any]:
    facts = {"module": display_name(origin["frame"]), "module_type": origin["module_type"],
             "source": origin["source"], "op": origin["op"], "input_finite": origin["input_finite"],
             "input_dtype": origin["input_dtype"], "output_dtype": origin["dtype"], "output_kind": origin["kind"]}
    # the module as the user's code reaches it from the model (`model.block[0]`), for the fixes' code
    facts["module_code"] = module_expression(f"model.{origin['frame']}") if origin["frame"] else "model"
    if not origin["frame"]:
        facts["whole_model"] = True
    if origin["source"] == "module" and origin["input_finite"] and origin["op"] not in DOMAIN_OPS | {"?"}:
        facts.update(_overflow_facts(origin["module"]))
    if origin.get("place"):
        facts["op_place"] = origin["place"]
    return facts


def _overflow_facts(module: torch.nn.Module) -> dict[str, Any]:
    """`op_overflow`: the operation made NaN/Inf from finite inputs without a domain error, so its operands were
    too large; `weight_absmax`: the largest magnitude of the module's own weights, when finite."""
    facts: dict[str, Any] = {"op_overflow": True}
    with torch.no_grad():
        values = [float(p.detach().abs().max()) for p in module.parameters(recurse=False) if p.numel()]
    if values and all(math.isfinite(v) for v in values):
        facts["weight_absmax"] = significant(max(values))
    return facts


def _culprit_note(origin: dict[str, Any]) -> str:
    if origin["source"] == "data":
        return f"first module the non-finite input batch reached ({origin['kind']})"
    if origin["source"] == "weights":
        return f"uses non-finite weights ({origin['kind']})"
    return f"made the first non-finite value with `{origin['op']}` ({origin['kind']})"


def rerun_forward(model: torch.nn.Module, args: tuple, kwargs: dict) -> tuple[str, torch.nn.Module, dict] | None:
    """(dotted name, module, facts) of where the non-finite output was made, or None."""
    origin = trace_step(model, args, kwargs, backward=False).forward_origin()
    if origin is None:
        return None
    info = origin_facts(origin)
    del info["module"], info["module_type"]
    return origin["frame"], origin["module"], info


class _Frame:
    __slots__ = ("name", "module", "input_finite", "input_dtype")

    def __init__(self, name: str, module: torch.nn.Module, input_finite: bool | None, input_dtype: str | None):
        self.name, self.module, self.input_finite, self.input_dtype = name, module, input_finite, input_dtype


class _Trace(TorchFunctionMode):
    """One re-run's record: module frames, where each non-finite tensor came from, autograd node owners."""

    def __init__(self, model: torch.nn.Module, track_nodes: bool):
        super().__init__()
        self.names = {id(m): n for n, m in model.named_modules()}
        self.root = model
        self.external = {id(t): "weights" for t in list(model.parameters()) + list(model.buffers())}
        self.track_nodes = track_nodes
        self.stack: list[_Frame] = []
        self.provenance: dict[int, dict[str, Any]] = {}
        self.keep: list[torch.Tensor] = []  # keeps ids in `provenance` unique while the re-run lives
        self.owners: dict[Any, tuple[str, str]] = {}
        self.first_output: _Frame | None = None
        self.outputs: list[torch.Tensor] = []
        self.completed = False
        self.backward: dict[str, Any] | None = None
        self.seq = 0
        self.busy = False
        self.boundary: Any = None  # the frame that calls the model: user code above it is not the forward's

    # -- module frames ---------------------------------------------------------------------------

    def pre_hook(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        self.busy = True
        try:
            ins = _float_tensors((args, kwargs))
            if module is self.root:
                for t in ins:
                    self.external[id(t)] = "data"
                    self.keep.append(t)
            frame = _Frame(self.names.get(id(module), "?"), module, _all_finite(ins) if ins else None,
                           dtype_name(ins[0].dtype) if ins else None)
            self.stack.append(frame)
        finally:
            self.busy = False

    def post_hook(self, module: torch.nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
        self.busy = True
        try:
            frame = self.stack.pop() if self.stack else None
            if self.first_output is None and frame is not None:
                outs = _float_tensors(output)
                if outs and not _all_finite(outs):
                    self.first_output = frame
        finally:
            self.busy = False

    # -- operations -----------------------------------------------------------------------------

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.busy:
            return func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        in_place = name.endswith("_") and not name.startswith("__") or name.startswith("__i")
        before = None
        if in_place:  # the op overwrites its input: read the input's state before it runs
            self.busy = True
            try:
                before = {id(t): _finite(t) for t in _float_tensors((args, kwargs))}
            finally:
                self.busy = False
        out = func(*args, **kwargs)
        self.busy = True
        try:
            self._after(func, args, kwargs, out, before)
        finally:
            self.busy = False
        return out

    def _after(self, func: Any, args: tuple, kwargs: dict, out: Any, before: dict[int, bool] | None) -> None:
        outs = _float_tensors(out)
        if not outs:
            return
        frame = self.stack[-1] if self.stack else None
        if self.track_nodes:
            for t in outs:
                node = t.grad_fn
                if node is not None and node not in self.owners:
                    self.owners[node] = (frame.name if frame else "", op_name(func))
        bad = [t for t in outs if not _finite(t)]
        if not bad:
            return
        self.seq += 1
        inherited = []
        for t in _float_tensors((args, kwargs)):
            finite_before = before.get(id(t)) if before is not None else None
            if finite_before is True:
                continue
            known = self.provenance.get(id(t))
            if known is not None:
                inherited.append(known)
            elif finite_before is False or not _finite(t):
                inherited.append(self._external(t, func, frame, bad))
        origin = min(inherited, key=lambda o: o["seq"]) if inherited else self._origin("module", func, frame, bad)
        for t in bad:
            self.provenance[id(t)] = origin
            self.keep.append(t)

    def _external(self, tensor: torch.Tensor, func: Any, frame: _Frame | None, bad: list[torch.Tensor]) -> dict:
        """A non-finite input no traced operation made: the batch, a weight, or a constant in the module."""
        origin = self._origin(self.external.get(id(tensor), "module"), func, frame, bad)
        self.provenance[id(tensor)] = origin
        self.keep.append(tensor)
        return origin

    def _origin(self, source: str, func: Any, frame: _Frame | None, bad: list[torch.Tensor]) -> dict[str, Any]:
        frame = frame or _Frame("", self.root, None, None)
        return {"seq": self.seq, "source": source, "op": op_name(func), "frame": frame.name, "module": frame.module,
                "module_type": type(frame.module).__name__, "input_finite": frame.input_finite,
                "input_dtype": frame.input_dtype, "dtype": dtype_name(bad[0].dtype), "kind": _kind(bad),
                "place": user_place(self.boundary)}

    # -- results --------------------------------------------------------------------------------

    def forward_origin(self) -> dict[str, Any] | None:
        """Where the non-finite value that reaches the output was made (the earliest, if several did)."""
        bad = [t for t in self.outputs if not _finite(t)]
        origins = [self.provenance[id(t)] for t in bad if id(t) in self.provenance]
        if not origins and (bad or not self.completed):
            # An output no traced operation made, or a forward that stopped half-way: the earliest seen.
            origins = list(self.provenance.values())
        if origins:
            origin = min(origins, key=lambda o: o["seq"])
            if origin["source"] == "data" and self.first_output is not None:
                # The batch made it: name the first module whose output it turned non-finite.
                return self._first_output_origin(origin)
            return origin
        if self.first_output is not None and (bad or not self.completed):
            return self._first_output_origin(None)
        return None

    def _first_output_origin(self, origin: dict[str, Any] | None) -> dict[str, Any]:
        frame = self.first_output
        if origin is None:
            origin = {"seq": 0, "source": "module" if frame.input_finite is not False else "data", "op": "?",
                      "dtype": "?", "kind": "nan"}
        return dict(origin, frame=frame.name, module=frame.module, module_type=type(frame.module).__name__,
                    input_finite=frame.input_finite, input_dtype=frame.input_dtype)

    def run_backward(self, params: list[torch.Tensor]) -> None:
        """Backward from a finite output gradient; the first node that makes finite into non-finite."""
        outs = [t for t in self.outputs if t.requires_grad]
        inputs = [p for p in params if p.requires_grad]
        if not outs or not inputs:
            return
        nodes = self._reachable_nodes(outs)
        found, grads = _replay(nodes, outs, inputs, 1.0)
        source, scale = "module", None
        if not found:
            scale = _output_grad_scale(inputs, grads)
            if scale is not None:
                found, _ = _replay(nodes, outs, inputs, scale)
                source = "overflow"
        if found:
            name, forward_op, node_name = found[0]
            module = dict(self.root.named_modules()).get(name, self.root)
            self.backward = {"backward_module": display_name(name), "backward_module_type": type(module).__name__,
                             "backward_op": node_name, "backward_forward_op": forward_op, "backward_source": source}
            if source == "overflow":
                self.backward["output_grad_scale"] = significant(scale)
        else:
            self.backward = {"backward_source": "loss"}

    def _reachable_nodes(self, outs: list[torch.Tensor]) -> dict[Any, tuple[str, str]]:
        """Every autograd node behind the outputs, with its owner; a node no traced op made inherits its consumer's."""
        nodes: dict[Any, tuple[str, str]] = {}
        todo = [(t.grad_fn, ("", "?")) for t in outs if t.grad_fn is not None]
        while todo:
            node, inherited = todo.pop()
            if node is None or node in nodes or type(node).__name__ == "AccumulateGrad":
                continue
            owner = self.owners.get(node, inherited)
            nodes[node] = owner
            todo.extend((child, owner) for child, _ in node.next_functions)
        return nodes


def _replay(nodes: dict[Any, tuple[str, str]], outs: list[torch.Tensor], inputs: list[torch.Tensor],
            scale: float) -> tuple[list[tuple[str, str, str]], tuple]:
    """One backward from an output gradient of `scale` everywhere, hooked on every node: (the first node that
    turned finite incoming gradients into non-finite ones, as (module, forward op, node name)), the gradients."""
    found: list[tuple[str, str, str]] = []

    def watch(node: Any, owner: tuple[str, str]):
        def hook(grad_inputs: tuple, grad_outputs: tuple) -> None:
            if found:
                return
            incoming = [g for g in grad_outputs if isinstance(g, torch.Tensor)]
            produced = [g for g in grad_inputs if isinstance(g, torch.Tensor)]
            if _all_finite(incoming) and not _all_finite(produced):
                found.append((owner[0], owner[1], node.name()))
        return hook

    handles = [node.register_hook(watch(node, owner)) for node, owner in nodes.items()]
    try:
        grads = torch.autograd.grad(outs, inputs, allow_unused=True, retain_graph=True,
                                    grad_outputs=[torch.full_like(t, min(scale, torch.finfo(t.dtype).max)) for t in outs])
    finally:
        for handle in handles:
            handle.remove()
    return found, grads


def _output_grad_scale(params: list[torch.Tensor], replayed: tuple) -> float | None:
    """How many times the unit replay's gradients the real step's finite ones are (the largest ratio of norms), when
    above 1. Only an estimate (the real output gradient is not uniform, and a part of the output may have kept a
    finite one): the replay at this scale is what shows an overflow, else the loss's backward is blamed as before."""
    ratios = []
    with torch.no_grad():
        for param, unit in zip(params, replayed):
            real = param.grad
            if unit is None or real is None or not (_finite(unit) and _finite(real)):
                continue
            norm = float(unit.detach().double().norm())
            if norm > 0:
                ratios.append(float(real.detach().double().norm()) / norm)
    scale = max(ratios, default=0.0)
    return scale if 1 < scale < math.inf else None


def _output_facts(outputs: list[torch.Tensor], loss_finite: bool | None) -> dict[str, Any]:
    """The finite outputs' largest magnitude; with a non-finite loss and outputs near the square root of their
    dtype's range (a squared error of them overflows), `loss_overflow`: the loss's forward overflowed."""
    if not outputs:
        return {}
    with torch.no_grad():
        largest = max(float(t.detach().abs().max().double()) if t.numel() else 0.0 for t in outputs)
    dtype = outputs[0].dtype
    facts: dict[str, Any] = {"output_absmax": significant(largest), "output_dtype": dtype_name(dtype)}
    if loss_finite is False and largest >= math.sqrt(torch.finfo(dtype).max) / 10:
        facts["loss_overflow"] = True
    return facts


def trace_step(model: torch.nn.Module, args: tuple, kwargs: dict, backward: bool) -> _Trace:
    """Re-run the forward (and, if asked and it is finite, a backward) with temporary hooks."""
    params = [p for p in model.parameters()]
    track = backward and any(p.requires_grad for p in params)
    trace = _Trace(model, track_nodes=track)
    handles = []
    for module in model.modules():
        handles.append(module.register_forward_pre_hook(trace.pre_hook, with_kwargs=True))
        handles.append(module.register_forward_hook(trace.post_hook, with_kwargs=True))
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    devices = sorted({p.device.index or 0 for p in params if p.device.type == "cuda"})
    try:
        with torch.random.fork_rng(devices=devices), (torch.enable_grad() if track else torch.no_grad()):
            with trace:
                trace.boundary = sys._getframe()
                output = model(*args, **kwargs)
            trace.completed = True
            trace.outputs = _float_tensors(output)
            if track and _all_finite(trace.outputs):
                trace.run_backward(params)
    except Exception:  # the re-run is best effort: the original step already ran
        pass
    finally:
        trace.boundary = None  # a frame keeps its locals alive
        for handle in handles:
            handle.remove()
        with torch.no_grad():
            for buffer, saved in buffers:
                buffer.copy_(saved)
        trace.stack.clear()
    return trace
