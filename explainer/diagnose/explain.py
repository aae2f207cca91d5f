"""From an exception (live) or a message (text) to a Diagnosis."""

from __future__ import annotations

import builtins
import re
import time
import traceback
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable

from explainer._gc import paused_gc
from explainer._config import runbook_url
from explainer._diagnosis import Diagnosis, Location, printed_part
from explainer._lazyre import lazy_compile
from explainer._inspect import FrameRecord, innermost_user_frame, instance_dict, user_location, walk_traceback
from explainer.probes import PROBES, Evidence, ProbeContext, probe_failure
from explainer.rules.base import Match, RuleBase, context_facts, default_rulebase, match_rule
from explainer.rules.rule import StepAside
from explainer.rules.templates import render_first, summary_failure

from .exctext import ExceptionTexts
from .sourceplaces import WRAPPER_NOTES, extension_source, script_source, torch_source, wrapper_facts
from .textframes import Frame, library_tail, printed_frames, raising_frames, user_frame, with_failing_line

if TYPE_CHECKING:
    from .logscan import FoundError

PROBE_BUDGET_S = 2.0
MAX_CHAIN = 20
# the innermost library frames a rule may read with the message: torch's own frame may sit above a library's whole
# call chain (torch.hub's download_url_to_file over urllib's six, urlopen down to do_open)
MAX_RAISING_FRAMES = 12
EXCEPTION_GROUP = getattr(builtins, "BaseExceptionGroup", ())  # Python 3.11+


def exception_text(exc: BaseException) -> str:
    """The last line(s) of the traceback, as Python prints them: 'RuntimeError: ...'."""
    return "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")


def exception_chain(exc: BaseException) -> list[BaseException]:
    """exc, then its causes and contexts, innermost last, then the members of exception groups
    met on the way (breadth first), without cycles."""
    chain, seen = [], set()
    groups: list[BaseException] = []
    pending: list[BaseException] = [exc]
    while pending and len(chain) < MAX_CHAIN:
        current: BaseException | None = pending.pop(0)
        while current is not None and id(current) not in seen and len(chain) < MAX_CHAIN:
            seen.add(id(current))
            chain.append(current)
            if isinstance(current, EXCEPTION_GROUP):
                groups.append(current)
            current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
        while not pending and groups:
            members = groups.pop(0).exceptions
            pending.extend(m for m in members if isinstance(m, BaseException))
    return chain


def explain(exc: BaseException, *, tb: TracebackType | None = None, rulebase: RuleBase | None = None,
            printed: str | None = None) -> Diagnosis:
    """Explain a live exception; the torch error inside a chain (or an exception group) is the one explained.

    tb overrides exc.__traceback__ (an excepthook may be handed a trimmed traceback). printed is the
    traceback Python already wrote, if the caller recorded it: exception texts are read from it
    rather than computed again (that would run the exception's __str__ a second time).
    """
    # The probes' walks are bounded in time: a full collection of a large process inside one (half a second and
    # more) would cut them short, and pausing it makes the explainer's own work cheaper too.
    with paused_gc():
        return stepping_aside(lambda base: _explain_live(exc, tb, base, printed), rulebase or default_rulebase())


def stepping_aside(explain_with: Callable[[RuleBase], Diagnosis], rulebase: RuleBase) -> Diagnosis:
    """explain_with(rulebase), again without each rule that stepped aside (its `requires` facts were not found, or its
    text failed to render: noted for problems_notice's line), so that the next rule answers, or none."""
    base = rulebase
    while True:
        try:
            return explain_with(base)
        except StepAside as aside:
            if aside.rule_id in base.skipped:
                raise  # not a rule this rule base matched: trying again would not change the answer
            if aside.failure is not None:
                rulebase.failed_texts.setdefault(aside.rule_id, aside.failure)
            base = base.without(aside.rule_id)


def _explain_live(exc: BaseException, tb: TracebackType | None, rulebase: RuleBase, printed: str | None) -> Diagnosis:
    outer_records = walk_traceback(tb if tb is not None else exc.__traceback__)
    chain = exception_chain(exc)
    text_of = ExceptionTexts(chain, printed)
    child = child_process_location(chain)
    for candidate in chain:
        records = outer_records if candidate is exc else walk_traceback(candidate.__traceback__)
        text = with_failing_line(text_of(candidate), records[-1].code if records else "")
        embedded = _split_embedded(text)
        if embedded is not None:
            diagnosis = _explain_embedded(embedded, text, rulebase, fallback=user_location(records),
                                          records=records, exc=candidate)
            if diagnosis is not None:
                return diagnosis
        found = _match_with_raising_frames(rulebase, text, records)
        if found is not None:
            handled = _handled_errors(candidate, chain, text_of, rulebase)
            facts = {**(_code_context(found, records) or {}), **_handled_context(found, handled)}
            diagnosis = _diagnose(found, text, records, candidate, extra_facts=facts or None)
            if parts := [part for part, _ in handled if part is not None and part["rule"] != found.rule.id]:
                diagnosis.facts.setdefault("printed_with", []).extend(parts)
            return _in_child(diagnosis, child) if child is not None else diagnosis
    diagnosis = unknown(text_of(exc), user_location(outer_records))
    return _in_child(diagnosis, child) if child is not None else diagnosis


MAX_HANDLED = 3  # errors shown under the one explained, each raised while handling the one after it
HANDLING_LINE = "\n\nDuring handling of the above exception, another exception occurred:\n"


def _handled_errors(exc: BaseException, chain: list[BaseException], text_of: ExceptionTexts,
                    rulebase: RuleBase) -> list[tuple[dict[str, Any] | None, str]]:
    """The errors exc was raised while handling (Python's "During handling of the above exception, another exception
    occurred": an except block that failed in turn; not an error it was raised from), the one it was handling first,
    each with its text: where a rule explains it, a part shown under exc's diagnosis (facts.printed_with), as a pasted
    chain reads (cli/explain.py's raised_last_first). Read from the message and frames alone: no probe runs for them."""
    handled: list[tuple[dict[str, Any] | None, str]] = []
    current = exc
    while len(handled) < MAX_HANDLED and current.__cause__ is None and not current.__suppress_context__ \
            and (context := current.__context__) is not None and any(context is member for member in chain):
        records = walk_traceback(context.__traceback__)
        text = with_failing_line(text_of(context), records[-1].code if records else "")
        found = _match_with_raising_frames(rulebase, text, records)
        part = None
        if found is not None and text_of(context) != text_of(exc):  # (not the same error raised again: one failure)
            try:
                diagnosis = _diagnose(found, text, records, None, location=user_location(records))
                part = printed_part(diagnosis, None, handled=True)
            except StepAside:  # (said without it: it is not the error explained)
                pass
        handled.append((part, text))
        current = context
    return handled


def _handled_context(found: Match, handled: list[tuple[dict[str, Any] | None, str]]) -> dict[str, Any]:
    """What the rule's context patterns read in the errors it was raised while handling, printed as Python prints the
    chain above it (a KeyError's key before the fallback that failed)."""
    if not handled or not found.rule.context_sources:
        return {}
    printed = "".join(f"{text}{HANDLING_LINE}" for _, text in reversed(handled))
    return {k: v for k, v in context_facts(found.rule, printed).items() if k not in found.groups}


def _match_with_raising_frames(rulebase: RuleBase, text: str, records: list[FrameRecord]) -> Match | None:
    """The message, or the message under the library frames that raised it, as a pasted traceback shows them.

    The frames win only for a more specific rule (a higher priority): that is how the default collate_fn's
    failure beats the generic torch.stack rule in a live process, as it does in a pasted traceback.
    """
    # the raising frame's line and the user's, for rules that require a sign in them
    code = _code_lines(records[-1] if records else None, innermost_user_frame(records))
    plain = rulebase.match(text, code=code)
    frames = _raising_frames_text(records)
    return (rulebase.match_above(frames + text, plain, code) if frames else None) or plain


def _raising_frames_text(records: list[FrameRecord]) -> str:
    """The innermost library frames (below the user's last frame), printed the way Python prints them."""
    tail: list[FrameRecord] = []
    for record in reversed(records):
        if record.is_user or len(tail) == MAX_RAISING_FRAMES:
            break
        tail.append(record)
    return printed_frames([(r.filename, r.lineno, r.name) for r in reversed(tail)])


def _code_context(found: Match, records: list[FrameRecord]) -> dict[str, Any] | None:
    """Live, what the rule's context patterns find in the code lines of the raising frame and the user's failing one."""
    if not found.rule.context_sources or not records:
        return None
    code = _code_lines(records[-1], innermost_user_frame(records))
    return {k: v for k, v in context_facts(found.rule, code).items() if k not in found.groups} or None


def _code_lines(raising: FrameRecord | Frame | None, user: FrameRecord | Frame | None) -> str:
    """The code line of the raising frame, then the user's failing line where a library raised below it (`model(x)`
    over torch's own frames): the lines a rule's code signs and context patterns read, live or pasted."""
    lines = (frame.code for frame in (raising, user) if frame is not None and frame.code and frame.code.strip())
    return "\n".join(dict.fromkeys(line.strip() for line in lines))


def _split_embedded(text: str) -> tuple[str, FoundError] | None:
    # The log scanner (its many patterns) is imported only for a DataLoader worker's re-raise (torch 0.4's: the
    # worker's traceback in the message, "TypeError: Traceback (most recent call last):")
    if "Original Traceback" not in text and not text.split("\n", 1)[0].endswith(": Traceback (most recent call last):"):
        return None
    from .logblocks import split_embedded

    return split_embedded(text)


def child_process_location(chain: list[BaseException]) -> Location | None:
    """The child's failing line, for an error a multiprocessing pool or a process pool re-raised.

    Both attach the child's formatted traceback as the cause (RemoteTraceback, whose `tb` attribute
    is that text); it is read from the instance's own __dict__, so nothing of the user's runs.
    """
    for exc in chain:
        if type(exc).__name__ not in ("RemoteTraceback", "_RemoteTraceback"):
            continue
        text = (instance_dict(exc) or {}).get("tb")
        if isinstance(text, str):
            from .logscan import scan

            found = list(scan(text.strip().strip('"').splitlines()))
            if found:
                return found[-1].location()
    return None


def _in_child(diagnosis: Diagnosis, child: Location) -> Diagnosis:
    """The child's line is where it failed; the parent's line, where the pool re-raised it."""
    if diagnosis.location is not None:
        diagnosis.facts["reraised_at"] = diagnosis.location.to_dict()
    diagnosis.location = child
    return diagnosis


def explain_text(text: str, *, location: Location | None = None, rulebase: RuleBase | None = None,
                 extra_facts: dict[str, Any] | None = None, frames: list[Frame] = (), before: str = "",
                 context: str | None = None) -> Diagnosis:
    """Explain a message from its text alone (a pasted message, a line from a log); frames, the traceback
    pasted above it, and before, the log lines printed just before it, where the scanner read them; context, what
    the rule's context patterns read (before, unless given: a paste read whole gives itself)."""
    return stepping_aside(lambda base: _explain_text(text, location, base, extra_facts, frames, before, context),
                          rulebase or default_rulebase())


def _explain_text(text: str, location: Location | None, rulebase: RuleBase, extra_facts: dict[str, Any] | None,
                  frames: list[Frame], before: str, context: str | None) -> Diagnosis:
    foreign = rulebase.foreign_match(text) or (rulebase.foreign_match(_raise_site(frames[-1]) + text) if frames else None)
    if foreign is not None:
        return _not_pytorch(foreign, text, location)
    embedded = _split_embedded(text)
    if embedded is not None:
        diagnosis = _explain_embedded(embedded, text, rulebase, fallback=location)
        if diagnosis is not None:
            return diagnosis
    # the raising frame's code line and the user's outer one (None: the line above the error in text)
    code = _code_lines(raising_frames(list(frames))[-1], user_frame(frames)) if frames else None
    found = rulebase.match(text, code=code)
    if found is None and (statement := _import_statement_above(text, frames, before)):
        found = rulebase.match(f"{statement}\n{text}", code=code)
    tail = library_tail(list(frames), MAX_RAISING_FRAMES)
    if tail:
        # (IPython 8 names a method by its class, "_MultiProcessingDataLoaderIter._try_get_data": Python, by itself)
        printed = printed_frames([(f.file, f.line, f.func.rsplit(".", 1)[-1] if f.ipython else f.func) for f in tail])
        found = rulebase.match_above(printed + text, found, code) or found
    if before.strip():
        found = _read_with_lines_before(rulebase, text, before, found, code)
    if found is None:
        return unknown(text, location)
    read = before if context is None else context
    if found.rule.context_sources and code:
        read = f"{read}\n{code}"  # the failing frame's code line: `B, H, Q, KV = mask.shape` over "too many values"
    facts = {k: v for k, v in context_facts(found.rule, read).items() if k not in found.groups}
    return _diagnose(found, text, [], None, extra_facts={**facts, **(extra_facts or {})}, location=location)


# A command that failed: what it printed just before this line says why (the linker's "cannot find -lcuda").
FAILED_COMMAND_RE = lazy_compile(r"CalledProcessError: Command |returned non-zero exit status \d+|error: command '[^'\n]+' failed")


def _read_with_lines_before(rulebase: RuleBase, text: str, before: str, found: Match | None,
                            code: str | None = None) -> Match | None:
    """The error read with the lines printed just before it (the `from torch._C import *` over "DLL load failed"):
    a rule that needs them wins where it is more specific (a higher priority) than the one the error alone gets, and
    needs the error too; a rule the lines alone match is of something else printed before (tensorboardX's "NaN or
    Inf found in input tensor" over a ValueError), except over a failed command, whose own output they are (the
    linker's "cannot find -lcuda" over gcc's CalledProcessError)."""
    more = rulebase.match_above(f"{before}\n{text}", found, code)
    if more is None or (match_rule(more.rule, before) is not None and not FAILED_COMMAND_RE.search(text)):
        return found
    return more


# Python <= 3.6 said "cannot import name 'X'" without the module: the import statement it failed on names it.
BARE_IMPORT_ERROR_RE = lazy_compile(r"^ImportError: cannot import name '?\w+'?\s*$")
IMPORT_STATEMENT_RE = lazy_compile(r"^\s*from\s+[\w.]+\s+import\s")


def _import_statement_above(text: str, frames: list[Frame], before: str) -> str:
    """The `from M import X` statement printed above an ImportError that does not say from where: the innermost
    frame's code line, or the line a bare paste holds just above the error; '' where there is none."""
    if not BARE_IMPORT_ERROR_RE.match(text):
        return ""
    statement = frames[-1].code if frames else (before.splitlines() or [""])[-1]
    return statement.strip() if IMPORT_STATEMENT_RE.match(statement) else ""


def _raise_site(frame: Frame) -> str:
    """The innermost pasted frame with its code line, for foreign rules: a framework that copies PyTorch's messages
    word for word (tinygrad) is told apart only by the file whose `raise` statement printed them."""
    return f'  File "{frame.file}", line {frame.line}, in {frame.func}\n    {frame.code.strip()}\n'


def rerender(diagnosis: Diagnosis, rulebase: RuleBase | None = None) -> None:
    """Summary and fixes written again from the diagnosis's facts, after facts were added to them (a log
    record folded into the report of the same failure)."""
    rule = (rulebase or default_rulebase()).by_id.get(diagnosis.rule) if diagnosis.rule else None
    if rule is None:
        return
    try:
        diagnosis.summary, diagnosis.fixes = _render_texts(rule, diagnosis.error, diagnosis.facts)
    except StepAside:  # the added facts make its text fail: it keeps what it said
        pass


def _render_texts(rule, text: str, facts: dict[str, Any]) -> tuple[str, list[str]]:
    """The rule's summary and fixes filled in from the facts, the message and its error type; then what a wrapper
    around the error said."""
    error_type = text.split(":", 1)[0] if ":" in text.split("\n", 1)[0] else ""
    context = {"error_type": error_type, "message": text, **facts}
    summary = render_first(rule.summary, context)
    # a team rule's text bug: not its title twice, the next rule's answer; a built-in rule keeps its title (its
    # templates are tested on its examples, and a fact of another form than theirs, "1" read as a number, must not
    # cost the user the rule's fixes)
    if summary is None and rule.pack != "builtin" and (failure := summary_failure(rule.summary, context)) is not None:
        raise StepAside(rule.id, failure)
    summary = summary or rule.title
    for pattern, note in WRAPPER_NOTES:
        values = [facts.get(name) for name in pattern.groupindex]
        # a rule that names the wrapper's values itself (undefined_symbol's importer) needs no note
        if all(isinstance(v, str) for v in values) and not all(_names(summary, v) for v in values):
            summary += " " + note.format(**{name: facts[name] for name in pattern.groupindex})
    return summary, render_fixes(rule.fixes, context)


def _names(summary: str, value: str) -> bool:
    """Whether summary names value as a whole (a config key "model" is not named by "pl_modules.model.CDVAE")."""
    return re.search(rf"(?<![\w.]){re.escape(value)}(?!\.?\w)", summary) is not None


def _explain_embedded(embedded: tuple[str, FoundError], text: str, rulebase: RuleBase,
                      fallback: Location | None = None, records: list[FrameRecord] = (),
                      exc: BaseException | None = None) -> Diagnosis | None:
    """A DataLoader worker's re-raise: explain the original error, at the Dataset's line.

    The wrapper's own text (with the worker's traceback) wins only when its rule is more specific,
    i.e. has a higher priority: that is how a collate failure beats the generic stack rule. When the
    worker's traceback holds no user code (collate is torch's), the location is the main process's
    user frame (the `for batch in loader:` line), given as fallback. The wrapper is the main process's own
    exception: live, its rule's probes read the main process's frames (records, exc), where the loader is.
    """
    from .logpatterns import WORKER_RE

    head, inner = embedded
    worker = WORKER_RE.search(head)
    facts = {"dataloader_worker": int(worker.group("worker"))} if worker else {}
    location = inner.location() or fallback
    inner_match = rulebase.match(inner.text, code=raising_frames(inner.frames)[-1].code if inner.frames else None)
    wrapper_match = rulebase.match(text)
    if wrapper_match is not None and (inner_match is None or wrapper_match.rule.priority > inner_match.rule.priority):
        facts["original_error"] = inner.text.splitlines()[0][:500]
        return _diagnose(wrapper_match, text, list(records), exc, extra_facts=facts, location=location)
    if inner_match is None:
        return None
    return _diagnose(inner_match, inner.text, [], None, extra_facts=facts, location=location)


def unknown(text: str, location: Location | None) -> Diagnosis:
    return Diagnosis(rule=None, category="other", title="No known PyTorch failure matches this error",
                     summary="No rule in the knowledge base matches this error.", error=text,
                     location=location)


def _not_pytorch(found: Match, text: str, location: Location | None) -> Diagnosis:
    """Another framework printed this: say so, with no PyTorch rule (rule stays null)."""
    summary, fixes = _render_texts(found.rule, text, dict(found.groups))
    return Diagnosis(rule=None, category="other", title=found.rule.title, summary=summary, error=text,
                     location=location, fixes=fixes, runbook=runbook_url(found.rule.id), facts=dict(found.groups))


def _diagnose(found: Match, text: str, records: list[FrameRecord], exc: BaseException | None,
              extra_facts: dict[str, Any] | None = None, location: Location | None = None) -> Diagnosis:
    rule = found.rule
    facts: dict[str, Any] = {**wrapper_facts(text), **found.groups}
    facts.update(extra_facts or {})
    culprits: list[dict[str, Any]] = []
    location = location or user_location(records)
    problems: list[str] = []
    names = rule.probes if exc is not None else [n for n in rule.probes if not PROBES[n].live]
    if names:
        evidence, problems = _run_probes(names, exc, records, facts)
        facts.update(evidence.facts)
        culprits = evidence.culprits
        location = evidence.location or location
    if any(name not in facts for name in rule.requires):
        raise StepAside(rule.id)  # its probes did not find what it answers for (a team's own object)
    if exc is not None and not culprits:
        evidence, more = _failing_line_operands(exc, records, facts)
        facts.update({k: v for k, v in evidence.facts.items() if k not in facts})
        culprits, problems = evidence.culprits, problems + more
    source = torch_source(text)
    if source is not None:
        facts.setdefault("torch_source", source)
    elif (built := extension_source(text)) is not None:
        facts.setdefault("extension_source", built)
    if (scripted := script_source(text)) is not None:
        facts.setdefault("script_source", scripted)
    summary, fixes = _render_texts(rule, text, facts)
    diagnosis = Diagnosis(rule=rule.id, category=rule.category, title=rule.title, summary=summary, error=text,
                          location=location, culprits=culprits, fixes=fixes, runbook=runbook_url(rule.id),
                          facts={k: v for k, v in facts.items() if not k.startswith("_")},
                          internal_errors=problems)
    return diagnosis


def render_fixes(fixes: list[tuple[str, ...]], context: dict[str, Any]) -> list[str]:
    """Each fix whose facts are known (its first alternative that can be filled), without repeats."""
    rendered: list[str] = []
    for alternatives in fixes:
        fix = render_first(list(alternatives), context)
        if fix and fix not in rendered:
            rendered.append(fix)
    return rendered


def _failing_line_operands(exc: BaseException, records: list[FrameRecord],
                           facts: dict[str, Any]) -> tuple[Evidence, list[str]]:
    """When the rule's own probes named no culprit: the tensors the user's failing line works on."""
    from explainer.probes.ops import call  # noqa: F401  (registers call_operands)

    return _run_probes(["call_operands"], exc, records, facts)


def _run_probes(names: list[str], exc: BaseException | None, records: list[FrameRecord],
                facts: dict[str, Any]) -> tuple[Evidence, list[str]]:
    merged = Evidence()
    problems: list[str] = []
    deadline = time.monotonic() + PROBE_BUDGET_S
    context = ProbeContext(exc, records, dict(facts))
    seen_names: set[str] = set()
    for name in names:
        if time.monotonic() > deadline:
            problems.append(f"probe time budget spent before probe {name!r}")
            break
        try:
            evidence = PROBES[name].function(context)
        except Exception as error:  # a probe's own bug must not hide the diagnosis
            problems.append(probe_failure(name, error))
            continue
        if evidence is None:
            continue
        merged.facts.update(evidence.facts)
        context.facts.update(evidence.facts)
        for culprit in evidence.culprits:
            if culprit.get("name") not in seen_names:
                seen_names.add(culprit.get("name"))
                merged.culprits.append(culprit)
        merged.location = merged.location or evidence.location
    return merged, problems


def diagnose_signal(rule_id: str, facts: dict[str, Any], *, culprits: list[dict[str, Any]] | None = None,
                    location: Location | None = None, rulebase: RuleBase | None = None) -> Diagnosis:
    """A Diagnosis for a measured training signal (a 'signal' rule), with the same contract as errors."""
    rulebase = rulebase or default_rulebase()
    rule = rulebase.by_id[rule_id]
    summary = render_first(rule.summary, facts) or rule.title
    fixes = render_fixes(rule.fixes, facts)
    return Diagnosis(rule=rule.id, category=rule.category, title=rule.title, summary=summary, error="",
                     location=location, culprits=list(culprits or []), fixes=fixes,
                     runbook=runbook_url(rule.id), facts=dict(facts))
