"""Data: generate or load every dataset of the papers, or upload your own; the choice is kept for the other pages.

Uploads are parsed and validated by :func:`dpcore.upload.load_upload` (through
:func:`ui.common.set_upload`); a rejected file shows dpcore's message and the previous dataset stays.
The generators' inputs take their limits from :data:`dpcore.data.GENERATOR_LIMITS`, the same
numbers :func:`dpcore.data.load_dataset` enforces on a link's dataset spec (``data=``).

Widget keys: ``data_kind`` (the dataset type) and ``data_<kind>_<parameter>`` for the form's
inputs (``data_gaussians_n``, ``data_upload_norm``; the parameter as the dataset spec names it,
``random_state`` for the seed; ``data_upload_file`` for the file). Each input shows the current
dataset's value through :func:`ui.pickers.follow_default`, so that it follows a new dataset (a
preset, a load) as an unkeyed widget would. No widget of this page is bound to the URL. An upload of
points shows its subspace dimension q (:func:`ui.pickers.upload_subspace_dim`: public default, data's q)."""
import pandas as pd
import streamlit as st

from dpcore.data import (CLUTO_NAMES, MAX_GENERATED_CELLS, PAPER_SPECS,
                         clipping_explanation)
from dpcore.plots.data import face_grid, projection_note, sparse_overview
from dpcore.upload import LIMITS_TEXT, MAX_BYTES, WIDE_RATIO
from ui.common import (DEFAULT_DATASET, current_dataset, current_spec, current_spec_or_default, dataset_from_spec,
                       number_input, privacy_statement, run_button, run_guarded, set_dataset, set_upload, show_chart)
from ui.pickers import DATA_FIELD_LABELS, GeneratorInputs, follow_default, points_figure, upload_subspace_dim
from ui.share import Preset, check_link, link_upload_options, preset_picker, publish_url

KINDS = {
    "subspaces": "Synthetic union of subspaces (subspace paper §5)",
    "gaussians": "Synthetic Gaussian mixture (high-dimensional k-means paper §7)",
    "yaleb": "Extended Yale B faces (subspace paper §5)",
    "cluto": "CLUTO document-term matrix (co-clustering paper)",
    "blocks": "Synthetic block count matrix (co-clustering)",
    "upload": "Upload your own file (CSV, .npy, .npz, .mtx)",
}
UPLOAD_HELP = ("CSV (also .tsv/.txt), .npy, .npz (a dense array, or a scipy.sparse matrix saved with "
               f"scipy.sparse.save_npz) or Matrix Market .mtx; {LIMITS_TEXT}. Rows must be points (or documents), "
               "columns features (or terms). The first CSV line is a header when none of its cells is a number. "
               "Pickled (object) arrays are refused, never unpickled.")
LOAD_AS = {"points": "points (rows = points, dense)", "counts": "count matrix (co-clustering, sparse)"}
NORMS = {"none": "as uploaded", "rows": "scale each row to unit norm", "clip": "clip to the unit ball"}
SPREADS = {"sphere": "at distance 1 from 0 (paper)", "ball": "spread over the unit ball"}
FLASH_KEY = "_data_page_loaded"   # the success message shown after the rerun that follows a load
URL_FIELDS = {}                   # no widget travels in the link: the dataset spec does (`data=`)

PRESETS = {
    "Paper Fig. 2 (n=1000, d=10)": Preset({}, DEFAULT_DATASET,
                                          "Union of 3 subspaces of dimension 3 in R^10, σ = 0.1, clipped to the unit ball."),
    "Three lines in R³ (see the subspaces)": Preset(
        {}, PAPER_SPECS["lines_r3"], "3 lines through 0 in 3-D space, 300 points spread along them, noise σ = 0.03: "
                                     "no projection, the picture shows the data as they are. Near 0, where the lines "
                                     "meet, points are hard to tell apart. Drag the picture to turn it."),
    "Two planes in R³ (see the subspaces)": Preset(
        {}, PAPER_SPECS["planes_r3"], "2 planes through 0 in 3-D space, 400 points spread over their unit discs, "
                                      "noise σ = 0.03. The planes meet along a line: points near it are hard to "
                                      "tell apart. Drag the picture to turn it."),
    "Yale B, 5 faces": Preset({}, PAPER_SPECS["yaleb_5"],
                              "5 subjects × 64 images, per-subject 9-D PCA, projected to d = 50 (§5)."),
    "classic3 co-clustering": Preset({}, {"kind": "cluto", "name": "classic3"},
                                     "3891 documents × 4303 terms, 3 classes (CLUTO)."),
    "64 Gaussians in R^100": Preset({}, {"kind": "gaussians", "n": 20_000, "d": 100, "k": 64, "sigma": 0.1,
                                         "center_box": 1.0, "random_state": 0},
                                    "The high-dimensional k-means paper's synthetic data (§7), n = 20,000."),
}

st.title("Data")
st.markdown("Choose a dataset. The other pages use the one you load here.")
check_link("data", URL_FIELDS)          # the dataset spec travels in the link's `data` parameter
preset_picker("data", PRESETS)

spec = current_spec_or_default()
if spec["kind"] not in KINDS:           # e.g. the k-means page's digits: loaded there, not offered here
    st.info(f"The current dataset ({spec['kind']}) was chosen on another page; this page does not offer it. "
            "Choosing and loading a dataset here replaces it.")
follow_default("data_kind", spec["kind"] if spec["kind"] in KINDS else next(iter(KINDS)))
kind = st.selectbox("Dataset type", list(KINDS), format_func=KINDS.get, key="data_kind",
                    help="A generator or a real dataset of the papers, or your own file. The choice is kept for "
                         "the other pages.")
inputs = GeneratorInputs(kind, spec)
prev, key_of, num, seed = inputs.prev, inputs.key, inputs.number, inputs.seed
CAP_TEXT = f"n × d at most {MAX_GENERATED_CELLS:,} cells"


with st.form("dataset_form"):
    if kind == "subspaces":
        c1, c2, c3 = st.columns(3)
        new = dict(
            kind="subspaces",
            n=num(c1, "points n", "n", 1000, f"Number of points; {CAP_TEXT}."),
            d=num(c2, "ambient dimension d", "d", 10, f"Dimension of the space the points live in; {CAP_TEXT}. "
                  "d = 3 draws the points as they are; larger d only as a projection."),
            k=num(c3, "subspaces k", "k", 3, "Number of subspaces (clusters); labels are uniform over them."),
            q=num(c1, "subspace dimension q", "q", 3, "Dimension of each subspace; must be < d."),
            sigma=num(c2, "noise σ", "sigma", 0.1, "Standard deviation of the Gaussian noise added to each point.",
                      step=0.01, format="%.3f"),
            model=c3.selectbox("noise model", ["paper", "stochastic"], key=key_of("model", prev("model", "paper")),
                               help="paper (§5): noise N(0, σ² I_d); stochastic (§3.3): N(0, σ²/d · I_d)."),
            spread=c1.selectbox("points on each subspace", list(SPREADS), format_func=SPREADS.get,
                                key=key_of("spread", prev("spread", "sphere")),
                                help="The paper puts every point at distance 1 from 0 (before the noise); spread "
                                     "over the unit ball, the points fill the lines and discs: clearer pictures."),
            clip=c2.checkbox("clip points to the unit ball", key=key_of("clip", bool(prev("clip", True))),
                             help="The subspace algorithms assume ‖x‖ ≤ 1, a public bound."),
            random_state=seed(c3))
    elif kind == "gaussians":
        c1, c2, c3 = st.columns(3)
        new = dict(
            kind="gaussians",
            n=num(c1, "points n", "n", 2000, f"Number of points; {CAP_TEXT}."),
            d=num(c2, "dimension d", "d", 10, f"Dimension of the space; {CAP_TEXT}."),
            k=num(c3, "components k", "k", 4, "Number of Gaussian components."),
            sigma=num(c1, "component σ", "sigma", 0.1, "Standard deviation of each component.", step=0.01,
                      format="%.3f"),
            center_box=num(c2, "centre box", "center_box", 1.0, "Centres are uniform in [−box, box]^d.", step=0.1),
            random_state=seed(c3))
    elif kind == "yaleb":
        c1, c2, c3 = st.columns(3)
        subjects = prev("subjects", 5)
        new = dict(
            kind="yaleb",
            subjects=int(number_input(c1,
                "subjects", 2, 31, key=key_of("subjects", subjects if isinstance(subjects, int) else 5),
                help="Number of people, drawn at random among the 31 with 64 images.")),
            n_per_subject=int(number_input(c2,
                "images per subject", 2, 64, key=key_of("n_per_subject", int(prev("n_per_subject", 64))),
                help="64 gives the paper's n = 320 for 5 subjects.")),
            pca_dim=int(number_input(c3,
                "per-subject PCA dimension", 0, 63, key=key_of("pca_dim", int(prev("pca_dim", 9))),
                help="Each subject is projected on its own affine subspace of this dimension (paper: 9). 0 = off.")),
            d=int(number_input(c1,
                "final dimension d", 0, 2016, key=key_of("d", int(prev("d", 50))),
                help="Random Gaussian projection to this dimension (paper: 50). 0 = keep the 2016 pixels.")),
            normalize=c2.selectbox("norm bound", ["rows", "pixels"], key=key_of("normalize", prev("normalize", "rows")),
                                   help="rows: each face scaled to unit norm (per-record, leaks nothing). "
                                        "pixels: divide by the public pixel bound."),
            random_state=seed(c3, "Seed for the choice of subjects and the projection."))
    elif kind == "cluto":
        new = dict(kind="cluto", name=st.selectbox("matrix", CLUTO_NAMES, key=key_of("name", prev("name", "classic3")),
                                                   help="The seven CLUTO sets of the co-clustering paper's Table 1."))
    elif kind == "upload":
        upload = st.file_uploader("data file", max_upload_size=MAX_BYTES // 2**20, key="data_upload_file",
                                  help=UPLOAD_HELP)
        c1, c2, c3 = st.columns(3)
        new = dict(
            kind=c1.radio("load as", list(LOAD_AS), format_func=LOAD_AS.get,
                          key=key_of("data_kind", prev("data_kind", "points")),
                          help="points: for subspace clustering, Gibbs and k-means (needs ≥ 2 rows and at most "
                               f"{WIDE_RATIO}× as many columns as rows). count matrix: non-negative counts, "
                               "documents × terms, for co-clustering."),
            norm=c2.selectbox("norm bound (points)", list(NORMS), format_func=NORMS.get,
                              key=key_of("norm", prev("norm", "none")),
                              help="The private methods assume a public bound on ‖x‖. as uploaded: none is known "
                                   "(they clip to the unit ball themselves; a radius read off the data is not "
                                   "private). scale rows: each row divided by its own norm (per-record: leaks "
                                   "nothing). clip: rows longer than 1 shrunk onto the unit ball. Ignored for counts."),
            labels="last_column" if c3.checkbox(
                "last column is the class label", key=key_of("labels", prev("labels", "none") == "last_column"),
                help="The last column holds the true classes (any text or numbers). They are split off the data "
                     "and used only to evaluate, never by a private method.") else "none",
            transpose=c3.checkbox("columns are points (transpose)",
                                  key=key_of("transpose", bool(prev("transpose", False))),
                                  help="Flip the matrix after reading, when each column of the file is a point "
                                       "(cannot be combined with a label column)."))
    else:
        c1, c2, c3 = st.columns(3)
        new = dict(
            kind="blocks",
            n_rows=num(c1, "rows", "n_rows", 200, f"Number of rows (e.g. documents); rows × columns at most "
                                                   f"{MAX_GENERATED_CELLS:,} cells."),
            n_cols=num(c2, "columns", "n_cols", 150, "Number of columns (e.g. terms)."),
            k=num(c3, "row clusters", "k", 3, "Number of row clusters."),
            l=num(c1, "column clusters", "l", 3, "Number of column clusters."),
            signal=num(c2, "block signal", "signal", 5.0, "Extra Poisson rate inside the blocks."),
            noise=num(c3, "background rate", "noise", 0.5, "Poisson rate everywhere."),
            random_state=seed(st))
    submitted = run_button(st, "Generate / load", type="primary",
                          help="Build the dataset with these parameters (or read the file). On an error "
                               "the previous dataset is kept.")

flash = st.session_state.pop(FLASH_KEY, None)
if flash:
    st.success(flash)
if submitted:
    loaded = None
    if kind == "upload":
        if upload is None:
            st.error("Choose a file to upload first (drag it onto the box or click Browse files).")
        elif set_upload(upload.name, upload.getvalue(), **link_upload_options(upload.getvalue(), new)) is not None:
            loaded = f"{upload.name} loaded; the other pages now use it."
    elif (run_guarded(dataset_from_spec, new, field_labels=DATA_FIELD_LABELS.get(kind)) is not None
          and set_dataset(new) is not None):    # refused in the words of the form's fields; then cached, not rebuilt
        loaded = "Dataset loaded; the other pages now use it."
    if loaded:
        # rerun so that the form's widgets take the new dataset's values now (follow_default): otherwise
        # they would be set to them on the next run, and the user's next edit would be lost
        st.session_state[FLASH_KEY] = loaded
        st.rerun()
    st.caption("The dataset below is still the one loaded before.")
publish_url()


def fmt(v):
    """A summary value at 4 significant digits (never 1.0000000000000002); whole counts in full."""
    if isinstance(v, float) and v.is_integer() and abs(v) >= 1e4:
        return f"{int(v):,}"
    return f"{v:.4g}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else str(v)



ds = current_dataset()
st.subheader(ds.name)
st.caption(ds.description)
if ds.params.get("kind") == "upload":
    classes = ds.extras.get("class_names")
    st.caption(f"SHA-256 {ds.extras['sha256'][:16]}… · {ds.extras['size_bytes']:,} bytes"
               + (f" · classes: {', '.join(classes[:20])}{', …' if len(classes) > 20 else ''}" if classes else ""))
    upload_subspace_dim(ds)     # q of the subspace methods: the public default, and the data's (not private)
facts = ds.summary()
summary = pd.DataFrame({"value": [fmt(v) for v in facts.values()]}, index=list(facts))
left, right = st.columns([1, 2])
with left:
    st.table(summary)           # a table wraps long values (a dataframe cuts the name off)
    privacy_statement(
        private=[],
        not_private=["the data themselves (nothing is released on this page)",
                     "the ground-truth labels, used only to evaluate"],
        caveats=[ds.privacy_note] if ds.privacy_note else [])
    if clipping_explanation(ds):
        st.caption(clipping_explanation(ds))
with right:
    if ds.kind == "counts":
        show_chart(sparse_overview(ds.X, ds.labels, title=f"Count matrix: {ds.name}"), f"data counts {ds.name}")
        st.caption("What to look for: each dot is a non-zero count (colour: how large). Rows are sorted by true "
                   "class, with a red line between two classes; where a class uses some columns (terms) more "
                   "than the others, its band of rows is denser in them — strong in synthetic blocks, faint in "
                   "real text.")
    else:
        if "images" in ds.extras:
            show_chart(face_grid(ds.extras["images"], ds.labels), f"data faces {ds.name}")
        show_chart(points_figure(ds, current_spec()), f"data points {ds.name}")
        st.caption(projection_note(ds.d, subspaces=ds.subspaces is not None, centres=ds.centers is not None))
