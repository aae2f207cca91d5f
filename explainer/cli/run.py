"""`python -m explainer [--format text|json] SCRIPT|-m MODULE [ARGS...]` and `explainer run ...`: the runner's own
command line. It is read by hand, not by argparse: everything after SCRIPT or MODULE is the script's, untouched."""

from __future__ import annotations

import argparse
import sys

from explainer.diagnose.render import FORMATS, add_format_argument

FORMAT_HELP = "one JSON line per diagnosis on stderr, after the traceback"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # For `explainer --help`'s list of commands only: `explainer run` itself is read by run_argv.
    add_format_argument(parser, FORMAT_HELP)
    parser.add_argument("script", help="the Python script to run as __main__")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")


def runner_help(prog: str, commands: list[str]) -> str:
    """The runner's help: how it runs a script or a module, its options, and the other commands."""
    return (f"usage: {prog} [--format text|json] SCRIPT [ARGS...]\n"
            f"       {prog} [--format text|json] -m MODULE [ARGS...]\n"
            + (f"       python -m explainer COMMAND ...  ({', '.join(commands)}; COMMAND --help for each)\n"
               if commands else "")
            + "\nRuns SCRIPT (or MODULE, as `python -m MODULE` does) as __main__ with the hook installed: the same sys.argv,\n"
              "sys.path[0], traceback and exit status as plain Python; after an uncaught exception the diagnosis follows\n"
              "Python's traceback on stderr.\n\n"
              "options:\n"
              f"  --format text|json  text (default, or $EXPLAINER_FORMAT) or json: {FORMAT_HELP}\n"
              "  -m MODULE           run the module MODULE (a package: its __main__), found from the working directory\n"
              "  -h, --help          show this help and exit\n"
              "  --version           show the explainer's version and exit\n")


def run_argv(argv: list[str], prog: str, commands: list[str] | None = None) -> int:
    """Run what argv names (its options first, then SCRIPT or -m MODULE and the arguments that are the script's)."""
    from explainer.hook.runner import run_module, run_script

    fmt = None
    while argv and argv[0].startswith("--format"):
        if argv[0] == "--format" and len(argv) > 1:
            fmt, argv = argv[1].lower(), argv[2:]
        elif argv[0].startswith("--format="):
            fmt, argv = argv[0].split("=", 1)[1].lower(), argv[1:]
        else:
            break
    if not argv and fmt is None:
        sys.stderr.write(runner_help(prog, commands or []))
        return 2
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(runner_help(prog, commands or []))
        return 0
    if fmt is not None and fmt not in FORMATS:
        sys.stderr.write(f"explainer: unknown format {fmt!r}: use one of {', '.join(FORMATS)}\n")
        return 2
    if argv and argv[0] == "-m":
        if len(argv) < 2 or argv[1].startswith("-"):
            sys.stderr.write(f"{prog}: -m needs a module name: {prog} -m MODULE [ARGS...]\n")
            return 2
        return run_module(argv[1], argv[2:], fmt)
    if argv and argv[0].startswith("-m") and len(argv[0]) > 2:  # `-mpkg.train`, as python accepts it
        return run_module(argv[0][2:], argv[1:], fmt)
    if not argv or argv[0].startswith("-"):
        what = f"no script to run after --format {fmt}" if fmt is not None and not argv else \
            f"unknown option {argv[0]!r}" if argv else "no script to run"
        sys.stderr.write(f"usage: {prog} [--format text|json] SCRIPT|-m MODULE [ARGS...]\n"
                         f"{prog}: error: {what} (--help for more)\n")
        return 2
    return run_script(argv[0], argv[1:], fmt)
