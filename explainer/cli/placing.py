"""Where a pasted traceback places an error beyond its location: the frame that raised, the library's way in, the line
that called the user's function, and the values loguru printed in the raising frame; which error of a chain Python
printed ("During handling of the above exception") leads; and whether two records of a log were printed together."""

from __future__ import annotations

from explainer._diagnosis import Diagnosis, printed_part
from explainer.diagnose.logblocks import split_embedded
from explainer.diagnose.logscan import FoundError
from explainer.diagnose.textframes import (PASS_ON_FUNCS, Frame, looks_like_library_path, looks_like_user_path,
                                           package_entry, package_of, raising_frames)


def note_raising_frame(diagnosis: Diagnosis, found) -> None:
    """A pasted traceback's innermost frame (often torch's: `return F.conv2d(...)`), when it is not the
    user's line already shown as the location: it names the operation that failed. Between the two, the
    innermost frame of a library (transformers' `self.scaler.step(...)`): the call that led into torch; where the
    paste shows torch's frames alone, the outermost of them (`load_state_dict_from_url`). Where neither is there and
    the raising frame is the location (or there is none), the frame that called it where it is not the user's own
    (accelerate's `model.to(device)` into transformers' `to`, the compiled graph's `kernel76.run(...)` into triton's
    launcher, multiprocessing's `spawn_main`), or, where the standard library raised, its module that called it
    (multiprocessing's `popen_spawn_win32` into `reduction.dump`: the spawn start method). Frames of code generated
    at run time with no source ("<string>") are not the raising frame; a DataLoader worker's error was raised where
    the worker's traceback in its message ends."""
    if not found.frames:
        return
    where = diagnosis.location
    shown = {(where.file, where.line)} if where is not None else set()
    frames = raising_frames(found.frames)
    frame = _worker_frame(found.text) or frames[-1]
    raised_at_location = where is None or (frame.file, frame.line) in shown
    if (frame.file, frame.line) not in shown:
        diagnosis.facts["raised_in"] = frame_fact(frame)
        shown.add((frame.file, frame.line))
    via = next((f for f in reversed(frames) if looks_like_library_path(f.file)), None)
    entry = package_entry([f for f in frames if f.code or f.file != "<stdin>"])  # (a "<stdin>" frame with no code
    if via is not None and (via.file, via.line) == (frame.file, frame.line) and entry is None:  # shows no user line)
        # a library raised in the function called (torchaudio's set_audio_backend): the way in is another library's
        # call into it (speechbrain's dataio.py:26), where one is shown
        via = next((f for f in reversed(frames) if looks_like_library_path(f.file)
                    and package_of(f.file) != package_of(frame.file)), None)
    if via is not None and (via.file, via.line) not in shown and via.code:
        diagnosis.facts["called_via"] = frame_fact(via)
    elif entry is not None and (entry.file, entry.line) not in shown:
        diagnosis.facts["entered_via"] = frame_fact(entry)  # none of the user's frames shown: the API entered
    elif raised_at_location and (caller := _caller(frames)) is not None and caller.code and caller.file \
            and (caller.file, caller.line) not in shown and not looks_like_user_path(caller.file):
        diagnosis.facts["called_via"] = frame_fact(caller)
    elif (caller := _caller(frames)) is not None and caller.code and _in_stdlib(frame.file) and _in_stdlib(caller.file) \
            and caller.file != frame.file and (caller.file, caller.line) not in shown:
        diagnosis.facts["called_via"] = frame_fact(caller)  # the standard library's way in: `popen_spawn_win32`
    shown |= {(f["file"], f["line"]) for key in ("called_via", "entered_via") if isinstance(f := diagnosis.facts.get(key), dict)}
    if where is not None and (outer := _outer_caller(frames, where, shown)) is not None:
        diagnosis.facts["called_from"] = frame_fact(outer)
    statement = frames[0]
    if where is None and len(frames) > 1 and not statement.file and statement.code:
        # the paste began with the code line of its first frame: the user's statement, with no place
        diagnosis.facts["statement"] = frame_fact(statement)


def merge_ranks(diagnosis: Diagnosis, ranks: list[int]) -> None:
    """The ranks that printed another record of the same failure, added to diagnosis's."""
    if ranks:
        diagnosis.facts["ranks"] = sorted(set(diagnosis.facts.get("ranks", [])) | set(ranks))


SPAN = "_span"  # the first and last lines of the records a diagnosis was read from; dropped before output
ADJACENT_LINES = 8  # at most this many lines between two records printed together (blank lines, a logger's line, a banner)


def note_span(diagnosis: Diagnosis, found: FoundError) -> None:
    diagnosis.facts[SPAN] = (found.first or found.line, found.end or found.line + found.text.count("\n"))


def merge_spans(keep: Diagnosis, earlier: Diagnosis, later: Diagnosis) -> None:
    """keep stands for both records now (one failure printed twice): it spans both."""
    if (one := earlier.facts.get(SPAN)) and (two := later.facts.get(SPAN)):
        keep.facts[SPAN] = (min(one[0], two[0]), max(one[1], two[1]))


def printed_together(one: Diagnosis, other: Diagnosis) -> bool:
    """Nothing but a few lines between the two records (their tracebacks included): a warning printed long before an
    error, with the log going on in between, is news of its own, not a part of that error."""
    first, last = sorted((one.facts.get(SPAN), other.facts.get(SPAN)), key=lambda span: span[0] if span else 0)
    return first is None or last is None or last[0] - first[1] - 1 <= ADJACENT_LINES


def drop_spans(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    for diagnosis in diagnoses:
        diagnosis.facts.pop(SPAN, None)
    return diagnoses


def raised_last_first(diagnoses: list[Diagnosis], handling: dict[int, int]) -> list[Diagnosis]:
    """Python exits with the last error of a chain it printed with "During handling of the above exception, another
    exception occurred:" (an except block that failed in turn): where a rule explains that error, its diagnosis leads,
    in the place of the error it was raised while handling (a checkpoint's missing 'epoch', then the fallback for a bare
    state_dict that failed), which is shown under it as context (facts.printed_with, its own parts after it), as the
    live hook reads a chain: the exception raised last first, then its context. Where no rule explains the later
    error, the earlier one stays the answer; an error with no rule is not folded under the later one, only put after
    it. A chain of "The above exception was the direct cause" is not read so: a wrapper raised from the root cause
    (`raise RuntimeError("Error building extension") from e`) says less than the cause printed first."""
    if not handling:
        return diagnoses
    kept = list(diagnoses)
    for later in diagnoses:
        earlier_line = handling.get(later.facts.get("input_line"))
        if earlier_line is None or later.rule is None:
            continue
        earlier = next((d for d in kept if d.facts.get("input_line") == earlier_line), None)
        if earlier is None or earlier is later:
            continue
        kept.remove(later)
        at = kept.index(earlier)
        if earlier.rule is not None:
            kept[at] = later
            parts = later.facts.setdefault("printed_with", [])
            parts.append(printed_part(earlier, earlier_line, handled=True))
            parts.extend(earlier.facts.get("printed_with", []))
            merge_ranks(later, earlier.facts.get("ranks", []))
        else:
            kept.insert(at, later)
    return kept


def _outer_caller(frames: list[Frame], where, shown: set) -> Frame | None:
    """The line that called the location's function, where it is code of the user's (IPython's `print(vmap(f)(y))`
    over the cell's `f`, the script's `load_model("medium.pt")` over its `torch.load(path)`) or, for a location in a
    library, of a library (sglang's `moe_fused_gate(...)` over sgl_kernel's call into torch): the outer frames torch's
    own pass the call on through are skipped."""
    at = next((i for i in range(len(frames) - 1, -1, -1) if (frames[i].file, frames[i].line) == (where.file, where.line)),
              None)
    if not at:
        return None
    user = looks_like_user_path(where.file)
    for frame in reversed(frames[:at]):
        if _passes_on(frame):
            continue  # nn.Module's `__call__` cut to a relative path ("../module.py"): `self.forward(*input, **kwargs)`
        if looks_like_user_path(frame.file) or (not user and looks_like_library_path(frame.file)):
            return frame if frame.code and (frame.file, frame.line) not in shown else None
    return None


def note_outer_caller(diagnosis: Diagnosis, found: FoundError) -> None:
    """The same error again, raised in the same function of the user's while handling the first ("During handling of
    the above exception": `pickle.load` failed again in `__getitem__`): the second traceback holds the outer frames the
    first one's lacks: the line that called that function (`training_set[29]`) is where it was called from."""
    where, first = found.location(), diagnosis.location
    if where is None or first is None or "called_from" in diagnosis.facts \
            or (where.file, where.function) != (first.file, first.function):
        return
    shown = {(first.file, first.line), (where.file, where.line)}
    if (outer := _outer_caller(raising_frames(found.frames), where, shown)) is not None:
        diagnosis.facts["called_from"] = frame_fact(outer)


def _passes_on(frame: Frame) -> bool:
    """A wrapper's frame that only hands its arguments on (`return fn(*args, **kwargs)`)."""
    return frame.func in PASS_ON_FUNCS and frame.func != "<module>" and "(*" in frame.code


def _worker_frame(text: str) -> Frame | None:
    """Where a DataLoader worker's error was raised, in the worker's traceback its re-raise holds (the parent's frames
    end in torch's `reraise`)."""
    if "Traceback (most recent call last)" not in text:
        return None
    embedded = split_embedded(text)
    return raising_frames(embedded[1].frames)[-1] if embedded is not None and embedded[1].frames else None


def _in_stdlib(path: str) -> bool:
    """The standard library's file (not the user's, an installed package's, torch's, or code generated at run time)."""
    lowered = path.replace("\\", "/")
    return bool(path) and not path.startswith("<") and "-packages/" not in lowered and "/torch/" not in lowered \
        and not looks_like_user_path(path)


def _caller(frames: list[Frame]) -> Frame | None:
    """The frame that called the raising one, past those that only pass a call on (a decorator's wrapper)."""
    return next((f for f in reversed(frames[:-1]) if f.func not in PASS_ON_FUNCS), None) if len(frames) > 1 else None


def printed_values(values: list[tuple[str, str]]) -> list[dict]:
    """The values loguru (or better_exceptions) printed under the code of the raising frame, as culprits: what the
    failing line worked on (`self` = `Conv2d(12, 24, ...)`), each name once; "" where the code line was cut."""
    culprits, named = [], set()
    for name, value in values:
        if (name or value) not in named:
            named.add(name or value)
            culprits.append({"name": name, "kind": "printed", "repr": value})
    return culprits


def frame_fact(frame) -> dict:
    """A pasted frame as a place fact (file, line, function, code)."""
    return {"file": frame.file, "line": frame.line, "function": frame.func, "code": frame.code}
