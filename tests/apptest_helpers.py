"""What the AppTest suites of the pages share: open a page (optionally with a dataset in the
session and parameters in the URL) and find a widget by its label."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page_file(name):
    """Path of ``pages/<name>`` as AppTest wants it."""
    return str(ROOT / "pages" / name)


def open_page(name, spec=None, query=None, timeout=120, state=None):
    """Run ``pages/<name>`` once, with ``spec`` as the current dataset, ``state`` as further
    session state and ``query`` as the URL's parameters (a new session opened from a link);
    fails on an exception box."""
    at = AppTest.from_file(page_file(name), default_timeout=timeout)
    for k, v in (state or {}).items():
        at.session_state[k] = v
    if spec is not None:
        at.session_state["dataset"] = {"spec": spec}
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def widget(at, kind, label):
    """The widget of ``kind`` (e.g. "selectbox") whose label is exactly ``label``."""
    return next(w for w in getattr(at, kind) if w.label == label)
