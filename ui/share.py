"""Shareable state, presets and the "reproduce in Python" export, shared by every page.

URL state
---------
Which job is whose (docs/teaching.md, "Shareable links"):

- **Streamlit** (``bind="query-params"`` on every widget that defines a page's view) writes
  each widget's value into the URL as soon as it is committed — also inside a form, before
  its button — leaves default values out, and seeds the widgets from a link.
- **This module** does what binding cannot: the dataset, which no widget holds (parameter
  ``data``, a small JSON spec, :func:`publish_url`), and a warning for every link parameter a
  page cannot use (Streamlit drops those silently). A page lists its bound keys and their
  parsers (``check_link(page, fields)`` before drawing its widgets); on the first run of the
  page in a session each parameter goes through its parser — the same limits as the widget
  (out of range, unknown option, a dataset above the size cap) — and a rejected one is
  removed from the URL and named in a warning, never a traceback. A parameter that no field of
  the page has (a typo, a setting of another page, a made-up key) is removed and named in the
  same warning: nothing in a link is ignored without a word. :func:`read_link` is the check
  without Streamlit (what the fuzz tests drive); :func:`check_link` applies its verdicts.

A method's seed (``*_seed``) is drawn, and so bound, only while its "reproducible (noise
public)" box (``*_repro``) is ticked: by default a run's noise is secret and the link carries
none (:mod:`ui.seeds`). An uploaded dataset cannot travel in a link: its spec (file name,
SHA-256, read options) is published all the same. A link naming an upload this session does not
hold keeps its other settings pending (out of the URL, so that no widget takes them yet) and
shows an uploader on its page (and on the Data page); once the file is uploaded, the link is
checked and applied as if it had been opened in a session holding the file, and a message says
which settings were applied (:func:`pending_upload_box`, :func:`link_upload_options`).

Presets
-------
``preset_picker(page, presets)`` draws a "Preset" selectbox; choosing one sets every listed
widget (and, if given, the dataset) at once, through an ``on_change`` callback so that the
widgets are created with the new values.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import streamlit as st

from ui.common import DATASET_KEY, UPLOADS_KEY, dataset_from_spec, is_upload_spec, set_upload, upload_in_session
from ui.seeds import REPRO_SUFFIX, SEED_SUFFIX

_LOADED = "_url_loaded_"
_PRESET_APPLIED = "_preset_applied_"
DATA_PARAM = "data"
PENDING_LINK_KEY = "_pending_upload_link"   # {"page", "spec", "params": {key: [texts]}}
LINK_UPLOAD_KEY = "link_upload_file"        # the uploader of a pending link's file
_LINK_APPLIED = "_link_applied_"            # page -> the settings just applied (the success message)
PAGE_TITLES = {"data": "Data", "cluster": "Cluster", "gibbs": "Gibbs", "cocluster": "Co-clustering",
               "kmeans": "k-means", "privacy_utility": "Privacy–utility", "audit": "Privacy audit",
               "paper_figures": "Paper figures"}


# ----------------------------------------------------------------------------- field parsers
def _number(x) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:.4g}"


def _range_text(lo, hi) -> str:
    if lo is not None and hi is not None:
        return f"between {_number(lo)} and {_number(hi)}"
    return f"at least {_number(lo)}" if lo is not None else f"at most {_number(hi)}"


def as_int(lo=None, hi=None) -> Callable[[str], int]:
    def parse(text):
        v = float(text)
        if not math.isfinite(v) or v != int(v):
            raise ValueError(f"{text!r} is not a whole number")
        v = int(v)
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ValueError(f"{v} is not {_range_text(lo, hi)}")
        return v
    return parse


def as_float(lo=None, hi=None) -> Callable[[str], float]:
    def parse(text):
        v = float(text)
        if not math.isfinite(v):
            raise ValueError(f"{text!r} is not a finite number")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ValueError(f"{v:.4g} is not {_range_text(lo, hi)}")
        return v
    return parse


def one_of(options, format_func=str, aliases=None) -> Callable[[str], Any]:
    """The option whose label is the text: ``format_func(option)``, as a selectbox bound to
    the URL writes it (pass the widget's ``format_func``). The option's own value is accepted
    too (``sulq_kplane`` for "SuLQ k-plane"), an old name of it (``aliases``: old -> option, e.g.
    the links made before a method had its catalogue name), and a number by its value (``10``
    for the option 10.0): :func:`check_link` then writes the label into the URL, which is what
    the widget reads. A refusal lists the labels the link may use, so it cannot name the text
    it refuses."""
    options = list(options)
    aliases = dict(aliases or {})

    def parse(text):
        if text in aliases and aliases[text] in options:
            return aliases[text]
        for o in options:
            if text == format_func(o):
                return o
        for o in options:
            if text == str(o):
                return o
        try:
            x = float(text)
        except (TypeError, ValueError):
            x = None
        if x is not None:
            for o in options:
                if isinstance(o, (int, float)) and not isinstance(o, bool) and float(o) == x:
                    return o
        labels = ", ".join(repr(format_func(o)) for o in options)
        raise ValueError(f"{text!r} is not one of the choices: {labels}")
    parse.canonical = format_func      # the text the widget reads (check_link writes it to the URL)
    return parse


def as_str(text):
    return str(text)


def as_bool(text):
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"{text!r} is not true/false")


def list_of(options, format_func=str, aliases=None) -> Callable[[list], list]:
    """Parser of a multiselect's link value: the list of its repeated URL parameters (an old name
    of an option accepted, ``aliases``: old -> option, as :func:`one_of`)."""
    one = one_of(options, format_func, aliases)

    def parse(texts):
        texts = [texts] if isinstance(texts, str) else list(texts)
        return [one(t) for t in texts if t != ""]
    parse.is_list = True
    parse.canonical = lambda values: [format_func(v) for v in values]
    return parse


# ----------------------------------------------------------------------------- reading a link
#: the longest ``data`` text read: a dataset spec is a small JSON object (a few hundred characters);
#: longer is not a spec, and a cap keeps a made-up link from costing the server anything
MAX_DATA_TEXT = 4096
#: the longest part of a refused text quoted back in a warning
QUOTE_CHARS = 60


def _quote(text) -> str:
    text = str(text)
    return repr(text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "…")


def parse_data_spec(text) -> dict:
    """The dataset spec of a link's ``data`` text: a flat JSON object with a ``kind``, whose values are
    numbers, strings, true/false/null or lists of those. ValueError in words otherwise — never a
    RecursionError (deeply nested JSON) or a TypeError. The spec's parameters are checked by dpcore
    when it is loaded (:func:`ui.common.dataset_from_spec`)."""
    if not isinstance(text, str):
        raise ValueError("the dataset spec must be text (one 'data' parameter)")
    if len(text) > MAX_DATA_TEXT:
        raise ValueError(f"a dataset spec is a short JSON object; this one has {len(text):,} characters "
                         f"(at most {MAX_DATA_TEXT:,})")
    try:
        spec = json.loads(text)
    except RecursionError:
        raise ValueError("not a dataset spec: the JSON is nested too deeply") from None
    except ValueError as exc:            # json.JSONDecodeError, and integers of more digits than Python reads
        where = f" at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
        raise ValueError(f"not valid JSON{where}: {getattr(exc, 'msg', 'a number too long to read')}") from None
    if not isinstance(spec, dict):
        raise ValueError('not a dataset spec: expected a JSON object such as {"kind": "gaussians", "n": 500}; got '
                         f"{type(spec).__name__ if spec is not None else 'null'}")
    if not isinstance(spec.get("kind"), str):
        raise ValueError("a dataset spec needs its 'kind' (a text such as \"gaussians\")")
    for key, value in spec.items():
        items = value if isinstance(value, list) else [value]
        if isinstance(value, dict) or any(isinstance(v, (dict, list)) for v in items):
            raise ValueError(f"the dataset parameter {_quote(key)} holds "
                             f"{'an object' if isinstance(value, dict) else 'a nested list'}; a spec's values are "
                             "numbers, texts, true/false or lists of numbers")
    return spec


@dataclass
class LinkReading:
    """What :func:`read_link` made of a link: the dataset ``spec`` (None when the link has none or it
    was refused), the accepted fields' ``values`` by key, the ``canonical`` texts to write back (a
    label where the link gave an option's key or number), the ``rejected`` parameters as
    ``(key, reason)`` (an unknown key's reason is :data:`UNKNOWN_KEY`), and for a list parameter
    whose other entries were kept, its ``partial`` refusals. Every parameter of the link is in
    exactly one of spec (``data``), values, rejected and partial: none is dropped without a word."""
    spec: dict | None = None
    values: dict = field(default_factory=dict)
    canonical: dict = field(default_factory=dict)
    rejected: list = field(default_factory=list)
    partial: list = field(default_factory=list)

    def warning(self) -> str | None:
        """The page's warning naming every refused parameter, or None."""
        parts = [f"{key} ({reason})" for key, reason in self.rejected + self.partial]
        if not parts:
            return None
        return ("Ignored link parameters that this page cannot use: " + "; ".join(parts)
                + ". The other settings of the link were applied.")


UNKNOWN_KEY = "no setting of this page has this name"


def read_link(params: dict, fields: dict, load_spec: Callable[[dict], Any] | None = None) -> LinkReading:
    """Check a link without Streamlit: ``params`` maps each parameter to its list of texts (a
    repeated parameter has several), ``fields`` the page's parsers (:func:`check_link`; the
    "reproducible" boxes of seed fields are added here). The ``data`` spec is read by
    :func:`parse_data_spec` and, with ``load_spec`` (e.g. :func:`ui.common.dataset_from_spec`),
    loaded, which runs dpcore's checks (an upload spec is first checked for its form,
    :func:`check_upload_spec`: the file is not in the link). A parameter no field knows is
    rejected as unknown. Never raises for any text in ``params``."""
    fields = _with_repro(fields)
    out = LinkReading()

    def first(key):
        texts = params[key]
        return texts[-1] if texts else ""        # st.query_params[key] is the last of a repeated parameter

    if DATA_PARAM in params:
        try:
            spec = parse_data_spec(first(DATA_PARAM))
            if is_upload_spec(spec):
                check_upload_spec(spec)
            if load_spec is not None:
                load_spec(spec)                  # ValueError on bad parameters or a too large dataset
            out.spec = spec
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            out.rejected.append((DATA_PARAM, _reason(exc)))
    for key in params:
        if key == DATA_PARAM:
            continue
        parse = fields.get(key)
        if parse is None:
            out.rejected.append((key, UNKNOWN_KEY))
            continue
        try:
            repro = key[: -len(SEED_SUFFIX)] + REPRO_SUFFIX
            if key.endswith(SEED_SUFFIX) and (first(repro) if repro in params else "").lower() != "true":
                raise ValueError("a seed is used only with \"reproducible (noise public)\" ticked")
            canonical = getattr(parse, "canonical", None)
            if getattr(parse, "is_list", False):
                texts = list(params[key])
                try:
                    values = parse(texts)
                except (ValueError, TypeError, OverflowError):
                    bad = _bad_list_entries(texts, parse)
                    if not 0 < len(bad) < len(texts):
                        raise
                    # a multiselect keeps the options it knows: say which were dropped, keep the rest
                    out.partial.append((key, f"the values {', '.join(map(_quote, bad))}; the others were kept"))
                    continue
                out.values[key] = values
                if canonical is not None and canonical(values) != texts:
                    out.canonical[key] = canonical(values)        # as the widget reads them
                continue
            text = first(key)
            value = parse(text)
            out.values[key] = value
            if canonical is not None and canonical(value) != text:
                out.canonical[key] = canonical(value)             # a key or a number given another way: the label
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            out.rejected.append((key, _reason(exc)))
    return out


def _reason(exc) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "…"


# ----------------------------------------------------------------------------- URL state
def _with_repro(fields: dict) -> dict:
    """``fields`` plus the "reproducible" box of every seed field (``p_seed`` -> ``p_repro``)."""
    out = dict(fields)
    for key in fields:
        if key.endswith(SEED_SUFFIX):
            out.setdefault(key[: -len(SEED_SUFFIX)] + REPRO_SUFFIX, as_bool)
    return out


def _drop_link_parameter(key: str) -> None:
    """Remove ``key`` from the URL and from the snapshot of the URL at page load, which is what
    Streamlit seeds bound widgets from. Removing it from ``st.query_params`` alone is not enough:
    a bound whole-number input would still be seeded from ``?k=inf`` and raise OverflowError
    (Streamlit 1.67 catches only ValueError, TypeError and IndexError there). The snapshot is
    internal to Streamlit (``QueryParams.set_initial_query_params_from_current``, the call
    Streamlit itself makes after a page switch); if a later version moves it, the link check
    still warns, and the widget falls back to Streamlit's own handling."""
    del st.query_params[key]
    _reseed_widgets()


def _set_link_parameter(key: str, value) -> None:
    """Write ``value`` (a label, or a list of labels) for ``key`` into the URL and into the snapshot
    bound widgets are seeded from (see :func:`_drop_link_parameter`)."""
    st.query_params[key] = value
    _reseed_widgets()


def _reseed_widgets() -> None:
    try:
        from streamlit.runtime.state import get_session_state

        with get_session_state().query_params() as qp:
            qp.set_initial_query_params_from_current()
    except (ImportError, AttributeError):      # another Streamlit layout
        pass


def _bad_list_entries(texts, parse) -> list:
    """The entries of a list parameter that ``parse`` refuses one by one."""
    bad = []
    for text in texts:
        try:
            parse([text])
        except (ValueError, TypeError, OverflowError):
            bad.append(text)
    return bad


def check_link(page: str, fields: dict[str, Callable[[str], Any]]) -> None:
    """On the first run of ``page`` in this session, check the link: the dataset spec
    (parameter ``data``, which no widget holds) is validated — including the size cap of
    :func:`dpcore.data.check_dataset_size` — and made the current dataset; every widget
    parameter is checked with its field's parser; a parameter that no field has is unknown.
    Rejected and unknown parameters are removed from the URL (before the widgets bind to it) and
    named in one warning (:func:`read_link` decides). Call before the widgets are drawn; the
    widgets themselves read their values from the URL (``bind="query-params"``)."""
    flag = _LOADED + page
    fields = _with_repro(fields)
    if _restore_pending_link(page):      # its file is now uploaded: check the link as if opened again
        st.session_state.pop(flag, None)
    if st.session_state.get(flag):
        pending_upload_box(page)
        return
    st.session_state[flag] = True
    params = {key: st.query_params.get_all(key) for key in st.query_params}
    reading = read_link(params, fields, load_spec=_load_link_spec)
    spec = reading.spec
    if spec is not None and is_upload_spec(spec) and not upload_in_session(spec):
        unknown = [(key, why) for key, why in reading.rejected if why == UNKNOWN_KEY]
        for key, _ in unknown:
            _drop_link_parameter(key)
        if unknown:
            st.warning(LinkReading(rejected=unknown).warning())
        _hold_link(page, spec, fields)      # the settings wait for the file (checked once it is uploaded)
        pending_upload_box(page)
        return
    if spec is not None:
        st.session_state[DATASET_KEY] = {"spec": spec}
    for key, _ in reading.rejected:
        _drop_link_parameter(key)
    for key, text in reading.canonical.items():
        _set_link_parameter(key, text)
    warning = reading.warning()
    if warning:
        st.warning(warning)
    applied = st.session_state.pop(_LINK_APPLIED + page, None)
    if applied is not None:
        kept = [k for k in applied["keys"] if k in st.query_params]
        st.success(f"{applied['name']} is loaded, as the link asks"
                   + (f"; the link's settings were applied: {_settings_text(kept)}." if kept else "."))
    pending_upload_box(page)         # a link of another page waiting for its file (on the Data page)


def _load_link_spec(spec) -> None:
    """Load a link's dataset spec (dpcore's checks); an upload this session does not hold waits for its file."""
    if is_upload_spec(spec) and not upload_in_session(spec):
        return
    dataset_from_spec(spec)


# ----------------------------------------------------------------------------- links on uploads
def _settings_text(keys, params=None) -> str:
    """``key = value`` of the link's settings ``keys`` (from ``params``, else the URL)."""
    source = params if params is not None else {k: st.query_params.get_all(k) for k in keys}
    return ", ".join(f"{k} = {', '.join(source[k])}" for k in keys)


def _hold_link(page, spec, fields) -> None:
    """Keep the link's settings (the parameters of ``fields``) and its upload ``spec`` pending in
    the session, and take them out of the URL, so that no widget takes them before the file is there."""
    params = st.query_params
    held = {key: params.get_all(key) for key in fields if key in params}
    st.session_state[PENDING_LINK_KEY] = {"page": page, "spec": spec, "params": held}
    for key in [*held, DATA_PARAM]:
        _unbind(key)
        del st.query_params[key]
    _reseed_widgets()


def _unbind(key: str) -> None:
    """Release the URL parameter ``key`` from the widget bound to it in an earlier run (Streamlit
    refuses to set a bound parameter; the widget binds again when it is drawn). Internal to
    Streamlit, as :func:`_reseed_widgets`; another layout leaves the binding (and setting fails)."""
    try:
        from streamlit.runtime.state import get_session_state

        with get_session_state().query_params() as qp:
            binding = qp.get_binding_for_param(key)
            if binding is not None:
                qp.unbind_widget(binding.widget_id)
    except (ImportError, AttributeError):      # another Streamlit layout
        pass


#: the parameters of an upload's spec (dpcore.upload.load_upload's ``Dataset.params``)
UPLOAD_SPEC_KEYS = frozenset({"kind", "name", "sha256", "data_kind", "labels", "transpose", "norm", "subspace_dim"})


def check_upload_spec(spec) -> None:
    """ValueError unless ``spec`` names a file (name, SHA-256) and valid read options."""
    from dpcore.upload import DATA_KINDS, LABEL_MODES, NORMS

    sha = spec.get("sha256")
    if not isinstance(spec.get("name"), str) or not spec["name"].strip() or not isinstance(sha, str) \
            or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise ValueError("an uploaded file's spec needs its 'name' and its 'sha256' (64 hex digits)")
    extra = [key for key in spec if key not in UPLOAD_SPEC_KEYS]
    if extra:     # such a spec would never match the file once uploaded: the link would wait for ever
        raise ValueError(f"an uploaded file's spec has no parameter {', '.join(map(_quote, extra))} (its parameters: "
                         f"{', '.join(sorted(UPLOAD_SPEC_KEYS))})")
    if not isinstance(spec.get("transpose", False), bool):
        raise ValueError(f"the uploaded file's 'transpose' must be true or false; got {_quote(spec['transpose'])}")
    q = spec.get("subspace_dim")
    if q is not None and (isinstance(q, bool) or not isinstance(q, int) or q < 1):
        raise ValueError(f"the uploaded file's 'subspace_dim' (subspace dimension q) must be a whole number ≥ 1; "
                         f"got {_quote(q)}")
    o = _read_options(spec)
    if o["kind"] not in DATA_KINDS or o["labels"] not in LABEL_MODES or o["norm"] not in NORMS:
        raise ValueError(f"the read options of the uploaded file {spec['name']!r} are not valid (data_kind "
                         f"{o['kind']!r}, labels {o['labels']!r}, norm {o['norm']!r})")


def _read_options(spec) -> dict:
    """The :func:`dpcore.upload.load_upload` options of an upload spec."""
    options = {"kind": spec.get("data_kind", "points"), "labels": spec.get("labels", "none"),
               "transpose": bool(spec.get("transpose", False)), "norm": spec.get("norm", "none")}
    if spec.get("subspace_dim"):
        options["subspace_dim"] = spec["subspace_dim"]
    return options


def _options_text(spec) -> str:
    o = _read_options(spec)
    words = [o["kind"], "last column = class label" if o["labels"] == "last_column" else "no label column",
             f"norm: {o['norm']}"] + (["transposed"] if o["transpose"] else [])
    if "subspace_dim" in o:
        words.append(f"q = {o['subspace_dim']}")
    return ", ".join(words)


def link_upload_options(data: bytes, options: dict) -> dict:
    """The options to read an uploaded file with: ``options`` (the Data page's form), or the
    pending link's read options when ``data`` is the file that link names (same SHA-256), so
    that the link's settings then apply. Says so when they differ from ``options``."""
    pending = st.session_state.get(PENDING_LINK_KEY)
    if not pending or hashlib.sha256(data).hexdigest() != pending["spec"].get("sha256"):
        return options
    link = _read_options(pending["spec"])
    if link != {k: options.get(k) for k in link}:
        st.info(f"This is the file of the link you opened: read as the link says ({_options_text(pending['spec'])}).")
    return link


def _take_link_file(name: str, data: bytes) -> bool:
    """Load the pending link's file (its read options); an error box when it is another file."""
    spec = st.session_state[PENDING_LINK_KEY]["spec"]
    sha = hashlib.sha256(data).hexdigest()
    if sha != spec["sha256"]:
        st.error(f"{name} is not the file of the link: its contents differ (SHA-256 {sha[:12]}…, the link's "
                 f"{spec['name']} has {spec['sha256'][:12]}…). Upload the file the link was made on, or load this "
                 "one on the Data page (the link's settings are then not applied).")
        return False
    return set_upload(name, data, **_read_options(spec)) is not None    # else set_upload showed dpcore's words


def _forget_link() -> None:
    st.session_state.pop(PENDING_LINK_KEY, None)


def pending_upload_box(page: str) -> None:
    """On the pending link's page and on the Data page: what the link needs (its file) and what
    happens then, with an uploader; after the upload on the Data page, where to go."""
    pending = st.session_state.get(PENDING_LINK_KEY)
    if not pending or page not in (pending["page"], "data"):
        return
    spec, held, target = pending["spec"], pending["params"], pending["page"]
    title = PAGE_TITLES.get(target, target)
    where = "" if target == page else f" on the {title} page"
    what = f"the link's settings ({_settings_text(list(held), held)})" if held else "the link's dataset"
    if _held_upload(spec) is not None:    # uploaded here or with the Data page's form
        st.info(f"{spec['name']} is loaded, read as the link says ({_options_text(spec)}). Open the {title} page: "
                f"{what} will be applied there.")
        return
    settings = f"{what} will then be {'applied' if held else 'loaded'}{where}"
    with st.container(border=True):
        st.warning(f"This link used an uploaded file ({spec['name']}). Upload it here; {settings}. It is read as "
                   f"the link says ({_options_text(spec)}). Until then this page shows another dataset.")
        file = st.file_uploader("the link's file", key=LINK_UPLOAD_KEY, help="A link cannot carry a file: upload "
                                f"the file {spec['name']} (SHA-256 {spec['sha256'][:12]}…) the link was made on.")
        st.button("Forget the link", key="link_upload_forget", on_click=_forget_link,
                  help="Keep this page as it is; the link's settings are dropped.")
    if file is not None and _take_link_file(file.name, file.getvalue()):
        st.rerun()                        # the next run applies the link (check_link) without this box


def _restore_pending_link(page: str) -> bool:
    """When the pending link of ``page`` has its file in this session: put its settings back into
    the URL and the snapshot widgets are seeded from, and drop the widgets' values, so that they
    take the link's values as on a first open. Returns whether it did (the link is then checked)."""
    pending = st.session_state.get(PENDING_LINK_KEY)
    spec = _held_upload(pending["spec"]) if pending and pending["page"] == page else None
    if spec is None:
        return False
    st.session_state.pop(PENDING_LINK_KEY)
    st.query_params[DATA_PARAM] = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    for key, texts in pending["params"].items():
        _unbind(key)
        st.query_params[key] = texts if len(texts) > 1 else texts[0]
        if key in st.session_state:
            del st.session_state[key]      # a widget seeds from the link only when it has no value
    _reseed_widgets()
    st.session_state[_LINK_APPLIED + page] = {"name": spec["name"], "keys": list(pending["params"])}
    return True


def _held_upload(spec):
    """The spec of this session's upload of the same file (SHA-256) read the same way as the link's
    ``spec`` (the file's name may differ), or None."""
    if upload_in_session(spec):
        return spec
    same = {k: v for k, v in spec.items() if k != "name"}
    for ds in st.session_state.get(UPLOADS_KEY, {}).values():
        if {k: v for k, v in ds.params.items() if k != "name"} == same:
            return dict(ds.params)
    return None


def publish_url() -> None:
    """Put the current dataset's spec into the URL (parameter ``data``); the widgets publish
    their own values (``bind="query-params"``). An uploaded dataset cannot travel in a link:
    its spec (file name and hash) is published all the same, so that a link opened in another
    session says which file to upload instead of silently showing another dataset."""
    spec = st.session_state.get(DATASET_KEY, {}).get("spec")
    text = None if spec is None else json.dumps(spec, sort_keys=True, separators=(",", ":"))
    if text is not None and st.query_params.get(DATA_PARAM) != text:
        st.query_params[DATA_PARAM] = text


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
