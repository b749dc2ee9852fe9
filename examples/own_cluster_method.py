"""Your own private subspace method on the Cluster page: one catalogue entry plus its widgets.

``NoisyScatterSubspaces`` is (ε, δ)-DP under replace-one: rows are clipped to the public radius
Λ, their second-moment matrix S = Σ xxᵀ is released once by the Gaussian mechanism (exact noise
through ``dpcore.privacy``: L2 sensitivity 2Λ² — one replaced row changes S by xxᵀ − x′x′ᵀ, of
Frobenius norm at most 2Λ²), and the k subspaces are consecutive blocks of q top eigenvectors
of the noisy S (post-processing). Labels assign the raw rows to the released subspaces (not
private).

Everything the app needs to show it comes from the catalogue entry (:func:`register`) and the
estimator: whether it is private, what a run will spend (``planned_privacy``) and did spend (its
ledger), its neighbouring relation, its public constants. The page adds only its widgets
(:func:`widgets`). Used by ``tests/test_own_cluster_method.py`` and ``docs/own_method.md``::

    from examples.own_cluster_method import register
    register()          # in the app's process, e.g. at the top of app.py, before the pages run
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from dpcore.preprocessing import clip_rows
from dpcore.privacy import GaussianBudget, PrivacyLedger, PrivateEstimatorMixin
from dpcore.subspace.common import SubspacePredictMixin
from dpcore.validation import check_array, check_delta, check_epsilon, check_int, check_random_state, check_real

NAME = "noisy_scatter"


class NoisyScatterSubspaces(SubspacePredictMixin, PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """k q-dimensional subspaces from one noisy second-moment matrix, (ε, δ)-DP (replace-one).

    Parameters
    ----------
    n_clusters : int, default 2
    subspace_dim : int, default 1
        k·q ≤ d.
    epsilon : float > 0, default 1.0
    delta : float in (0, 1) or None, default None
        None: 1/(n ln n), from the public n.
    radius : float > 0, default 1.0
        Public row norm bound Λ (rows are clipped to it).
    random_state : None, int or numpy.random.Generator

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(200, 4)) * [1, 1, 0.01, 0.01]
    >>> est = NoisyScatterSubspaces(n_clusters=1, subspace_dim=2, epsilon=50.0, random_state=0).fit(X)
    >>> est.subspaces_.shape, round(est.epsilon_spent_, 6)
    ((1, 4, 2), 50.0)
    """

    claimed_relation = "replace_one"

    def __init__(self, *, n_clusters=2, subspace_dim=1, epsilon=1.0, delta=None, radius=1.0, random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.random_state = random_state

    @staticmethod
    def _default_delta(n):
        return 1.0 / (max(n, 3) * math.log(max(n, 3)))

    def fit(self, X, y=None):
        """Release the noisy second-moment matrix once and read the subspaces off it."""
        X = check_array(X, "X")
        n, d = X.shape
        k = check_int(self.n_clusters, "n_clusters", 1)
        q = check_int(self.subspace_dim, "subspace_dim", 1)
        if k * q > d:
            raise ValueError(f"n_clusters × subspace_dim must be at most d = {d}; got {k} × {q}")
        eps = check_epsilon(self.epsilon)
        delta = self._default_delta(n) if self.delta is None else check_delta(self.delta)
        lam = check_real(self.radius, "radius", 0.0, None, low_inclusive=False)
        rng = check_random_state(self.random_state)
        Xc, _ = clip_rows(X, lam)
        budget = GaussianBudget(eps, delta, 1)
        S = budget.release(Xc.T @ Xc, 2 * lam * lam, rng)
        S = (S + S.T) / 2
        _, vecs = np.linalg.eigh(S)
        top = vecs[:, ::-1][:, :k * q]
        self.subspaces_ = np.stack([top[:, i * q:(i + 1) * q] for i in range(k)])
        self.labels_ = self.predict(X)
        self.n_features_in_ = d
        self.ledger_ = PrivacyLedger(budget_epsilon=eps, budget_delta=delta)
        self.ledger_.record("noisy second-moment matrix Σ xxᵀ", "Gaussian (analytic σ), exact", eps, delta,
                            note=f"L2 sensitivity 2Λ² = {2 * lam * lam:g} under replace-one",
                            events=budget.events(self.claimed_relation))
        self.private_outputs_ = ["subspaces_"]
        self.nonprivate_outputs_ = {"labels_": "raw rows assigned to the released subspaces"}
        return self

    def _public_constants(self):
        return [("Λ", self.radius, "public row norm bound (rows clipped to it)"),
                ("sensitivity", 2 * float(self.radius) ** 2, "L2 sensitivity of Σ xxᵀ under replace-one: 2Λ²")]


def widgets(ds):
    """The method's own widget on the Cluster page (ε and δ are drawn by the page): Λ."""
    import streamlit as st

    from ui.common import number_input
    radius = number_input(st, "row norm bound Λ", 0.01, 100.0, 1.0, key="noisy_scatter_radius", step=0.5,
                          help="Rows are clipped to this public norm; the noise grows with Λ².")
    return {"radius": float(radius)}


def register():
    """Add the method to the catalogue and to the Cluster page (once per process)."""
    from dpcore.lab.methods import METHODS, register_method
    if NAME not in METHODS:
        register_method(NAME, NoisyScatterSubspaces, family="subspace", private=True, takes_delta=True,
                        label="Noisy scatter (ours)",
                        description="k subspaces from one noisy second-moment matrix (Gaussian mechanism)")
    from ui.cluster import add_method
    return add_method(NAME, widgets, label="Noisy scatter (your own method, private, (ε, δ)-DP)",
                      about="One noisy second-moment matrix Σ xxᵀ (Gaussian mechanism), its top k·q eigenvectors "
                            "split into k subspaces.",
                      noise="**Where the noise goes.** Gaussian noise on every entry of the d×d matrix Σ xxᵀ, "
                            "once.")
