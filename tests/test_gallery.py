"""The shipped results of the Paper figures page (sample_data/paper_figures, written by
``python -m dpcore.reproduce all --ship sample_data/paper_figures``): complete, drawn from their
CSVs, and reproducible — a sample of shipped runs is recomputed and must give the shipped
numbers (every run's seed is a function of (master seed, method, ε, trial) only).

"Complete" is judged against the code of the shipped commit (the manifest's): a figure, or the
``paper`` column of the checks, that did not exist at that commit may be missing until the
results are shipped again; one that existed must be there."""
import math
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpcore.lab import gallery
from dpcore.lab.reproduce import FIGURES

pytestmark = pytest.mark.skipif(not (gallery.GALLERY_DIR / "manifest.json").exists(),
                                reason="no shipped results in sample_data/paper_figures")


@pytest.fixture(scope="module")
def shipped():
    return gallery.load_gallery()


def _in_code_at(commit, text, path="dpcore"):
    """Whether ``text`` occurs under ``path`` in the repository at ``commit``; None when that cannot
    be told (no git, not a checkout, the commit is not in this clone)."""
    root = Path(__file__).resolve().parents[1]
    try:
        res = subprocess.run(["git", "grep", "-q", "-F", text, commit, "--", path], cwd=root, capture_output=True,
                             timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: True, 1: False}.get(res.returncode)


def _not_yet(manifest, missing, text_of, what):
    """Assert that every one of ``missing`` is newer than the shipped commit (its ``text_of(x)`` is
    not in that commit's code); skip when git cannot tell."""
    if not missing:
        return
    known = {x: _in_code_at(manifest["commit"], text_of(x)) for x in missing}
    if None in known.values():
        pytest.skip(f"cannot tell whether {what} {sorted(missing)} existed at the shipped commit (no git history)")
    assert not any(known.values()), f"{what} {sorted(x for x in missing if known[x])} existed when the results were " \
                                    "shipped but are not in them"
    warnings.warn(f"{what} {sorted(missing)}: newer code than the shipped results ({manifest['commit'][:7]}); "
                  "ship them again with python -m dpcore.reproduce all --ship ...")


def test_every_figure_is_shipped_at_full_settings_with_its_provenance(shipped):
    manifest, figures = shipped
    names = [f.name for f in figures]
    assert names == [f for f in FIGURES if f in names]                     # the reproduction's order
    assert manifest["level"] == "full" and all(f.level == "full" for f in figures)
    assert manifest["command"].startswith("python -m dpcore.reproduce all")
    assert len(manifest["commit"]) == 40 and manifest["dirty"] is False
    assert manifest["total_seconds"] > 0 and manifest["peak_memory"]["main_mb"] > 0
    assert [r["figure"] for r in manifest["figures"]] == names
    # a figure of FIGURES that is not shipped did not exist at the shipped commit (FIGURES names it in quotes)
    _not_yet(manifest, [f for f in FIGURES if f not in names], lambda f: f'"{f}"', "figures")


def test_every_shipped_check_has_the_papers_words(shipped):
    """Each check of checks.csv says what the paper says (the ``paper`` column, which
    :func:`~dpcore.lab.gallery.load_gallery` leaves empty for results written before it existed),
    once the results come from code that writes it."""
    manifest, figures = shipped
    words = {f.name: f.checks["paper"].fillna("").astype(str).str.strip() for f in figures}
    _not_yet(manifest, [f for f, w in words.items() if (w == "").all()], lambda f: '"check", "paper"',
             "checks without the paper's words in")
    for f in figures:
        if (words[f.name] != "").any():
            assert (words[f.name] != "").all(), (f.name, list(f.checks.loc[words[f.name] == "", "check"]))


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
    """Two random runs (of those that took ≤ 1 s) per figure with sweep panels (at least the four
    of Fig. 2 of each paper and co-clustering Fig. 3), private and non-private. Tolerance: rel 1e-6 (the CSVs keep 8
    significant digits)."""
    _, figures = shipped
    rows = _sample_rows(figures, 2, 1.0, np.random.default_rng(17))
    with_sweeps = {f.name for f in figures if any(p.sweep is not None for p in f.panels)}
    assert {name for name, _, _ in rows} == with_sweeps and len(with_sweeps) >= 4
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
