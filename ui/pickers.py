"""The dataset picker of the pages that choose their own data (Co-clustering, k-means): the
Data page's dataset when its kind fits, a synthetic generator with its parameters, Yale B,
or one of the seven CLUTO matrices. One home, so both pages offer the same choices the same
way.

Limits and links. Each generator input's limits are defined once here (:data:`GAUSSIAN_LIMITS`,
:data:`BLOCK_LIMITS`, all inside :data:`dpcore.data.GENERATOR_LIMITS`); a page that puts the
picker's inputs into its link merges :func:`picker_url_fields` into its ``URL_FIELDS`` (the
same numbers as parsers) and passes ``url_fields=URL_FIELDS`` to :func:`dataset_picker`, which
then binds those inputs to the URL. A dataset whose n × d is above
:data:`dpcore.data.MAX_GENERATED_CELLS` is refused by dpcore when it is built (the page shows
the error).

Keyed inputs whose default depends on the dataset (the Data page's form, the k-means page's
projection dimension) take it through :func:`follow_default`: a keyed widget keeps its value
when its default changes, an unkeyed one is reset.

The subspace dimension q of an upload (:func:`upload_subspace_dim`, on the Data page): the
public default from the shape only, and a suggestion read off the data, labelled not private,
that one click makes the upload's q on every page (see dpcore.defaults for the decision). The
suggestion's k-plane fits use the pages' default k capped at n (:func:`suggestion_clusters`), and
:func:`suggested_subspace_dim` returns the reason instead of raising, so that no upload makes the
Data page fail on every visit."""
from __future__ import annotations

import json

import streamlit as st

from dpcore.data import CLUTO_NAMES, GENERATOR_LIMITS, MAX_DATA_SEED, MAX_GENERATED_CELLS, PAPER_SPECS
from dpcore.defaults import default_n_clusters, default_subspace_dim, public_upload_subspace_dim
from dpcore.upload import suggest_subspace_dim, upload_key, with_subspace_dim
from ui.common import dataset_from_spec, is_upload_spec, number_input, store_upload
from ui.share import as_float, as_int

#: limits of the Gaussian mixture's inputs (points n, dimension d, components, σ, data seed)
GAUSSIAN_LIMITS = {"n": (10, 200_000), "d": (1, 2000), "comp": (1, 200), "sigma": (0.0, 10.0),
                   "dseed": (0, MAX_DATA_SEED)}
#: limits of the block matrix's inputs (rows, columns, row and column clusters, signal, noise)
BLOCK_LIMITS = {"rows": (2, 20_000), "cols": (2, 20_000), "bk": (1, 50), "bl": (1, 50), "signal": (0.0, 100.0),
                "noise": (0.0, 100.0)}
CAP_HELP = f" The dataset may have at most {MAX_GENERATED_CELLS:,} cells (n × d)."
CURRENT_LABEL = "current dataset (from the Data page)"


def follow_default(key, default):
    """Set the keyed widget ``key`` to ``default`` when it is drawn anew (not drawn in the
    previous run) or when ``default`` differs from the last run's: what an unkeyed widget does
    (its identity includes its default), which a keyed one does not (Streamlit identifies it
    by its key alone). Call before drawing the widget, and draw it WITHOUT a default value
    (Streamlit's rule: a keyed widget gets its value from its default or from the session
    state, not both). The write goes through the session state, so the browser shows it too.
    Not for widgets bound to the URL (their default decides what a link leaves out)."""
    mark = f"_default_of_{key}"
    if key not in st.session_state or st.session_state.get(mark) != default:
        st.session_state[key] = default
    st.session_state[mark] = default


def _bind(key, url_fields):
    """``bind="query-params"`` for an input the page puts into its link."""
    return {"bind": "query-params"} if url_fields and key in url_fields else {}


class GeneratorInputs:
    """The Data page's inputs of one generator ``kind``: each keyed ``data_<kind>_<name>``, starting
    at the current dataset's value when it is of this kind (``spec``), else at the default, and
    following that value when it changes (:func:`follow_default`)."""

    def __init__(self, kind, spec):
        self.kind, self.spec, self.same = kind, spec, spec["kind"] == kind

    def prev(self, name, default):
        """The current dataset's value of a parameter when it is of this kind, else ``default``."""
        return self.spec.get(name, default) if self.same else default

    def key(self, name, value):
        """The key of parameter ``name``'s input, set to ``value`` when the input is new or ``value`` changed."""
        key = f"data_{self.kind}_{name}"
        follow_default(key, value)
        return key

    def number(self, col, label, name, default, help, **kw):
        """A number input of a generator parameter, limits from dpcore.data.GENERATOR_LIMITS."""
        lo, hi = GENERATOR_LIMITS[self.kind][name]
        span = f"{lo:,} to {hi:,}" if isinstance(lo, int) else f"{lo:g} to {hi:g}"
        return number_input(col, label, lo, hi, key=self.key(name, type(lo)(self.prev(name, default))),
                                help=f"{help} Allowed: {span}.", **kw)

    def seed(self, col, help="Random seed of the generator."):
        """The generator's seed input."""
        return int(number_input(col, "seed", 0, MAX_DATA_SEED,
                                    key=self.key("random_state", int(self.prev("random_state", 0))), help=help))


def _number(col, label, key, limits, value, help, url_fields, **kw):
    lo, hi = limits
    return number_input(col, label, lo, hi, value, key=key, help=help, **_bind(key, url_fields), **kw)


def _blocks_params(key, default, url_fields=None):
    """Widgets of a synthetic block count matrix (inside an expander); returns its spec."""
    L = BLOCK_LIMITS
    with st.expander("Block matrix parameters", expanded=False):
        c1, c2, c3 = st.columns(3)
        return dict(
            kind="blocks",
            n_rows=int(_number(c1, "rows", f"{key}_rows", L["rows"], default["n_rows"],
                               "Number of rows (documents)." + CAP_HELP.replace("n × d", "rows × columns"),
                               url_fields)),
            n_cols=int(_number(c2, "columns", f"{key}_cols", L["cols"], default["n_cols"],
                               "Number of columns (terms).", url_fields)),
            k=int(_number(c3, "row clusters k", f"{key}_bk", L["bk"], default["k"], "True number of row clusters.",
                          url_fields)),
            l=int(_number(c1, "column clusters l", f"{key}_bl", L["bl"], default["l"],
                          "True number of column clusters.", url_fields)),
            signal=float(_number(c2, "signal", f"{key}_signal", L["signal"], default["signal"],
                                 "Extra Poisson rate inside a co-cluster.", url_fields)),
            noise=float(_number(c3, "noise", f"{key}_noise", L["noise"], default["noise"], "Poisson rate everywhere.",
                                url_fields)),
            random_state=default["random_state"])


def _gaussians_params(key, default, url_fields=None):
    """Widgets of a Gaussian mixture (inside an expander); returns its spec."""
    L = GAUSSIAN_LIMITS
    with st.expander("Gaussian mixture parameters", expanded=False):
        c1, c2, c3 = st.columns(3)
        return dict(
            kind="gaussians",
            n=int(_number(c1, "points n", f"{key}_n", L["n"], default["n"], "Number of points." + CAP_HELP,
                          url_fields)),
            d=int(_number(c2, "dimension d", f"{key}_d", L["d"], default["d"], "Dimension of the space." + CAP_HELP,
                          url_fields)),
            k=int(_number(c3, "components", f"{key}_comp", L["comp"], default["k"], "Number of Gaussian components.",
                          url_fields)),
            sigma=float(_number(c1, "component σ", f"{key}_sigma", L["sigma"], default["sigma"],
                                "Standard deviation of every component.", url_fields, step=0.01, format="%.3f")),
            center_box=default["center_box"],
            random_state=int(_number(c2, "data seed", f"{key}_dseed", L["dseed"], default["random_state"],
                                     "Seed of the generator (the data, not the method's noise).", url_fields)))


#: data kind -> (the Data page kinds that fit, {choice: (label, spec or widget function)}, CLUTO label)
PICKERS = {
    "counts": ({"cluto", "blocks"},
               {"blocks": ("synthetic block matrix", _blocks_params)},
               "CLUTO {name}"),
    "points": ({"gaussians", "yaleb", "subspaces", "digits"},
               {"gaussians": ("Gaussian mixture", _gaussians_params),
                "yaleb": ("Extended Yale B faces (rows of unit norm)", PAPER_SPECS["yaleb_5"]),
                "digits": ("handwritten digits (scikit-learn, 8×8)", PAPER_SPECS["digits"])},
               "CLUTO {name} (L2-normalised rows)"),
}


def _choice_parser(data_kind):
    """Parser of the picker's selectbox in a link, which Streamlit writes as the option's label
    (the "current" label ends with the dataset's name, so only its start is compared)."""
    _, generators, cluto_label = PICKERS[data_kind]
    labels = {label: name for name, (label, _) in generators.items()}
    labels.update({cluto_label.format(name=name): name for name in CLUTO_NAMES})

    def parse(text):
        if text.startswith(CURRENT_LABEL):
            return "current"
        if text in labels:
            return labels[text]
        raise ValueError(f"{text!r} is not one of the datasets offered")
    return parse


def picker_url_fields(key, data_kind, prefix) -> dict:
    """The link parsers of a picker's inputs (its selectbox ``key`` and the generator inputs of
    ``prefix``), with the same limits as the inputs; merge them into the page's URL_FIELDS."""
    fields = {key: _choice_parser(data_kind)}
    limits = BLOCK_LIMITS if data_kind == "counts" else GAUSSIAN_LIMITS
    for name, (lo, hi) in limits.items():
        fields[f"{prefix}_{name}"] = as_int(lo, hi) if isinstance(lo, int) else as_float(lo, hi)
    return fields


def dataset_picker(key, data_kind, current_spec, help, prefix, url_fields=None):
    """A selectbox (widget ``key``) of the datasets a page can use; returns the chosen spec.

    ``data_kind`` is "counts" or "points"; ``current_spec`` the Data page's spec, offered as
    "current" when its kind fits (an upload when its data kind does); ``prefix`` starts the
    keys of the generator's parameter widgets. The selectbox and the inputs whose keys are in
    ``url_fields`` (the page's URL_FIELDS) are bound to the URL."""
    kinds, generators, cluto_label = PICKERS[data_kind]
    choices = {}
    upload_fits = is_upload_spec(current_spec) and current_spec.get("data_kind") == data_kind
    if current_spec.get("kind") in kinds or upload_fits:
        choices["current"] = f"{CURRENT_LABEL}: {dataset_from_spec(current_spec).name}"
    for name, (label, _) in generators.items():
        choices[name] = label
    for name in CLUTO_NAMES:
        choices[name] = cluto_label.format(name=name)
    if st.session_state.get(key) not in choices:       # e.g. "current" from a link, on data of another kind
        st.session_state.pop(key, None)
    choice = st.selectbox("Count matrix" if data_kind == "counts" else "Dataset", list(choices),
                          format_func=choices.get, key=key, help=help, **_bind(key, url_fields))
    if choice == "current":
        return dict(current_spec)
    if choice in generators:
        source = generators[choice][1]
        return dict(source) if isinstance(source, dict) else source(prefix, PAPER_SPECS[choice], url_fields)
    return {"kind": "cluto", "name": choice}


# ----------------------------------------------------------------------------- q of an upload
SUGGESTIONS_KEY = "_q_suggestions"     # upload (without its q) -> the q read off the data
Q_HELP = ("q is a hyperparameter of the private methods, so a q chosen by looking at the data is itself a release "
          "about the data that no private method accounts for. Hence two numbers. The default is public: from the "
          "number of columns d only, q = min(3, ⌊d/2⌋) — two subspaces of dimension above d/2 always share a line "
          "(they meet in ≥ 2q − d dimensions), so clusters of that dimension cannot be told apart along it. The "
          "suggestion is read off the data (NOT private): k-plane (k = the pages' default k, at most n) is fitted for "
          "q = 1, 2, …; its residual per left-out dimension falls steeply until q reaches the data's own "
          "dimension, then only noise is removed, at a steady rate; the suggestion is the q of the largest fall. "
          "On two_planes.csv (two planes in R^5) both give 2: the residual falls from 31 % of the energy at q = 1 "
          "to 0.1 % at q = 2, and q = 3 would make every pair of planes share a line.")


def suggestion_clusters(ds) -> int:
    """k of the k-plane fits behind the suggested q: the pages' default k, at most n (a 2-row
    upload has the default k = 3 > n, which k-plane refuses)."""
    return max(1, min(default_n_clusters(ds), ds.n))


def suggested_subspace_dim(ds):
    """The q read off the uploaded points ``ds`` (:func:`dpcore.upload.suggest_subspace_dim`
    with k = :func:`suggestion_clusters`), or the reason, a string, when none can be read
    (never an exception: the Data page calls it on every visit). No Streamlit here."""
    try:
        return suggest_subspace_dim(ds.X, suggestion_clusters(ds))
    except ValueError as exc:
        return f"no q could be read off these data ({exc})"


def _suggested_q(ds):
    """:func:`suggested_subspace_dim` of ``ds``, computed once per upload in the session."""
    base = upload_key(with_subspace_dim(ds, None).params)
    cache = st.session_state.setdefault(SUGGESTIONS_KEY, {})
    if base not in cache:
        with st.spinner("Reading a q off the data (k-plane for q = 1, 2, …)…"):
            cache[base] = suggested_subspace_dim(ds)
    return cache[base]


def _use_q(ds, q) -> None:
    """Make the upload with q fixed (None: the public default) the current dataset; the pages'
    q widgets follow it (their default is dpcore.defaults.default_subspace_dim)."""
    store_upload(with_subspace_dim(ds, q))     # the file is not read again: the data are shared


def upload_subspace_dim(ds) -> None:
    """The Data page's "subspace dimension q" of an uploaded dataset of points: the q the pages
    default to and why, the suggestion read off the data (not private) and a button to use it
    (or to go back to the public default)."""
    if not is_upload_spec(ds.params) or ds.kind != "points" or ds.d < 2:
        return
    q, public, fixed = default_subspace_dim(ds), public_upload_subspace_dim(ds.d), ds.params.get("subspace_dim")
    suggested = _suggested_q(ds)
    st.markdown(f"**Subspace dimension q** of the Cluster, Gibbs and Privacy–utility pages: **{q}**", help=Q_HELP)
    if fixed:
        st.caption(f"q = {q} was read off the data: NOT private. The public default is {public} "
                   f"(min(3, ⌊d/2⌋), d = {ds.d}).")
        st.button(f"Back to the public default q = {public}", key="data_upload_q_public", on_click=_use_q,
                  args=(ds, None), help=Q_HELP)
        return
    if isinstance(suggested, str):          # nothing read off the data: the reason, and the public default stays
        st.caption(f"Public default, from the shape only: min(3, ⌊d/2⌋) with d = {ds.d}. Read off the data: "
                   f"{suggested}.")
        return
    st.caption(f"Public default, from the shape only: min(3, ⌊d/2⌋) with d = {ds.d}. Read off the data "
               f"(not private): q = {suggested}" + (" — the same." if suggested == q else "."))
    if suggested != q:
        st.button(f"Use q = {suggested} (read off the data: not private)", key="data_upload_q_use", on_click=_use_q,
                  args=(ds, suggested), help=Q_HELP)


#: the Data page's form: dpcore's parameter names whose field is labelled otherwise, by dataset type
#: (ui.common.in_user_words): a refusal
#: of the form's values names the field the user typed in. Names whose label already shows them (n, d, k, q) stay.
DATA_FIELD_LABELS = {
    "subspaces": {"sigma": "noise σ", "random_state": "seed"},
    "gaussians": {"sigma": "component σ", "center_box": "centre box", "random_state": "seed"},
    "yaleb": {"n_per_subject": "images per subject", "pca_dim": "per-subject PCA dimension", "normalize": "norm bound",
              "random_state": "seed"},
    "blocks": {"n_rows": "rows", "n_cols": "columns", "k": "row clusters", "l": "column clusters",
               "signal": "block signal", "noise": "background rate", "random_state": "seed"},
}


def _draw_points(ds):
    from dpcore.plots.data import projection_scatter
    return projection_scatter(ds.X, ds.labels, subspace_sets={"true subspaces": ds.subspaces},
                              center_sets={"true centres": ds.centers}, label_name="class")


@st.cache_resource(max_entries=16, show_spinner=False)
def _points_figure(spec_json: str):
    return _draw_points(dataset_from_spec(json.loads(spec_json)))


def points_figure(ds, spec):
    """The Data page's figure of the points (:func:`dpcore.plots.data.projection_scatter` with the
    true subspaces and centres), built once per dataset spec and shared by the sessions (plotly
    takes ~0.1 s to build it, holding the GIL: twice per student per visit in a class); an upload
    (held by its session) is drawn afresh. Shared figures are only drawn, never changed."""
    return _draw_points(ds) if is_upload_spec(spec) else _points_figure(json.dumps(spec, sort_keys=True))
