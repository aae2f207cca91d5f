"""A multi-rank log: which rank failed first, and what the other ranks and torchrun's agent reported because of it."""

from __future__ import annotations

from explainer._diagnosis import Diagnosis, shown_place
from explainer.diagnose.logscan import FoundError
from explainer.diagnose.render import first_line
from explainer.rules.base import Rule, RuleBase, default_rulebase, match_rule

# A rule tagged so in runbooks/ explains what a rank reports when another rank failed first (a
# collective timeout, a closed Gloo connection, the launcher's summary and its SIGTERMs).
CONSEQUENCE_TAG = "consequence"
LAUNCHER_TAG = "elastic"  # with CONSEQUENCE_TAG: what torchrun's agent prints about its workers
MAX_REPORT_CHARS = 200
FIRST_RANK = "_first_rank"  # the rank that printed an error first; dropped before output


_launchers: list[tuple[RuleBase, list[Rule]]] = []  # the last rulebase read, and its launcher rules


def launcher_rules(rulebase: RuleBase) -> list[Rule]:
    """The rules of what torchrun's agent prints about its workers (tagged elastic and consequence)."""
    if not _launchers or _launchers[0][0] is not rulebase:
        _launchers[:] = [(rulebase, [r for r in rulebase.rules if _is_launcher_rule(r)])]
    return _launchers[0][1]


def _is_launcher_rule(rule: Rule) -> bool:
    return LAUNCHER_TAG in rule.tags and CONSEQUENCE_TAG in rule.tags


def quotes_a_rank(found: FoundError, diagnosis: Diagnosis) -> bool:
    """found is torchrun's summary (a launcher rule reads its first line, 'ChildFailedError:'), yet another rule
    explains it: one that matches the rank's error the summary quotes from the worker's error file."""
    return diagnosis.rule is not None and not is_launcher(diagnosis) and _launcher_reads(first_line(found.text))


def quote_explained(found: FoundError, diagnosis: Diagnosis, others: list[Diagnosis]) -> bool:
    """The rank's error that torchrun's summary found quotes (see quotes_a_rank) is explained from the rank's own
    output too (others): the summary is the launcher's report of that failure, not a second one."""
    return any(d.rule == diagnosis.rule or (d.error and first_line(d.error) in found.text) for d in others)


def _launcher_reads(text: str) -> bool:
    # only the few rules whose required text is in the line: reading every rule's tags loads every rule's details
    return any(_is_launcher_rule(rule) and match_rule(rule, text) is not None
               for rule in default_rulebase().candidates(text))


def launcher_rulebase() -> RuleBase:
    """The launcher's rules alone: to read torchrun's summary as the launcher's report."""
    return RuleBase(launcher_rules(default_rulebase()))


def link_root_cause(diagnoses: list[Diagnosis]) -> None:
    """In a multi-rank log (in log order): the first rank to fail with an error of its own is the
    likely root cause (facts.root_cause_rank on its diagnosis); what other ranks and the launcher
    report because of it (rules tagged CONSEQUENCE_TAG) gets facts.consequence_of. When every error
    is of that kind (a rank hung and another timed out), the first one is the root cause; torchrun's summary, where
    it names another rank as the first failure (one that exited printing no error), is its report of that rank."""
    ranked = [d for d in diagnoses if FIRST_RANK in d.facts]
    if ranked:
        causes = [d for d in ranked if not is_consequence(d)]
        root = (causes or ranked)[0]
        rank = root.facts[FIRST_RANK]
        root.facts["root_cause_rank"] = rank
        for diagnosis in diagnoses:
            if diagnosis is not root and is_consequence(diagnosis):
                diagnosis.facts["consequence_of"] = {"rank": rank, "rule": root.rule,
                                                     "input_line": root.facts.get("input_line")}
        if not causes:
            _follow_launcher_root(diagnoses, root, rank)
    for diagnosis in diagnoses:
        diagnosis.facts.pop(FIRST_RANK, None)
    _link_launcher_reports(diagnoses)


def _follow_launcher_root(diagnoses: list[Diagnosis], root: Diagnosis, rank: int) -> None:
    """Every rank's error is a consequence (rank 0's closed Gloo connection) and torchrun's summary names another
    rank as its Root Cause (rank 1, exit code 3: it exited printing no error): the summary reports that rank's
    failure, the likely culprit, which the first rank's note names."""
    for summary in diagnoses:
        named = summary.facts.get("root_rank")
        if not is_launcher(summary) or not isinstance(named, int) or named == rank:
            continue
        own = next((d for d in diagnoses if d is not summary and named in (d.facts.get("ranks") or [])), None)
        cause = {"rank": named, "rule": own.rule if own else None,
                 "input_line": own.facts.get("input_line") if own else None}
        if own is None and summary.facts.get("exitcode") is not None:
            cause["exitcode"] = summary.facts["exitcode"]
        summary.facts["consequence_of"] = cause
        root.facts["launcher_root_cause"] = {"rank": named, "exitcode": summary.facts.get("exitcode"),
                                             "input_line": summary.facts.get("input_line")}
        return


def _link_launcher_reports(diagnoses: list[Diagnosis]) -> None:
    """torchrun's agent reports a worker's death ('failed (exitcode: -6) local_rank: 1') after the worker's
    own error: without rank prefixes to go by, the error just before it in the log is the one it reports."""
    cause = None
    for diagnosis in diagnoses:
        if not is_launcher(diagnosis):
            cause = diagnosis
        elif cause is not None:
            linked = diagnosis.facts.get("consequence_of")
            if not isinstance(linked, dict):
                diagnosis.facts["consequence_of"] = {"rank": None, "rule": cause.rule,
                                                     "input_line": cause.facts.get("input_line")}
                if cause.rule is None:  # no rule explains the worker's error: at least say which it was, and where
                    diagnosis.facts["consequence_of"]["error"] = first_line(cause.error)[:MAX_REPORT_CHARS]
                    place = shown_place(cause)
                    if isinstance(place, dict) and place.get("file"):
                        diagnosis.facts["consequence_of"]["error_at"] = place
            elif linked.get("input_line") is None:
                continue  # the summary names a rank that printed no error: no diagnosis to give its report
            else:  # the rank that failed first, by the ranks' prefixes: it gets the launcher's report
                cause = next((d for d in diagnoses if d.facts.get("input_line") == linked.get("input_line")), cause)
            cause.facts.setdefault("launcher_report", first_line(diagnosis.error)[:MAX_REPORT_CHARS])


def is_consequence(diagnosis: Diagnosis) -> bool:
    return CONSEQUENCE_TAG in _tags(diagnosis)


def is_launcher(diagnosis: Diagnosis) -> bool:
    tags = _tags(diagnosis)
    return LAUNCHER_TAG in tags and CONSEQUENCE_TAG in tags


def _tags(diagnosis: Diagnosis) -> tuple[str, ...]:
    rule = default_rulebase().by_id.get(diagnosis.rule) if diagnosis.rule else None
    return tuple(rule.tags) if rule is not None else ()


def ranks_note(diagnosis: Diagnosis) -> str:
    """'  ranks 0, 1; root cause: rank 1 failed first', or what this is a consequence of."""
    facts = diagnosis.facts
    ranks = facts.get("ranks") or []
    parts = [("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)] if ranks else []
    if "root_cause_rank" in facts and is_consequence(diagnosis):
        parts.append(f"rank {facts['root_cause_rank']} failed first, but by waiting on another rank: "
                     + _culprit_note(facts.get("launcher_root_cause")))
    elif "root_cause_rank" in facts:
        parts.append(f"root cause: rank {facts['root_cause_rank']} failed first")
    cause = facts.get("consequence_of")
    if isinstance(cause, dict):
        parts.append(_consequence_note(cause))
    if facts.get("launcher_report"):
        parts.append(f"torchrun then reported: {facts['launcher_report']}")
    return "  (" + "; ".join(parts) + ")" if parts else ""


def _culprit_note(named: object) -> str:
    if not isinstance(named, dict):
        return "the rank it waited for (one that reported no error of its own) is the likely culprit"
    code = f", exit code {named['exitcode']}" if named.get("exitcode") is not None else ""
    return (f"torchrun's summary (line {named.get('input_line')}) names rank {named.get('rank')} as the first to fail"
            f"{code}, with no error of its own in the log: the likely culprit")


def _consequence_note(cause: dict) -> str:
    whose = f"rank {cause.get('rank')}'s failure" if cause.get("rank") is not None else "the failure"
    if cause.get("input_line") is None and cause.get("rank") is not None:
        code = f"exit code {cause['exitcode']}; " if cause.get("exitcode") is not None else ""
        return f"consequence of {whose} ({code}it printed no error of its own), not a separate cause"
    what = cause.get("rule") or (f"unexplained: \"{cause['error']}\"" if cause.get("error") else "unexplained")
    if isinstance(at := cause.get("error_at"), dict):
        what += f", raised at {at.get('file')}:{at.get('line')}"
    return f"consequence of {whose} ({what} at line {cause.get('input_line')}), not a separate cause"
