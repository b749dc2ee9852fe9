"""No typed value makes a fit run without end: the Gibbs sampler refuses an ε whose ε·n its
float arithmetic cannot draw (issue 33: ε = 1e308 hung the server), before anything runs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpcore.subspace.gibbs import MAX_EPSILON_N, MIN_EPSILON, GibbsSubspaceClustering, check_epsilon_scale

X = np.random.default_rng(0).normal(size=(1000, 10))
X /= np.linalg.norm(X, axis=1, keepdims=True)


@pytest.mark.parametrize("eps", [1e13, 1e16, 1e308])
def test_an_epsilon_too_large_for_the_sampler_is_refused_before_it_runs(eps):
    est = GibbsSubspaceClustering(n_clusters=3, subspace_dim=3, epsilon=eps, n_iter=20, random_state=0)
    with pytest.raises(ValueError, match=r"epsilon at most 1e\+09 here"):
        est.planned_privacy(X)
    with pytest.raises(ValueError, match="would not end"):
        est.fit(X)
    assert not hasattr(est, "ledger_")


def test_the_largest_epsilon_allowed_runs():
    est = GibbsSubspaceClustering(n_clusters=3, subspace_dim=3, epsilon=MAX_EPSILON_N / X.shape[0], n_iter=5,
                                  random_state=0).fit(X)
    assert est.epsilon_spent_ == pytest.approx(1e9)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(eps=st.floats(min_value=1e-300, max_value=1e308, allow_nan=False, allow_infinity=False),
       n=st.integers(min_value=1, max_value=10**7))
def test_the_bound_is_exactly_eps_times_n(eps, n):
    if eps < MIN_EPSILON:
        with pytest.raises(ValueError, match="too small for the Gibbs sampler"):
            check_epsilon_scale(eps, n)
    elif eps * n > MAX_EPSILON_N:
        with pytest.raises(ValueError, match=f"on {n:,} points"):
            check_epsilon_scale(eps, n)
    else:
        check_epsilon_scale(eps, n)
        assert math.isfinite(eps * n)


@pytest.mark.parametrize("eps", [1e-300, 1e-13])
def test_an_epsilon_below_the_grid_is_refused_in_words(eps):
    est = GibbsSubspaceClustering(n_clusters=3, subspace_dim=3, epsilon=eps, n_iter=5, random_state=0)
    with pytest.raises(ValueError, match=r"too small for the Gibbs sampler: it must be at least 4\.5e-13"):
        est.fit(X)
    assert not hasattr(est, "ledger_")
