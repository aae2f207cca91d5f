"""The `explainer` command line and `python -m explainer`."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Subcommand name -> (module implementing add_arguments(parser) and run(args), one-line help).
SUBCOMMANDS = {
    "run": ("explainer.cli.run", "run a script with the hook installed (same as python -m explainer SCRIPT)"),
    "explain": ("explainer.cli.explain", "explain pasted messages and whole logs from their text"),
    "curves": ("explainer.cli.curves", "diagnose a logged loss curve (CSV or JSON lines): healthy, overfitting, ..."),
    "overfit": ("explainer.cli.overfit", "single-batch overfit check on MODULE:FACTORY returning (model, batch, loss_fn)"),
    "site": ("explainer.cli.site", "build or serve the runbook site generated from runbooks/"),
    "open": ("explainer.cli.open", "open a rule's runbook page in the browser (the local site is built first if needed)"),
    "rules": ("explainer.cli.rules", "list, show, check, test and scaffold rules (built-in and team packs)"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with only, the other subcommands are listed but their modules not imported (a
    command that is about to run needs its own arguments only)."""
    parser = argparse.ArgumentParser(
        prog="explainer",
        description="Explains PyTorch failures. `python -m explainer SCRIPT [ARGS...]` runs a script with the hook.",
    )
    parser.add_argument("--version", action="store_true", help="show the explainer's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        if only is None or name == only:
            importlib.import_module(module_name).add_arguments(command)
    return parser


# What a shell reports for a program killed by SIGPIPE (128 + 13): `explainer rules list | head -1`.
EXIT_BROKEN_PIPE = 141


def main(argv: list[str] | None = None, *, module_mode: bool = False) -> int:
    status = None
    try:
        status = _dispatch(list(sys.argv[1:] if argv is None else argv), module_mode)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (`| head -1`): stop quietly, as well-behaved command-line tools do.
        # Output still buffered would fail again when Python flushes at exit, so it goes to devnull.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass  # stdout without a file descriptor (captured): nothing is flushed at exit
        # The command's own status when it had finished, else the status of an interrupted program.
        return EXIT_BROKEN_PIPE if status is None else status
    return status


def _dispatch(argv: list[str], module_mode: bool) -> int:
    rest = argv
    while rest and rest[0].startswith("--format"):
        rest = rest[2:] if rest[0] == "--format" else rest[1:]
    if argv[:1] == ["--version"]:
        from explainer._version import __version__

        sys.stdout.write(f"torch-explainer {__version__}\n")
        return 0
    if module_mode and (not rest or rest[0] not in SUBCOMMANDS):
        # `python -m explainer` runs a script or a module (-m), and --help is the runner's; commands are named
        from .run import run_argv

        return run_argv(argv, "python -m explainer", [name for name in SUBCOMMANDS if name != "run"])
    if argv and argv[0] == "run":
        from .run import run_argv

        return run_argv(argv[1:], "explainer run")
    parser = build_parser(argv[0] if argv and argv[0] in SUBCOMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return int(args.handler(args) or 0)
