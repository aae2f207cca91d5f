"""python -m explainer [--format text|json] SCRIPT [ARGS...]  (and the other subcommands)."""

from ._cli import main

raise SystemExit(main(module_mode=True))
