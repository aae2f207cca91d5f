"""Probes for the dtype family: which operand has the odd dtype, where it came from (a NumPy array,
`torch.from_numpy`, a literal without `dtype=`, the data pipeline) and the one-line conversion."""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from typing import Any

from explainer._inspect import (MISSING, FrameRecord, describe_tensor, dtype_name, format_shape, innermost_user_frame,
                                is_module, is_tensor, name_module, resolve, safe_getattr, user_frames)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.library_names import library_call_argument
from explainer.probes.readers.operands import FUNCTIONAL_FILE, failing_module, torch_frame, user_expression

from .device import assignment, gather, local_name, outermost_binding

CONVERT = {"float32": ".float()", "float64": ".double()", "float16": ".half()", "bfloat16": ".bfloat16()",
           "int64": ".long()", "int32": ".int()", "uint8": ".byte()", "bool": ".bool()"}
CLASS_INDEX_LOSSES = {"cross_entropy", "nll_loss", "multi_margin_loss"}
FLOAT_TARGET_LOSSES = {"binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss",
                       "smooth_l1_loss", "huber_loss", "kl_div", "soft_margin_loss", "poisson_nll_loss"}
MAX_REDUCE_ELEMENTS = 50_000_000
INTEGER_DTYPES = {"int64", "int32", "int16", "int8", "uint8"}


def _dtype(tensor: Any) -> str:
    return dtype_name(tensor.dtype)


def convert(dtype: str) -> str:
    return CONVERT.get(dtype, f".to(torch.{dtype})")


def _numpy_arrays(records: list[FrameRecord]) -> list[tuple[str, Any, FrameRecord]]:
    np = sys.modules.get("numpy")
    if np is None:
        return []
    found = []
    for record in user_frames(records):
        local_vars = record.locals
        if not isinstance(local_vars, dict):
            continue
        for key, value in list(local_vars.items())[:2000]:
            if type(value) is np.ndarray:
                found.append((key, value, record))
    return found


def origin(tensor: Any, name: str | None, ctx: ProbeContext, wanted: str) -> dict[str, Any]:
    """Where the tensor came from, as far as the user's source and locals show, and the conversion."""
    facts: dict[str, Any] = {}
    outer, record = outermost_binding(tensor, ctx.records)
    if outer is None:
        outer, record = local_name(tensor, ctx.records)
    name = outer or name
    if name is None:
        return facts
    method = convert(wanted)
    facts["convert_fix"] = f"`{name} = {name}{method}`"
    if record is not None:
        facts["convert_fix"] += f" before `{record.code}` on line {record.lineno}"
        created = assignment(record, name)
        if created is not None:
            lineno, code = created
            facts["origin_line"] = lineno
            facts["origin_code"] = code
            call = re.search(r"torch\.(from_numpy|as_tensor|tensor|Tensor)\s*\((.*)\)\s*$", code)
            if call is not None and call.group(1) == "from_numpy":
                facts["origin"] = f"`{name}` comes from a NumPy array: `{code}` on line {lineno}"
                facts["convert_fix"] = (f"`{name} = torch.from_numpy({call.group(2)}){method}` on line {lineno}"
                                        f" (NumPy arrays default to float64; torch.from_numpy keeps that dtype)")
            elif call is not None and wanted in ("float32", "int64", "float64"):
                facts["origin"] = f"`{name}` is created on line {lineno}: `{code}`"
                facts["convert_fix"] = (f"pass `dtype=torch.{wanted}` when creating `{name}` on line {lineno}"
                                        f" (`{code}`), or `{name} = {name}{method}`")
            elif re.search(r"\bfor\b.*\bin\b|\bnext\(|\[[^\]]+\]\s*$", code):
                facts["origin"] = f"`{name}` comes from the data pipeline: `{code}` on line {lineno}"
    if "origin" not in facts:
        shape = tuple(int(d) for d in tensor.shape)
        for array_name, array, _ in _numpy_arrays(ctx.records):
            if array.shape == shape and str(array.dtype) == _dtype(tensor):
                facts["origin"] = (f"`{name}` matches NumPy array `{array_name}` "
                                   f"({array.dtype}, shape {format_shape(shape)})")
                facts["convert_fix"] = (f"`{name} = torch.from_numpy({array_name}){method}` (or "
                                        f"`{array_name} = {array_name}.astype(\"{wanted}\")` before converting)")
                break
    return facts


def _weight_dtype(module: Any) -> str | None:
    """The dtype of a module's trained weights; a loss's `weight` is a buffer of class weights the user passed
    in (often float64 from NumPy), not the model's dtype."""
    parameter = sys.modules["torch"].nn.Parameter
    for key in ("weight", "weight_ih_l0", "in_proj_weight"):
        value = safe_getattr(module, key)
        if value is not MISSING and is_tensor(value) and issubclass(type(value), parameter):
            return _dtype(value)
    return None


@probe("dtype_operands", provides=("odd_name", "odd_dtype", "ref_name", "ref_dtype", "dtypes", "module",
                                    "origin", "convert_fix", "origin_line", "origin_code"))
def dtype_operands(ctx: ProbeContext) -> Evidence | None:
    """The operand whose dtype differs from the module's weights (or from the other operands)."""
    touched, _, failing = gather(ctx)
    if not touched:
        return None
    facts: dict[str, Any] = {"dtypes": ", ".join(sorted({_dtype(h.tensor) for h in touched}))}
    ref = _weight_dtype(failing) if failing is not None else None
    if ref is not None:  # templates say "{module} has {ref_dtype} weights"
        facts["module"] = name_module(failing, ctx.records) or type(failing).__name__
    if ref is None:
        counts = Counter(_dtype(h.tensor) for h in touched)
        ranked = counts.most_common()
        ref = ranked[0][0]
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            ref = "float32" if "float32" in counts else ref
    odd = [h for h in touched if _dtype(h.tensor) != ref]
    right = [h for h in touched if _dtype(h.tensor) == ref]
    # A user's variable explains more than a torch-internal name for the same value.
    odd.sort(key=lambda h: 0 if h.kind in ("operand", "local") else 1)
    culprits = [describe_tensor(h.name, h.tensor, role=h.kind, odd_one_out=True) for h in odd[:8]]
    culprits += [describe_tensor(h.name, h.tensor, role=h.kind) for h in right[:8]]
    if odd:
        first = odd[0]
        facts.update({"odd_name": first.name, "odd_dtype": _dtype(first.tensor), "ref_dtype": ref})
        reference = next((h for h in right if h.kind == "parameter"), right[0] if right else None)
        if reference is not None:
            facts["ref_name"] = reference.name
        facts.update(origin(first.tensor, first.name, ctx, ref))
    return Evidence(facts, culprits)


@probe("kernel_op", provides=("op",))
def kernel_op(ctx: ProbeContext) -> Evidence | None:
    """The operation whose kernel raised, as far as the frames show it: the innermost torch.nn.functional
    function (`F.cross_entropy`), else the module whose forward raised (`stem.0 (Conv2d)`), else the call on the
    user's failing line (`torch.bmm`). Kernel messages such as "expected scalar type Half but found Float" name
    no operation themselves."""
    record = torch_frame(ctx.records, FUNCTIONAL_FILE)
    if record is not None and not record.name.startswith("_"):
        return Evidence({"op": f"F.{record.name}"})
    _, module = failing_module(ctx)
    if module is not None:
        name = name_module(module, ctx.records)
        kind = type(module).__name__
        return Evidence({"op": f"{name} ({kind})" if name else kind})
    _, expr = user_expression(ctx)
    if expr is not None and expr.kind == "call" and expr.callee is not None:
        return Evidence({"op": expr.callee.text})
    return None


def _loss_frame(ctx: ProbeContext) -> tuple[FrameRecord, str] | tuple[None, None]:
    record = torch_frame(ctx.records, FUNCTIONAL_FILE, CLASS_INDEX_LOSSES | FLOAT_TARGET_LOSSES)
    return (record, record.name) if record is not None else (None, None)


@probe("loss_target", provides=("loss", "target_name", "target_dtype", "target_shape", "input_name",
                                 "input_dtype", "input_shape", "wanted_dtype", "origin", "convert_fix",
                                 "origin_line", "origin_code", "library_where"))
def loss_target(ctx: ProbeContext) -> Evidence | None:
    """The loss function's input and target, as the user's code names them, and the dtype the target needs."""
    record, loss = _loss_frame(ctx)
    if record is None or not isinstance(record.locals, dict):
        return None
    target = record.locals.get("target", MISSING)
    logits = record.locals.get("input", MISSING)
    if not is_tensor(target):
        return None
    wanted = "int64" if loss in CLASS_INDEX_LOSSES else (_dtype(logits) if is_tensor(logits) else "float32")
    target_name, note = _loss_argument_name(ctx, target, 1, "target")
    facts: dict[str, Any] = {"loss": f"F.{loss}", "target_name": target_name, "target_dtype": _dtype(target),
                             "target_shape": format_shape(target.shape), "wanted_dtype": wanted}
    culprits = [describe_tensor(target_name, target, role="target", **note)]
    if is_tensor(logits):
        input_name, in_note = _loss_argument_name(ctx, logits, 0, "input")
        facts.update({"input_name": input_name, "input_dtype": _dtype(logits),
                      "input_shape": format_shape(logits.shape)})
        culprits.append(describe_tensor(input_name, logits, role="input", **in_note))
    if note:
        facts.update(_library_convert_fix(ctx, wanted))
    else:
        facts.update(origin(target, target_name, ctx, wanted))
    return Evidence(facts, culprits)


def _loss_argument_name(ctx: ProbeContext, value: Any, position: int, local: str) -> tuple[str, dict[str, str]]:
    """The user's name for a loss argument; where none holds it and a library called the loss (transformers' model
    with the Trainer's batch), the argument as the library wrote it (`labels.view(-1)`) with a note saying where."""
    name = local_name(value, ctx.records)[0]
    if name:
        return name, {}
    found = library_call_argument(ctx.records, position)
    if found is None:
        return local, {}
    return found[0], {"note": f"in {found[2]}"}


def _library_convert_fix(ctx: ProbeContext, wanted: str) -> dict[str, str]:
    """The conversion for a target a library built from the user's batch: at the user's data, never inside the
    library's frame (`target = target.long()` cannot be written at `trainer.train()`)."""
    text, variable, where = library_call_argument(ctx.records, 1) or ("target", None, "the library")
    field = f"`{variable}`" if variable else "the labels"
    return {"library_where": where, "convert_fix": (
        f"Make {field} {wanted} where your dataset or collator builds them (`torch.tensor(label, dtype=torch.{wanted})`"
        f"): {where} passes them to the loss as `{text}`, so the conversion belongs in your data, not in its code")}


@probe("index_tensor", provides=("index_name", "index_dtype", "index_shape", "module", "num_embeddings",
                                  "origin", "convert_fix", "origin_line", "origin_code"))
def index_tensor(ctx: ProbeContext) -> Evidence | None:
    """The tensor used as indices (an Embedding's input) and the integer conversion it needs."""
    frames = [r for r in reversed(ctx.records) if isinstance(r.locals, dict) and is_tensor(r.locals.get("input"))]
    # The Embedding module's own frame names the layer; F.embedding alone (no module) is the fallback.
    frames.sort(key=lambda r: 0 if type(r.locals.get("self")).__name__ in ("Embedding", "EmbeddingBag") else 1)
    for record in frames:
        local_vars = record.locals
        owner = local_vars.get("self", None)
        value = local_vars["input"]
        if type(owner).__name__ in ("Embedding", "EmbeddingBag") or record.name == "embedding":
            name = outermost_binding(value, ctx.records)[0] or "input"
            facts: dict[str, Any] = {"index_name": name, "index_dtype": _dtype(value),
                                     "index_shape": format_shape(value.shape)}
            module = owner if owner is not None and is_module(owner) else None
            if module is not None:
                facts["module"] = name_module(module, ctx.records) or type(module).__name__
                count = safe_getattr(module, "num_embeddings")
                if isinstance(count, int):
                    facts["num_embeddings"] = count
            facts.update(origin(value, name, ctx, "int64"))
            return Evidence(facts, [describe_tensor(name, value, role="indices")])
    return None


@probe("inplace_target", provides=("out_name", "out_dtype", "value_text", "statement"))
def inplace_target(ctx: ProbeContext) -> Evidence | None:
    """The integer tensor an in-place op (`x += ...`, `x.add_(...)`, `out=`) would write a float result into."""
    user = innermost_user_frame(ctx.records)
    if user is None:
        return None
    try:
        tree = ast.parse(user.code.strip())
    except SyntaxError:
        return None
    statement = tree.body[0] if tree.body else None
    target = None
    value_text = None
    if isinstance(statement, ast.AugAssign):
        target, value_text = statement.target, ast.unparse(statement.value)
    else:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") \
                    and not node.func.attr.startswith("_"):
                target, value_text = node.func.value, ", ".join(ast.unparse(a) for a in node.args)
                break
            if isinstance(node, ast.Call):
                out = next((k.value for k in node.keywords if k.arg == "out"), None)
                if out is not None:
                    target, value_text = out, ast.unparse(node)
                    break
    if target is None:
        return None
    value = resolve(target, user.locals)
    if not is_tensor(value):
        return None
    name = ast.unparse(target)
    facts = {"out_name": name, "out_dtype": _dtype(value), "value_text": value_text or "", "statement": user.code}
    return Evidence(facts, [describe_tensor(name, value, role="output")])


def _cpu_integer_range(tensor: Any) -> tuple[int, int] | None:
    """min and max of a plain CPU integer tensor: a reduction only, never the values themselves.

    After a device-side assert every CUDA call fails, so only tensors still on the CPU are read."""
    torch = sys.modules.get("torch")
    if torch is None or type(tensor) is not torch.Tensor or tensor.device.type != "cpu":
        return None
    if tensor.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        return None
    if tensor.numel() == 0 or tensor.numel() > MAX_REDUCE_ELEMENTS:
        return None
    with torch.no_grad():
        return int(torch.Tensor.min(tensor)), int(torch.Tensor.max(tensor))


@probe("class_range", provides=("labels_name", "labels_min", "labels_max", "num_classes", "classes_from",
                                 "labels_device"))
def class_range(ctx: ProbeContext) -> Evidence | None:
    """Integer targets or indices in the user's frames against the class count or vocabulary size they index."""
    labels: list[tuple[str, Any]] = []
    sizes: list[tuple[str, int, int | None]] = []  # (where, size, batch size it applies to)
    seen: set[int] = set()
    for record in reversed(user_frames(ctx.records)):
        local_vars = record.locals
        if not isinstance(local_vars, dict):
            continue
        for key, value in list(local_vars.items())[:2000]:
            if id(value) in seen or key.startswith("__"):
                continue
            seen.add(id(value))
            if is_tensor(value) and _dtype(value) in INTEGER_DTYPES and value.dim() >= 1:
                labels.append((key, value))
            elif is_tensor(value) and value.is_floating_point() and value.dim() >= 2:
                sizes.append((f"{key}.shape[1]", int(value.shape[1]), int(value.shape[0])))
            elif is_module(value):
                for sub_name, sub in _embeddings(value, key):
                    sizes.append((f"{sub_name}.num_embeddings", safe_getattr(sub, "num_embeddings"), None))
    for name, tensor in labels:
        batch = int(tensor.shape[0])
        match = next(((where, size) for where, size, rows in sizes
                      if isinstance(size, int) and (rows is None or rows == batch)), None)
        facts: dict[str, Any] = {"labels_name": name, "labels_device": str(tensor.device)}
        if match is not None:
            facts["classes_from"], facts["num_classes"] = match
        span = _cpu_integer_range(tensor)
        if span is not None:
            facts["labels_min"], facts["labels_max"] = span
        if match is not None or span is not None:
            return Evidence(facts, [describe_tensor(name, tensor, role="class indices")])
    return None


def _embeddings(module: Any, prefix: str) -> list[tuple[str, Any]]:
    found = []
    queue = [(prefix, module)]
    visited = 0
    while queue and visited < 2000:
        path, current = queue.pop(0)
        visited += 1
        if type(current).__name__ in ("Embedding", "EmbeddingBag"):
            found.append((path, current))
        table = safe_getattr(current, "_modules")
        if isinstance(table, dict):
            queue.extend((f"{path}.{k}", v) for k, v in table.items() if v is not None)
    return found


@probe("nonfloat_grad_tensor", provides=("tensor_name", "tensor_dtype", "tensor_shape", "grad_fix"))
def nonfloat_grad_tensor(ctx: ProbeContext) -> Evidence | None:
    """The integer or bool tensor on the failing line that was asked to require gradients."""
    touched, _, _ = gather(ctx)
    for holding in touched:
        dtype = holding.tensor.dtype  # a torch tensor's own dtype, as _dtype reads it
        if dtype.is_floating_point or dtype.is_complex:
            continue
        name, kind = holding.name, _dtype(holding.tensor)
        facts = {"tensor_name": name, "tensor_dtype": kind,
                 "tensor_shape": format_shape(tuple(int(d) for d in holding.tensor.shape)),
                 "grad_fix": (f"`{name}` is {kind}: keep it out of training with `register_buffer(..., {name})` "
                              f"or `nn.Parameter({name}, requires_grad=False)`, or train it as `{name}.float()`")}
        return Evidence(facts, [describe_tensor(name, holding.tensor, role=holding.kind, odd_one_out=True)])
    return None


def _expected_types(item: str) -> tuple[set[str], str]:
    """The types an entry of a legacy signature accepts, and its name: 'torch.LongTensor target' ->
    ({'torch.LongTensor'}, 'target'); '[torch.FloatTensor weights or None]' -> ({'torch.FloatTensor', 'NoneType'},
    'weights')."""
    optional = item.startswith("[") and item.endswith("]")
    words = item.strip("[]").split()
    if optional and words[-2:] == ["or", "None"]:
        words = words[:-2]
    types = {words[0]} if words else set()
    return (types | {"NoneType"} if optional else types), " ".join(words[1:])


@probe("legacy_argument_mismatch", provides=("bad_argument", "bad_got", "bad_expected", "bad_item", "bad_count",
                                             "bad_list"), live=False)
def legacy_argument_mismatch(ctx: ProbeContext) -> Evidence | None:
    """The arguments of a legacy one-signature call ("X received an invalid combination of arguments - got (...),
    but expected (...)") whose type differs from the signature's, position by position; torch 0.2+ marks them
    `!type!` in the got list, and the marks are trusted where present."""
    got = [g.strip() for g in str(ctx.facts.get("got_args", "")).split(",") if g.strip()]
    wanted = [w.strip() for w in str(ctx.facts.get("expected_args", "")).split(",") if w.strip()]
    if not got or not wanted:
        return None
    marked = any(g.startswith("!") and g.endswith("!") for g in got)
    bad = []
    for given, item in zip(got, wanted):
        types, name = _expected_types(item)
        plain = given.strip("!")
        if (given.startswith("!") and given.endswith("!")) if marked else plain not in types:
            bad.append((name or item, plain, "/".join(sorted(types - {"NoneType"})) or item, item.strip("[]")))
    if not bad:
        return None
    name, given, expected, item = bad[0]
    return Evidence({"bad_argument": name, "bad_got": given, "bad_expected": expected, "bad_item": item,
                     "bad_count": len(bad), "bad_list": "; ".join(f"{n}: {g} (expects {e})" for n, g, e, _ in bad)})
