"""The Paper figures page (pages/9_paper_figures.py) in a real browser.

A server of its own reads a folder shipped here by the real command
(``python -m dpcore.reproduce cocluster-fig3 highdim-fig2 --tiny --ship DIR``, named to the app
through $DPCLUST_GALLERY_DIR): the first render shows the shipped figure with its provenance, its
link opens the same figure in another session, and the live rerun of the quick version draws
its panels below the shipped ones. On the suite's own server (the app's
sample_data/paper_figures, shipped or not) the page renders without an error. No time is
asserted (benchmarks/bench_render.py --gallery DIR measures the render against the budgets).
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

import stdriver as sd
from dpcore.lab.gallery import GALLERY_DIR
from dpcore.lab.reproduce import SETTINGS

pytestmark = pytest.mark.browser

PATH = "/paper_figures"
GALLERY_ENV = "DPCLUST_GALLERY_DIR"     # ui.gallery.GALLERY_ENV (not imported: no streamlit import here)
FIGURE = "Figure"
HIGHDIM = "High-dimensional k-means, Fig. 2: objective against k and ε"
#: the rerun button; its "≈ N s" is the page's measured quick time (ui.gallery's INFO), not pinned here
RERUN = re.compile(r"^\s*Rerun the quick version \(≈ [\d,.]+ (s|min)\)\s*$")


@pytest.fixture(scope="module")
def shipped_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper_figures")
    subprocess.run([sys.executable, "-m", "dpcore.lab.reproduce", "cocluster-fig3", "highdim-fig2", "--tiny",
                    "--out", str(root / "out"), "--ship", str(root / "ship")],
                   cwd=sd.REPO, check=True, capture_output=True, timeout=1800)
    return root / "ship"


@pytest.fixture(scope="module")
def gallery_server(shipped_dir, tmp_path_factory):
    """The app served with the shipped folder above (the environment is read when the server starts)."""
    if sd.playwright_missing():
        pytest.skip(sd.playwright_missing())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(GALLERY_ENV, str(shipped_dir))
        server = sd.StreamlitServer(log_path=tmp_path_factory.mktemp("streamlit") / "gallery.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gallery_context(chromium, gallery_server):
    ctx = sd.new_context(chromium)
    tab = ctx.new_page()
    sd.open_page(tab, gallery_server.url + "/")       # as the app_url fixture: app.py owns the routes from now on
    tab.close()
    yield ctx
    ctx.close()


@pytest.fixture
def gpage(gallery_context):
    tab = gallery_context.new_page()
    yield tab
    tab.close()


def main_text(page):
    return page.locator(sd.MAIN).inner_text()


def test_first_render_shows_the_shipped_figure(gallery_server, gpage):
    breakdown = {}
    seconds = sd.open_page(gpage, gallery_server.url + PATH, breakdown=breakdown)
    sd.RENDER_TIMES[PATH + " (shipped)"] = seconds                     # printed at the end, for information
    sd.RENDER_BREAKDOWN[PATH + " (shipped)"] = breakdown
    sd.check_page(gpage, min_charts=1)
    text = main_text(gpage)
    assert "made by python -m dpcore.reproduce cocluster-fig3 highdim-fig2 --tiny" in text
    assert "uncommitted changes:" in text and "checked on these runs" in text and "not private releases" in text
    # each check beside the paper's words (or, for results written before them, how to write them again)
    assert "our check" in text and ("the paper says" in text or "written before each check carried" in text)


def test_a_link_opens_the_same_figure(gallery_server, gallery_context, chromium, gpage):
    sd.open_page(gpage, gallery_server.url + PATH)
    n_default = sd.check_page(gpage, min_charts=1)
    with sd.rerun(gpage):
        sd.choose(gpage, FIGURE, HIGHDIM)
    n = sd.check_page(gpage, min_charts=2)
    assert n != n_default or sd.selectbox_value(gpage, FIGURE) == HIGHDIM
    url = gpage.url
    assert "pf_figure=" in url, url
    other = sd.new_context(chromium)                 # another session, sharing nothing
    try:
        tab = other.new_page()
        sd.open_page(tab, url)
        assert sd.selectbox_value(tab, FIGURE) == HIGHDIM
        assert sd.check_page(tab, min_charts=2) == n
        assert not [t for t in tab.locator(sd.WARNING).all_inner_texts() if "link parameters" in t]
    finally:
        other.close()


def test_live_rerun_draws_below_the_shipped_figure(gallery_server, gpage):
    sd.open_page(gpage, gallery_server.url + PATH)
    n_shipped = sd.check_page(gpage, min_charts=1)
    sd.press(gpage, RERUN, timeout=2 * sd.ACTION_TIMEOUT)
    n_quick = len(SETTINGS["cocluster-fig3"]["quick"]["datasets"])      # one panel per dataset
    assert sd.check_page(gpage, min_charts=n_shipped + n_quick) == n_shipped + n_quick
    text = main_text(gpage)
    assert "Your live rerun (quick level)" in text and "may differ" in text
    assert text.index("Shipped results") < text.index("Your live rerun")
    meter = gpage.locator('[data-testid="stSidebar"] [data-testid="stMetricValue"]').first.inner_text().strip()
    assert meter == "0" and "non-private fit" not in gpage.locator('[data-testid="stSidebar"]').inner_text()


def test_the_apps_own_folder(app_url, page):
    """Whatever sample_data/paper_figures holds (nothing yet, or the shipped results): no error,
    a figure chosen, and its charts drawn when results are shipped."""
    sd.open_page(page, app_url + PATH)
    shipped = (GALLERY_DIR / "manifest.json").exists()
    sd.check_page(page, min_charts=1 if shipped else 0)
    assert sd.selectbox_value(page, FIGURE)
    if not shipped:
        assert "No results are shipped yet" in main_text(page)
