"""From a failure to a Diagnosis: the live exception and its frames (explain), pasted messages and whole
logs (exctext, textframes, logpatterns, logscan, logblocks, logfile), and the terminal/JSON rendering (render).

May import: the foundation modules, probes and rules. The hook, the training signals, the site and the
command line build on this package; it never imports them.
"""

from explainer._diagnosis import Diagnosis, set_text_renderer


def _plain_text(diagnosis: Diagnosis) -> str:
    from .render import render_text  # on first use: importing this package stays cheap on the crash path

    return render_text(diagnosis)


set_text_renderer(_plain_text)
