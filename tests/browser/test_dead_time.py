"""No dead time on the Gibbs page, in the browser: the Fig. 3 traces are a few SVG traces, not one
WebGL trace per chain and metric.

With 133 WebGL traces (one per chain, metric and ε), coming back to the page after a Fig. 3 run
cost ≈ 15 s of browser CPU; the times are measured by benchmarks/screens.py (no wall clock in a
test). Here: what the browser was given to draw."""
from __future__ import annotations

import pytest

import stdriver as sd

pytestmark = pytest.mark.browser

#: (number of traces, how many of them WebGL) of every plotly chart on the page
TRACES_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(el => {
  const data = el._fullData || el.data || [];
  return [data.length, data.filter(t => (t.type || '').endsWith('gl')).length];
})"""

#: at most this many traces in any chart. Fig. 3 has 4 ε × 4 metrics = 16 panels, each with one
#: trace for the other chains (joined with gaps) and one for the released chain, plus the 1/√T
#: reference of the test-statistic panels: 37 traces in the figure when the chains were joined,
#: against 133 (one per chain, metric and ε) before
MAX_TRACES = 40


def test_fig3_traces_are_few_and_not_webgl(app_url, page):
    sd.open_page(page, app_url + "/gibbs")
    sd.choose_preset(page, r"^Paper Fig\. 3 mixing \(random start")
    sd.set_number(page, "sweeps per chain (n_iter)", 200)      # the figure's shape, not its length, matters here
    sd.press(page, "Run chains")
    sd.check_page(page, min_charts=1)
    charts = page.evaluate(TRACES_JS)
    assert charts, "no plotly chart"
    biggest = max(charts)
    assert biggest[0] <= MAX_TRACES, charts
    assert all(gl == 0 for _, gl in charts), charts
