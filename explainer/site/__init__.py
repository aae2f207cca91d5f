"""The runbook site generated from runbooks/: pages (Markdown from jinja2 templates), the figures of real
training runs (runs, figures) and the mkdocs build (build).

May import: every package below it (foundation, probes, rules, diagnose, signals), never hook or cli.
"""
