"""Probes for checkpoints: the key sets of a failed load_state_dict and how they relate, size mismatches
with the live parameter and the layer that would fit, the value passed to load_state_dict, the file
torch.load was reading."""

from __future__ import annotations

import os
import pathlib
import re
import types
from collections import OrderedDict
from typing import Any

from explainer._inspect import (MISSING, child_modules, class_text, describe_module, describe_tensor, format_shape,
                                instance_dict, is_module, is_tensor, resolve_text, safe_getattr)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import MAX_LISTED, compact, ints_in, submodule, user_expression

from .data import _locals, _message, _shown, _user_call

STATE_DICT_KEYS_RE = r'(Missing|Unexpected) key\(s\) in state_dict: ((?:"[^"]*"(?:, )?)+)'
KEY_RE = r'"([^"]*)"'
# What saved the checkpoint, by the prefix its keys carry.
PREFIX_ORIGINS = {
    "module.": "a model wrapped in DataParallel or DistributedDataParallel (they hold it as `.module`)",
    "_orig_mod.": "a torch.compile'd model (it holds the original as `._orig_mod`)",
    "model.": "a wrapper that holds the network as `self.model` (a PyTorch Lightning module, for one)",
}
# Submodule names that are a classification head; a new head is the one case strict=False is meant for.
HEAD_NAME_RE = r"(?:fc|head|heads|classifier|cls|linear|out|output|logits|last_linear|lm_head|score|pred|predictor)\d*"
# Entries of a training checkpoint ({'epoch': ..., 'model_state': ...}) that hold the weights, and those that do not.
WEIGHTS_ENTRY_RE = r"(?i)state_dict|model|net|weights|params|ema"
OTHER_ENTRY_RE = r"(?i)optim|sched|scaler|epoch|step|args|config|hparams|loss|best|lr|callbacks|version"
SIMPLE_NAME_RE = r"[A-Za-z_][\w.]*(?:\[(?:'[^']*'|\"[^\"]*\"|\d+)\])*"
DICT_TYPES = (dict, OrderedDict)


# --- state_dict keys --------------------------------------------------------------------------

def parse_state_dict_keys(message: str) -> tuple[list[str], list[str]]:
    missing: list[str] = []
    unexpected: list[str] = []
    for kind, keys in re.findall(STATE_DICT_KEYS_RE, message):
        (missing if kind == "Missing" else unexpected).extend(re.findall(KEY_RE, keys))
    return missing, unexpected


def key_prefix(missing: list[str], unexpected: list[str]) -> tuple[str, str] | None:
    """('module.', 'checkpoint') when the checkpoint's keys are the model's behind one prefix
    (DataParallel, DDP, torch.compile's '_orig_mod.'); 'model' when the model's keys carry it."""
    for extra, plain, side in ((unexpected, missing, "checkpoint"), (missing, unexpected, "model")):
        wanted = set(plain)
        for other in plain:
            first = extra[0] if extra else ""
            if not first.endswith("." + other):
                continue
            prefix = first[: -len(other)]
            stripped = {k[len(prefix):] for k in extra if k.startswith(prefix)}
            if len(stripped) == len(extra) and len(stripped & wanted) * 2 >= len(wanted):
                return prefix, side
            if side == "model" and wanted <= stripped:
                return prefix, side  # the checkpoint holds one submodule's weights (a pretrained backbone)
    return None


def renamed_prefix(missing: list[str], unexpected: list[str]) -> tuple[str, str] | None:
    """(old, new) when the unexpected keys are the missing ones with one leading path renamed."""
    counts: dict[tuple[str, str], int] = {}
    for old in unexpected:
        old_parts = old.split(".")
        for new in missing:
            new_parts = new.split(".")
            tail = 0
            while tail < min(len(old_parts), len(new_parts)) - 1 and old_parts[-1 - tail] == new_parts[-1 - tail]:
                tail += 1
            if tail:
                pair = (".".join(old_parts[:-tail]) + ".", ".".join(new_parts[:-tail]) + ".")
                counts[pair] = counts.get(pair, 0) + 1
    if not counts:
        return None
    pair, count = max(counts.items(), key=lambda item: item[1])
    return pair if count * 2 >= len(missing) else None


def _common_path(keys: list[str]) -> list[str]:
    """The leading submodule path every key shares (['fc'] for fc.weight, fc.bias)."""
    common: list[str] | None = None
    for key in keys:
        parts = key.split(".")[:-1]
        if common is None:
            common = parts
            continue
        size = 0
        while size < min(len(common), len(parts)) and common[size] == parts[size]:
            size += 1
        common = common[:size]
    return common or []


def head_prefix(keys: list[str]) -> str | None:
    """'fc.' when every key lies under one submodule named like a classification head."""
    common = _common_path(keys)
    if any(re.search(rf"(?:^|_){HEAD_NAME_RE}$", part) for part in common):
        return ".".join(common) + "."
    return None


def training_entries(missing: list[str], unexpected: list[str]) -> tuple[list[str], str | None] | None:
    """(the checkpoint's entries, the one holding the weights) when a whole training checkpoint
    ({'epoch': ..., 'model_state': ..., 'optimizer': ...}) was passed where the weights belong."""
    top = [key for key in unexpected if "." not in key]
    if not missing or not top or len(top) * 2 < len(unexpected):
        return None
    weights = [key for key in top if re.search(WEIGHTS_ENTRY_RE, key) and not re.search(OTHER_ENTRY_RE, key)]
    if not weights and not any(re.search(OTHER_ENTRY_RE, key) for key in top):
        return None
    return top, (weights[0] if weights else None)


def _key_analysis(missing: list[str], unexpected: list[str]) -> dict[str, Any]:
    """The two key lists, and what relates them: a prefix on one side, a renamed submodule, a whole
    training checkpoint, a head only one side has."""
    facts: dict[str, Any] = {"missing_keys": _shown(missing), "unexpected_keys": _shown(unexpected),
                             "missing_count": len(missing), "unexpected_count": len(unexpected),
                             "sd_name": "state_dict", "sd_source": "state_dict", "model_ref": "model"}
    prefix = key_prefix(missing, unexpected)
    renamed = renamed_prefix(missing, unexpected) if prefix is None and missing and unexpected else None
    entries = training_entries(missing, unexpected) if prefix is None and renamed is None else None
    if prefix is not None:
        facts["key_prefix"], facts["prefix_side"] = prefix
        if prefix[0] in PREFIX_ORIGINS:
            facts["prefix_origin"] = PREFIX_ORIGINS[prefix[0]]
        if prefix[1] == "model" and prefix[0].count(".") == 1:
            facts["inner_attr"] = prefix[0][:-1]
    elif renamed is not None:
        facts["renamed_from"], facts["renamed_to"] = renamed
    elif entries is not None:
        facts["checkpoint_entries"] = _shown(entries[0])
        if entries[1] is not None:
            facts["weights_entry"] = entries[1]
    elif missing and not unexpected and head_prefix(missing):
        facts["new_head"] = head_prefix(missing)
    elif unexpected and not missing and head_prefix(unexpected):
        facts["extra_head"] = head_prefix(unexpected)
    return facts


def _entry_holding(checkpoint: Any, missing: list[str]) -> str | None:
    """The entry of a plain dict checkpoint whose value is a dict holding the missing keys (read with
    dict's own methods: nothing of the user's runs)."""
    if type(checkpoint) not in DICT_TYPES:
        return None
    for key, value in list(dict.items(checkpoint))[:100]:
        if type(key) is str and type(value) in DICT_TYPES and any(dict.__contains__(value, k) for k in missing[:20]):
            return key
    return None


def _checkpoint_operand(facts: dict[str, Any], operand: Any, missing: list[str]) -> dict[str, Any] | None:
    """Facts on the value passed to load_state_dict, and its culprit when it is a plain dict."""
    facts["checkpoint_name"] = facts["sd_source"] = operand.text
    if re.fullmatch(SIMPLE_NAME_RE, operand.text):
        facts["sd_name"] = operand.text
    value = operand.value
    if type(value) not in DICT_TYPES:
        return None
    entry = _entry_holding(value, missing)
    if entry is not None:
        facts["weights_entry"] = entry
        facts.setdefault("checkpoint_entries", _shown([k for k in dict.keys(value) if type(k) is str]))
    return {"name": operand.text, "kind": "state_dict", "type": type(value).__name__,
            "repr": f"{type(value).__name__} of {len(value)} entries"}


@probe("state_dict_keys", provides=("missing_keys", "unexpected_keys", "missing_count", "unexpected_count",
                                     "key_prefix", "prefix_side", "prefix_origin", "inner_attr", "renamed_from",
                                     "renamed_to", "checkpoint_entries", "weights_entry", "new_head", "extra_head",
                                     "sd_name", "sd_source", "model_ref", "model_name", "checkpoint_name"))
def state_dict_keys(ctx: ProbeContext) -> Evidence | None:
    """The key lists of a failed load_state_dict, what relates them, and the names the user gave."""
    missing, unexpected = parse_state_dict_keys(_message(ctx.exception))
    if not missing and not unexpected:
        return None
    facts = _key_analysis(missing, unexpected)
    culprits = []
    _, expr = _user_call(ctx)
    if expr is not None and expr.callee is not None and expr.callee.text.endswith(".load_state_dict"):
        facts["model_name"] = facts["model_ref"] = expr.callee.text.rsplit(".", 1)[0]
        model = resolve_text(facts["model_name"], _locals(ctx))
        if is_module(model):
            culprits.append(describe_module(facts["model_name"], model))
        if expr.operands:
            culprit = _checkpoint_operand(facts, expr.operands[0], missing)
            if culprit is not None:
                culprits.append(culprit)
    return Evidence(facts, culprits)


@probe("state_dict_key_lists", provides=("missing_keys", "unexpected_keys", "missing_count", "unexpected_count",
                                          "key_prefix", "prefix_side", "prefix_origin", "inner_attr", "renamed_from",
                                          "renamed_to", "checkpoint_entries", "weights_entry", "new_head",
                                          "extra_head", "sd_name", "sd_source", "model_ref"), live=False)
def state_dict_key_lists(ctx: ProbeContext) -> Evidence | None:
    """The same key analysis as state_dict_keys, from the key lists a pattern captured (a pasted message)."""
    missing = re.findall(KEY_RE, str(ctx.facts.get("missing_list", "")))
    unexpected = re.findall(KEY_RE, str(ctx.facts.get("unexpected_list", "")))
    if not missing and not unexpected:
        return None
    return Evidence(_key_analysis(missing, unexpected))


# --- what was passed to load_state_dict ---------------------------------------------------------

@probe("state_dict_argument", provides=("checkpoint_name", "model_name", "got_module"))
def state_dict_argument(ctx: ProbeContext) -> Evidence | None:
    """The value load_state_dict refused as not dict-like: its name, and the module when it is a whole model."""
    _, expr = _user_call(ctx)
    if expr is None or expr.callee is None or not expr.callee.text.endswith(".load_state_dict") or not expr.operands:
        return None
    operand = expr.operands[0]
    facts: dict[str, Any] = {"checkpoint_name": operand.text, "model_name": expr.callee.text.rsplit(".", 1)[0]}
    if is_module(operand.value):
        facts["got_module"] = True
        return Evidence(facts, [describe_module(operand.text, operand.value)])
    kind = type(operand.value).__name__ if operand.value is not MISSING else "value"
    return Evidence(facts, [{"name": operand.text, "kind": "value", "type": kind, "repr": f"a {kind}, not a dict"}])


# --- size mismatches ----------------------------------------------------------------------------

_SIZE_MISMATCH_RE = (
    r"size mismatch for (?P<key>[\w.]+): copying a param with shape torch\.Size\(\[(?P<ckpt>[\d, ]*)\]\) from "
    r"checkpoint, the shape in current model is torch\.Size\(\[(?P<model>[\d, ]*)\]\)")


def _constructor_for(module: Any, param: str, ckpt: list[int]) -> str | None:
    """The layer that holds a checkpoint parameter of this shape."""
    cls = type(module).__name__
    if param != "weight" or not ckpt:
        return None
    if cls == "Linear" and len(ckpt) == 2:
        return f"nn.Linear({ckpt[1]}, {ckpt[0]})"
    if cls == "Embedding" and len(ckpt) == 2:
        return f"nn.Embedding({ckpt[0]}, {ckpt[1]})"
    if cls.startswith("Conv") and "Transpose" not in cls and len(ckpt) >= 3:
        groups = safe_getattr(module, "groups")
        groups = groups if isinstance(groups, int) else 1
        kernel = tuple(ckpt[2:])
        extra = "" if groups == 1 else f", groups={groups}"
        return f"nn.{cls}({ckpt[1] * groups}, {ckpt[0]}, kernel_size={compact(kernel)}{extra})"
    if ("Norm" in cls) and len(ckpt) == 1:
        return f"nn.{cls}({ckpt[0]})"
    return None


@probe("state_dict_sizes", provides=("model", "mismatch_count", "mismatches", "rebuild"))
def state_dict_sizes(ctx: ProbeContext) -> Evidence | None:
    """Every `size mismatch for KEY` in the message, with the live parameter and the layer that would fit."""
    message = ctx.exception.args[0] if ctx.exception is not None and ctx.exception.args else None
    if not isinstance(message, str):
        return None
    found = [(m.group("key"), ints_in(m.group("ckpt")), ints_in(m.group("model")))
             for m in re.finditer(_SIZE_MISMATCH_RE, message)]
    if not found:
        return None
    lines = [f"{key}: checkpoint {format_shape(c)} vs model {format_shape(m)}" for key, c, m in found]
    facts: dict[str, Any] = {"mismatch_count": len(found), "mismatches": "; ".join(lines[:10])
                             + (f"; ... and {len(lines) - 10} more" if len(lines) > 10 else "")}
    record, expr = user_expression(ctx)
    model_name, model = None, MISSING
    if expr is not None and expr.kind == "call" and expr.callee is not None \
            and expr.callee.text.endswith(".load_state_dict") and record is not None:
        model_name = expr.callee.text.rsplit(".", 1)[0]
        model = resolve_text(model_name, record.namespace())
    culprits = []
    if not is_module(model):
        return Evidence(facts, culprits)
    facts["model"] = model_name
    rebuild = []
    for key, ckpt, _ in found:
        path, _, param = key.rpartition(".")
        owner = submodule(model, path)
        if owner is None:
            continue
        live = safe_getattr(owner, param)
        if is_tensor(live) and len(culprits) < MAX_LISTED:
            culprits.append(describe_tensor(f"{model_name}.{key}", live, checkpoint_shape=ckpt))
        constructor = _constructor_for(owner, param, ckpt)
        if constructor:
            rebuild.append(f"{model_name}.{path} = {constructor}")
    if rebuild:
        facts["rebuild"] = "; ".join(rebuild[:10])
    return Evidence(facts, culprits)


# torch 0.4's "copying a param of A from checkpoint, where the shape is B in current model" printed the model's shape
# as A and the checkpoint's as B (the reverse of its words), so its groups are named the other way round
_SIZE_MISMATCH_ANY_RE = (
    r"size mismatch for (?P<key>[\w.]+): copying a param (?:with shape torch\.Size\(\[(?P<ckpt>[\d, ]*)\]\) "
    r"from checkpoint, the shape in current model is torch\.Size\(\[(?P<model>[\d, ]*)\]\)|of torch\.Size\(\[(?P<model04>"
    r"[\d, ]*)\]\) from checkpoint, where the shape is torch\.Size\(\[(?P<ckpt04>[\d, ]*)\]\))")


def _unwrapped(listing: str) -> str:
    """The list as printed, where a paste broke its lines at a fixed width ("the s" / "hape in current model"): every
    line break that does not start the next `size mismatch for` entry is dropped."""
    return re.sub(r"\n(?![ \t]*size mismatch for )", "", listing)


@probe("state_dict_text", provides=("mismatch_count", "mismatches"), live=False)
def state_dict_text(ctx: ProbeContext) -> Evidence | None:
    """Every `size mismatch for KEY` line of the message (the first is in the pattern's groups, the rest in _rest)."""
    if "key" not in ctx.facts:
        return None
    found = [(ctx.facts["key"], ctx.facts.get("checkpoint_shape", ""), ctx.facts.get("model_shape", ""))]
    found += [(m.group("key"), m.group("ckpt") if m.group("ckpt") is not None else m.group("ckpt04"),
               m.group("model") if m.group("model") is not None else m.group("model04"))
              for m in re.finditer(_SIZE_MISMATCH_ANY_RE, _unwrapped(str(ctx.facts.get("_rest", ""))))]
    lines = [f"{key}: checkpoint torch.Size([{ckpt}]) vs model torch.Size([{model}])" for key, ckpt, model in found]
    return Evidence({"mismatch_count": len(found), "mismatches": "; ".join(lines[:10])
                     + (f"; ... and {len(lines) - 10} more" if len(lines) > 10 else "")})


# --- checkpoint files -------------------------------------------------------------------------

# What the first byte of a file that is not a checkpoint usually says about it.
FIRST_BYTE_MEANINGS = {
    "<": "an HTML or XML page (a download link that returned a web page: a login, quota or error page)",
    "v": "a Git LFS pointer file ('version https://git-lfs...'): the repository was cloned without `git lfs pull`",
    "\\x0a": "a text file starting with an empty line (a pointer, a log or an error message saved under the checkpoint's name)",
    "\\n": "a text file starting with an empty line (a pointer, a log or an error message saved under the checkpoint's name)",
    "{": "a JSON file (a config or an error response), not the weights",
    "\\x00": "a file that starts with zero bytes: an incomplete download or a preallocated, never written file",
    "\\x1f": "a gzip-compressed file: decompress it first",
    "P": "a zip archive that torch's legacy loader was given: it is probably truncated or corrupt",
}


def _byte_text(operand: int) -> str:
    """How pickle's 'invalid load key' would print the byte: the character, or its \\x escape."""
    char = chr(operand)
    return char if char.isprintable() and operand < 128 else f"\\x{operand:02x}"


CHECKPOINT_HEAD_BYTES = 16


def _human_size(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} bytes"


# How every torch.save file starts: a zip archive (torch >= 1.6, TorchScript too) or a pickle's PROTO opcode (legacy).
CHECKPOINT_MAGIC = (b"PK", b"\x80")


@probe("checkpoint_file", provides=("checkpoint_path", "checkpoint_size", "checkpoint_head", "path_name",
                                    "not_checkpoint"))
def checkpoint_file(ctx: ProbeContext) -> Evidence | None:
    """The file torch.load was reading (from its own frame), its size and first bytes.

    Only a str or pathlib path is read: a file-like object of the user's is never touched.
    """
    for record in reversed(ctx.records):
        if record.is_user or record.name != "load" or "serialization" not in record.filename:
            continue
        target = dict.get(record.locals, "f", MISSING)
        if type(target) is str:
            path = target
        elif type(target) in (pathlib.PosixPath, pathlib.WindowsPath, pathlib.Path):
            path = str(target)
        else:
            return None
        name = _path_operand(ctx, target)
        try:
            size = os.stat(path).st_size
            with open(path, "rb") as handle:
                head = handle.read(CHECKPOINT_HEAD_BYTES)
        except OSError:  # gone by now (a temporary folder already cleaned up): name it, nothing more
            return Evidence({"path_name": name} if name else {},
                            [{"name": name or path, "kind": "file", "path": path, "repr": f"file {path}"}])
        facts = {"checkpoint_path": path, "checkpoint_size": _human_size(size), "checkpoint_head": repr(head)}
        if head and not head.startswith(CHECKPOINT_MAGIC):
            facts["not_checkpoint"] = True  # neither a zip archive nor a pickle: no torch.load option reads it
        if name is not None:
            facts["path_name"] = name
        culprits = [{"name": name or path, "kind": "file", "size": size, "path": path,
                     "repr": f"file {path} of {_human_size(size)} starting {head!r}"}]
        return Evidence(facts, culprits)
    return None


def _path_operand(ctx: ProbeContext, target: Any) -> str | None:
    """How the user's failing line names the path torch.load was given (`path`, `args.ckpt`)."""
    _, expr = _user_call(ctx)
    if expr is None or not expr.operands:
        return None
    return next((op.text for op in expr.operands if op.value is target), None)


@probe("checkpoint_first_byte", provides=("load_key", "file_kind"), live=False)
def checkpoint_first_byte(ctx: ProbeContext) -> Evidence | None:
    """What kind of file torch.load was given, from the byte pickle choked on.

    'invalid load key, X' names the byte; the weights-only unpickler's 'Unsupported operand N' names
    its code: 60 is '<', the start of an HTML page.
    """
    key = ctx.facts.get("load_key")
    operand = ctx.facts.get("operand")
    if key is None and operand not in (None, ""):
        try:
            key = _byte_text(int(operand))
        except (TypeError, ValueError, OverflowError):
            return None
    if key is None:
        return None
    facts: dict[str, Any] = {"load_key": key}
    meaning = FIRST_BYTE_MEANINGS.get(key)
    if meaning is not None:
        facts["file_kind"] = meaning
    return Evidence(facts)


# --- what holds an object pickle refused ------------------------------------------------------------

MAX_HOLDER_OBJECTS = 5_000
MAX_HOLDER_DEPTH = 6


@probe("unpicklable_holder", provides=("holder",))
def unpicklable_holder(ctx: ProbeContext) -> Evidence | None:
    """The attribute path, from what the failing call pickles (`torch.save(model, ...)`), to the local function
    or class the message names: `model.activation` holds `Net.__init__.<locals>.<lambda>`."""
    wanted = ctx.facts.get("local_object")
    record, expr = user_expression(ctx)
    if not wanted or expr is None or expr.kind != "call":
        return None
    seen: set[int] = set()
    queue = [(operand.text, operand.value, 0) for operand in expr.operands if operand.value is not MISSING]
    while queue and len(seen) < MAX_HOLDER_OBJECTS:
        path, value, depth = queue.pop(0)
        if id(value) in seen:
            continue
        seen.add(id(value))
        if _local_qualname(value) == wanted:
            return Evidence({"holder": path}, [{"name": path, "kind": type(value).__name__, "type": wanted}])
        if depth < MAX_HOLDER_DEPTH:
            queue.extend((f"{path}{key}", child, depth + 1) for key, child in _held(value))
    return None


def _local_qualname(value: Any) -> str | None:
    """The qualified name a function, a class or an instance of a class is pickled by (read from C slots)."""
    if isinstance(value, types.FunctionType):
        return types.FunctionType.__dict__["__qualname__"].__get__(value)
    cls = value if isinstance(value, type) else type(value)
    module = class_text(cls, "__module__")
    if module is None or module == "builtins" or module.split(".")[0] == "torch":
        return None
    return class_text(cls, "__qualname__")


def _held(value: Any) -> list[tuple[str, Any]]:
    """What value holds, by how its owner's code reaches it: `.name` (instance dict, submodules), `[i]`, `[key]`."""
    if type(value) in (list, tuple):
        return [(f"[{i}]", item) for i, item in enumerate(value[:MAX_LISTED])]
    if type(value) is dict:
        return [(f"[{key!r}]", item) for key, item in list(dict.items(value))[:MAX_LISTED] if type(key) in (str, int)]
    if isinstance(value, (type, types.FunctionType)) or type(value).__module__ == "builtins":
        return []
    table = instance_dict(value)
    if table is None:
        return []
    held = [(f".{key}", item) for key, item in table.items() if isinstance(key, str) and not key.startswith("__")
            and key not in ("_parameters", "_buffers", "_modules")]
    held += [(f".{key}", child) for key, child in (child_modules(value) if is_module(value) else {}).items()]
    return held
