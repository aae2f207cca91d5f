"""From a failure to a Diagnosis: the live exception and its frames (explain), pasted messages and whole
logs (exctext, textframes, logpatterns, logscan, logblocks, logfile), and the terminal/JSON rendering (render).

May import: the foundation modules, probes and rules. The hook, the training signals, the site and the
command line build on this package; it never imports them.
"""
