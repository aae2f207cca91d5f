"""`explainer run SCRIPT`: help text only; the arguments are parsed by _cli._run_script_argv."""

from __future__ import annotations

import argparse

from explainer.diagnose.render import add_format_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format_argument(parser, "one JSON line per diagnosis on stderr, after the traceback")
    parser.add_argument("script", help="the Python script to run as __main__")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
