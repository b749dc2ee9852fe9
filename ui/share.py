"""Shareable state, presets and the "reproduce in Python" export, shared by every page.

URL state
---------
A page lists the widget keys that define its view (``bind_url(page, fields)`` before drawing
its widgets, ``publish_url(fields)`` after). The values, and the current dataset's small
spec (parameter ``data``), are mirrored into ``st.query_params``, so a copied link opens
the same view. A method's seed (``*_seed``) travels only while its "reproducible (noise public)"
box (``*_repro``, added to every page's fields automatically) is ticked: by default a run's
noise is secret and the link carries none (:mod:`ui.seeds`). On the first run of a page in a session, parameters in
the URL are copied into ``st.session_state`` — each through its field's parser, which
rejects values the widget would not accept (out of range, unknown option): those are
dropped with a warning naming them, never a traceback. Uploaded datasets cannot travel in
a link; their pages share the other parameters only.

Presets
-------
``preset_picker(page, presets)`` draws a "Preset" selectbox; choosing one sets every listed
widget (and, if given, the dataset) at once, through an ``on_change`` callback so that the
widgets are created with the new values.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import streamlit as st

from ui.common import DATASET_KEY, dataset_from_spec
from ui.seeds import REPRO_SUFFIX, SEED_SUFFIX, seed_in_link

_LOADED = "_url_loaded_"
_PRESET_APPLIED = "_preset_applied_"
DATA_PARAM = "data"


# ----------------------------------------------------------------------------- field parsers
def as_int(lo=None, hi=None) -> Callable[[str], int]:
    def parse(text):
        v = int(float(text))
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ValueError(f"{v} is outside [{lo}, {hi}]")
        return v
    return parse


def as_float(lo=None, hi=None) -> Callable[[str], float]:
    def parse(text):
        v = float(text)
        if not v == v or (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ValueError(f"{v} is outside [{lo}, {hi}]")
        return v
    return parse


def one_of(options) -> Callable[[str], Any]:
    """The option whose string form is the text (works for str, int and float options)."""
    options = list(options)

    def parse(text):
        for o in options:
            if str(o) == text:
                return o
        raise ValueError(f"{text!r} is not one of {options}")
    return parse


def as_str(text):
    return str(text)


def as_bool(text):
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"{text!r} is not true/false")


def list_of(options) -> Callable[[str], list]:
    one = one_of(options)
    return lambda text: [one(t) for t in text.split(",") if t != ""]


def _to_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


# ----------------------------------------------------------------------------- URL state
def _with_repro(fields: dict) -> dict:
    """``fields`` plus the "reproducible" box of every seed field (``p_seed`` -> ``p_repro``)."""
    out = dict(fields)
    for key in fields:
        if key.endswith(SEED_SUFFIX):
            out.setdefault(key[: -len(SEED_SUFFIX)] + REPRO_SUFFIX, as_bool)
    return out


def bind_url(page: str, fields: dict[str, Callable[[str], Any]]) -> None:
    """On the first run of ``page`` in this session, copy URL parameters into the session
    state of the widgets named in ``fields`` (key -> parser) and the dataset. Call before
    the widgets are drawn."""
    flag = _LOADED + page
    if st.session_state.get(flag):
        return
    st.session_state[flag] = True
    params = st.query_params
    fields = _with_repro(fields)
    rejected = []
    if DATA_PARAM in params:
        try:
            spec = json.loads(params[DATA_PARAM])
            if not isinstance(spec, dict):
                raise ValueError("not a parameter dict")
            dataset_from_spec(spec)          # validates (ValueError on bad parameters)
            st.session_state[DATASET_KEY] = {"spec": spec}
        except (ValueError, TypeError) as exc:
            rejected.append(f"{DATA_PARAM} ({exc})")
    for key, parse in fields.items():
        if key in params:
            try:
                st.session_state[key] = parse(params[key])
            except (ValueError, TypeError) as exc:
                rejected.append(f"{key} ({exc})")
    if rejected:
        st.warning("Ignored link parameters that this page cannot use: " + "; ".join(rejected))


def publish_url(fields) -> None:
    """Mirror the current widget values (and the dataset spec) into the URL."""
    values = {}
    spec = st.session_state.get(DATASET_KEY, {}).get("spec")
    if spec is not None and spec.get("kind") != "upload":
        values[DATA_PARAM] = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    for key in _with_repro(fields):
        if key in st.session_state and st.session_state[key] is not None and seed_in_link(key, st.session_state):
            values[key] = _to_text(st.session_state[key])
    current = {k: st.query_params[k] for k in st.query_params}
    if current != values:
        st.query_params.from_dict(values)


def follow_dataset(page: str, data_id, defaults: dict) -> None:
    """Reset the widgets whose default depends on the dataset (e.g. k = number of classes)
    when the page's dataset changes, so that they follow it as unkeyed widgets would. Call
    before drawing them. The first run (possibly from a link) and the run right after a
    preset was chosen (which sets the dataset and these widgets together) keep their values."""
    marker = f"_{page}_data_id"
    previous = st.session_state.get(marker)
    st.session_state[marker] = data_id
    if st.session_state.pop(_PRESET_APPLIED + page, False):
        return              # a preset has just set these widgets together with its dataset: keep its values
    if previous is not None and previous != data_id:
        for key, value in defaults.items():
            st.session_state[key] = value


# ----------------------------------------------------------------------------- presets
@dataclass
class Preset:
    """Values for widget keys, and optionally the dataset spec, applied at once."""
    values: dict
    dataset: dict | None = None
    about: str = ""
    extra: dict = field(default_factory=dict)


def _apply(page, presets):
    label = st.session_state.get(f"{page}_preset")
    p = presets.get(label)
    if p is None:
        return
    if p.dataset is not None:
        st.session_state[DATASET_KEY] = {"spec": dict(p.dataset)}
    for key, value in p.values.items():
        st.session_state[key] = value
    st.session_state[_PRESET_APPLIED + page] = True


def preset_picker(page: str, presets: dict[str, Preset]) -> None:
    """A "Preset" selectbox; choosing a preset sets all its controls (and dataset)."""
    options = ["(custom)"] + list(presets)
    st.selectbox("Preset", options, key=f"{page}_preset", on_change=_apply, args=(page, presets),
                 help="Set every control at once to a setting of the papers; change any control afterwards.")
    label = st.session_state.get(f"{page}_preset")
    if label in presets and presets[label].about:
        st.caption(presets[label].about)


# ----------------------------------------------------------------------------- export
def snippet_expander(code: str, label="Reproduce in Python") -> None:
    """The code that recomputes the shown result with dpcore, with a download button."""
    with st.expander(label, expanded=False):
        st.code(code, language="python")
        st.download_button("Download the script", code, file_name="reproduce.py", mime="text/x-python",
                           help="Runs with `python reproduce.py` from the project folder and prints the same numbers.")
