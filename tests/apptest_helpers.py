"""What the AppTest suites of the pages share: open a page (optionally with a dataset in the
session and parameters in the URL), find a widget by its key (:func:`by_key`; a form's submit
button by its form, :func:`submit`), and the link a browser would show.

Widgets are found by key, not by label, so that rewording a label breaks no test. Every input
of the pages has a key (the Data page's: ``data_kind`` and ``data_<kind>_<parameter>``), and so
has each submit button of a form with two (k-means: ``km_run``, ``km_side_by_side``)."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page_file(name):
    """Path of ``pages/<name>`` as AppTest wants it."""
    return str(ROOT / "pages" / name)


def open_page(name, spec=None, query=None, timeout=300, state=None):
    """Run ``pages/<name>`` once, with ``spec`` as the current dataset, ``state`` as further
    session state and ``query`` as the URL's parameters (a new session opened from a link);
    fails on an exception box. ``timeout`` (seconds) bounds each script run of ``at``: generous,
    so that a loaded machine is slow, not failing."""
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


def by_key(at, key):
    """The widget whose key is ``key``, whatever its kind (KeyError naming the keys shown)."""
    keys = []
    for group in WIDGET_GROUPS + ("button", "text_area", "date_input", "time_input", "color_picker"):
        for w in getattr(at, group):
            if w.key == key:
                return w
            keys.append(w.key)
    raise KeyError(f"no widget with key {key!r} on the page; keys shown: {sorted(k for k in keys if k)}")


def limits(at, key):
    """(min, max) of the number input ``key``: the page checks them (``ui.common.number_input``),
    the browser is not told them."""
    from ui.common import NUMBER_RANGES_KEY
    return tuple(at.session_state[NUMBER_RANGES_KEY][key])


def submit(at, form, label=None):
    """The submit button of the form whose key is ``form`` (``st.form(form)``); ``label`` picks
    one when the form has several (better: their keys, with :func:`by_key`)."""
    buttons = [b for b in at.button if b.proto.form_id == form and (label is None or b.label == label)]
    if len(buttons) != 1:
        raise LookupError(f"{len(buttons)} submit buttons in form {form!r}" + (f" labelled {label!r}" if label else "")
                          + f"; forms shown: {sorted({b.proto.form_id for b in at.button if b.proto.form_id})}")
    return buttons[0]


def press(at, form, label=None):
    """Click the submit button of ``form`` (see :func:`submit`), run the page, fail on an
    exception box; returns ``at``."""
    submit(at, form, label).click()
    at.run()
    assert not at.exception, at.exception
    return at


def widget(at, kind, label):
    """The widget of ``kind`` (e.g. "selectbox") whose label is exactly ``label``: only for a
    widget drawn without a key (no input of the pages is; prefer :func:`by_key`)."""
    return next(w for w in getattr(at, kind) if w.label == label)
