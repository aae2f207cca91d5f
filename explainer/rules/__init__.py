"""The rule base: rule files (front matter, patterns, templates, examples) loaded, validated, cached and
matched; team packs found through entry points and pyproject; `explainer rules check/test/new`.

May import: explainer's foundation modules (_diagnosis, _errors, _cache, _config, _gc) and probes (to
validate the probe names a rule uses). Nothing here knows about live frames or how a diagnosis is shown.
"""
