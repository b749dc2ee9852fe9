"""Paper figures: every figure of the three papers, drawn from results shipped with the app,
beside the paper's statements and whether they hold, with a live rerun of the quick version.
Decisions are written in :mod:`ui.gallery`."""
import streamlit as st

from dpcore.lab.reproduce import FIGURES
from ui.common import privacy_statement
from ui.gallery import (FIG3, FIG3_PANELS, FIGURE_KEY, INFO, PAGE, PANEL_KEY, SHIP_COMMAND, folder_stamp,
                        gallery_folder, load_shipped, provenance, quick_rerun, show_figure)
from ui.share import check_link, one_of

PANEL_LABELS = {"random-init": "random start (private)", "kplane-init": "k-plane start (NOT private)"}

st.title("Paper figures")
st.markdown("The figures of the three papers this app implements, reproduced with `python -m dpcore.reproduce` at "
            "the papers' settings and shipped with the app, so they are drawn at once. Under each figure: what the "
            "paper says, checked on these runs (✅ yes: it holds, ❌ no: it does not), and the command and commit that made them. "
            "The button below a figure reruns its quick version live, on this server.")
privacy_statement(
    [], ["these are reproductions, not private releases: every run uses a fixed, public seed (master seed 0, "
         "one seed per method, ε and trial) so that anyone can recompute it, noise included"],
    ["Nothing on this page is recorded in the session privacy meter: the data are the papers' public benchmark "
     "sets and the seeds are public."])

check_link(PAGE, {FIGURE_KEY: one_of(FIGURES, lambda f: INFO[f].label), PANEL_KEY: one_of(FIG3_PANELS)})
folder = gallery_folder()
try:
    manifest, shipped = load_shipped(folder)
except ValueError as exc:
    st.error(str(exc))
    manifest, shipped = {}, {}
if not shipped:
    st.info(f"No results are shipped yet (none in `{folder}`). This command writes them:\n\n"
            f"`{SHIP_COMMAND}`\n\n(the papers' full settings; add `--quick` for a run of about 2 minutes). "
            "Meanwhile every figure can be rerun live at the quick level below.")

figure = st.selectbox("Figure", FIGURES, index=next((i for i, f in enumerate(FIGURES) if f in shipped), 0),
                      format_func=lambda f: INFO[f].label, key=FIGURE_KEY, bind="query-params",
                      help="Every reproduced figure of the three papers; those not shipped can still be rerun live.")
info, fig = INFO[figure], shipped.get(figure)
st.markdown(f"{info.paper}\n\n**The paper:** {info.shows}\n\n**Ours:** {info.ours}")

panel = None
if figure == FIG3:
    panel = st.radio("Panel", FIG3_PANELS, format_func=PANEL_LABELS.get, key=PANEL_KEY, bind="query-params",
                     horizontal=True, help="Fig. 3 has 8 chains × 4 ε × 3 traces per start: one start at a time.")

st.subheader("Shipped results" + (f" ({fig.level} level)" if fig is not None else ""))
if fig is None:
    st.info(f"`{figure}` is not shipped{' yet' if not shipped else ''}: "
            f"`python -m dpcore.reproduce {figure} --jobs 2 --ship sample_data/paper_figures` writes it.")
else:
    st.caption(provenance(manifest, fig))
    if fig.level != "full":
        st.warning(f"These shipped results are at the **{fig.level}** level, not the papers' full settings: fewer ε "
                   "values, runs and sweeps" + (" (tiny: a smoke test, the numbers mean nothing)"
                                                if fig.level == "tiny" else "") + ".")
    show_figure(fig, "shipped", panel, folder, folder_stamp(folder))

quick_rerun(figure, panel, fig)
