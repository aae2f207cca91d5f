"""Where the explainer meets a running program: sys.excepthook and threading.excepthook (install),
`python -m explainer script.py` (runner), IPython/Jupyter (ipython) and torchrun's error files (elastic).

May import: the foundation modules and diagnose (the crash path), never signals, site or the command line.
"""
