"""The app in a real browser (Debian's Chromium driven by Playwright).

For every page: it opens and renders on default settings (test_first_render_of_every_page),
its default action (the primary button of its form, made cheap through the widgets where the
default is heavy) runs without an exception box or st.error, and every plotly chart is drawn.
Hooks for presets (a selectbox labelled "Preset") and for links that carry the widget
values (st.query_params) are generic over the pages: every page must pass them.

No test here asserts a time: the waits have generous timeouts (a loaded machine is slow, not
wrong). How fast the pages render, against the issue's budgets, is measured by
``python benchmarks/bench_render.py``.

Run alone: ``python -m pytest -m browser``; leave out: ``-m "not browser"``. $CHROMIUM names
another browser binary.
Hook: PAGES (one PageSpec per page: its button, how to make it cheap, the charts it must
draw, st.error texts it may show, whether to press the button after each preset).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import pytest

import stdriver as sd

pytestmark = pytest.mark.browser

@dataclass
class PageSpec:
    path: str                                   # URL path of the page under st.navigation
    nav: str                                    # its title in the sidebar navigation
    button: str | None = None                   # its default action (primary button of its form)
    setup: Callable | None = None               # makes the default action cheap, through the widgets
    min_charts: int = 0                         # plotly charts expected after the default action
    allowed_errors: tuple = ()                  # regexes of st.error texts that are expected there
    run_presets: bool = False                   # press `button` after applying each preset too
    action_timeout: int = sd.ACTION_TIMEOUT


# ----------------------------------------------------------------------------- cheap defaults
def gibbs_small(page):
    sd.set_text(page, "ε values (comma-separated)", "1")
    sd.set_number(page, "sweeps per chain (n_iter)", 40)
    sd.set_number(page, "chains", 2)


def sweep_small(page):
    sd.multiselect_keep(page, "methods", ["SuLQ-10"])
    sd.set_number(page, "ε points", 2)
    sd.set_number(page, "trials", 1)


def audit_small(page):
    with sd.rerun(page):                        # outside the form: changing it reruns
        sd.choose(page, "algorithm", "SuLQ k-plane (App. E)")
    with sd.rerun(page):                        # outside the form too (the planned charge follows it)
        sd.set_number(page, "runs per side", 50)   # dpcore.lab.audit.MIN_TRIALS


def paper_figures_small(page):
    with sd.rerun(page):                        # outside the form: changing it reruns
        sd.choose(page, "Figure", "Co-clustering, Fig. 3: τ̂ against iterations and ε")   # not the default one


#: the Paper figures page's rerun button names the measured time of the figure's quick level
RERUN_QUICK = re.compile(r"^\s*Rerun the quick version \(≈ [\d,.]+ (s|min)\)\s*$")


PAGES = [
    PageSpec("/", "Home"),
    PageSpec("/data", "Data", "Generate / load", min_charts=1),
    PageSpec("/cluster", "Cluster", "Run", min_charts=1),
    PageSpec("/gibbs", "Gibbs", "Run chains", gibbs_small, min_charts=1),
    PageSpec("/coclustering", "Co-clustering", "Run", min_charts=3),
    PageSpec("/kmeans", "k-means", "Run", min_charts=2),
    PageSpec("/privacy_utility", "Privacy–utility", "Run sweep", sweep_small, min_charts=1),
    PageSpec("/audit", "Audit", "Run audit", audit_small, min_charts=1),
    PageSpec("/paper_figures", "Paper figures", RERUN_QUICK, paper_figures_small, min_charts=4),
    PageSpec("/lecturer", "Lecturer"),
]
IDS = [p.path.strip("/") or "home" for p in PAGES]


#: what test_first_render_of_every_page saw on each page (lets later tests skip without reopening it)
INVENTORY: dict[str, dict] = {}


def _inventory(page):
    """What later tests need to know of a page: does it have a Preset box, a number input."""
    return {"preset": sd.widget(page, "stSelectbox", "Preset").count() > 0,
            "number": page.locator(f'{sd.MAIN} [data-testid="stNumberInput"]').count() > 0}


# ----------------------------------------------------------------------------- tests
def test_first_render_of_every_page(app_url, page):
    """Each page's first render after the server is up, default settings: its script runs,
    its title shows, no exception box or st.error, every chart it shows is drawn. (Runs
    first: later tests warm the pages. "/" is first rendered by the app_url fixture, in a
    browser with an empty cache, and checked by test_sidebar_navigation.) The times are
    printed at the end of the session for information; benchmarks/bench_render.py measures
    them against the budgets."""
    for spec in PAGES[1:]:
        breakdown = {}
        sd.RENDER_TIMES[spec.path] = sd.open_page(page, app_url + spec.path, breakdown=breakdown)
        sd.RENDER_BREAKDOWN[spec.path] = breakdown
        sd.check_page(page)
        assert page.locator(f"{sd.MAIN} h1").first.inner_text().strip(), f"{spec.path} shows no title"
        INVENTORY[spec.path] = _inventory(page)


def test_sidebar_navigation(app_url, page):
    """app.py's st.navigation owns the sidebar: every page is listed under its title, and a
    click on a link shows that page (client-side, same session) without an error. (Each
    page's own URL is opened by the other tests; two clicks check the links work.)"""
    sd.open_page(page, app_url + "/")
    sd.check_page(page)
    INVENTORY["/"] = _inventory(page)
    nav = page.locator('[data-testid="stSidebarNav"] a')
    hrefs = nav.evaluate_all("els => els.map(e => new URL(e.href).pathname)")
    assert hrefs == [p.path for p in PAGES], hrefs
    titles = [t.split("\n")[-1].strip() for t in nav.all_inner_texts()]
    assert titles == [p.nav for p in PAGES], titles
    for spec in (PAGES[2], PAGES[0]):
        h1_before = page.locator(f"{sd.MAIN} h1").first.inner_text()
        with sd.rerun(page):
            nav.nth(PAGES.index(spec)).click()
        page.wait_for_url(re.compile(rf"^{re.escape(app_url + spec.path)}(\?.*)?$"))
        h1 = page.locator(f"{sd.MAIN} h1").first
        h1.wait_for(state="visible")
        assert h1.inner_text() != h1_before, f"the title stayed {h1_before!r} after clicking {spec.nav}"
        sd.check_page(page)


@pytest.mark.parametrize("spec", [p for p in PAGES if p.button], ids=[i for i, p in zip(IDS, PAGES) if p.button])
def test_default_action(app_url, page, spec):
    """The page's primary button (made cheap through its widgets where needed) runs without
    an exception box or st.error and draws at least spec.min_charts plotly charts."""
    sd.open_page(page, app_url + spec.path)
    sd.check_page(page, allowed_errors=spec.allowed_errors)
    if spec.setup:
        spec.setup(page)
    sd.press(page, spec.button, timeout=spec.action_timeout)
    sd.check_page(page, min_charts=spec.min_charts, allowed_errors=spec.allowed_errors)


@pytest.mark.parametrize("spec", PAGES, ids=IDS)
def test_presets(app_url, page, spec):
    """Every option of a selectbox labelled "Preset" applies without error and its charts draw."""
    if not INVENTORY.get(spec.path, {"preset": True})["preset"]:
        pytest.skip(f"{spec.path} has no Preset selectbox")
    sd.open_page(page, app_url + spec.path)
    if sd.widget(page, "stSelectbox", "Preset").count() == 0:
        pytest.skip(f"{spec.path} has no Preset selectbox")
    options = sd.selectbox_options(page, "Preset")
    assert len(options) > 1, f"Preset offers only {options}"
    current = sd.selectbox_value(page, "Preset")
    views = {}
    for option in options:
        if option == current:
            continue
        with sd.rerun(page):
            sd.choose(page, "Preset", option)
        assert sd.selectbox_value(page, "Preset") == option
        sd.check_page(page, allowed_errors=spec.allowed_errors)
        views[option] = _view(page)
        if spec.run_presets and spec.button:
            sd.press(page, spec.button, timeout=spec.action_timeout)
            sd.check_page(page, allowed_errors=spec.allowed_errors)
        current = option
    if len(views) > 1:   # (the first preset often equals the defaults; not all of them can)
        assert len({repr(v) for v in views.values()}) > 1, f"every preset of {spec.path} shows the same controls"


def _view(page):
    """What a preset sets: the controls (except Preset itself) and the current dataset
    (the sidebar's first line)."""
    values = {k: v for k, v in sd.control_values(page).items() if k[1] != "Preset"}
    return values, page.locator('[data-testid="stSidebarUserContent"] p').first.inner_text()


@pytest.mark.parametrize("spec", PAGES, ids=IDS)
def test_url_round_trip(app_url, link_context, page, spec):
    """Change one control, copy the page's URL into another browser context (a new
    session that shares nothing with the first): every number input, selectbox, slider, …
    shows the same value there."""
    if not INVENTORY.get(spec.path, {"number": True})["number"]:
        pytest.skip(f"{spec.path} has no number input to change")
    sd.open_page(page, app_url + spec.path)
    if spec.setup:
        spec.setup(page)
    url_before = page.url
    step = sd.step_number_input(page)
    if step is None:
        pytest.skip(f"{spec.path} has no number input to change")
    label, old, new, inside_form = step
    if inside_form:   # runs the page's action; its charts are not the point here, and drawing them costs CPU
        sd.submit_form_of(page, label, timeout=spec.action_timeout, drawn=False)
    assert not sd.problems(page), sd.problems(page)
    before = sd.control_values(page)
    url = page.url
    page.close()
    assert "?" in url, f"{spec.path}: the URL carries no query string after changing {label!r}: {url}"
    assert url != url_before, f"{spec.path}: the URL did not change when {label!r} went from {old} to {new}: {url}"

    page2 = link_context.new_page()
    try:
        sd.open_page(page2, url)
        assert not sd.problems(page2), sd.problems(page2)
        ignored = [w for w in page2.locator(sd.WARNING).all_inner_texts() if "link parameters" in w]
        assert not ignored, ignored
        after = sd.control_values(page2)
    finally:
        page2.close()
    changed = [k for k in before if k[0] == "stNumberInput" and k[1] == label]
    assert changed and after.get(changed[-1]) == new, f"{label!r}: {old} → {new} in the first session, " \
                                                      f"{after.get(changed[-1])} from the link {url}"
    extra = sorted(set(after) - set(before))
    assert not extra, f"controls that the first session did not show appear from the link {url}: {extra}"
    # (controls only in the first session are those of a result view, which a link does not recompute)
    diff = {k: (before[k], after[k]) for k in after if before[k] != after[k]}
    assert not diff, f"controls differ after opening {url} in a new session: {diff}"


SIDEBAR_METRIC = '[data-testid="stSidebar"] [data-testid="stMetricValue"]'


def test_meter_shows_the_run_at_once(chromium, tmp_path):
    """The sidebar is drawn after the page, so right after a private run (no further click) the
    meter shows its ε; a reproducible run (public seed) is not private: the dataset's ε becomes
    ∞, with the private runs' total beside it. Its own server: the meter is the server's, and the
    other browser tests share theirs."""
    server = sd.StreamlitServer(log_path=tmp_path / "server.log")
    ctx = sd.new_context(chromium)
    try:
        page = ctx.new_page()
        sd.open_page(page, server.url + "/cluster")
        assert page.locator(SIDEBAR_METRIC).first.inner_text().strip() == "0"
        with sd.rerun(page):
            sd.choose(page, "Method", "SuLQ k-plane (private, (ε, δ)-DP)")
        sd.press(page, "Run")
        sd.check_page(page)
        assert page.locator(SIDEBAR_METRIC).first.inner_text().strip() == "1"      # the default ε = 1
        with sd.rerun(page):
            page.locator('[data-testid="stCheckbox"]').filter(has_text="reproducible (noise public)").first.click()
        sd.press(page, "Run")
        sd.check_page(page)
        assert page.locator(SIDEBAR_METRIC).first.inner_text().strip() == "∞"      # nothing bounds it now
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        assert "1 non-private fit(s)" in sidebar and "public seed" in sidebar
        assert "private fits add up to ε = 1" in sidebar
    finally:
        ctx.close()
        server.stop()


def test_deep_link_on_a_fresh_server_goes_through_app_py(chromium, tmp_path):
    """A link to a page opened first on a freshly started server: Streamlit would run the page
    file alone in its old pages/-folder mode (no navigation titles, no sidebar meter) until
    st.navigation is first called; ui.common switches that mode off and reruns through app.py."""
    server = sd.StreamlitServer(log_path=tmp_path / "server.log")
    ctx = sd.new_context(chromium)
    try:
        page = ctx.new_page()
        sd.open_page(page, server.url + "/cluster")
        sd.check_page(page)
        nav = page.locator('[data-testid="stSidebarNav"] a')
        titles = [t.split("\n")[-1].strip() for t in nav.all_inner_texts()]
        assert titles == [p.nav for p in PAGES], titles
        assert page.locator(SIDEBAR_METRIC).count() == 1
        assert page.locator(f"{sd.MAIN} h1").first.inner_text().strip() == "Cluster"
    finally:
        ctx.close()
        server.stop()
