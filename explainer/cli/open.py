"""`explainer open RULE`: the rule's runbook page in the browser, from the local site (built first if it is
not there yet) or from the configured hosted copy."""

from __future__ import annotations

import argparse
import shlex
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule_id", metavar="RULE", help="a rule id, as a diagnosis prints it: shape.matmul")
    parser.add_argument("--print", dest="print_only", action="store_true",
                        help="build the page if needed and print its URL instead of opening a browser")
    parser.add_argument("--project", metavar="FOLDER",
                        help="also the team packs of the project this folder is in, as `python -m explainer "
                             "SCRIPT` finds them from the script's folder")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from explainer._config import local_file, runbook_url, set_script_folder
    from explainer.rules.base import default_rulebase

    if args.project:
        set_script_folder(args.project)
    if args.rule_id not in default_rulebase().by_id:
        print(f"explainer: no rule {args.rule_id!r} (see 'explainer rules list')", file=sys.stderr)
        return 2
    url = runbook_url(args.rule_id)
    page = local_file(url)
    if page is not None and not page.is_file():
        status = _build(page, args.rule_id)
        if status:
            return status
    if args.print_only:
        print(url)
        return 0
    import webbrowser

    if not webbrowser.open(url):
        project = f" --project {shlex.quote(args.project)}" if args.project else ""
        print(f"explainer: no browser to open {url} (`explainer rules show {args.rule_id}{project}` prints the page "
              "here)", file=sys.stderr)
        return 1
    print(f"explainer: opened {url}")
    return 0


def _build(page, rule_id: str) -> int:
    from explainer._config import local_site_dir, unbuildable_note

    unbuildable = unbuildable_note(rule_id)
    if unbuildable:
        print(f"explainer: {unbuildable}", file=sys.stderr)
        return 1
    from explainer.site.build import build_local_site
    from explainer.site.pages import SiteError

    print(f"explainer: building the local runbook site into {local_site_dir()} (once, about a minute)...",
          file=sys.stderr)
    try:
        build_local_site(page=page)
    except SiteError as exc:
        print(f"explainer: {exc}", file=sys.stderr)
        return 1
    if not page.is_file():
        print(f"explainer: the local site was built, but without {page}: the rule is not in the rules the site "
              "shows (a team pack that is not discovered from here?)", file=sys.stderr)
        return 1
    return 0
