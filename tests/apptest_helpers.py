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


WIDGET_GROUPS = ("number_input", "selectbox", "multiselect", "checkbox", "toggle", "text_input", "radio", "slider",
                 "select_slider")


def link_of(at) -> dict:
    """The link a browser would show for the page ``at``: the dataset spec our code put into
    ``st.query_params``, plus every widget bound to the URL (``bind="query-params"``) in the form
    Streamlit's frontend writes it — a selectbox's formatted label, a multiselect's labels as a
    list (repeated parameters), a checkbox as true/false. AppTest runs no frontend, so it never
    sees the URL the widgets write; this stands in for it. Default values are included (the
    browser leaves them out; with them the link says the same)."""
    link = {k: at.query_params[k] for k in at.query_params}
    for group in WIDGET_GROUPS:
        for w in getattr(at, group):
            key = getattr(w.proto, "query_param_key", "")
            if not key:
                continue
            value = w.value
            if group in ("selectbox", "radio"):
                link[key] = w.options[w.index]
            elif group == "multiselect":
                link[key] = [w.format_func(v) for v in value]
            elif isinstance(value, bool):
                link[key] = "true" if value else "false"
            else:
                link[key] = str(value)
    return link


def widget(at, kind, label):
    """The widget of ``kind`` (e.g. "selectbox") whose label is exactly ``label``."""
    return next(w for w in getattr(at, kind) if w.label == label)
