"""What every page shares: the current dataset, cached loaders, error display, privacy
statements, the ledger table and the session budget meter.

Pages stay thin: widgets, one call into :mod:`dpcore`, one figure from :mod:`dpcore.plots`,
and these helpers.
"""
from __future__ import annotations

import json
import time

import pandas as pd
import streamlit as st

from dpcore.data import Dataset, load_dataset
from dpcore.privacy import PrivacyLedger

DATASET_KEY = "dataset"
SESSION_LEDGER_KEY = "session_ledger"
DEFAULT_DATASET = {"kind": "subspaces", "n": 1000, "d": 10, "k": 3, "q": 3, "sigma": 0.1, "random_state": 0}


# ----------------------------------------------------------------------------- datasets
@st.cache_data(max_entries=16, show_spinner="Loading data…")
def _cached_dataset(spec_json: str) -> Dataset:
    spec = json.loads(spec_json)
    return load_dataset(**spec)


def dataset_from_spec(spec: dict) -> Dataset:
    """Build (or fetch from the bounded cache) the dataset of a small parameter dict,
    e.g. ``{"kind": "cluto", "name": "classic3"}``. Cached by the parameters, never by
    hashing arrays. Raises ValueError on bad parameters."""
    return _cached_dataset(json.dumps(spec, sort_keys=True))


def current_dataset() -> Dataset:
    """The dataset chosen on the Data page; the Fig. 2 (middle) synthetic set otherwise."""
    if DATASET_KEY not in st.session_state:
        st.session_state[DATASET_KEY] = {"spec": DEFAULT_DATASET}
    return dataset_from_spec(st.session_state[DATASET_KEY]["spec"])


def current_spec() -> dict:
    current_dataset()
    return dict(st.session_state[DATASET_KEY]["spec"])


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
