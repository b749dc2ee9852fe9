"""The Fig. 1 simulation of the Co-clustering page as a frequency plot with its e^±ε band (issue 16, item 9)."""
import math
import re

import numpy as np
import pytest

from dpcore.cocluster.examples import column_partition_frequencies
from dpcore.plots.cocluster import frequency_band_rows, partition_frequency_band, partition_label
from ui.cocluster import simulate_fig1

EPS, RUNS = 1.0, 300


class Bar:
    """Stands in for the progress bar (an st.empty)."""

    def __init__(self):
        self.texts = []

    def progress(self, value, text=""):
        self.texts.append(text)


@pytest.fixture(scope="module")
def rows():
    return simulate_fig1(EPS, RUNS, Bar())


def outside_band(rows, epsilon, n_runs, z=4.5):
    """The partitions whose frequency on A′ lies outside [e^−ε f_A, e^ε f_A] by more than
    sampling error allows.

    Tolerance: ε-DP bounds the true probabilities, p′ ≤ e^ε p and p′ ≥ e^−ε p. The simulated
    frequencies f, f′ are means of n independent runs, so f′ − e^ε f has mean ≤ 0 and
    standard deviation √((p′(1−p′) + e^{2ε} p(1−p))/n) (e^{−2ε} for the lower side). We
    plug in the frequencies for p, p′, with a floor of 1/n on each p(1−p) (a partition seen
    0 or 1 times still has a variance of about one run's worth), and allow z = 4.5 of these
    standard deviations: one-sided normal tail 3.4e-6 per check, below 1e-3 over the
    2 × ~150 checks of every partition seen (a union bound; every partition is checked, so
    selecting the frequent ones for the figure does not bias the test). The simulation has a
    fixed seed, so the test is deterministic; a mechanism that gave the partition away
    (frequency 1 on A, 0 on A′) is outside by far more (see the control test)."""
    def var(f):
        return max(f * (1 - f), 1 / n_runs)
    bad = []
    for r in frequency_band_rows(rows, epsilon, top=len(rows)):
        f, g = r["freq_A"], r["freq_A_prime"]
        up = (g - math.exp(epsilon) * f) / math.sqrt((var(g) + math.exp(2 * epsilon) * var(f)) / n_runs)
        low = (math.exp(-epsilon) * f - g) / math.sqrt((var(g) + math.exp(-2 * epsilon) * var(f)) / n_runs)
        if max(up, low) > z:
            bad.append((r["label"], f, g))
    return bad


def test_simulated_frequencies_lie_inside_the_band(rows):
    assert len(rows) > 10                           # many partitions come out at ε = 1
    assert outside_band(rows, EPS, RUNS) == []


def test_a_mechanism_that_gives_the_partition_away_is_outside_the_band():
    leaky = [dict(partition="123|456", freq_A=1.0, freq_A_prime=0.0),
             dict(partition="12|3456", freq_A=0.0, freq_A_prime=1.0)]
    assert len(outside_band(leaky, EPS, RUNS)) == 2


def test_figure_has_the_two_frequency_series_and_the_band(rows):
    fig = partition_frequency_band(rows, EPS, RUNS)
    band, on_a, on_a2 = fig.data
    assert (on_a.name, on_a2.name) == ("frequency on A", "frequency on A′")
    assert band.name.startswith("allowed on A′ by ε-DP")
    shown = frequency_band_rows(rows, EPS, top=10, rest=False)
    assert [t for t in fig.layout.xaxis.ticktext] == [r["label"] for r in shown]
    fa = np.array([r["freq_A"] for r in shown])
    np.testing.assert_allclose(on_a.y, fa)
    np.testing.assert_allclose(on_a2.y, [r["freq_A_prime"] for r in shown])
    # the band: from e^−ε to e^ε times the frequency on A (capped at 1), drawn where the A′ bar is
    base = np.asarray(band.base, dtype=float)       # plotly keeps a bar's base as an object array
    np.testing.assert_allclose(base, np.exp(-EPS) * fa)
    np.testing.assert_allclose(base + np.asarray(band.y), np.minimum(1, np.exp(EPS) * fa))
    np.testing.assert_allclose(band.x, on_a2.x)
    assert band.width > on_a2.width                 # the band shows around the A′ bar
    # whiskers: 2 binomial standard errors of RUNS runs
    np.testing.assert_allclose(on_a.error_y.array, 2 * np.sqrt(fa * (1 - fa) / RUNS))
    assert fig.layout.yaxis.title.text and fig.layout.xaxis.title.text


def test_chunked_simulation_counts_every_run_once(rows):
    for key in ("freq_A", "freq_A_prime"):
        freqs = np.array([r[key] for r in rows])
        assert abs(freqs.sum() - 1) < 1e-12
        np.testing.assert_allclose(freqs * RUNS, np.round(freqs * RUNS), atol=1e-9)   # whole runs
    # one chunk = the dpcore function with the same generator
    bar = Bar()
    one = simulate_fig1(EPS, 40, bar, chunk=40)
    ref = column_partition_frequencies(EPS, 40, 1, np.random.default_rng(0))
    assert {r["partition"]: r for r in one} == {r["partition"]: r for r in ref}
    assert len(bar.texts) == 1 and re.search(r"\b0 of 40\b", bar.texts[0]), bar.texts    # one chunk: progress 0 of 40


def test_partition_labels_read_as_groups():
    assert partition_label("123|456") == "1 2 3 | 4 5 6"
    assert partition_label("12|456/3") == "1 2 | 4 5 6 (3: none)"
    assert partition_label("123456") == "1 2 3 4 5 6"
