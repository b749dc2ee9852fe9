"""What every page shares: the current dataset, cached loaders, error display, privacy
statements, the ledger table and the session budget meter.

Pages stay thin: widgets, one call into :mod:`dpcore`, one figure from :mod:`dpcore.plots`,
and these helpers.
"""
from __future__ import annotations

import json
import time
from collections import OrderedDict
from contextlib import nullcontext

import streamlit as st

from dpcore.data import Dataset, load_dataset
from dpcore.privacy import PrivacyLedger
from dpcore.upload import load_upload, registered, upload_key

DATASET_KEY = "dataset"
SESSION_LEDGER_KEY = "session_ledger"
UPLOADS_KEY = "uploaded_datasets"
MAX_SESSION_UPLOADS = 3   # parsed uploads kept per session (each may hold up to 80 MB)
DEFAULT_DATASET = {"kind": "subspaces", "n": 1000, "d": 10, "k": 3, "q": 3, "sigma": 0.1, "random_state": 0}


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
def run_guarded(fn, *args, **kwargs):
    """Call ``fn``; a ValueError becomes an ``st.error`` with the same words and None is
    returned, so the caller keeps its previous results."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        st.error(str(exc))
        return None


class Timer:
    """``with Timer() as t: …`` then ``t.seconds``."""

    def __enter__(self):
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._t0
        return False


# ----------------------------------------------------------------------------- privacy honesty
def privacy_statement(private, not_private, caveats=()):
    """The box every page shows: what is private, what is not, and caveats."""
    lines = []
    if private:
        lines.append("**Private (differentially private releases):** " + "; ".join(private))
    if not_private:
        lines.append("**Not private:** " + "; ".join(not_private))
    for c in caveats:
        lines.append("⚠️ " + c)
    st.info("\n\n".join(lines))


def show_ledger(ledger: PrivacyLedger, title="Privacy ledger of this run"):
    """Table of the releases of one run and their total (sequential composition)."""
    st.markdown(f"**{title}**")
    if len(ledger) == 0:
        st.caption("No private release: nothing was spent.")
        return
    import pandas as pd   # here, not at start-up: the Home page and the sidebar do not need it

    st.dataframe(pd.DataFrame(ledger.as_records()), hide_index=True, width="stretch")
    eps, dlt = ledger.total()
    st.caption(f"Total spent: ε = {eps:.6g}, δ = {dlt:.3g}")


def add_to_session_budget(ledger: PrivacyLedger, label: str):
    """Every release adds to the session meter (a rerun is a new release)."""
    session = st.session_state.setdefault(SESSION_LEDGER_KEY, PrivacyLedger())
    session.extend(ledger, prefix=f"{label}: ")


def sidebar():
    """The shared sidebar: current dataset and the session's privacy budget meter."""
    with st.sidebar:
        try:
            ds = current_dataset()
            st.markdown(f"**Dataset:** {ds.name}")
            st.caption(ds.description)
        except ValueError as exc:  # a stale spec: fall back to the default
            st.error(str(exc))
            st.session_state[DATASET_KEY] = {"spec": DEFAULT_DATASET}
        session = st.session_state.get(SESSION_LEDGER_KEY, PrivacyLedger())
        eps, dlt = session.total()
        st.metric("Session privacy spent (ε)", f"{eps:.4g}", help=(
            "Sum of the ε of every private release in this session (sequential composition). "
            "Running an algorithm again on the same data is a new release and spends again."))
        st.caption(f"δ spent: {dlt:.3g} · {len(session)} release(s)")
        if st.button("Reset budget meter", key="_reset_budget"):
            st.session_state[SESSION_LEDGER_KEY] = PrivacyLedger()
            st.rerun()
