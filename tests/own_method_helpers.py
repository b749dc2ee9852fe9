"""A user's own private method, in a module the tests import (tests/test_catalogue.py): worker
processes import it by its path, never through the parent's catalogue. Importing this module
registers nothing."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from dpcore.preprocessing import clip_rows
from dpcore.privacy import PrivacyLedger, PrivateEstimatorMixin, gaussian_mechanism
from dpcore.validation import check_delta, check_epsilon, check_int, check_random_state


class OneNoisyLloydStep(PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """(ε, δ)-DP: k public start centres uniform in [−Λ, Λ]^d, then one Lloyd step whose cluster
    sums and Λ·counts are released by the Gaussian mechanism (L2 sensitivity 2Λ)."""

    claimed_relation = "replace_one"

    def __init__(self, *, n_clusters=3, epsilon=1.0, delta=1e-6, radius=1.0, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.random_state = random_state

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        n, d = X.shape
        k = check_int(self.n_clusters, "n_clusters", 1, n)
        eps, delta, lam = check_epsilon(self.epsilon), check_delta(self.delta), float(self.radius)
        rng = check_random_state(self.random_state)
        Xc, _ = clip_rows(X, lam)
        start = rng.uniform(-lam, lam, size=(k, d))
        cell = ((start ** 2).sum(1)[None] - 2 * Xc @ start.T).argmin(1)
        sums = np.zeros((k, d))
        np.add.at(sums, cell, Xc)
        counts = np.bincount(cell, minlength=k).astype(float)
        noisy = gaussian_mechanism(np.hstack([sums, lam * counts[:, None]]), 2 * lam, eps, delta, rng)
        N = noisy[:, d] / lam
        self.cluster_centers_ = np.where((N > 1)[:, None], noisy[:, :d] / np.maximum(N, 1)[:, None], start)
        self.labels_ = ((self.cluster_centers_ ** 2).sum(1)[None] - 2 * X @ self.cluster_centers_.T).argmin(1)
        self.ledger_ = PrivacyLedger(budget_epsilon=eps, budget_delta=delta)
        self.ledger_.record("one Lloyd step", "Gaussian (sums and counts)", eps, delta)
        self.private_outputs_ = ["cluster_centers_"]
        self.nonprivate_outputs_ = {"labels_": "raw points assigned to the released centres"}
        return self


def helper_defaults(ds):
    """Dataset defaults of the helper method: k from the classes, Λ the public radius."""
    return {"n_clusters": int(ds.n_classes or 3), "radius": float(ds.extras.get("public_radius", 1.0))}


def is_registered(name):
    """Whether ``name`` is in this process's catalogue (run in a worker: it should not be)."""
    from dpcore.lab.methods import METHODS
    return name in METHODS


from dpcore.subspace.sulq import SuLQKPlane  # noqa: E402


class AddRemoveSuLQKPlane(SuLQKPlane):
    """A test double: SuLQ k-plane declaring the add/remove relation, so that the audit's reading
    of a registered entry's relation can be told apart from the built-in entry's."""

    claimed_relation = "add_remove"
