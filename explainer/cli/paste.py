"""A short input read as one pasted message: its lines lend values to the error found in it, a traceback it ends
with (no error line under it) belongs to that error, and a paste in which no error line stands where a log would
put it is read whole."""

from __future__ import annotations

import re
import textwrap

from explainer._diagnosis import Diagnosis, printed_part
from explainer._lazyre import lazy_compile
from explainer.diagnose.explain import explain_text, rerender
from explainer.diagnose.logblocks import scan_blocks
from explainer.diagnose.logpatterns import comfyui_node
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.logscan import FoundError, Scanner, scan
from explainer.diagnose.textframes import Frame, frames_location, in_call_order, looks_like_user_path, word_rejoined
from explainer.rules.base import context_facts, default_rulebase, match_rule

from .explain import explain_found, note_logged_place, note_raising_frame


def explain_paste(head: str) -> list[Diagnosis]:
    """Every error in a short paste, explained as one message."""
    diagnoses = _explain_unwrapped(unwrapped(head))
    _note_rich_place(diagnoses, head)
    return diagnoses


def _explain_unwrapped(head: str) -> list[Diagnosis]:
    scanner = Scanner()
    found = list(scan_blocks([head], scanner))
    _give_dangling_frames(found, scanner.dangling or scanner.unended())
    diagnoses = warnings_as_context(found, explain_found(found))
    context_rules = _context_rules(diagnoses, found)
    text = word_rejoined(unfenced(head).strip().strip("`").strip())  # a word the console broke, joined as in records
    # Read whole where no record was found, where the paste is one line (a frame, its code and the error run
    # together: the records found in it are that line), or where no rule explains any record found (a message its
    # writer broke into lines, "No valid triton configs." over "OutOfMemoryError: out of resource: ...", read as two
    # records; not where another framework's rule recognised one).
    whole = "\n" not in text or not any(d.runbook for d in diagnoses)
    if not any(d.runbook for d in diagnoses) and (dedented := textwrap.dedent(head)) != head:
        records = list(scan(dedented.splitlines()))  # indented as a whole (a markdown code block)
        again = warnings_as_context(records, explain_found(records))
        if not diagnoses or any(d.runbook for d in again):
            diagnoses = again
    fallback = _fallback_priority(diagnoses)
    if any(d.rule for d in diagnoses) and fallback is None:
        _lend_paste_facts(diagnoses, text)
        return diagnoses
    if text and (whole or fallback is not None):
        diagnosis = explain_text(text, context=text)  # its context patterns read the whole paste
        # a rule, or a foreign rule's page; over generic fallbacks, a more specific rule only
        if (diagnosis.rule is not None or diagnosis.runbook) and _whole_wins(diagnosis, fallback) \
                and diagnosis.rule not in context_rules:
            diagnosis = _placed(diagnosis, head, text, scanner.dangling or scanner.unended(), found)
            if node := comfyui_node(text):
                diagnosis.facts["comfyui_node"] = node
            glogged, lead = _logged_place(text, diagnosis.rule)
            if glogged:
                note_logged_place(diagnosis, glogged, lead)  # the glog prefix of the logged line: where it was logged
            return [diagnosis]
        if fallback is not None and diagnosis.rule is None and not diagnosis.runbook \
                and not _fallbacks_hold(diagnoses, text):
            return [diagnosis]  # the fallback's own guard (another framework's frame) refuses the paste read whole
    if any(d.rule for d in diagnoses):
        _lend_paste_facts(diagnoses, text)
    return diagnoses


# A rule so tagged in runbooks/ reads a warning about an API that still works (a deprecation): it never leads to an error
# printed after it.
HARMLESS_TAG = "deprecation"


def _context_rules(diagnoses: list[Diagnosis], found: list[FoundError]) -> set[str]:
    """The rules of warnings read as context of an error after them (facts.printed_with), which are not the paste's
    answer read whole either: under an error a rule explains, any warning's; under an error no rule explains, a
    harmless one's (a deprecation warning above a FileNotFoundError: the error is unexplained, not the warning's)."""
    warned = {record.line for record in found if record.warning}
    by_id = default_rulebase().by_id
    rules = {part.get("rule") for d in diagnoses for part in d.facts.get("printed_with", ())
             if isinstance(part, dict) and part.get("input_line") in warned
             and (d.rule or (part.get("rule") in by_id and HARMLESS_TAG in by_id[part["rule"]].tags))}
    return rules - {d.rule for d in diagnoses}


# A markdown code fence's line: three or more backticks or tildes, and the block's language ("```bash", "~~~python")
FENCE_LINE_RE = lazy_compile(r"^[ \t]*(?:`{3,}|~{3,})[\w+#.-]*[ \t]*$")


def unfenced(head: str) -> str:
    """The paste without the code fence lines it opens and closes with, the opening one's language tag with it
    ("```bash", then the message, then "```")."""
    lines = head.strip().split("\n")
    if len(lines) > 1 and FENCE_LINE_RE.match(lines[0]):
        lines = lines[1:]
        if lines and FENCE_LINE_RE.match(lines[-1]):
            lines = lines[:-1]
    return "\n".join(lines)


def _fallbacks_hold(diagnoses: list[Diagnosis], text: str) -> bool:
    """Whether a generic fallback that explained a record also matches the whole paste: its patterns' guards (a frame
    of TensorFlow's package above the error) read the lines the record left out."""
    by_id = default_rulebase().by_id
    return any(match_rule(by_id[d.rule], text) is not None for d in diagnoses if d.rule in by_id)


# Generic rules (a Python error of any program: `'NoneType' object has no attribute`) sit at this priority or below.
GENERIC_PRIORITY = -30


def _fallback_priority(diagnoses: list[Diagnosis]) -> int | None:
    """The highest priority among the rules that explain the paste's records, where all are generic fallbacks
    (GENERIC_PRIORITY or lower: `'NoneType' object has no attribute 'cpu'` read alone); None otherwise. A specific
    rule that needs the frame's code line with the error (sglang's `req_pool_indices.cpu()`) then still wins, read
    whole."""
    by_id = default_rulebase().by_id
    # (with the rules of the errors the later ones were raised while handling, shown under them: records explained too)
    rules = [d.rule for d in diagnoses] + [part.get("rule") for d in diagnoses for part in d.facts.get("printed_with", ())
                                           if isinstance(part, dict) and part.get("handled")]
    priorities = [by_id[rule].priority for rule in rules if rule is not None and rule in by_id]
    return max(priorities) if priorities and max(priorities) <= GENERIC_PRIORITY else None


def _whole_wins(diagnosis: Diagnosis, fallback: int | None) -> bool:
    """Whether the paste read whole is the answer: always where no record was explained; over generic fallbacks,
    only another framework's page (a foreign rule) or a more specific (higher priority) rule."""
    if fallback is None or diagnosis.rule is None:
        return True
    rule = default_rulebase().by_id.get(diagnosis.rule)
    return rule is not None and rule.priority > fallback


# The mark of a line of a markdown quote, with the space after it (one level: ">>> " is Python's prompt, quoted or not)
QUOTE_MARK_RE = lazy_compile(r"^[ \t]*>[ \t]?")
# Python's interactive prompts, put on every line of a paste (an error copied with its own lines prefixed as input)
PROMPT_RE = lazy_compile(r"^[ \t]*(?:>>>|\.\.\.)(?: |$)")
# Characters a URL encodes, as they stand in an error message (a paste copied from a link or a search box)
URL_ESCAPE_RE = lazy_compile(r"%(?:20|0[AD]|2[0-9A-F]|3[A-F]|5[BCD]|7[BD])", re.IGNORECASE)


def unwrapped(head: str) -> str:
    """The paste as it was printed: a markdown quote's marks taken off every line, where each of its lines is quoted (a
    GitHub comment quoting the traceback: "> RuntimeError: ..."); a message copied URL-encoded, with no space or line
    break left ("libtorch_cuda.so:%20undefined%20symbol:%20ncclCommRegister"), decoded; Python's prompt taken off every
    line where each line has one (no line is the interpreter's output: the prompts were put there by hand); a log of
    rich's logging handler read with its wrapped message column joined (rich_log_unwrapped)."""
    stripped = head.strip()
    if "%" in stripped and not any(c.isspace() for c in stripped) and URL_ESCAPE_RE.search(stripped):
        from urllib.parse import unquote

        return unquote(stripped)
    if stripped[:1] == ">":
        lines = head.splitlines()
        if all(PROMPT_RE.match(line) for line in lines if line.strip()):  # no line the interpreter printed
            return "\n".join(PROMPT_RE.sub("", line, count=1) for line in lines)
        if all(QUOTE_MARK_RE.match(line) for line in lines if line.strip()):
            return "\n".join(QUOTE_MARK_RE.sub("", line, count=1) for line in lines)
    return rich_log_unwrapped(head)


# The first line of a record printed by rich's logging handler: an optional time column ("[11/28/24 13:24:44] ", or
# spaces where the time repeats), the level padded to 8, the message, and the place it was logged from right-aligned
# at the end ("batch_handler.py:574")
RICH_RECORD_RE = lazy_compile(r"^(?P<lead>(?:\[[^\]\n]{4,30}\] | {8,40})?)(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) +"
                              r"(?P<message>\S.*?) +(?P<path>[\w.<>-]+\.py:\d+) *$")


def rich_log_unwrapped(head: str) -> str:
    """A log printed by rich's handler with each line's words wrapped at the message column's width, the lines under
    a record's first indented to that column: a wrapped line joined to the one it continues (the next word would not
    have fitted; a word longer than the column folded), and the logging place column taken off, so that a message
    reads as one line ("CUDA" over "out of memory. Tried to allocate 3.88 GiB"). Lines the message itself broke stay
    apart, and so does every line of a paste with no such record."""
    out, _ = _rich_records(head)
    return "\n".join(out) if len(out) < head.count("\n") + 1 else head


def rich_log_places(head: str) -> list[tuple[str, str]]:
    """Each record of a log printed by rich's handler, its wrapped message joined, with the place its right-hand
    column names (ComfyUI's "!!! Exception during processing !!! ..." logged from execution.py:392); none where
    rich_log_unwrapped leaves the paste as it is."""
    out, starts = _rich_records(head)
    if len(out) >= head.count("\n") + 1:
        return []
    return [(out[at].strip(), place) for at, place in starts]


def _note_rich_place(diagnoses: list[Diagnosis], head: str) -> None:
    """The place rich's column names for the record that holds the error the first diagnosis explains: where it was
    logged from (facts.logged_from), where nothing else said so."""
    first = next((d for d in diagnoses if d.rule), None)
    if first is None or "logged_from" in first.facts or "\n" not in head:
        return
    rule = default_rulebase().by_id.get(first.rule)
    if rule is None:
        return
    place = next((place for message, place in rich_log_places(head) if match_rule(rule, message) is not None), None)
    if place is not None:
        note_logged_place(first, place)


def _rich_records(head: str) -> tuple[list[str], list[tuple[int, str]]]:
    """rich_log_unwrapped's lines, and for each record's first line its index among them and its place column."""
    lines = head.split("\n")
    out: list[str] = []
    starts: list[tuple[int, str]] = []
    column = width = 0
    above = ""  # the text of the line above in the message column, as rich printed it
    for line in lines:
        record = RICH_RECORD_RE.match(line)
        if record is not None and len(record["lead"]) + 9 == record.start("message"):
            column, width = record.start("message"), record.start("path") - record.start("message") - 1
            above = record["message"]
            starts.append((len(out), record["path"]))
            out.append(line[:record.end("message")])
        elif column and line.startswith(" " * column) and line[column:column + 1].strip():
            text = line[column:].rstrip()
            out[-1] += _rich_joint(above, text, width, column)
            above = text
        else:
            column = 0 if line[:column].strip() or not line.strip() else column
            above = line[column:].rstrip()
            out.append(line.rstrip() if column else line)
    return out, starts


def _rich_joint(above: str, text: str, width: int, column: int) -> str:
    """`text`, a line under a rich record's first at its message column, as it joins the line above: as it was where
    a word that filled the whole column was folded; with the space the wrap took where its first word would not have
    fitted on the line above; on a line of its own, where the message broke the line itself."""
    if len(above) >= width and " " not in above.strip():
        return text
    if len(above) + 1 + len(text.split(" ", 1)[0]) > width:
        return " " + text
    return "\n" + " " * column + text


def _logged_place(text: str, rule_id: str | None) -> tuple[str, str]:
    """The place a glog prefix names on the line of a paste read whole that holds the rule's message (TCPStore's
    "[W519 18:43:28.514 TCPStore.cpp:125] [c10d] recvValue failed ..." under vLLM's DEBUG lines), else on its first
    line, "" where there is none; and what the app's line says before the error it logged, where the rest of the line
    is the rule's message ("Failed to load model [yolo11n_seg]" before ": Torch not compiled with CUDA enabled")."""
    lines = text.splitlines()
    rule = default_rulebase().by_id.get(rule_id) if rule_id else None
    for line in lines if rule is not None else ():
        cleaned, _, _, place, _ = clean_line_record(line)
        if place and (len(lines) == 1 or match_rule(rule, cleaned) is not None):
            lead, _, rest = cleaned.partition(": ")
            said = rest and not LEAD_TYPE_RE.match(lead) and match_rule(rule, rest) is not None
            return place, lead.strip() if said else ""
    return clean_line_record(lines[0])[3] if lines else "", ""


# An exception's type, not an app's words before the error it logged
LEAD_TYPE_RE = lazy_compile(r"^\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Interrupt|Exit)?\s*$")


# The values of an error's message another record may name: a quoted name ('mv'), a number.
MESSAGE_VALUE_RE = lazy_compile(r"'([^'\s]{1,80})'|\"([^\"\s]{1,80})\"|`([^`\s]{1,80})`|(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")


def warnings_as_context(found: list[FoundError], diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """A warning the paste holds above an error is context: the error after it is the paste's record (a cuDNN
    warning printed while a model ran is not why torchaudio.save then raised). The warning's diagnosis goes under the
    error's (facts.printed_with); it stays the answer only when the two are one failure and no rule explains the
    error or the warning's rule ranks above the error's (_outranks). One failure: the error names a value of the
    warning ("KeyError: 'mv'" under the ONNX exporter's "export failed on ATen operator mv"), or its traceback passes
    through the line that issued the warning. A warning with no error after it is the record itself."""
    records = {record.line: record for record in found}
    kept: list[Diagnosis] = []
    for at, diagnosis in enumerate(diagnoses):
        record = records.get(diagnosis.facts.get("input_line"))
        if record is None or not record.warning or diagnosis.rule is None:
            kept.append(diagnosis)
            continue
        error = next((d for d in diagnoses[at + 1:] if (r := records.get(d.facts.get("input_line"))) is not None
                      and not r.warning), None)
        if error is None or (_one_failure(record, records[error.facts["input_line"]]) and _outranks(diagnosis, error)):
            kept.append(diagnosis)
        elif error.rule != diagnosis.rule:
            error.facts.setdefault("printed_with", []).append(printed_part(diagnosis, diagnosis.facts.get("input_line")))
    return kept


def _outranks(warning: Diagnosis, error: Diagnosis) -> bool:
    """Of one failure, the warning's reading stays the answer where no rule explains the error, or where the warning's
    rule ranks above the error's: written for what the error then says (mse_loss's broadcast warning, then the size
    mismatch it predicts)."""
    if error.rule is None:
        return True
    rules = default_rulebase().by_id
    return warning.rule in rules and error.rule in rules and rules[warning.rule].priority > rules[error.rule].priority


def _one_failure(warning: FoundError, error: FoundError) -> bool:
    places = {(frame.file, frame.line) for frame in warning.frames if frame.file}
    if any((frame.file, frame.line) in places for frame in error.frames):
        return True
    message = error.text.split("\n", 1)[0].partition(": ")[2]
    values = {next(group for group in found.groups() if group) for found in MESSAGE_VALUE_RE.finditer(message)}
    return any(re.search(rf"(?<![\w.]){re.escape(value)}(?![\w])", warning.text) for value in values)


def _give_dangling_frames(found: list[FoundError], dangling: list[Frame]) -> None:
    """A traceback the paste ends with, no error line under it, is the traceback of the error printed before it
    (pasted first, or another process's copy printed first) where that error shows none of the user's code: its
    frames are the outer ones."""
    if not dangling or not found:
        return
    last = found[-1]
    if last.frames is dangling:
        return  # the error IPython's header named, read from the traceback itself
    if not any(looks_like_user_path(frame.file) for frame in last.frames):
        last.frames = in_call_order([*dangling, *last.frames])  # (a paste may list them innermost first)


def _placed(diagnosis: Diagnosis, head: str, text: str, dangling: list[Frame], found: list[FoundError]) -> Diagnosis:
    """A paste explained whole (no line of it read as its error line: " RuntimeError: ..." indented by a space, an
    error line cut off; or its one record explained only with the rest of the paste: the `raise` statement's words
    over a message that lost a letter): where it happened, from the paste read again with every line's indentation
    taken off (the statement above an error line), or else from the frames of its one record, or of the traceback it
    ends with."""
    if diagnosis.rule is None:
        return diagnosis
    relaxed = explain_found(scan(line.lstrip() for line in head.splitlines()))
    same = next((d for d in relaxed if d.rule), None)
    if same is not None and same.rule == diagnosis.rule and (same.location or "raised_in" in same.facts):
        _lend_paste_facts([same], text)
        _placed_at_error(same, found)
        return same
    errors = [record for record in found if not record.warning]  # (a library's warning printed above it: not the error)
    if len(errors) == 1 and errors[0].frames:
        diagnosis.location = errors[0].location()
        note_raising_frame(diagnosis, errors[0])
    elif dangling:
        diagnosis.location = frames_location(dangling)
        note_raising_frame(diagnosis, FoundError(text, dangling))
    return diagnosis


def _placed_at_error(diagnosis: Diagnosis, found: list[FoundError]) -> None:
    """A warning's rule that explains a paste read whole, where the one error printed after the warning (with its
    traceback) is explained by no rule on its own: the failure happened where that error was raised; the warning's
    place is where it was logged from (bitsandbytes' cextension.py:34 over transformers' from_pretrained)."""
    line = diagnosis.facts.get("input_line")
    errors = [record for record in found if not record.warning and record.frames]
    if diagnosis.location is None or len(errors) != 1 or line is None or errors[0].line < line \
            or not any(record.warning and record.line == line for record in found):
        return
    diagnosis.facts.setdefault("logged_from", diagnosis.location.to_dict())
    diagnosis.location = errors[0].location()
    note_raising_frame(diagnosis, errors[0])


def _lend_paste_facts(diagnoses: list[Diagnosis], text: str) -> None:
    """A short paste is one report: values its other lines hold for the rule that explains its first error (the
    launch configuration above an elastic error, pip's line naming the wheel under a build error) fill that
    diagnosis's gaps, where the paste read whole gives the same values for what both know (the same error); and
    the rule's context patterns read every line of it, those after the error too."""
    first = next((d for d in diagnoses if d.rule), None)
    if first is None:
        return
    rules = default_rulebase()
    added = {}
    found = rules.match(text)
    if found is not None and found.rule.id == first.rule:
        shared = [k for k, v in found.groups.items() if k in first.facts and v is not None]
        if shared and all(found.groups[k] == first.facts[k] for k in shared):
            added = {k: v for k, v in found.groups.items() if k not in first.facts and v is not None}
    rule = rules.by_id.get(first.rule)
    if rule is not None:
        added.update({k: v for k, v in context_facts(rule, text).items() if k not in first.facts and k not in added})
    if added:
        first.facts.update(added)
        rerender(first)
