"""`explainer run SCRIPT`: help text only; the arguments are parsed by _cli._run_script_argv."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json"), help="diagnosis format (default text, or $EXPLAINER_FORMAT)")
    parser.add_argument("script", help="the Python script to run as __main__")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
