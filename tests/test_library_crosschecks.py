"""Cheap cross-checks of dpcore's calibrations against independent libraries (issue 15):
the analytic Gaussian σ against diffprivlib's ``GaussianAnalytic`` and the Clopper–Pearson
interval of :func:`dpcore.lab.audit.clopper_pearson` against scipy's exact binomial interval."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from dpcore.lab.audit import clopper_pearson
from dpcore.privacy import analytic_gaussian_delta, gaussian_sigma_analytic


@pytest.fixture(scope="module")
def gaussian_analytic():
    from dpcore.kmeans.baselines import _load_diffprivlib
    try:
        _load_diffprivlib()          # diffprivlib 0.6.x needs dpcore's shim with scikit-learn >= 1.8
    except ImportError as exc:       # pragma: no cover - diffprivlib is in requirements.txt
        pytest.skip(f"diffprivlib not importable: {exc}")
    from diffprivlib.mechanisms import GaussianAnalytic
    return GaussianAnalytic


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2])
@pytest.mark.parametrize("sensitivity", [0.3, 1.0, 2.0])
def test_analytic_gaussian_sigma_matches_diffprivlib(gaussian_analytic, epsilon, delta, sensitivity):
    """Same σ up to diffprivlib's search tolerance (agreement to ~1e-13 at moderate ε; at
    ε = 10, δ = 1e-10 diffprivlib stops 4e-5 below the root, where δ(σ) is 1.0018e-10, while
    ours solves δ(σ) = δ to machine precision)."""
    theirs = gaussian_analytic(epsilon=epsilon, delta=delta, sensitivity=sensitivity)._scale
    ours = gaussian_sigma_analytic(sensitivity, epsilon, delta)
    assert ours == pytest.approx(theirs, rel=1e-4)
    assert analytic_gaussian_delta(ours, sensitivity, epsilon) == pytest.approx(delta, rel=1e-9)


@pytest.mark.parametrize("trials", [1, 7, 50, 1000])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
def test_clopper_pearson_matches_scipy_exact_interval(trials, alpha):
    for successes in sorted({0, 1, trials // 3, trials // 2, trials - 1, trials}):
        ci = binomtest(successes, trials).proportion_ci(confidence_level=1 - alpha, method="exact")
        lo, hi = clopper_pearson(successes, trials, alpha)
        assert float(lo) == pytest.approx(ci.low, abs=1e-12, rel=1e-9)
        assert float(hi) == pytest.approx(ci.high, abs=1e-12, rel=1e-9)


def test_clopper_pearson_vectorised_like_scalar():
    x, n = np.array([0, 3, 10]), np.array([10, 10, 10])
    lo, hi = clopper_pearson(x, n, 0.05)
    for i in range(3):
        ci = binomtest(int(x[i]), int(n[i])).proportion_ci(0.95, method="exact")
        assert (lo[i], hi[i]) == pytest.approx((ci.low, ci.high), rel=1e-9, abs=1e-12)
