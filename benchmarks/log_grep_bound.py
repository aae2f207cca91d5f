"""Where `explainer explain LOG` starts grep: CPU of the plain path against the grep path, by log size.

    python benchmarks/log_grep_bound.py              # logs of 0.1 to 16 MB, 9 runs of each path
    python benchmarks/log_grep_bound.py --sizes 0.5 1 --repeat 3

Below explainer.diagnose.logfile.GREP_MIN_BYTES a log is read line by line in Python; from there on, grep finds
the lines that can start a record and only the blocks around them are decoded. Both paths find the same
failures (tests/diagnose/test_logfile.py); this prints what each costs as whole processes (CPU seconds,
grep's included), run alternately, medians, so the bound can sit where the grep path starts to pay.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from run import make_log, side_by_side

PLAIN, GREP = 1 << 50, 0  # GREP_MIN_BYTES that keeps every log on one path


def command(log: Path, bound: int) -> list[str]:
    code = ("import sys, explainer.diagnose.logfile as logfile; logfile.GREP_MIN_BYTES = %d; "
            "from explainer.cli.main import main; sys.exit(main(['explain', '--format', 'json', %r]))")
    return [sys.executable, "-c", code % (bound, str(log))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[0.1, 0.25, 0.5, 1, 2, 4, 16], help="log sizes, MB")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)
    from explainer.diagnose.logfile import GREP_MIN_BYTES

    print(f"GREP_MIN_BYTES = {GREP_MIN_BYTES / 1e6:.2f} MB; CPU per whole process, median of {args.repeat}")
    print("| log | plain path | grep path | grep / plain |\n| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile() as sink:
        for megabytes in args.sizes:
            log = make_log(Path(folder) / f"train-{megabytes}mb.log", megabytes)
            plain, grep = side_by_side(command(log, PLAIN), command(log, GREP), args.repeat, stdout=sink)["cpu"]
            print(f"| {megabytes:g} MB | {plain * 1e3:.0f} ms | {grep * 1e3:.0f} ms | {grep / plain:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
