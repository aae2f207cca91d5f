"""`explainer curves [--format json] [--plot out.png] FILE`: diagnose a logged loss curve."""

from __future__ import annotations

import argparse
import sys

from explainer.diagnose.render import add_format_argument, render


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format_argument(parser, "one JSON object on stdout")
    parser.add_argument("--plot", metavar="OUT.png", default=None,
                        help="also write a PNG of the curve with the diagnosis marked (needs matplotlib)")
    parser.add_argument("file", metavar="FILE",
                        help="CSV with columns step,train_loss[,val_loss] (empty cells allowed) or JSON lines")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from explainer.diagnose.explain import diagnose_signal
    from explainer.diagnose.render import command_format
    from explainer.signals.curves import CurveFileError, classify, load_history, plot

    fmt = command_format(args.format)
    try:
        history = load_history(args.file)
    except OSError as exc:
        sys.stderr.write(f"explainer: cannot read {args.file}: {exc.strerror or exc}\n")
        return 2
    except CurveFileError as exc:
        sys.stderr.write(f"explainer: {args.file}: {exc}\n")
        return 2
    report = classify(history)
    diagnosis = diagnose_signal(report.rule, report.facts)
    if args.plot:
        try:
            plot(history, report, args.plot, title=f"{args.file}: {report.curve or 'not enough data'}")
        except ImportError:
            sys.stderr.write("explainer: --plot needs matplotlib: pip install 'torch-explainer[plot]'\n")
            return 2
        diagnosis.facts["plot"] = args.plot
    sys.stdout.write(render(diagnosis, fmt, sys.stdout, input=args.file))
    if args.plot and fmt != "json":
        sys.stdout.write(f"  plot: {args.plot}\n")
    return 0
