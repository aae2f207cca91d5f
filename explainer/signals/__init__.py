"""Training signals: the monitor's gradient norms, explosions and NaN localisation, loss-curve verdicts,
and the overfit-one-batch check. Each turns a measurement into a Diagnosis through diagnose.explain.

May import: the foundation modules, probes, rules and diagnose.
"""
