"""Empirical privacy checks: do output frequencies on neighbouring inputs respect e^ε?

For a mechanism M, neighbouring inputs D, D′ and any set S of outputs, (ε, δ)-DP requires
P[M(D) ∈ S] ≤ e^ε P[M(D′) ∈ S] + δ and symmetrically. :func:`frequency_check` tests this
on output buckets from repeated runs: it flags a bucket only when the *lower* Clopper–Pearson
bound of one side exceeds e^ε times the *upper* bound of the other plus δ, at a stated
confidence with a Bonferroni correction over buckets and both directions. A pass means the
runs show no violation at that confidence (not a proof of privacy); a failure is strong
evidence of a violation.

:func:`audit_estimator` audits a registered algorithm end to end: many runs on D and on a
neighbour D′ (:data:`NEIGHBOURS`), a threshold test on a scalar statistic of the private
output (:data:`STATISTICS`), and a Clopper–Pearson lower bound ε̂ on the ε spent
(:func:`epsilon_lower_bound`). :data:`AUDIT_SETS` are small datasets on which hundreds of
runs take seconds; :func:`three_axes` is built so that a single far outlier flips a
non-private k-plane start, which shows that the Gibbs sampler stopped after one sweep from
that start leaks more than its ε (issue 9).
"""
from __future__ import annotations

import warnings
from concurrent.futures import as_completed
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ._validation import check_int, check_real

__all__ = ["clopper_pearson", "FrequencyCheck", "frequency_check", "bucket_counts", "epsilon_lower_bound",
           "AuditResult", "audit_from_statistics", "run_audit", "add_point", "remove_point", "change_cell", "far_outlier",
           "STATISTICS", "STATISTIC_HELP", "EstimatorStatistic",
           "NEIGHBOURS", "MIN_TRIALS", "make_neighbour", "audit_estimator", "audit_delta",
           "three_axes", "AuditSet", "AUDIT_SETS", "audit_dataset", "ALL_NEIGHBOURS"]


def clopper_pearson(successes, trials, alpha):
    """Two-sided (1 − alpha) Clopper–Pearson interval for a binomial proportion (arrays ok)."""
    x = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    lo = np.where(x > 0, stats.beta.ppf(alpha / 2, x, n - x + 1), 0.0)
    hi = np.where(x < n, stats.beta.ppf(1 - alpha / 2, x + 1, n - x), 1.0)
    return lo, hi


def bucket_counts(outputs_a, outputs_b, edges=None):
    """Counts of two samples of scalar outputs over common buckets.

    Discrete outputs (integers) are bucketed by value when ``edges`` is None; otherwise
    ``edges`` are histogram edges and values outside go into the first/last bucket.
    """
    a = np.asarray(outputs_a).ravel()
    b = np.asarray(outputs_b).ravel()
    if edges is None:
        values = np.union1d(a, b)
        return (np.searchsorted(values, a)[:, None] == np.arange(values.size)).sum(0), \
               (np.searchsorted(values, b)[:, None] == np.arange(values.size)).sum(0)
    edges = np.asarray(edges, dtype=float)
    ia = np.clip(np.searchsorted(edges, a, side="right") - 1, 0, edges.size - 2)
    ib = np.clip(np.searchsorted(edges, b, side="right") - 1, 0, edges.size - 2)
    nb = edges.size - 1
    return np.bincount(ia, minlength=nb), np.bincount(ib, minlength=nb)


@dataclass
class FrequencyCheck:
    passed: bool
    epsilon: float
    delta: float
    confidence: float
    worst_margin: float  # max over buckets/directions of LCB(p) − (e^ε UCB(p') + δ); > 0 is a violation
    worst_bucket: int
    empirical_epsilon: float  # max over buckets of log(p̂/p̂′) with both counts > 0 (a point estimate)


def frequency_check(counts_a, counts_b, epsilon, delta=0.0, confidence=0.99):
    """Test P_a(b) ≤ e^ε P_b(b) + δ and P_b(b) ≤ e^ε P_a(b) + δ on every bucket b.

    ``counts_a``/``counts_b``: counts of outputs per bucket from runs on D and on D′.
    The family-wise error is 1 − confidence (Bonferroni over 2 × buckets intervals of each
    side), so a correct mechanism fails this check with probability at most 1 − confidence.
    """
    epsilon = check_real(epsilon, "epsilon", 0.0, None)
    delta = check_real(delta, "delta", 0.0, 1.0)
    confidence = check_real(confidence, "confidence", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    ca = np.asarray(counts_a, dtype=float)
    cb = np.asarray(counts_b, dtype=float)
    alpha = (1 - confidence) / (2 * ca.size)
    lo_a, hi_a = clopper_pearson(ca, ca.sum(), alpha)
    lo_b, hi_b = clopper_pearson(cb, cb.sum(), alpha)
    margin = np.maximum(lo_a - (np.exp(epsilon) * hi_b + delta), lo_b - (np.exp(epsilon) * hi_a + delta))
    pa, pb = ca / ca.sum(), cb / cb.sum()
    both = (ca > 0) & (cb > 0)
    emp = float(np.max(np.abs(np.log(pa[both] / pb[both])))) if both.any() else float("nan")
    worst = int(np.argmax(margin))
    return FrequencyCheck(bool(margin.max() <= 0), epsilon, delta, confidence, float(margin.max()), worst, emp)


# ============================================================================ empirical audit
# An audit runs a mechanism many times on D and on a neighbour D′, reduces each output to a
# scalar statistic, and lets a threshold test guess which dataset produced it. For any
# (ε, δ)-DP mechanism and any test, TPR ≤ e^ε FPR + δ and (1 − FPR) ≤ e^ε (1 − TPR) + δ, so
#     ε ≥ max( log((TPR − δ)/FPR), log((1 − FPR − δ)/(1 − TPR)) ).
# Plugging in a one-sided Clopper–Pearson *lower* bound for the numerator and *upper* bound
# for the denominator gives a lower bound on the ε actually spent that holds with the stated
# confidence (Bonferroni over the four one-sided bounds). The threshold and orientation are
# chosen on one half of the runs and the bound is computed on the other half, so the choice
# does not bias the bound (Jagielski et al. 2020; Nasr et al. 2021).

def epsilon_lower_bound(tp, n_a, fp, n_b, confidence=0.95, delta=0.0):
    """Lower bound on ε from a test that said "D" ``tp`` times out of ``n_a`` runs on D and
    ``fp`` times out of ``n_b`` runs on D′ (one-sided Clopper–Pearson bounds, Bonferroni over
    four). Never negative. For fixed rates tp/n_a and fp/n_b it is non-decreasing in the
    number of runs, since the intervals only narrow."""
    alpha = (1.0 - confidence) / 4.0
    tpr_lo = stats.beta.ppf(alpha, tp, n_a - tp + 1) if tp > 0 else 0.0
    fpr_hi = stats.beta.ppf(1 - alpha, fp + 1, n_b - fp) if fp < n_b else 1.0
    tnr_lo = stats.beta.ppf(alpha, n_b - fp, fp + 1) if fp < n_b else 0.0
    fnr_hi = stats.beta.ppf(1 - alpha, n_a - tp + 1, tp) if tp > 0 else 1.0
    cands = [0.0]
    if tpr_lo - delta > 0:
        cands.append(np.log((tpr_lo - delta) / fpr_hi))
    if tnr_lo - delta > 0:
        cands.append(np.log((tnr_lo - delta) / fnr_hi))
    return float(max(cands))


def _point_estimate(tp, n_a, fp, n_b, delta=0.0):
    """Plug-in ε of the held-out rates, with ½ added to every count (tp, misses, fp, true
    negatives) so that a zero count gives a large but finite value instead of ∞. A point
    estimate, not a bound."""
    tpr, fpr = (tp + 0.5) / (n_a + 1), (fp + 0.5) / (n_b + 1)
    vals = [0.0]
    for num, den in ((tpr - delta, fpr), (1 - fpr - delta, 1 - tpr)):
        if num > 0:
            vals.append(np.log(num / den))
    return float(max(vals))


@dataclass
class AuditResult:
    """What an audit found. ``epsilon_lower`` is the bound at ``confidence``; ``epsilon_point``
    the plug-in estimate on the held-out half (counts + ½); rates are on the held-out half.
    ``stats_a``/``stats_b`` hold every run's statistic (first half chose the threshold)."""
    epsilon_lower: float
    epsilon_point: float
    threshold: float
    orientation: str  # "D if statistic >= threshold" or "D if statistic <= threshold"
    tpr: float
    fpr: float
    tpr_ci: tuple
    fpr_ci: tuple
    n_runs: int
    n_heldout: int
    confidence: float
    delta: float
    nominal_epsilon: float | None
    stats_a: np.ndarray
    stats_b: np.ndarray

    #: the three verdicts, in the words the page shows
    CONSISTENT = "consistent with the claim"
    LEAKS = "leaks more than claimed"
    NOT_PRIVATE = "no bound: not private"

    @property
    def verdict(self):
        """"no bound: not private" when there is no claimed ε, "leaks more than claimed"
        when ε̂ > ε, otherwise "consistent with the claim" (no violation found with these
        runs: not a proof of privacy)."""
        if self.nominal_epsilon is None:
            return self.NOT_PRIVATE
        if self.epsilon_lower > self.nominal_epsilon:
            return self.LEAKS
        return self.CONSISTENT

    @property
    def epsilon_ceiling(self):
        """The largest ε̂ these held-out runs could give (a test that separates D from D′
        perfectly). An audit with a ceiling below the claimed ε could never say "leaks more
        than claimed": it needs more runs."""
        ha, hb = self.stats_a.size - self.stats_a.size // 2, self.stats_b.size - self.stats_b.size // 2
        return epsilon_lower_bound(ha, ha, 0, hb, self.confidence, self.delta)


def _choose_threshold(sa, sb, confidence, delta, max_candidates=256):
    pooled = np.unique(np.r_[sa, sb])
    if pooled.size > max_candidates:
        pooled = np.unique(np.quantile(pooled, np.linspace(0, 1, max_candidates)))
    best = (-1.0, pooled[0], ">=")
    for t in pooled:
        for orient in (">=", "<="):
            ta = int(np.sum(sa >= t) if orient == ">=" else np.sum(sa <= t))
            fb = int(np.sum(sb >= t) if orient == ">=" else np.sum(sb <= t))
            val = epsilon_lower_bound(ta, sa.size, fb, sb.size, confidence, delta)
            if val > best[0]:
                best = (val, float(t), orient)
    return best[1], best[2]


def audit_from_statistics(stats_a, stats_b, confidence=0.95, delta=0.0, nominal_epsilon=None):
    """ε lower bound from scalar statistics of runs on D (``stats_a``) and on D′ (``stats_b``).

    The first half of each sample chooses the threshold and orientation; the second half
    (held out) gives the rates and the bound.
    """
    sa = np.asarray(stats_a, dtype=float)
    sb = np.asarray(stats_b, dtype=float)
    if sa.size < 4 or sb.size < 4:
        raise ValueError("trials must give at least 4 runs on each side (2 to choose the threshold, 2 to test)")
    ha, hb = sa.size // 2, sb.size // 2
    t, orient = _choose_threshold(sa[:ha], sb[:hb], confidence, delta)
    ea, eb = sa[ha:], sb[hb:]
    hit_a = ea >= t if orient == ">=" else ea <= t
    hit_b = eb >= t if orient == ">=" else eb <= t
    tp, fp = int(hit_a.sum()), int(hit_b.sum())
    alpha = 1 - confidence
    tpr_ci = tuple(float(v) for v in clopper_pearson(tp, ea.size, alpha))
    fpr_ci = tuple(float(v) for v in clopper_pearson(fp, eb.size, alpha))
    return AuditResult(
        epsilon_lower=epsilon_lower_bound(tp, ea.size, fp, eb.size, confidence, delta),
        epsilon_point=_point_estimate(tp, ea.size, fp, eb.size, delta), threshold=t,
        orientation=f"D if statistic {orient} threshold", tpr=tp / ea.size, fpr=fp / eb.size,
        tpr_ci=tpr_ci, fpr_ci=fpr_ci, n_runs=sa.size + sb.size, n_heldout=ea.size + eb.size,
        confidence=confidence, delta=delta, nominal_epsilon=nominal_epsilon, stats_a=sa, stats_b=sb)


def run_audit(statistic, data_a, data_b, trials, confidence=0.95, delta=0.0, nominal_epsilon=None, seed=0,
              executor=None, chunks=None, progress=None):
    """Run ``statistic(data, rng) -> float`` (the mechanism followed by the test statistic)
    ``trials`` times on each dataset and bound ε with :func:`audit_from_statistics`.

    Every run's generator is ``SeedSequence(seed, spawn_key=(side, trial))``, so results do
    not depend on the executor or the chunking. The runs go in ``chunks`` pieces per side
    (default 8 with an executor, 25 in process, so that ``progress(done, total)`` moves
    often); with ``executor`` (any ``concurrent.futures.Executor``, e.g. a process pool or a
    Dask client's) ``statistic`` must be picklable.
    """
    trials = check_int(trials, "trials", 4)
    chunks = check_int(chunks if chunks is not None else (8 if executor is not None else 25), "chunks", 1)
    bounds = np.unique(np.linspace(0, trials, min(chunks, trials) + 1).astype(int))
    pieces = [(side, lo, hi) for side in (0, 1) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
    results = {}

    def finish(side, lo, hi, values):
        results[(side, lo)] = values
        if progress:
            progress(sum(v.size for v in results.values()), 2 * trials)

    if executor is None:
        for side, lo, hi in pieces:
            finish(side, lo, hi, _run_range(statistic, (data_a, data_b)[side], side, seed, lo, hi))
    else:
        futs = {executor.submit(_run_range, statistic, (data_a, data_b)[side], side, seed, lo, hi): (side, lo, hi)
                for side, lo, hi in pieces}
        for f in as_completed(futs):
            finish(*futs[f], f.result())
    sa = np.concatenate([results[k] for k in sorted(k for k in results if k[0] == 0)])
    sb = np.concatenate([results[k] for k in sorted(k for k in results if k[0] == 1)])
    return audit_from_statistics(sa, sb, confidence, delta, nominal_epsilon)


def _run_range(statistic, data, side, seed, lo, hi):
    out = np.empty(hi - lo)
    for i, t in enumerate(range(lo, hi)):
        out[i] = statistic(data, np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(side, t))))
    return out


# ----------------------------------------------------------------------------- neighbours
def add_point(X, point):
    """D′ = D plus one row (add/remove-one neighbours, points as rows)."""
    X = np.asarray(X, dtype=float)
    return np.vstack([X, np.asarray(point, dtype=float)[None, :]])


def remove_point(X, index):
    """D′ = D without row ``index``."""
    X = np.asarray(X)
    if not 0 <= index < X.shape[0]:
        raise ValueError(f"index must be in [0, {X.shape[0] - 1}]; got {index}")
    return np.delete(X, index, axis=0)


def change_cell(A, i, j, by=1):
    """D′ = A with cell (i, j) changed by ``by`` (the co-clustering paper's neighbouring
    relation for count matrices is |by| = 1). Works on dense and scipy.sparse input."""
    import scipy.sparse as sp
    B = sp.lil_matrix(A, dtype=float) if sp.issparse(A) else np.array(A, dtype=float)
    if B[i, j] + by < 0:
        raise ValueError("change_cell would make a count negative")
    B[i, j] = B[i, j] + by
    return sp.csr_matrix(B) if sp.issparse(A) else B


def far_outlier(X, subspaces=None, radius=1.0):
    """A point of norm ``radius`` as far as possible from the data's subspaces (Fig. 1 of the
    subspace paper): the direction least explained by ``subspaces`` (or, without them, the
    smallest right singular vector of X). This builds the audit's neighbour; it is not a release."""
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    if subspaces is not None:
        P = sum(U @ U.T for U in np.asarray(subspaces))
    else:
        P = X.T @ X
    w, V = np.linalg.eigh(P + 1e-12 * np.eye(d))
    return radius * V[:, 0]


# ----------------------------------------------------------------------------- estimators
#: default test statistic per algorithm family (each a function of the *private* outputs only)
STATISTICS = {
    "subspace": "outlier_distance",
    "cocluster": "table_cell",
    "kmeans": "nearest_centre",
}
STATISTIC_HELP = {
    "outlier_distance": "distance from the audited point to the nearest released subspace",
    "table_cell": "the released contingency-table cell that holds the changed matrix cell "
                  "(located with the released row and column partitions)",
    "nearest_centre": "distance from the audited point to the nearest released centre",
}


@dataclass
class EstimatorStatistic:
    """``(X, rng) -> float``: fit a registered algorithm (``dpcore.experiments.ALGORITHMS``)
    on X and reduce its release to a scalar. Picklable, so it can run in worker processes.

    ``target`` is the audited point (``outlier_distance``, ``nearest_centre``) or the
    (row, column) of the changed cell (``table_cell``).
    """
    name: str
    params: dict
    epsilon: float | None
    statistic: str
    target: object

    def __post_init__(self):
        from .experiments import ALGORITHMS
        if self.name not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {self.name!r}")
        entry = ALGORITHMS[self.name]
        if entry.private and self.epsilon is None:
            raise ValueError(f"epsilon must be given (> 0) for the private algorithm {self.name}")
        if not entry.private and self.epsilon is not None:
            raise ValueError(f"epsilon must be empty for {self.name}: it is not private and makes no privacy claim "
                             "(the audit then measures how much it leaks)")
        if self.statistic not in STATISTIC_HELP:
            raise ValueError(f"statistic must be one of {', '.join(STATISTIC_HELP)}; got {self.statistic!r}")

    @classmethod
    def for_dataset(cls, name, dataset, epsilon, target, params=None, statistic=None):
        """The statistic of algorithm ``name`` with the dataset's defaults (k, q from its
        classes and subspaces, as in the experiments) and the family's default statistic."""
        from .experiments import ALGORITHMS, FAMILY_DEFAULTS
        if name not in ALGORITHMS:                      # before the lookup below; __init__ checks the rest
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {name!r}")
        family = ALGORITHMS[name].family
        return cls(name, {**FAMILY_DEFAULTS[family](dataset), **(params or {})}, epsilon,
                   statistic or STATISTICS[family], target)

    def __call__(self, X, rng):
        from .experiments import ALGORITHMS
        entry = ALGORITHMS[self.name]
        params = dict(self.params)
        if self.epsilon is not None:
            params["epsilon"] = self.epsilon
        from .subspace.common import single_threaded
        with warnings.catch_warnings(), single_threaded():     # many small fits: one BLAS thread each (as in sweeps)
            warnings.simplefilter("ignore")
            est = entry.load()(**params, random_state=rng).fit(X)
        if self.statistic == "outlier_distance":
            from .metrics import squared_distances_to_subspaces
            return float(np.sqrt(squared_distances_to_subspaces(np.asarray(self.target)[None], est.subspaces_).min()))
        if self.statistic == "nearest_centre":
            C = np.atleast_2d(est.cluster_centers_)
            return float(np.sqrt(((C - np.asarray(self.target)[None]) ** 2).sum(1).min()))
        i, j = self.target
        r, c = int(est.row_labels_[i]), int(est.column_labels_[j])
        return float(est.T_[r, c]) if r >= 0 and c >= 0 else 0.0


NEIGHBOURS = {
    "points": {"add_outlier": "add one far outlier (Fig. 1 of the subspace paper)",
               "remove_point": "remove one point (the first row)"},
    "counts": {"change_cell": "add 1 to one cell (the co-clustering paper's neighbouring relation)"},
}
#: every construction, whatever the data kind (what a page may offer)
ALL_NEIGHBOURS = {k: v for kind in NEIGHBOURS.values() for k, v in kind.items()}
MIN_TRIALS = 50


def _outlier_radius(dataset):
    """Norm of the audit's outlier: the public radius the algorithms clip to when the
    dataset has one (the most influence a single point may have), 1 (the unit ball) for
    synthetic subspace data, otherwise the mean row norm."""
    if "public_radius" in dataset.extras:
        return float(dataset.extras["public_radius"])
    if dataset.subspaces is not None:
        return 1.0
    return float(np.linalg.norm(dataset.X, axis=1).mean())


def make_neighbour(dataset, neighbour):
    """(D′, target) for a Dataset and a neighbour construction of :data:`NEIGHBOURS`.

    ``target`` is what the default statistic looks at: the outlier / removed point, or the
    changed cell. The outlier has the norm of :func:`_outlier_radius` and the direction
    least explained by the data (:func:`far_outlier`). The changed cell is the first
    non-zero cell of the first row, so that the change stays inside the data's support.
    """
    kind = dataset.kind
    if kind not in NEIGHBOURS:
        raise ValueError(f"neighbour: there is no neighbour construction for data of kind {kind!r} (the audit knows "
                         f"{', '.join(NEIGHBOURS)}), so this dataset cannot be audited")
    if neighbour not in NEIGHBOURS[kind]:
        other = next((k for k, v in NEIGHBOURS.items() if neighbour in v), None)
        why = f"{neighbour!r} is a construction for data of kind {other!r}" if other else f"got {neighbour!r}"
        raise ValueError(f"neighbour must be one of {', '.join(NEIGHBOURS[kind])} for a dataset of kind {kind!r}: "
                         f"{why}")
    X = dataset.X
    if neighbour == "add_outlier":
        p = far_outlier(X, dataset.subspaces, radius=_outlier_radius(dataset))
        return add_point(X, p), p
    if neighbour == "remove_point":
        return remove_point(X, 0), np.asarray(X[0], dtype=float)
    import scipy.sparse as sp
    row = sp.csr_matrix(X)[0]
    j = int(row.indices[0]) if row.nnz else 0
    return change_cell(X, 0, j, 1), (0, j)


def audit_delta(name, dataset, params=None):
    """The δ an (ε, δ) algorithm is run with in an audit, and that the bound subtracts:
    ``params["delta"]`` if given, else the estimator's own default computed on D (e.g.
    1/(n ln n) for the subspace methods, 10⁻⁶ for the k-means ones). It is passed to the
    estimator explicitly so that D and D′ (which may differ in n) use the same public δ.
    0 for pure ε-DP algorithms."""
    import inspect

    from .experiments import ALGORITHMS
    entry = ALGORITHMS[name]
    if not (entry.private and entry.takes_delta):
        return 0.0
    if (params or {}).get("delta") is not None:
        return float(params["delta"])
    default = inspect.signature(entry.load().__init__).parameters["delta"].default
    if default is None:                             # the subspace methods: δ = 1/(n ln n) of D
        from .subspace.sample_aggregate import default_delta
        return default_delta(dataset.n)
    return float(default)


def audit_estimator(name, dataset, neighbour, trials, epsilon=None, params=None, confidence=0.95, seed=0,
                    executor=None, progress=None):
    """Audit a registered algorithm on ``dataset`` and its neighbour (see :func:`make_neighbour`).

    The statistic is the family default of :data:`STATISTICS`; δ for the bound (and for the
    runs) is :func:`audit_delta`. ``trials`` ≥ 50 runs per side. Raises ValueError naming
    the parameter for: too few trials, an ε for a non-private algorithm (or none for a
    private one), an algorithm that does not run on this kind of data, a neighbour
    construction that does not exist for it.
    """
    from .experiments import ALGORITHMS, FAMILY_KINDS
    trials = check_int(trials, "trials", MIN_TRIALS)
    if epsilon is not None:
        epsilon = check_real(epsilon, "epsilon", 0.0, None, low_inclusive=False)
    if name not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {name!r}")
    kinds = FAMILY_KINDS[ALGORITHMS[name].family]
    if dataset.kind not in kinds:
        raise ValueError(f"algorithm {name} runs on data of kind {' or '.join(sorted(kinds))}; this dataset is of "
                         f"kind {dataset.kind!r}")
    confidence = check_real(confidence, "confidence", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    D_b, target = make_neighbour(dataset, neighbour)
    params = dict(params or {})
    delta = audit_delta(name, dataset, params) if epsilon is not None else 0.0
    if delta > 0:
        params["delta"] = delta
    stat = EstimatorStatistic.for_dataset(name, dataset, epsilon, target, params)
    # D (without the change) is side a; for "remove_point" D′ is the smaller set
    return run_audit(stat, dataset.X, D_b, trials, confidence, delta, epsilon, seed, executor, progress=progress)


# ----------------------------------------------------------------------------- audit data sets
def three_axes(n_per_axis=400, d=3):
    """Points ±e₁, ±e₂, ±e₃ of R^d (``n_per_axis`` on each axis, signs alternating), except
    that one point of the third axis has norm √½. Built to show the Gibbs sampler's
    start leak (issue 9): with k = 2 lines, the best pair on D is {e₁, e₂} (leaving e₃
    out costs ½ less than leaving out another axis), and the far outlier e₃ (the direction
    least explained by the data) makes {e₃, e₁ or e₂} the best pair on D′ — a non-private
    k-plane start flips deterministically with one record. Rows lie in the unit ball;
    ``extras["public_radius"] = 1``."""
    from .data import Dataset
    n_per_axis = check_int(n_per_axis, "n_per_axis", 2)
    d = check_int(d, "d", 3)
    blocks = []
    for a in range(3):
        P = np.zeros((n_per_axis, d))
        P[:, a] = np.where(np.arange(n_per_axis) % 2, 1.0, -1.0)
        blocks.append(P)
    blocks[2][0, 2] = -np.sqrt(0.5)
    return Dataset(
        name=f"three axes ({3 * n_per_axis} points in R^{d})",
        description="points on three orthogonal axes; the third holds ½ less squared norm, so one extra point "
                    "on it changes the best pair of lines (the Gibbs start-leak set)",
        X=np.vstack(blocks), labels=np.repeat(np.arange(3), n_per_axis), kind="points",
        privacy_note="rows in the public unit ball",
        extras={"public_radius": 1.0}, params=dict(kind="three_axes", n_per_axis=n_per_axis, d=d))


@dataclass(frozen=True)
class AuditSet:
    """A small dataset for audits (hundreds of runs must fit in seconds) and the algorithm
    parameters that go with it, per family (merged over the family defaults)."""
    label: str
    build: object          # () -> Dataset
    params: dict           # family -> dict of parameters
    note: str = ""


def _subspaces_small():
    from .data import make_union_of_subspaces
    return make_union_of_subspaces(n=200, d=5, k=2, q=1, sigma=0.05, random_state=0)


def _gaussians_small():
    from .data import make_gaussian_mixture
    return make_gaussian_mixture(n=200, d=5, k=3, sigma=0.1, random_state=0)


def _blocks_small():
    from .data import make_block_matrix
    return make_block_matrix(n_rows=60, n_cols=40, k=3, l=3, random_state=0)


AUDIT_SETS = {
    "subspaces": AuditSet("2 lines in R^5, n = 200 (subspace methods)", _subspaces_small, {},
                          "union of 2 random lines, σ = 0.05, clipped to the unit ball; the outlier has norm 1"),
    "gaussians": AuditSet("3 Gaussians in R^5, n = 200 (k-means methods)", _gaussians_small, {},
                          "the outlier sits on the generator's public radius Λ, the largest norm the methods allow"),
    "blocks": AuditSet("60×40 block count matrix (co-clustering)", _blocks_small, {},
                       "Poisson counts with 3×3 co-clusters; D′ adds 1 to one cell"),
    "three_axes": AuditSet("three axes, n = 1200 (Gibbs start leak)", lambda: three_axes(400),
                           {"subspace": {"n_clusters": 2, "subspace_dim": 1}},
                           "fit k = 2 lines: the non-private k-plane start flips with the far outlier e₃"),
}


def audit_dataset(key):
    """(Dataset, params per family) of the audit set ``key`` of :data:`AUDIT_SETS`."""
    if key not in AUDIT_SETS:
        raise ValueError(f"audit set must be one of {', '.join(AUDIT_SETS)}; got {key!r}")
    a = AUDIT_SETS[key]
    return a.build(), dict(a.params)
