"""No silent action, in the browser: a number out of its range says why beside the button, and a
run cancelled by leaving the page says so when the student comes back.

Before, the browser kept an out-of-range entry (clusters k = 0) out of the form without a word
(Run re-ran the last accepted value; the reason showed only on hover), and a run cancelled by
switching page left the earlier result on screen as if it were the new one."""
from __future__ import annotations

import re

import pytest

import stdriver as sd

pytestmark = pytest.mark.browser


def _go(page, path):
    """Follow the sidebar's link to ``path`` (same session) and wait until the page is drawn."""
    link = page.locator(f'[data-testid="stSidebarNav"] a[href$="{path}"]').first
    with sd.rerun(page):
        link.click()
    page.locator(f"{sd.MAIN} h1").first.wait_for(state="visible")


def _main_texts(page, selector):
    return page.locator(f"{sd.MAIN} {selector}").all_inner_texts()


def test_out_of_range_number_says_why_beside_the_button(app_url, page):
    sd.open_page(page, app_url + "/cluster")
    sd.set_number(page, "clusters k", 0)
    sd.press(page, "Run")
    errors = _main_texts(page, sd.ERROR)
    assert any("clusters k must be between" in e and "not 0" in e for e in errors), errors
    assert any("not run" in e for e in errors), errors          # beside the button: the run was refused
    # the field keeps what the student typed, so the mistake stays visible
    assert sd.widget(page, "stNumberInput", "clusters k").locator("input").first.input_value() == "0"
    sd.set_number(page, "clusters k", 3)
    sd.press(page, "Run")
    assert not [e for e in _main_texts(page, sd.ERROR) if "must be between" in e]


def test_leaving_the_page_mid_run_is_reported_on_return(app_url, page):
    sd.open_page(page, app_url + "/audit")
    sd.choose_preset(page, r"^Gibbs start leak: k-plane start")
    sd.press(page, "Run audit")
    sd.check_page(page, min_charts=1)
    # a long audit (5,000 runs per side: minutes), left as soon as it reports progress
    sd.set_number(page, "runs per side", 5000)
    page.locator(f"{sd.MAIN} button").filter(has_text=re.compile(r"^\s*Run audit\s*$")).first.click()
    page.locator(f"{sd.MAIN} [data-testid='stProgress']").first.wait_for(state="visible", timeout=sd.PAGE_TIMEOUT)
    _go(page, "/data")
    _go(page, "/audit")
    warnings = _main_texts(page, sd.WARNING)
    assert any("did not finish" in w and "cancelled" in w for w in warnings), warnings
    assert page.locator(f"{sd.MAIN} {sd.CHART}").count() >= 1          # the earlier result, marked as such
