"""Your own private method in a sweep, beside built-in ones, on 2 worker processes.

Run it from anywhere (dpcore installed)::

    python examples/own_method.py

It defines a small private k-means of its own (:class:`NoisyCentroidKMeans`), registers it in
the method catalogue (:func:`dpcore.lab.methods.register_method`), runs a privacy–utility sweep
with 2 worker processes beside SuLQ k-means and DP-Lloyd, and prints the median k-means
objective ratio (released centres against the true ones; 1 is perfect) per method and ε.

Worker processes import the method by its import path: the class lives in this script, so a
worker imports the script as the module ``own_method`` — which is why everything that runs
stays under ``if __name__ == "__main__":`` at the bottom.
"""
from __future__ import annotations

import sys

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans

from dpcore.lab.methods import preset, register_method
from dpcore.lab.sweeps import Sweep, run_sweep, summarize
from dpcore.preprocessing import clip_rows
from dpcore.privacy import PrivacyEvent, PrivacyLedger, PrivateEstimatorMixin, gaussian_mechanism, gaussian_sigma
from dpcore.validation import check_delta, check_epsilon, check_int, check_random_state


def _nearest(X, C):
    """Index of the nearest row of C for every row of X."""
    return ((C ** 2).sum(1)[None, :] - 2 * X @ C.T).argmin(1)


class NoisyCentroidKMeans(PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """(ε, δ)-DP k-means by one noisy release of cluster sums and counts.

    1. A public start: ``n_start`` centres drawn uniformly in the box [−Λ, Λ]^d (no data read).
    2. Every point (clipped to the ball of radius Λ) joins its nearest start centre, and the
       sums and Λ·counts of those cells are released once by the Gaussian mechanism
       (L2 sensitivity 2Λ when one point is replaced; one cell's change or two cells').
    3. Post-processing (free): the noisy centroids of the cells with a noisy count above
       max(1, 3σ/Λ), weighted by those counts, are clustered into k centres by one
       k-means++ run (best of 5 starts).

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
    delta : float, default 1e-6
    radius : float, default 1.0
        The public radius Λ.
    n_start : int, default 1024
        Number of public start centres (cells).
    random_state : None, int or numpy.random.Generator, default None
    """

    claimed_relation = "replace_one"

    def __init__(self, *, n_clusters=8, epsilon=1.0, delta=1e-6, radius=1.0, n_start=1024, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.n_start = n_start
        self.random_state = random_state

    def fit(self, X, y=None):
        """Release the centres (see the class docstring); returns self."""
        X = np.asarray(X, dtype=float)
        n, d = X.shape
        k = check_int(self.n_clusters, "n_clusters", 1, n)
        m = check_int(self.n_start, "n_start", k)
        eps, delta = check_epsilon(self.epsilon), check_delta(self.delta)
        lam = float(self.radius)
        rng = check_random_state(self.random_state)
        Xc, _ = clip_rows(X, lam)
        start = rng.uniform(-lam, lam, size=(m, d))                      # public: no data read
        cell = _nearest(Xc, start)
        sums = np.zeros((m, d))
        np.add.at(sums, cell, Xc)
        counts = np.bincount(cell, minlength=m).astype(float)
        noisy = gaussian_mechanism(np.hstack([sums, lam * counts[:, None]]), 2 * lam, eps, delta, rng)
        sigma = gaussian_sigma(2 * lam, eps, delta)
        S, N = noisy[:, :d], noisy[:, d] / lam
        keep = N > max(1.0, 3 * sigma / lam)
        if keep.sum() >= k:
            cents = S[keep] / N[keep, None]
            norms = np.linalg.norm(cents, axis=1, keepdims=True)
            cents *= np.minimum(1.0, lam / np.maximum(norms, 1e-300))  # back into the ball (free)
            km = KMeans(k, init="k-means++", n_init=5, random_state=int(rng.integers(2**31 - 1)))
            centres = km.fit(cents, sample_weight=N[keep]).cluster_centers_
        else:                                                            # too much noise: the public start
            centres = start[rng.choice(m, k, replace=False)]
        self.ledger_ = PrivacyLedger(budget_epsilon=eps, budget_delta=delta)
        self.ledger_.record("cell sums and counts at the public start", "Gaussian", eps, delta,
                            note=f"L2 sensitivity 2Λ, σ = {sigma:.4g}",
                            events=[PrivacyEvent.gaussian(sigma / (2 * lam), relation=self.claimed_relation,
                                                          stated=(eps, delta))])
        self.cluster_centers_ = centres
        self.labels_ = _nearest(X, centres)
        self.n_features_in_ = d
        self.private_outputs_ = ["cluster_centers_"]
        self.nonprivate_outputs_ = {"labels_": "each raw point assigned to its nearest released centre"}
        return self


def main():
    register_method("noisy_centroid", NoisyCentroidKMeans, family="kmeans", private=True,
                    label="noisy centroid", description="one Gaussian release of cell sums and counts")
    sweep = Sweep(dataset={"kind": "gaussians", "n": 2000, "d": 5, "k": 4, "sigma": 0.1, "random_state": 0},
                  algorithms=[{"name": "noisy_centroid", "label": "noisy centroid (ours)"},
                              preset("SuLQ k-means"), preset("DP-Lloyd")],
                  epsilons=[0.3, 1.0, 3.0], trials=3, metrics=["objective_ratio"], seed=0)
    df = run_sweep(sweep, n_jobs=2)
    table = summarize(df, "objective_ratio").pivot(index="algorithm", columns="epsilon", values="median")
    print("median k-means objective ÷ that of the true centres (1 = perfect), 3 trials, 2 worker processes")
    print(table.round(3).to_string())
    ours = df[df["name"] == "noisy_centroid"]
    if len(ours) != 9 or not np.allclose(ours["epsilon_spent"], ours["epsilon"]) or not ours["released_private"].all():
        print("the method's runs are missing or did not spend their ε", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
