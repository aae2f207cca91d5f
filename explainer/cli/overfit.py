"""`explainer overfit MODULE:FACTORY`: the single-batch overfit check from the command line.

FACTORY is a function in an importable module (the working directory is on the path) that returns
(model, batch, loss_fn). Exit status 0 when the check passes, 1 when it fails, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from explainer.diagnose.render import add_format_argument, render


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format_argument(parser, "one JSON object on stdout")
    parser.add_argument("--steps", type=int, default=100, help="training steps on the batch (default 100)")
    parser.add_argument("--lr", type=float, default=1e-2, help="Adam learning rate (default 0.01)")
    parser.add_argument("--tolerance", type=float, default=None,
                        help="loss to reach (default: 1%% of the first loss, at least 0.05)")
    parser.add_argument("target", metavar="MODULE:FACTORY",
                        help="a function returning (model, batch, loss_fn), e.g. tests.models:overfit_case")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from explainer.diagnose.render import command_format
    from explainer.signals.overfit import overfit_one_batch

    fmt = command_format(args.format)
    module_name, _, attribute = args.target.partition(":")
    if not module_name or not attribute:
        sys.stderr.write(f"explainer: expected MODULE:FACTORY, got {args.target!r}\n")
        return 2
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        sys.stderr.write(f"explainer: cannot load {args.target}: {type(exc).__name__}: {exc}\n")
        return 2
    made = factory()
    if not (isinstance(made, (tuple, list)) and len(made) == 3):
        sys.stderr.write(f"explainer: {args.target}() must return (model, batch, loss_fn)\n")
        return 2
    model, batch, loss_fn = made
    diagnosis = overfit_one_batch(model, batch, loss_fn, steps=args.steps, lr=args.lr, tolerance=args.tolerance)
    sys.stdout.write(render(diagnosis, fmt, sys.stdout, input=args.target))
    return 0 if diagnosis.facts["passed"] else 1
