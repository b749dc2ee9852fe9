"""What every page shares: the current dataset, cached loaders, error display, number fields,
run buttons, charts, the privacy statement box and the ledger table. The privacy meter and the
calls that plan and charge runs are in :mod:`ui.meter`.

Pages stay thin: widgets, one call into :mod:`dpcore`, one figure from :mod:`dpcore.plots`,
and these helpers.
"""
from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass, field

import streamlit as st

from dpcore.data import PAPER_SPECS, Dataset, load_dataset
from dpcore.privacy.exact import execution_note
from dpcore.privacy import PrivacyLedger
from dpcore.runtime import CancelToken, cancellable
from ui.runqueue import server_queue, wait_words
from ui.meter import format_epsilon
from dpcore.upload import load_upload, registered, upload_key

def _leave_pages_folder_mode():
    """A deep link (``/cluster?…``) opened first on a freshly started server is run by
    Streamlit in its old "pages/ folder" mode: the page file alone, without ``app.py`` — no
    navigation titles, no sidebar, no privacy meter — and the server stays in that mode until
    ``st.navigation`` is called. Every page imports this module, so here we switch the mode off
    (the flag ``st.navigation`` itself clears) and rerun: the rerun goes through ``app.py``,
    whose ``st.navigation`` shows the linked page. (Streamlit issue #9624 and its relatives.)"""
    try:
        from streamlit.runtime.pages_manager import PagesManager
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:                       # another Streamlit layout: nothing to do
        return
    if getattr(PagesManager, "uses_pages_directory", None) and get_script_run_ctx() is not None:
        PagesManager.uses_pages_directory = False
        st.rerun()


DATASET_KEY = "dataset"
UPLOADS_KEY = "uploaded_datasets"
MAX_SESSION_UPLOADS = 3   # parsed uploads kept per session (each may hold up to 80 MB)
DEFAULT_DATASET = dict(PAPER_SPECS["fig2_middle"])     # the subspace paper's Fig. 2 (middle) setting


# ----------------------------------------------------------------------------- datasets
@st.cache_data(max_entries=16, show_spinner="Loading data…")
def _cached_dataset(spec_json: str) -> Dataset:
    spec = json.loads(spec_json)
    return load_dataset(**spec)


def dataset_from_spec(spec: dict) -> Dataset:
    """Build (or fetch from the bounded cache) the dataset of a small parameter dict,
    e.g. ``{"kind": "cluto", "name": "classic3"}``. Cached by the parameters, never by
    hashing arrays. Raises ValueError on bad parameters.

    Uploads have specs ``{"kind": "upload", "sha256": …, "name": …, …}`` (the Dataset's
    ``params``); they resolve from this session's bounded store (:func:`set_upload`) and
    raise ValueError once evicted."""
    if is_upload_spec(spec):
        return _upload_from_session(spec)
    return _cached_dataset(json.dumps(spec, sort_keys=True))


# ----------------------------------------------------------------------------- uploads
def is_upload_spec(spec) -> bool:
    """Whether ``spec`` names an uploaded dataset (held in session memory, not rebuildable)."""
    return isinstance(spec, dict) and spec.get("kind") == "upload"


def _session_uploads() -> OrderedDict:
    return st.session_state.setdefault(UPLOADS_KEY, OrderedDict())


def upload_in_session(spec: dict) -> bool:
    """Whether the uploaded dataset of ``spec`` is held by this session."""
    return upload_key(spec) in _session_uploads()


def _upload_from_session(spec: dict) -> Dataset:
    store = _session_uploads()
    key = upload_key(spec)
    if key not in store:
        raise ValueError(f"the uploaded file {spec.get('name', '?')!r} is no longer in this session's memory (the last "
                         f"{MAX_SESSION_UPLOADS} uploads are kept, until the browser tab is reloaded): upload it again "
                         "on the Data page")
    store.move_to_end(key)
    return store[key]


def set_upload(name: str, data: bytes, **options) -> Dataset | None:
    """Parse an uploaded file with :func:`dpcore.upload.load_upload` (``options``: kind,
    labels, transpose, norm) and make it the current dataset. On a bad file show an
    ``st.error`` with dpcore's message and keep the previous dataset (returns None)."""
    try:
        ds = load_upload(name, data, **options)
    except ValueError as exc:
        st.error(str(exc))
        return None
    return store_upload(ds)


def store_upload(ds: Dataset) -> Dataset:
    """Keep the parsed upload ``ds`` in this session (the last :data:`MAX_SESSION_UPLOADS`) and
    make it the current dataset."""
    store = _session_uploads()
    store[upload_key(ds.params)] = ds
    store.move_to_end(upload_key(ds.params))
    while len(store) > MAX_SESSION_UPLOADS:
        store.popitem(last=False)
    st.session_state[DATASET_KEY] = {"spec": dict(ds.params)}
    return ds


def in_process_loadable(spec: dict):
    """Context manager: while it runs, ``dpcore.data.load_dataset(**spec)`` works in this
    process even for an upload (e.g. for an in-process ``run_sweep``). Worker processes
    cannot see it: run sweeps on uploads with one worker."""
    return registered(dataset_from_spec(spec)) if is_upload_spec(spec) else nullcontext()


def current_dataset() -> Dataset:
    """The dataset chosen on the Data page; the Fig. 2 (middle) synthetic set otherwise."""
    if DATASET_KEY not in st.session_state:
        st.session_state[DATASET_KEY] = {"spec": DEFAULT_DATASET}
    return dataset_from_spec(st.session_state[DATASET_KEY]["spec"])


def current_spec() -> dict:
    current_dataset()
    return dict(st.session_state[DATASET_KEY]["spec"])


def current_spec_or_default() -> dict:
    """:func:`current_spec`, but a spec that no longer loads (unknown kind, an evicted
    upload) is reported with ``st.error`` and replaced by the default dataset."""
    try:
        return current_spec()
    except ValueError as exc:
        st.error(str(exc))
        st.session_state[DATASET_KEY] = {"spec": DEFAULT_DATASET}
        return current_spec()


def set_dataset(spec: dict) -> Dataset | None:
    """Load ``spec`` and make it the current dataset. On bad parameters show an
    ``st.error`` with dpcore's message and keep the previous dataset (returns None)."""
    try:
        ds = dataset_from_spec(spec)
    except ValueError as exc:
        st.error(str(exc))
        return None
    st.session_state[DATASET_KEY] = {"spec": dict(spec)}
    return ds


# ----------------------------------------------------------------------------- running
IN_APP_KEY = "_in_app"


class ResultSlot:
    """Where a page draws its last result so that Streamlit's Stop does not wipe it.

    Stop ends a run at its next Streamlit call, and the browser shows nothing the stopped run
    would have drawn after that: so the previous result is drawn before a long run starts
    (``with slot.previous(): …``) and the new one after it (``with slot.latest(): …``). Two
    places, not one: redrawing the same ``st.empty()`` in one run with fewer elements leaves the
    first drawing's extra elements on the page (measured with Streamlit 1.67: a result drawn
    twice showed its tail twice), while emptying the first place and drawing into the second
    does not. Create it where the result belongs on the page."""

    def __init__(self, container=None):
        target = st if container is None else container
        self._previous = target.empty()
        self._latest = target.empty()

    def previous(self):
        """The container for the result shown while a new run goes on."""
        return self._previous.container()

    def latest(self):
        """The container for the result after the run (the previous drawing is removed)."""
        self._previous.empty()
        return self._latest.container()


#: session key: the number fields shown in this script run whose value is outside their range
OUT_OF_RANGE_KEY = "_out_of_range_fields"
#: session key: every such field's (min, max), by key (what a link to it must respect, and tests read)
NUMBER_RANGES_KEY = "_number_ranges"


def _fmt(x):
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def number_input(where, label, min_value=None, max_value=None, value="min", *, key=None, **kwargs):
    """``where.number_input`` whose range is checked by the page, not by the browser.

    With ``min_value``/``max_value`` handed to Streamlit, the browser keeps an out-of-range entry
    out of the form without a word (Run then reruns the last accepted value; the reason shows only
    while the field has the focus). Here the entry reaches the script: an error stands under the
    field and :func:`run_button` refuses the run next to the button, in the same words."""
    if isinstance(value, str) and value == "min":
        value = min_value
    x = where.number_input(label, value=value, key=key, **kwargs)
    field = key or label
    beyond = _replaced_number(x)
    if beyond is not None:      # Streamlit put the field's default in place of what was typed: refuse, say so
        st.session_state.setdefault(NUMBER_RANGES_KEY, {})[field] = (min_value, max_value)
        errors = st.session_state.setdefault(OUT_OF_RANGE_KEY, {})
        errors[field] = (f"{label} must be at most {_fmt(SAFE_INTEGER)} in size (the largest whole number a browser "
                         f"holds exactly), not {beyond:,}; the field went back to {_fmt(x)}")
        where.error(errors[field] + ".")
        return x
    st.session_state.setdefault(NUMBER_RANGES_KEY, {})[field] = (min_value, max_value)
    bad = x is not None and ((min_value is not None and x < min_value) or (max_value is not None and x > max_value))
    errors = st.session_state.setdefault(OUT_OF_RANGE_KEY, {})
    if bad:
        rng = (f"between {_fmt(min_value)} and {_fmt(max_value)}" if min_value is not None and max_value is not None
               else f"at least {_fmt(min_value)}" if min_value is not None else f"at most {_fmt(max_value)}")
        errors[field] = f"{label} must be {rng}, not {_fmt(x)}"
        where.error(errors[field] + ".")
    else:
        errors.pop(field, None)
    return x


#: the largest whole number a browser holds exactly (JavaScript's Number.MAX_SAFE_INTEGER)
SAFE_INTEGER = 2 ** 53 - 1
#: whole numbers beyond ±SAFE_INTEGER that Streamlit replaced, by session: [(value, default)] (the
#: deserialization runs before the script run that reads the field). Held by Streamlit's class, not by
#: this module, which Streamlit may import more than once (the pages-folder rerun): one registry.
_REPLACED: dict = {}
_REPLACED_LOCK = threading.Lock()


def _watch_big_numbers():
    """Streamlit 1.67 replaces a whole number beyond ±(2⁵³ − 1) sent for a number field by the
    field's default without a word (``NumberInputSerde.deserialize``, called before the script run
    that reads the field). Note each such value, with the default put in its place, for the session,
    so that :func:`number_input` refuses the field in its words. A no-op on another Streamlit."""
    try:
        from streamlit.elements.widgets.number_input import NumberInputSerde
        from streamlit.proto.NumberInput_pb2 import NumberInput as NumberInputProto
    except ImportError:
        return
    global _REPLACED, _REPLACED_LOCK
    if getattr(NumberInputSerde, "_dpclust_watched", False):
        _REPLACED, _REPLACED_LOCK = NumberInputSerde._dpclust_replaced
        return
    NumberInputSerde._dpclust_replaced = (_REPLACED, _REPLACED_LOCK)
    original = NumberInputSerde.deserialize

    def deserialize(self, ui_value):
        if ui_value is not None and getattr(self, "data_type", None) == NumberInputProto.INT:
            try:
                big = abs(int(ui_value)) > SAFE_INTEGER
            except (TypeError, ValueError, OverflowError):
                big = False
            if big:
                with _REPLACED_LOCK:
                    _REPLACED.setdefault(_session_key(), []).append((int(ui_value), self.value))
        return original(self, ui_value)

    NumberInputSerde.deserialize = deserialize
    NumberInputSerde._dpclust_watched = True


def _replaced_number(shown):
    """The number Streamlit replaced by ``shown`` (the field's default) for this session, or None
    (taken: each is reported once, by the first field showing that default)."""
    with _REPLACED_LOCK:
        values = _REPLACED.get(_session_key())
        if not values:
            return None
        for i, (raw, default) in enumerate(values):
            if default == shown:
                del values[i]
                return raw
    return None


def _session_key():
    """The session of the script run going on (None outside one)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        ctx = get_script_run_ctx(suppress_warning=True)
        return getattr(ctx, "session_id", None)
    except Exception:  # noqa: BLE001 - another Streamlit
        return None


_watch_big_numbers()


def out_of_range() -> list[str]:
    """The messages of the number fields now out of range (see :func:`number_input`)."""
    return list(st.session_state.get(OUT_OF_RANGE_KEY, {}).values())


def clear_out_of_range():
    """Forget the fields of the last script run (``app.py`` calls it before each page runs)."""
    st.session_state.pop(OUT_OF_RANGE_KEY, None)


def run_button(where, label, message_to=None, **kwargs) -> bool:
    """A form's submit button that does not run while a number field is out of range: it says
    why right beside the button (in ``message_to``, default ``where``: e.g. the form when the
    button sits in a narrow column) and returns False (the page then keeps its last result)."""
    pressed = where.form_submit_button(label, **kwargs)
    bad = out_of_range()
    if pressed and bad:
        (message_to or where).error(f"**{label}: not run.** " + "; ".join(bad) + ". Correct the field, then press the button again.")
        return False
    return pressed


#: session key: the pages' runs that started and have not ended
_RUNS_IN_PROGRESS = "_runs_in_progress"


#: this script thread's run: (its place in the server's run queue, its cancellable() context)
_THIS_RUN = threading.local()


def run_started(name):
    """Mark the run of page ``name`` as going on (call it when Run is pressed), wait for a place
    in the server's run queue (:mod:`ui.runqueue`: at most C runs at once, the others shown
    their position and expected wait), and make a cancel token the thread's current one
    (:func:`dpcore.runtime.cancellable`): long fits poll it, and its heartbeat is a Streamlit
    update, through which Stop (or leaving the page) ends the run within
    :data:`dpcore.runtime.POLL_SECONDS`. A script stopped mid-run never reaches
    :func:`run_ended`, so the mark stays and :func:`cancelled_note` tells the user next time;
    its queue place is given back when its thread ends."""
    st.session_state.setdefault(_RUNS_IN_PROGRESS, set()).add(name)
    end_this_run()                                        # one left by a script run that was stopped
    from ui.meter import session_id
    queue = server_queue()
    beat = st.empty()                                     # the heartbeat: an invisible element updated in place
    ticket = queue.ask(session_id())
    if not queue.granted(ticket):
        queue.wait(ticket, lambda pos, wait: beat.info(wait_words(pos, wait, queue.capacity)))
    beat.empty()
    context = cancellable(CancelToken(poll=beat.empty))
    context.__enter__()
    _THIS_RUN.held = (queue, ticket, context)


def run_ended(name):
    """The run of page ``name`` ended: with a result, or refused with a message. Its place in
    the run queue is given back."""
    st.session_state.get(_RUNS_IN_PROGRESS, set()).discard(name)
    end_this_run()


def end_this_run():
    """Give back this script thread's place in the run queue and leave its cancel context (a
    no-op when it holds none). ``app.py`` calls it after every page, also a stopped one."""
    held = getattr(_THIS_RUN, "held", None)
    if held is not None:
        queue, ticket, context = held
        _THIS_RUN.held = None
        try:
            context.__exit__(None, None, None)
        finally:
            queue.release(ticket)


def cancelled_note(name, kept=True, partial=False):
    """A warning while page ``name``'s last run was cancelled: the result on screen (``kept``) is
    the one before it, not the run the user asked for; ``partial``: the cancelled run's finished
    part is shown too, labelled partial. Shown until a run of the page ends."""
    if name in st.session_state.get(_RUNS_IN_PROGRESS, ()):
        before = "The finished result on this page is from the run before it." if kept else ""
        part = "What the cancelled run had finished is kept, labelled partial." if partial else ""
        st.warning("**Your last run did not finish:** it was cancelled (Stop was pressed, or you left the page while "
                   "it ran). " + (" ".join(x for x in (before, part) if x) or "Nothing was kept: press the button "
                                                                            "again."))


class PageStop(Exception):
    """Raised by :func:`stop_page` inside the app; ``app.py`` catches it and still draws the
    sidebar (``st.stop()`` would stop that too, leaving the meter one run behind)."""


def stop_page():
    """End the page here. Under ``app.py`` the sidebar is still drawn after it; a page run on
    its own (AppTest) stops with ``st.stop()``."""
    if st.session_state.get(IN_APP_KEY):
        raise PageStop
    st.stop()


#: Field labels. A library ValueError names the estimator's parameter (``n_clusters must be an
#: integer in [1, 2]; got 3``); the user typed the value into a field with a label ("clusters k").
#: Where the app shows such a message it passes it through :func:`in_user_words`, which writes
#: each parameter name as the label of its field. This map holds the names whose field has the same
#: label on every page that has the field; a page whose fields are labelled otherwise (or that has
#: fields of its own) gives its map as ``field_labels`` (a dict beside its ``URL_FIELDS``, e.g. the
#: Data page's ``FIELD_LABELS``), merged over this one. :func:`run_guarded` applies it to every
#: message it shows; a page that shows a library's ValueError itself passes it through
#: :func:`in_user_words` too.
FIELD_LABELS = {
    "n_clusters": "clusters k",
    "subspace_dim": "subspace dimension q",
    "n_subsets": "subsets m",          # sample-aggregate (the Cluster page)
    "epsilon": "ε",
    "delta": "δ",
}


def in_user_words(message, field_labels=None) -> str:
    """``message`` (a library's error text) with each parameter name of :data:`FIELD_LABELS`,
    updated with the page's ``field_labels`` ({parameter name: the field's label}), written as
    its label. A name is replaced only as a whole word: not inside another name (``n_clusters_``),
    a hyphenated word (``k-plane``), a quoted name (``'epsilon'``) or a call (``epsilon(``). One
    pass, so a label that contains another name (``clusters k``) is not replaced again."""
    import re

    text = str(message)
    labels = {**FIELD_LABELS, **(field_labels or {})}
    names = sorted((n for n in labels if n), key=len, reverse=True)
    if not names:
        return text
    pattern = r"(?<![\w.'\"-])(" + "|".join(map(re.escape, names)) + r")(?![\w'\"(-])"
    return re.sub(pattern, lambda m: labels[m.group(1)], text)


def run_guarded(fn, *args, field_labels=None, **kwargs):
    """Call ``fn``; a ValueError becomes an ``st.error`` in the user's words (the library's
    message with its parameter names written as the labels of their fields, :func:`in_user_words`
    with the page's ``field_labels``) and None is returned, so the caller keeps its previous results."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        st.error(in_user_words(exc, field_labels))
        return None


#: a figure drawn while its run goes on (a sweep, Compare ε, Gibbs traces) is redrawn at most every
#: MIN_REDRAW_S seconds, and no sooner than DRAW_FACTOR × its last drawing's time: the browser must
#: not spend more time drawing than the server computing
MIN_REDRAW_S, DRAW_FACTOR = 1.0, 5


def redraw_due(since_last, draw_cost, min_interval=MIN_REDRAW_S, factor=DRAW_FACTOR) -> bool:
    """Whether a live figure may be drawn again ``since_last`` seconds after its last drawing,
    which took ``draw_cost`` seconds."""
    return since_last >= max(min_interval, factor * draw_cost)


class Timer:
    """``with Timer() as t: …`` then ``t.seconds``."""

    def __enter__(self):
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._t0
        return False


# ----------------------------------------------------------------------------- figures
#: PNG export from a chart's own toolbar (the camera icon): 3× the on-screen size, so a chart
#: drawn 700 px wide gives a 2100 px image, sharp on a projector and in slides
PNG_SCALE = 3


def chart_filename(name: str) -> str:
    """A file name for a chart's PNG: ``dpclust-<name>`` in lower case, words joined by ``-``,
    only letters, digits and ``-`` (e.g. "Gibbs trace, ε = 1" → ``dpclust-gibbs-trace-eps-1``)."""
    import re
    import unicodedata

    text = re.sub(r"<[^>]+>", " ", name).replace("ε", "eps").replace("δ", "delta").replace("τ", "tau")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return "dpclust-" + (slug[:80].rstrip("-") or "chart")


def chart_config(name: str) -> dict:
    """The plotly ``config`` of every chart: the toolbar's camera downloads a high-resolution
    PNG named after the chart; no plotly logo."""
    return {"toImageButtonOptions": {"format": "png", "filename": chart_filename(name), "scale": PNG_SCALE},
            "displaylogo": False}


def show_chart(fig, name: str | None = None, container=None, **kwargs):
    """Draw a plotly figure full width, with the PNG export of :func:`chart_config`. ``name``
    (default: the figure's title) becomes the file name, e.g. ``show_chart(fig, "k-means
    centres, eps 1")``; pass the dataset or ε when they tell two downloads apart."""
    if name is None:
        title = getattr(getattr(fig.layout, "title", None), "text", None) if hasattr(fig, "layout") else None
        name = title or "chart"
    target = st if container is None else container
    kwargs.setdefault("width", "stretch")
    return target.plotly_chart(fig, config=chart_config(name), **kwargs)


# ----------------------------------------------------------------------------- privacy honesty
def privacy_statement(private, not_private, caveats=(), execution=(), verdict=None):
    """The box every page shows: what is private, what is not, how the noise is drawn (when
    something is private; ``execution``: the private estimators' class names, whose parts that
    stay floating-point are named) and caveats. ``verdict``: the run's verdict
    (:mod:`dpcore.lab.verdicts`); when it is not private, what would be private is listed as not
    private, with its reasons."""
    if verdict is not None and not verdict.private and private:
        not_private = [f"{', '.join(private)} — {verdict.reason}"] + list(not_private)
        private = []
        caveats = [f"{verdict.reason}: nothing this run released is private, whatever ε says"] + list(caveats)
    lines = []
    if private:
        lines.append("**Private (differentially private releases):** " + "; ".join(private))
        lines.append(":material/memory: " + execution_note(*execution))
    if not_private:
        lines.append("**Not private:** " + "; ".join(not_private))
    for c in caveats:
        lines.append("⚠️ " + c)
    st.info("\n\n".join(lines))


def show_ledger(ledger: PrivacyLedger, title="Privacy ledger of this run", not_private=None):
    """Table of the releases of one run and their total (sequential composition); with
    ``not_private`` (the reason) the total is called nominal, not spent."""
    st.markdown(f"**{title}**")
    if len(ledger) == 0:
        st.caption("No private release: nothing was spent.")
        return
    import pandas as pd   # here, not at start-up: the Home page and the sidebar do not need it

    rows = [{"release": r["what"], "mechanism": r["mechanism"], "ε": format_epsilon(r["epsilon"]),
             "δ": f"{r['delta']:.3g}", "note": r["note"]} for r in ledger.as_records()]
    st.table(pd.DataFrame(rows), hide_index=True)     # a static table: long notes wrap instead of being cut
    eps, dlt = ledger.total()
    if not_private:
        st.caption(f"Nominal total: ε = {format_epsilon(eps)}, δ = {dlt:.3g} — NOT private ({not_private}): "
                   "the meter lists it as not private, and the dataset's ε is ∞ from now on.")
        return
    st.caption(f"Total spent: ε = {format_epsilon(eps)}, δ = {dlt:.3g}")


# last: every name above exists before this may stop the import with a rerun (another session's
# page importing this module meanwhile must not find it half built: "cannot import name
# 'DEFAULT_DATASET'", seen on a fresh server with a class arriving)
_leave_pages_folder_mode()
