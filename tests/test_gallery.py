"""The shipped results of the Paper figures page (sample_data/paper_figures, written by
``python -m dpcore.reproduce all --ship sample_data/paper_figures``): complete, drawn from their
CSVs, and reproducible — a sample of shipped runs is recomputed and must give the shipped
numbers (every run's seed is a function of (master seed, method, ε, trial) only)."""
import math

import numpy as np
import pytest

from dpcore.lab import gallery
from dpcore.lab.reproduce import FIGURES

pytestmark = pytest.mark.skipif(not (gallery.GALLERY_DIR / "manifest.json").exists(),
                                reason="no shipped results in sample_data/paper_figures")


@pytest.fixture(scope="module")
def shipped():
    return gallery.load_gallery()


def test_every_figure_is_shipped_at_full_settings_with_its_provenance(shipped):
    manifest, figures = shipped
    assert [f.name for f in figures] == list(FIGURES)
    assert manifest["level"] == "full" and all(f.level == "full" for f in figures)
    assert manifest["command"].startswith("python -m dpcore.reproduce all")
    assert len(manifest["commit"]) == 40 and manifest["dirty"] is False
    assert manifest["total_seconds"] > 0 and manifest["peak_memory"]["main_mb"] > 0
    assert [r["figure"] for r in manifest["figures"]] == list(FIGURES)


def test_every_panel_draws_from_its_csv_and_every_figure_has_checks(shipped):
    _, figures = shipped
    for f in figures:
        assert len(f.checks) > 0 and set(f.checks["ok"].unique()) <= {True, False}, f.name
        for p in f.panels:
            fig = p.figure()
            assert len(fig.data) > 0, (f.name, p.name)
            assert p.title and fig.layout.title.text, (f.name, p.name)


def _sample_rows(figures, per_figure, max_seconds, rng):
    """(panel, row) pairs: ``per_figure`` random cheap rows (shipped run time ≤ max_seconds) of
    each figure with sweep panels."""
    out = []
    for f in figures:
        cands = [(p, i) for p in f.panels if p.sweep is not None
                 for i in np.flatnonzero(p.df["seconds"].to_numpy() <= max_seconds)]
        for j in rng.choice(len(cands), size=min(per_figure, len(cands)), replace=False):
            p, i = cands[j]
            out.append((f.name, p, p.df.iloc[i]))
    return out


@pytest.mark.slow
def test_a_sample_of_shipped_runs_recomputes_to_the_shipped_numbers(shipped):
    """Two random runs (of those that took ≤ 1 s) per figure with sweep panels: 8 runs from all
    four sweep figures, private and non-private. Tolerance: rel 1e-6 (the CSVs keep 8
    significant digits)."""
    _, figures = shipped
    rows = _sample_rows(figures, 2, 1.0, np.random.default_rng(17))
    assert len({name for name, _, _ in rows}) == 4
    for name, panel, row in rows:
        assert gallery.compare_row(panel, row) == [], (name, panel.name, row["algorithm"], row["epsilon"], row["trial"])


def test_fig3_traces_are_thinned_but_keep_the_last_sweep(shipped):
    _, figures = shipped
    fig3 = next(f for f in figures if f.name == "subspace-fig3")
    for p in fig3.panels:
        per_chain = p.df.groupby(["epsilon", "chain"])["sweep"]
        assert per_chain.count().max() <= gallery.SHIPPED_TRACE_POINTS
        assert (per_chain.max() == 10_000).all()
    diag = fig3.extra["diagnostics.csv"]
    assert set(diag["n_iter"]) == {10_000} and not math.isnan(diag["split_rhat"].iloc[0])
