"""Instant ε in the browser: on a Cluster preset, one move of the precomputed ladder's slider
redraws the figure at the new ε, without an error and without anything charged to the meter.
Functional only: benchmarks/bench_ladders.py measures how long the redraw takes."""
from __future__ import annotations

import re

import pytest

import stdriver as sd

pytestmark = pytest.mark.browser

SLIDER_LABEL = "ε of the precomputed ladder (instant)"
#: the sidebar's number for the dataset's ε spent (ui.meter.sidebar)
SPENT = '[data-testid="stSidebar"] [data-testid="stMetricValue"]'


def slider_input(page):
    return sd.widget(page, "stSlider", SLIDER_LABEL).locator('input[type="range"]').first


def panel_titles(page):
    """The charts' panel and figure titles (SVG text: textContent, not innerText)."""
    return page.locator(f'{sd.CHART} .annotation-text, {sd.CHART} .gtitle').evaluate_all(
        "els => els.map(e => e.textContent)")


def test_one_move_of_the_instant_slider_redraws_the_figure_and_charges_nothing(app_url, page):
    sd.open_page(page, app_url + "/cluster")
    sd.choose_preset(page, r"^Paper Fig\. 2: SuLQ-10")
    sd.check_page(page, min_charts=2)
    thumb = slider_input(page)
    thumb.wait_for(state="attached")
    before = thumb.get_attribute("aria-valuetext")
    assert before == "10"                                   # the preset's ε
    assert any(t.startswith("ε = 10:") for t in panel_titles(page)), panel_titles(page)
    spent = page.locator(SPENT).first.inner_text()
    with sd.rerun(page):
        thumb.focus()
        thumb.press("ArrowRight")
    assert thumb.get_attribute("aria-valuetext") == "20"
    page.wait_for_function(f"""() => [...document.querySelectorAll('{sd.CHART} .annotation-text, {sd.CHART} .gtitle')]
        .some(e => /^ε = 20:/.test(e.textContent))""")
    titles = panel_titles(page)
    assert not any(re.match(r"ε = 10:", t) for t in titles), titles
    assert any(t.startswith("non-private k-plane") for t in titles), titles       # the reference stays beside it
    assert sd.has_button(page, "Run live at ε = 20")
    sd.check_page(page, min_charts=2)
    assert page.locator(SPENT).first.inner_text() == spent                       # nothing charged
