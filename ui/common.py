"""What every page shares: the current dataset, cached loaders, error display, privacy
statements, the ledger table and the session privacy meter.

Pages stay thin: widgets, one call into :mod:`dpcore`, one figure from :mod:`dpcore.plots`,
and these helpers.
"""
from __future__ import annotations

import json
import time
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass, field

import streamlit as st

from dpcore.data import PAPER_SPECS, Dataset, load_dataset
from dpcore.defaults import public_upload_subspace_dim
from dpcore.privacy.exact import execution_note
from dpcore.privacy import RELATIONS, PrivacyAccountant, PrivacyEvent, PrivacyLedger, basic_composition
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


_leave_pages_folder_mode()

DATASET_KEY = "dataset"
SESSION_METER_KEY = "session_meter"
CLASS_BUDGET_KEY = "class_budget"
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


def run_started(name):
    """Mark the run of page ``name`` as going on (call it when Run is pressed). A script stopped
    mid-run (Stop, or the user left the page: Streamlit cancels its run) never reaches
    :func:`run_ended`, so the mark stays and :func:`cancelled_note` tells the user next time."""
    st.session_state.setdefault(_RUNS_IN_PROGRESS, set()).add(name)


def run_ended(name):
    """The run of page ``name`` ended: with a result, or refused with a message."""
    st.session_state.get(_RUNS_IN_PROGRESS, set()).discard(name)


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


def run_guarded(fn, *args, **kwargs):
    """Call ``fn``; a ValueError becomes an ``st.error`` with the same words and None is
    returned, so the caller keeps its previous results."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        st.error(str(exc))
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
def data_read_q(ds: Dataset, q) -> str | None:
    """Why a run with subspace dimension ``q`` on ``ds`` is not private because of q, or None.

    An upload's public default q comes from its shape; the Data page can also suggest a q read
    off the data, which, once accepted, lives in the spec (``subspace_dim``). A private method
    run with that q used the data to choose a hyperparameter: its guarantee does not cover the
    choice, so the run is not private (the page's box and the meter say so). A q equal to the
    public default is the public choice whatever suggested it."""
    accepted = (ds.params or {}).get("subspace_dim") if (ds.params or {}).get("kind") == "upload" else None
    if accepted is None or q is None or int(q) != int(accepted) or int(q) == public_upload_subspace_dim(ds.d):
        return None                 # (the public default gives the same q: the run is the public one's)
    return f"q = {int(q)} was read off the data (the Data page's suggestion, accepted)"


def privacy_statement(private, not_private, caveats=(), execution=(), data_read=None):
    """The box every page shows: what is private, what is not, how the noise is drawn (when
    something is private; ``execution``: the private estimators' class names, whose parts that
    stay floating-point are named) and caveats. ``data_read`` (:func:`data_read_q`): a
    hyperparameter read off the data, so what would be private is listed as not private."""
    if data_read and private:
        not_private = [f"{', '.join(private)} — {data_read}"] + list(not_private)
        private = []
        caveats = [f"{data_read}: no run with this q is private, whatever ε says; a q chosen without looking at "
                   "the data (the public default) would be"] + list(caveats)
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
                   "the meter lists it apart and does not count it.")
        return
    st.caption(f"Total spent: ε = {format_epsilon(eps)}, δ = {dlt:.3g}")


#: what the meter counts, in its help: one fit is one release
FIT_WORDS = ("A fit is one run of one method on the data, whatever the number of noisy steps inside it: one Cluster "
             "or k-means run, one ε of a Gibbs run, one method of a Co-clustering run, one ε × trial of a sweep, one "
             "run of an audit on D or on D′. Each fit is one release (a SuLQ k-means fit adds noise at each of its iterations: its "
             "ledger lists them, and its ε covers them all).")
#: when a run is charged (the metric's help; the pages follow it)
CHARGE_RULE = ("A run is charged when its result is released (shown): a stopped run or sweep that shows nothing has "
               "released nothing and is not charged. An audit of your data charges its runs as they finish (piece by "
               "piece, as its progress bar moves): a stopped audit has paid for the runs it finished; so has a "
               "stopped Compare ε on the Cluster page (each ε's fit is charged as it finishes) and a stopped sweep (each cell, "
               "one method at one ε, is charged when it is first drawn).")


def gibbs_unchecked(where: str) -> str:
    """The meter's reason for a Gibbs fit in a sweep or an audit (``where``: "a sweep", "an audit"):
    its ε holds only once the chain has mixed, which only the Gibbs page checks."""
    return f"its guarantee holds only once the chain has mixed, which {where} does not check (the Gibbs page does)"


@dataclass
class SessionMeter:
    """What this session released, per dataset: the privacy meter of the sidebar.

    One :class:`~dpcore.privacy.PrivacyAccountant` per dataset name (privacy composes per
    dataset: runs on different data do not add up). Each run is recorded with its neighbouring
    relation and counted in the weakest relation common to the dataset's runs (an ε for "one
    record added or removed" costs 2ε for "one record replaced"). A run that the page itself
    calls not private (a public seed, a non-private start or selection, a radius read from the
    data, a Gibbs chain not yet mixed or not checked) is listed apart with its reason and not
    counted.

    The meter counts **fits** (:data:`FIT_WORDS`: one run of one method on the data is one
    release, whatever the noise events inside it). ``runs`` keeps the entries in order, as rows
    (dataset, label, epsilon, delta, private, reason, fits, events, relation, entry), ε and δ in
    the entry's own relation; ``events`` counts the noise events of the accountant. An ``entry``
    id (an audit's) makes later records with the same id add to that one row: one entry in the
    lists, however often it is charged."""
    accountants: dict = field(default_factory=dict)
    runs: list = field(default_factory=list)

    def accountant(self, dataset: str) -> PrivacyAccountant:
        return self.accountants.setdefault(dataset, PrivacyAccountant())

    def record(self, source, label: str, dataset: str, private: bool, reason: str = "",
               relation: str | None = "replace_one", fits: int = 1, entry: str | None = None):
        """Record ``fits`` fits (a fitted estimator, a ledger or events) on ``dataset``; returns its
        row. With ``entry``, a row of the same entry id on the same dataset is updated instead of a
        new row added."""
        fits = int(fits)
        if fits < 1:
            raise ValueError(f"fits must be ≥ 1, got {fits}")
        run = self.accountant(dataset).record(source, relation, label=label, private=bool(private), reason=reason)
        if entry is not None:
            row = next((r for r in reversed(self.runs) if r.get("entry") == entry and r["dataset"] == dataset), None)
            if row is not None:
                if row["private"] != run.private or row["relation"] != run.relation:
                    raise ValueError(f"entry {entry!r}: a record must keep the entry's privacy and relation")
                row["epsilon"] += run.epsilon
                row["delta"] = min(1.0, row["delta"] + run.delta)
                row["fits"] += fits
                row["events"] += run.n_releases
                return row
        row = dict(dataset=dataset, label=label, epsilon=run.epsilon, delta=run.delta, private=run.private,
                   reason=run.reason, fits=fits, events=run.n_releases, relation=run.relation, entry=entry)
        self.runs.append(row)
        return row

    def private_total(self, dataset: str):
        """(ε, δ) of the private runs on ``dataset``, by basic composition in :meth:`relation`."""
        acc = self.accountants.get(dataset)
        return acc.basic_total() if acc is not None else (0.0, 0.0)

    def relation(self, dataset: str):
        """The weakest relation common to the private runs on ``dataset`` (None: no private run)."""
        acc = self.accountants.get(dataset)
        return acc.target_relation() if acc is not None else None

    def n_fits(self, dataset: str, private: bool = True) -> int:
        """Fits (releases, in the meter's words) on ``dataset``: the private ones, or (``private=False``)
        the ones listed as not private."""
        return sum(r.get("fits", 1) for r in self.runs if r["dataset"] == dataset and bool(r["private"]) == private)

    def n_events(self, dataset: str) -> int:
        """Noise events of the private fits on ``dataset`` (what the accountant composes; a SuLQ
        k-means fit has 20)."""
        acc = self.accountants.get(dataset)
        return acc.n_releases if acc is not None else 0

    def tight_total(self, dataset: str):
        """The tight total (privacy-loss distributions) at the basic δ, or None (no run, or it failed)."""
        acc = self.accountants.get(dataset)
        if acc is None or not acc.runs:
            return None
        try:
            return acc.tight_total()
        except Exception:  # noqa: BLE001 - the sidebar shows the basic total whatever happens here
            return None

    def nonprivate_runs(self, dataset: str):
        """The entries on ``dataset`` listed as not private (an entry may hold several fits)."""
        return [r for r in self.runs if r["dataset"] == dataset and not r["private"]]

    def datasets(self):
        return list(dict.fromkeys(r["dataset"] for r in self.runs))

    def check(self, dataset: str, plans, budget):
        """Refuse ``plans`` (PrivacyEvents, each with a relation) on ``dataset`` if they would take
        its total past ``budget`` (None: no limit); ValueError in the class budget's words."""
        if budget is None or not plans:
            return
        acc = self.accountant(dataset)
        acc.budget_epsilon = float(budget)
        try:
            acc.check(0.0, events=plans)
        except ValueError as exc:
            raise ValueError(f"Refused by the class budget (ε ≤ {format_epsilon(float(budget))} per dataset, set in "
                             f"the sidebar) on {dataset}: {exc}. Raise or clear the class budget, or choose "
                             "another dataset.") from None


def session_meter() -> SessionMeter:
    meter = st.session_state.get(SESSION_METER_KEY)
    if not isinstance(meter, SessionMeter):      # none yet, or one of an older version of this module
        meter = st.session_state[SESSION_METER_KEY] = SessionMeter()
    return meter


def class_budget():
    """The class budget ε per dataset set in the sidebar, or None (no limit)."""
    value = st.session_state.get(CLASS_BUDGET_KEY)
    return None if value is None else float(value)


def planned(epsilon, delta=0.0, relation="replace_one", count=1) -> PrivacyEvent:
    """A planned release for :func:`check_budget`: ``count`` runs of (ε, δ) each, for ``relation``."""
    return PrivacyEvent.approx_dp(float(epsilon), float(delta or 0.0), count=int(count), relation=relation)


def check_budget(plans, dataset: str | None = None):
    """Before a run: refuse it (ValueError, shown by the page) when the planned releases
    (:func:`planned`) would take the dataset's total past the class budget. Runs that will not
    be counted (a public seed, ...) are left out of ``plans`` by the caller. Returns True."""
    name = dataset if dataset is not None else current_dataset().name
    session_meter().check(name, [p for p in plans if p is not None], class_budget())
    return True


def run_is_private(estimator, random_state) -> tuple[bool, str]:
    """Whether a fitted run released anything private, and if not, why (for the meter)."""
    if random_state is not None:
        return False, f"public seed {random_state} (reproducible mode)"
    if not getattr(estimator, "released_private_", False):
        return False, "the run released nothing private (see its privacy box)"
    q = getattr(estimator, "subspace_dim", None)
    why = data_read_q(current_dataset(), q) if q is not None else None
    if why:
        return False, why
    return True, ""


def record_run(ledger, label: str, *, private: bool, reason: str = "", dataset: str | None = None,
               relation: str = "replace_one", fits: int = 1, entry: str | None = None):
    """Add ``fits`` fits (one run of a method on the data is one fit, one release; a rerun is a
    new one) to the session meter, under the current dataset unless ``dataset`` is given;
    ``ledger`` is a PrivacyLedger or PrivacyEvents (of all ``fits`` fits), ``relation`` the
    run's neighbouring relation, ``entry`` an id that makes records with the same id one entry
    (:meth:`SessionMeter.record`). Call it after the run, before the page draws its results
    (:data:`CHARGE_RULE`): the sidebar is drawn after the page (``app.py``), so the meter
    already shows it."""
    name = dataset if dataset is not None else current_dataset().name
    return session_meter().record(ledger, label, name, private, reason, relation, fits=fits, entry=entry)


def record_estimator(estimator, label: str, random_state, dataset: str | None = None, relation: str | None = None,
                     private: bool = True, reason: str = ""):
    """:func:`record_run` for a fitted private estimator, private or not by :func:`run_is_private`
    (and ``private``/``reason`` when the page knows more, e.g. a chain not yet mixed); the relation is
    ``relation`` or the estimator's ``claimed_relation``."""
    ok, why = run_is_private(estimator, random_state)
    if ok and not private:
        ok, why = False, reason
    rel = relation if relation is not None else getattr(estimator, "claimed_relation", "replace_one")
    return record_run(estimator.ledger_, label, private=ok, reason=why, dataset=dataset, relation=rel)


def format_epsilon(eps: float) -> str:
    """ε as a student reads it: 4 significant digits, no exponent below a billion
    (25 490 → "25,490", 0.5 → "0.5")."""
    if eps == 0 or 1e-3 <= abs(eps) < 1e4:
        return f"{eps:.4g}"
    if 1e4 <= abs(eps) < 1e9:
        return f"{eps:,.0f}"
    return f"{eps:.3e}"


def _reset_meter():
    st.session_state[SESSION_METER_KEY] = SessionMeter()


def relation_words(relation) -> str:
    """A relation in the meter's words (the library's :data:`dpcore.privacy.RELATIONS`)."""
    return RELATIONS.get(relation, "no private run yet")


def sidebar_slot():
    """Start the shared sidebar before the page runs: an area for :func:`sidebar`, the meter's
    reset button and the class budget below it. The area is filled at once with the state before
    the page; the page may end with Streamlit's Stop, after which nothing more is drawn, so that
    is what stays."""
    slot = ResultSlot(st.sidebar)
    st.sidebar.button("Reset privacy meter", key="_reset_budget", on_click=_reset_meter)
    default = {} if CLASS_BUDGET_KEY in st.session_state else {"value": None}   # no default beside a set state
    st.sidebar.number_input(
        "Class budget: ε per dataset", min_value=0.01, step=1.0, format="%.4g", key=CLASS_BUDGET_KEY, **default,
        placeholder="no limit", help="Optional. A private run that would take a dataset's total (basic composition, "
                                     "in the weakest relation common to its runs) past this ε is refused before it "
                                     "runs, with a message. Empty: no limit.")
    st.sidebar.caption("A browser reload starts a new session: the meter starts again at 0 (and forgets the budget).")
    sidebar(slot.previous())
    return slot


def meter_lines(meter: SessionMeter, name: str):
    """The meter of dataset ``name``: (ε, δ, relation, tight total or None, private fits)."""
    eps, dlt = meter.private_total(name)
    return eps, dlt, meter.relation(name), meter.tight_total(name), meter.n_fits(name)


def fits_words(n: int, private: bool = True) -> str:
    return f"{n:,} {'private' if private else 'non-private'} fit(s)" + (" (each a release)" if private else "")


#: what a reload does to the meter (a classroom report: it reset without saying so)
RELOAD_NOTE = ("This meter counts this tab's session only: reloading the page or opening a new tab starts it again at "
               "0, but the data have still been used by every earlier run.")
METER_HELP = ("Every private fit on this dataset in this session, added up (basic composition). " + FIT_WORDS
              + " Running a method again on the same data is a new fit and spends again; fits on other datasets are "
              "counted separately. " + CHARGE_RULE + " Each fit is counted in the weakest neighbouring relation "
              "common to this dataset's fits: a fit whose ε is stated for 'one record added or removed' costs 2ε for "
              "'one record replaced' or 'one cell ±1' (group privacy), a fit for 'one record replaced' costs ε for "
              "'one cell ±1' (changing one cell changes one document). The tight total composes the same fits, noise "
              "step by noise step, through privacy-loss distributions (Google's dp-accounting): an upper bound on ε "
              "at the same δ, smaller when there are many fits.")


def _show_dataset_meter(meter: SessionMeter, name: str, label: str, help_text: str):
    """The metric of one dataset's private ε, its relation and fits, and its tight total."""
    eps, dlt, rel, tight, n_fits = meter_lines(meter, name)
    st.metric(label, format_epsilon(eps), help=help_text)
    if n_fits:
        st.caption(f"for **{relation_words(rel)}** (the weakest relation common to the fits) · δ = {dlt:.3g} · "
                   + fits_words(n_fits))
        if tight is not None and tight.epsilon < eps * (1 - 1e-3):
            st.caption(f"Tight total: ε ≤ {format_epsilon(tight.epsilon)} at δ = {tight.delta:.3g} (privacy-loss "
                       f"distributions, dp-accounting; grid {tight.value_discretization_interval:.2g}), against "
                       f"{format_epsilon(eps)} by adding up.")
    return eps


def _entry_words(r) -> str:
    fits = r.get("fits", 1)
    return r["label"] + (f" ({fits:,} fits)" if fits > 1 else "")


def sidebar(container=None):
    """The shared sidebar: current dataset and the session's privacy meter. ``app.py`` draws it
    before the page (``sidebar_slot()``) and again after the page has run
    (``sidebar(slot.latest())``), so it shows the state after the page's run. When the last fit
    was on another dataset (a page that chose its own data), a second metric shows that one."""
    with (st.sidebar.container() if container is None else container):
        try:
            ds = current_dataset()
        except ValueError as exc:  # a stale spec: fall back to the default
            st.error(str(exc))
            st.session_state[DATASET_KEY] = {"spec": DEFAULT_DATASET}
            ds = current_dataset()
        st.markdown(f"**Dataset:** {ds.name}")
        st.caption(ds.description)
        meter = session_meter()
        eps = _show_dataset_meter(meter, ds.name, "Private ε spent on this dataset", METER_HELP)
        st.caption(RELOAD_NOTE)
        budget = class_budget()
        if budget is not None:
            left = budget - eps
            st.caption(f"Class budget: ε ≤ {format_epsilon(budget)} per dataset · "
                       + (f"{format_epsilon(left)} left here" if left > 0 else "used up here: private runs are refused"))
        nonpriv = meter.nonprivate_runs(ds.name)
        if nonpriv:
            st.caption(f"⚠️ {fits_words(meter.n_fits(ds.name, private=False), private=False)} on this dataset "
                       f"(nominal ε {format_epsilon(basic_composition([r['epsilon'] for r in nonpriv])[0])}, not "
                       f"counted: they protect nobody). Last: {_entry_words(nonpriv[-1])}: {nonpriv[-1]['reason']}")
            if len(nonpriv) > 1:
                with st.expander("The fits that were not private"):
                    for r in nonpriv[-20:]:
                        st.caption(f"{_entry_words(r)}: {r['reason']}")
        if meter.runs and meter.runs[-1]["dataset"] != ds.name:     # a page that chose its own data
            other = meter.runs[-1]["dataset"]
            _show_dataset_meter(meter, other, f"Private ε spent on {other}", (
                "The dataset of the last fit, which is not the Data page's (Co-clustering and k-means choose their "
                "own data): every private fit on it in this session, added up, in the weakest relation common to its "
                "fits. " + FIT_WORDS + " " + CHARGE_RULE))
            latest = []
            for r in reversed(meter.runs):          # the last page run's entries on that dataset
                if r["dataset"] != other:
                    break
                latest.append(r)
            shown = [(_entry_words(r) if r["private"] else f"{_entry_words(r)}, not private: {r['reason']}")
                     for r in reversed(latest[:4])]
            st.caption(f"Latest on **{other}**: " + "; ".join(shown)
                       + (f" (and {len(latest) - 4:,} earlier entries)" if len(latest) > 4 else ""))
        others = [d for d in meter.datasets() if d != ds.name]
        if others:
            with st.expander("Other datasets"):
                for d in others:
                    e, _ = meter.private_total(d)
                    st.caption(f"{d}: private ε {format_epsilon(e)}"
                               + (f" for {relation_words(meter.relation(d))}" if meter.relation(d) else "")
                               + f", {fits_words(meter.n_fits(d))}"
                               + (f", {fits_words(meter.n_fits(d, False), False)}" if meter.n_fits(d, False) else ""))
