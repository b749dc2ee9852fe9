"""dpclust-explorer: entry point. Run with ``streamlit run app.py``.

Builds the navigation over every file in ``pages/`` (ordered by the number that starts
each file name; the title is the rest of the name), draws the shared sidebar, runs the page,
then draws the sidebar again in the same place, so that its dataset name and privacy meter
show the state after the page's run (and, if the user stops a run, the state before it). The
meter (:mod:`ui.meter`: one per server, shared by every tab) and its controls are drawn once,
before the page runs, so the page's runs are checked against the class budget.

Launch options (after ``--``): ``--class-budget EPS`` fixes a class budget ε per dataset for
every session of this server; ``--lecturer-passphrase WORDS`` lets the lecturer set it on the
Lecturer page (or the environment variables ``DPCLUST_CLASS_BUDGET`` and
``DPCLUST_LECTURER_PASSPHRASE``).
"""
from pathlib import Path

import streamlit as st

from ui import shutdown, warmup
from ui.common import IN_APP_KEY, PageStop, clear_out_of_range, end_this_run
from ui.meter import sidebar, sidebar_slot

PAGES_DIR = Path(__file__).parent / "pages"
ICONS = {"home": ":material/home:", "data": ":material/dataset:", "cluster": ":material/scatter_plot:",
         "gibbs": ":material/casino:", "coclustering": ":material/grid_view:", "kmeans": ":material/hub:",
         "privacy utility": ":material/show_chart:", "audit": ":material/policy:",
         "paper figures": ":material/photo_library:", "lecturer": ":material/school:"}


def page_title(path: Path) -> str:
    stem = path.stem.split("_", 1)[-1].replace("_", " ")
    return {"kmeans": "k-means", "coclustering": "Co-clustering", "privacy utility": "Privacy–utility"}.get(stem, stem.capitalize())


def discover_pages():
    files = sorted(PAGES_DIR.glob("[0-9]*_*.py"), key=lambda p: int(p.stem.split("_", 1)[0]))
    return [st.Page(str(p), title=page_title(p), icon=ICONS.get(p.stem.split("_", 1)[-1].replace("_", " ")),
                    default=(i == 0)) for i, p in enumerate(files)]


# the icon is a file of ours: a ":material/…:" page icon is fetched from Google's font server (not offline)
st.set_page_config(page_title="dpclust-explorer", page_icon=str(Path(__file__).parent / "ui" / "assets" / "lock.png"),
                   layout="wide")
navigation = st.navigation(discover_pages())
meter_slot = sidebar_slot()   # the state before the page: what stays if the user presses Stop during a run
st.session_state[IN_APP_KEY] = True
clear_out_of_range()   # the page's number fields are checked afresh on every run
try:
    navigation.run()
except PageStop:          # a page ended early (ui.common.stop_page): the sidebar is still drawn
    pass
finally:
    st.session_state.pop(IN_APP_KEY, None)
    end_this_run()        # a run stopped mid-way (Stop, leaving the page) gives back its place in the run queue
sidebar(meter_slot.latest())   # after the page: the dataset and the privacy meter include this run
shutdown.install()   # SIGTERM: the server exits within seconds, also during a run (ui/shutdown.py)
warmup.start()   # after the first page is drawn: the other pages' imports, in the background
