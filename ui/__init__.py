"""Streamlit-side helpers shared by app.py and the pages (dpcore never imports this)."""
import sys


def launch_option(flag, argv=None):
    """The value after ``flag`` (``--flag V`` or ``--flag=V``) among the script's arguments
    (``streamlit run app.py -- --flag V``; ``argv`` default ``sys.argv``, its first entry the
    script), or None."""
    args = (sys.argv if argv is None else argv)[1:]
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None
