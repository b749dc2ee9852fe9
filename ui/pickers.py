"""The dataset picker of the pages that choose their own data (Co-clustering, k-means): the
Data page's dataset when its kind fits, a synthetic generator with its parameters, Yale B,
or one of the seven CLUTO matrices. One home, so both pages offer the same choices the same
way."""
from __future__ import annotations

import streamlit as st

from dpcore.data import CLUTO_NAMES, PAPER_SPECS
from ui.common import dataset_from_spec, is_upload_spec


def _blocks_params(key, default):
    """Widgets of a synthetic block count matrix (inside an expander); returns its spec."""
    with st.expander("Block matrix parameters", expanded=False):
        c1, c2, c3 = st.columns(3)
        return dict(
            kind="blocks",
            n_rows=int(c1.number_input("rows", 2, 20_000, default["n_rows"], key=f"{key}_rows",
                                       help="Number of rows (documents).")),
            n_cols=int(c2.number_input("columns", 2, 20_000, default["n_cols"], key=f"{key}_cols",
                                       help="Number of columns (terms).")),
            k=int(c3.number_input("row clusters k", 1, 50, default["k"], key=f"{key}_bk",
                                  help="True number of row clusters.")),
            l=int(c1.number_input("column clusters l", 1, 50, default["l"], key=f"{key}_bl",
                                  help="True number of column clusters.")),
            signal=float(c2.number_input("signal", 0.0, 100.0, default["signal"], key=f"{key}_signal",
                                         help="Extra Poisson rate inside a co-cluster.")),
            noise=float(c3.number_input("noise", 0.0, 100.0, default["noise"], key=f"{key}_noise",
                                        help="Poisson rate everywhere.")),
            random_state=default["random_state"])


def _gaussians_params(key, default):
    """Widgets of a Gaussian mixture (inside an expander); returns its spec."""
    with st.expander("Gaussian mixture parameters", expanded=False):
        c1, c2, c3 = st.columns(3)
        return dict(
            kind="gaussians",
            n=int(c1.number_input("points n", 10, 200_000, default["n"], key=f"{key}_n", help="Number of points.")),
            d=int(c2.number_input("dimension d", 1, 2000, default["d"], key=f"{key}_d", help="Dimension of the space.")),
            k=int(c3.number_input("components", 1, 200, default["k"], key=f"{key}_comp",
                                  help="Number of Gaussian components.")),
            sigma=float(c1.number_input("component σ", 0.0, 10.0, default["sigma"], step=0.01, format="%.3f",
                                        key=f"{key}_sigma", help="Standard deviation of every component.")),
            center_box=default["center_box"],
            random_state=int(c2.number_input("data seed", 0, 2**31 - 1, default["random_state"], key=f"{key}_dseed",
                                             help="Seed of the generator (the data, not the method's noise).")))


#: data kind -> (the Data page kinds that fit, {choice: (label, spec or widget function)}, CLUTO label)
PICKERS = {
    "counts": ({"cluto", "blocks"},
               {"blocks": ("synthetic block matrix", _blocks_params)},
               "CLUTO {name}"),
    "points": ({"gaussians", "yaleb", "subspaces"},
               {"gaussians": ("Gaussian mixture", _gaussians_params),
                "yaleb": ("Extended Yale B faces (rows of unit norm)", PAPER_SPECS["yaleb_5"])},
               "CLUTO {name} (L2-normalised rows)"),
}


def dataset_picker(key, data_kind, current_spec, help, prefix):
    """A selectbox (widget ``key``) of the datasets a page can use; returns the chosen spec.

    ``data_kind`` is "counts" or "points"; ``current_spec`` the Data page's spec, offered as
    "current" when its kind fits (an upload when its data kind does); ``prefix`` starts the
    keys of the generator's parameter widgets (they travel in the page's link)."""
    kinds, generators, cluto_label = PICKERS[data_kind]
    choices = {}
    upload_fits = is_upload_spec(current_spec) and current_spec.get("data_kind") == data_kind
    if current_spec.get("kind") in kinds or upload_fits:
        choices["current"] = f"current dataset (from the Data page): {dataset_from_spec(current_spec).name}"
    for name, (label, _) in generators.items():
        choices[name] = label
    for name in CLUTO_NAMES:
        choices[name] = cluto_label.format(name=name)
    if st.session_state.get(key) not in choices:       # e.g. "current" from a link, on data of another kind
        st.session_state.pop(key, None)
    choice = st.selectbox("Count matrix" if data_kind == "counts" else "Dataset", list(choices),
                          format_func=choices.get, key=key, help=help)
    if choice == "current":
        return dict(current_spec)
    if choice in generators:
        source = generators[choice][1]
        return dict(source) if isinstance(source, dict) else source(prefix, PAPER_SPECS[choice])
    return {"kind": "cluto", "name": choice}
