"""`explainer rules list | show ID | check [PATH...] | test [PATH...] | new ID --match REGEX`."""

from __future__ import annotations

import argparse
import io
import re
import sys
from pathlib import Path

from explainer.rules.packs import display_path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    sub.add_parser("list", help="every rule, in the order they are tried").set_defaults(handler=run_list)
    show = sub.add_parser("show", help="one rule's fields and runbook text")
    show.add_argument("rule_id", metavar="ID")
    show.add_argument("--project", metavar="FOLDER",
                      help="also the team packs of the project this folder is in, as `explainer open --project` does")
    show.set_defaults(handler=run_show)
    for name, help_text, handler in (
            ("check", "validate rule files: report every problem as file:line, exit 1 if any", run_check),
            ("test", "match every example and counter-example, report ambiguity, exit 1 on any failure",
             run_test)):
        action = sub.add_parser(name, help=help_text, description=help_text + ". Without PATH: the built-in "
                                "rules and every discovered team pack.")
        action.add_argument("paths", nargs="*", metavar="PATH", help="rule files or pack folders")
        action.set_defaults(handler=handler)
    new = sub.add_parser("new", help="write a rule that passes check and test, ready to edit")
    new.add_argument("rule_id", metavar="ID", help="the rule id, starting with the pack's prefix: acme.loader.timeout")
    new.add_argument("--match", required=True, metavar="REGEX", help="the pattern (regex package syntax)")
    new.add_argument("--example", help="the message exactly as it prints ('ErrorType: message'); default: a "
                                       "short message REGEX finds, raised by the scaffolded repro script")
    new.add_argument("--category", default="other", help="one of the categories (default: other)")
    new.add_argument("--title", help="the one-line title (default: from the id)")
    new.add_argument("--dir", type=Path, help="the pack folder (default: the discovered pack with the id's prefix)")
    new.set_defaults(handler=run_new)


def run_list(args: argparse.Namespace) -> int:
    from explainer.rules.base import default_rulebase

    rulebase = default_rulebase()
    for rule in rulebase.rules:
        print(f"{rule.id:40} {rule.pack:10} {rule.priority:>4}  {rule.title}")
    for problem in rulebase.team_problems:
        if not problem.file.endswith(".md"):  # a whole pack left out (a duplicate prefix, no folder): say which
            print(f"explainer: skipped {problem}", file=sys.stderr)
    if rulebase.problems:
        print(f"{len(rulebase.problems)} problem(s) in rule files or packs: run 'explainer rules check'", file=sys.stderr)
    return 0


def run_show(args: argparse.Namespace) -> int:
    from explainer._config import runbook_url, set_script_folder
    from explainer.diagnose.render import escape_controls
    from explainer.rules.base import default_rulebase

    if args.project:
        set_script_folder(args.project)
    rule = default_rulebase().by_id.get(args.rule_id)
    if rule is None:
        print(f"explainer: no rule {escape_controls(args.rule_id)!r} (see 'explainer rules list')", file=sys.stderr)
        return 2
    print(escape_controls(f"{rule.id}  [{rule.category}, pack {rule.pack}, priority {rule.priority}]  {rule.title}"))
    print(escape_controls(f"file: {rule.file}:{rule.line}"))
    print(f"runbook: {escape_controls(runbook_url(rule.id))}")
    for label, values in (("patterns", [p.pattern for p in rule.patterns]), ("probes", rule.probes)):
        if values:
            print(f"{label}:")
            print("".join(f"  {escape_controls(v)}\n" for v in values), end="")
    print()
    sys.stdout.flush()
    _print_markdown(page_markdown(rule))
    return 0


def page_markdown(rule) -> str:
    """What the rule's site page shows, as Markdown for the terminal: messages, the runbook text, the
    reproduction script."""
    from explainer.diagnose.render import escape_controls
    from explainer.site.pages import ROOT, fence

    parts = [f"# {rule.title}"]
    for heading, examples in (("Messages it matches", rule.examples),
                              ("Near misses it must not match", rule.counter_examples)):
        if examples:
            parts.append(f"## {heading}")
            parts.extend(fence(e.message) for e in examples)
    parts.append(rule.body.strip())
    if rule.fixture and (ROOT / rule.fixture).is_file():
        parts += ["## Reproduction", fence(f"python -m explainer {rule.fixture}", "bash"),
                  fence((ROOT / rule.fixture).read_text(encoding="utf-8"), "python")]
    return escape_controls("\n\n".join(parts) + "\n")


def _print_markdown(text: str) -> None:
    """Rendered by rich: headings, lists and highlighted code blocks; no colour off a terminal or with NO_COLOR."""
    from rich.console import Console
    from rich.markdown import Markdown

    from explainer.diagnose.render import use_colour

    colour = use_colour(sys.stdout)
    console = Console(file=io.StringIO(), force_terminal=colour, no_color=not colour, highlight=False,
                      emoji=False, color_system="standard" if colour else None, legacy_windows=False,
                      width=None if colour else 100)
    console.print(Markdown(text, code_theme="ansi_dark", hyperlinks=colour))
    out = console.file.getvalue()
    if not colour:  # rich pads every line to the width: plain text for a pipe, a file or `less` has no padding
        out = re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in out.splitlines())) + "\n"
    sys.stdout.write(out)


def _report(findings, subjects: int, what: str, fixtures: int | None = None, checked: int = 0) -> int:
    """Print findings and the summary line; checked: the problems `rules check` reports, counted with them."""
    failures = len([f for f in findings if not f.note]) + checked
    for finding in findings:
        print(finding)
    status = f"{failures} problem{'s' if failures != 1 else ''}" if failures else "ok"
    ran = "" if not fixtures else f"; {fixtures} team rule fixture{'s' if fixtures != 1 else ''} run, one process each"
    print(f"explainer rules {what}: {subjects} rule{'s' if subjects != 1 else ''}, {status}{ran}",
          file=sys.stderr if failures else sys.stdout)
    return 1 if failures else 0


def run_check(args: argparse.Namespace) -> int:
    from explainer.rules.check import load_scope
    from explainer.rules.check import run_check as check

    scope = load_scope(args.paths)
    return _report(check(scope), len(scope.subjects), "check")


def run_test(args: argparse.Namespace) -> int:
    from explainer.rules.check import Finding, load_scope, run_fixtures
    from explainer.rules.check import run_check as check
    from explainer.rules.check import run_test as test

    from explainer.diagnose.explain import explain_text

    scope = load_scope(args.paths)
    findings = test(scope, explain_text)
    fixture_findings, fixtures = run_fixtures(scope)
    findings += fixture_findings
    checked = len(check(scope))  # counted as `rules check` counts them, so the two commands agree
    if checked:
        unloaded = (f"; {scope.unloaded} rule file{'s' if scope.unloaded != 1 else ''} did not load, so "
                    f"{'their rules were' if scope.unloaded != 1 else 'its rule was'} not tested") if scope.unloaded else ""
        print(Finding("explainer rules test", None, None,
                      f"{checked} problem{'s' if checked != 1 else ''} that 'explainer rules check' reports{unloaded}",
                      hint="run 'explainer rules check'"))
    return _report(findings, len(scope.subjects), "test", fixtures, checked)


def run_new(args: argparse.Namespace) -> int:
    from explainer.rules.check import load_scope, run_fixtures
    from explainer.rules.check import run_check as check
    from explainer.rules.check import run_test as test
    from explainer.rules.packs import discover_packs
    from explainer.rules.scaffold import ScaffoldError, scaffold

    packs = discover_packs()[0] if args.dir is None else []
    try:
        written = scaffold(args.rule_id, args.match, example=args.example, category=args.category,
                           title=args.title, folder=args.dir, packs=packs)
    except ScaffoldError as exc:
        print(f"explainer rules new: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {display_path(path)}")
    scope = load_scope([str(p) for p in written if p.suffix == ".md"])
    fixture_findings, fixtures = run_fixtures(scope)
    status = _report(check(scope) + test(scope) + fixture_findings, len(scope.subjects), "check and test", fixtures)
    print(f"next: edit {display_path(written[-2])} (summary, fixes, runbook text) and make "
          f"{display_path(written[-1])} call the code that fails; add the pack to EXPLAINER_RULES or to "
          "[tool.explainer] rules in pyproject.toml")
    return status
