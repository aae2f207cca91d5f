"""python -m explainer [--format text|json] SCRIPT|-m MODULE [ARGS...]  (and the other subcommands)."""

from .cli.main import main

raise SystemExit(main(module_mode=True))
