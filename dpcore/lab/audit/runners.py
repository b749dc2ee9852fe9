"""Audit runs: many runs of a release on D and on a neighbour D′, reduced to a bound.

:func:`audit_from_statistics` turns the runs' statistics into an :class:`AuditResult` (the
test is chosen on the first half of the runs, the bound measured on the held-out half);
:func:`run_audit` runs any ``statistic(data, rng)``; :func:`audit_estimator` audits a method
of the catalogue end to end. The reasoning is in ``docs/audit.md``.
"""
from __future__ import annotations

import inspect
import math
from concurrent.futures import as_completed
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...subspace.sample_aggregate import default_delta
from ...validation import check_int, check_real
from ..methods import FAMILY_KINDS, get_method, run_seed
from .bounds import (_choose_threshold, _point_estimate, _threshold_counts, clopper_pearson, epsilon_lower_bound,
                     gdp_epsilon, gdp_mu_lower_bound)
from .neighbours import NEIGHBOUR_RELATION, claimed_relation, default_neighbour, make_neighbour
from .scores import fit_lr_score
from .statistics import EstimatorStatistic

__all__ = ["AuditResult", "audit_from_statistics", "GDPAudit", "gdp_audit_from_statistics", "run_audit",
           "MIN_TRIALS", "audit_delta", "audit_estimator", "audit_verdict", "audit_plan"]

#: the fewest runs per side :func:`audit_estimator` accepts
MIN_TRIALS = 50


@dataclass
class AuditResult:
    """What an audit found. ``epsilon_lower`` is the bound at ``confidence``; ``epsilon_point``
    the plug-in estimate on the held-out runs (counts + ½); rates are on the held-out runs.
    ``stats_a``/``stats_b`` hold every run's scalar test statistic (the score of
    :func:`fit_lr_score` when the runs released feature vectors, kept in
    ``features_a``/``features_b``); with ``split`` the first half of each side chose the
    score and the threshold and the second half gave the bound, without it the threshold
    was fixed before the runs and every run is held out. ``relation`` is the neighbouring
    relation of the audited pair (D, D′) and ``claimed_relation`` the one the method's ε is
    stated for (:data:`CLAIMED_RELATION`; None when unknown or not private).

    Attributes
    ----------
    epsilon_lower : float
        Clopper–Pearson lower bound on ε at ``confidence`` (held-out runs).
    epsilon_point : float
        Plug-in ε of the held-out rates, counts + ½ (a point estimate, not a bound).
    threshold : float
        Threshold of the test.
    orientation : str
        "D if statistic >= threshold" or "D if statistic <= threshold".
    tpr, fpr : float
        True- and false-positive rates of the test on the held-out runs.
    tpr_ci, fpr_ci : tuple of float
        Two-sided (1 − confidence) Clopper–Pearson intervals of ``tpr`` and ``fpr``.
    n_runs : int
        Runs on both sides.
    n_heldout : int
        Held-out runs on both sides (those that gave the bound).
    confidence : float
        Confidence of the bound.
    delta : float
        δ subtracted by the bound.
    nominal_epsilon : float or None
        The claimed ε; None for a non-private algorithm.
    stats_a, stats_b : ndarray of shape (runs,)
        Every run's scalar statistic (or fitted score) on D and on D′.
    split : bool, default True
        Whether the first half of each side selected the score and threshold.
    score : str, default "statistic"
        What ``stats_a``/``stats_b`` are: the statistic itself or a fitted score.
    features_a, features_b : ndarray of shape (runs, features) or None
        The runs' feature vectors, when they released some.
    statistic : str or None
        Label of the test statistic.
    relation : str or None
        Neighbouring relation of the audited pair (a key of :data:`RELATIONS`).
    claimed_relation : str or None
        Relation the method's ε is stated for.
    """
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
    split: bool = True
    score: str = "statistic"          # what stats_a/stats_b are: the statistic itself or a fitted score
    features_a: np.ndarray | None = None
    features_b: np.ndarray | None = None
    statistic: str | None = None
    relation: str | None = None
    claimed_relation: str | None = None

    #: the three verdicts, in the words the page shows
    CONSISTENT = "consistent with the claim"
    LEAKS = "leaks more than claimed"
    NOT_PRIVATE = "no bound: not private"

    @property
    def verdict(self):
        """"no bound: not private" when there is no claimed ε, "leaks more than claimed"
        when ε̂ > ε, otherwise "consistent with the claim" (no violation found with these
        runs: not a proof of privacy). The verdict is about the audited ``relation``; see
        :attr:`relation_is_claimed`."""
        if self.nominal_epsilon is None:
            return self.NOT_PRIVATE
        if self.epsilon_lower > self.nominal_epsilon:
            return self.LEAKS
        return self.CONSISTENT

    @property
    def relation_is_claimed(self):
        """True when the audited relation is the one the method's ε is claimed for, False
        when it is another one (then ε̂ > ε is not a violation of the claim), None if unknown."""
        if self.relation is None or self.claimed_relation is None:
            return None
        return self.relation == self.claimed_relation

    @property
    def epsilon_ceiling(self):
        """The largest ε̂ these held-out runs could give (a test that separates D from D′
        perfectly). An audit with a ceiling below the claimed ε could never say "leaks more
        than claimed": it needs more runs."""
        if self.split:
            ha, hb = self.stats_a.size - self.stats_a.size // 2, self.stats_b.size - self.stats_b.size // 2
        else:
            ha, hb = self.stats_a.size, self.stats_b.size
        return epsilon_lower_bound(ha, ha, 0, hb, self.confidence, self.delta)



def audit_from_statistics(stats_a, stats_b, confidence=0.95, delta=0.0, nominal_epsilon=None, threshold=None,
                          orientation=">=", statistic=None, relation=None, claimed_relation=None):
    """ε lower bound from the runs on D (``stats_a``) and on D′ (``stats_b``).

    ``stats_a``/``stats_b`` are one scalar statistic per run (1-D) or one feature vector per
    run (2-D, runs × features). By default the first half of each side *selects* (for
    feature vectors: fits a likelihood-ratio score with :func:`fit_lr_score`; then: chooses
    the threshold and orientation) and only the second half (held out, never seen by the
    selection) gives the rates and the Clopper–Pearson bound, so the choice does not bias
    the bound. A ``threshold`` (with ``orientation`` ">=" or "<=") fixed before the runs —
    e.g. from the claimed law, never from these runs — skips the selection and holds out
    every run (scalar statistics only). ``statistic``, ``relation`` and
    ``claimed_relation`` are labels kept in the result.

    Parameters
    ----------
    stats_a, stats_b : array_like of shape (runs,) or (runs, features)
        Statistics of the runs on D and on D′; at least 4 runs on each side.
    confidence : float in (0, 1), default 0.95
        Confidence of the bound.
    delta : float in [0, 1], default 0.0
        The mechanism's δ.
    nominal_epsilon : float, optional
        The claimed ε (None for a non-private algorithm).
    threshold : float, optional
        A threshold fixed before the runs (scalar statistics only).
    orientation : {">=", "<="}, default ">="
        Direction of a fixed ``threshold``: "D if statistic >= threshold" or "<=".
    statistic, relation, claimed_relation : str, optional
        Labels kept in the result.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        If the statistics are not both 1-D or both 2-D with the same features, a side has
        fewer than 4 runs, ``orientation`` is not ">=" or "<=", ``confidence`` or ``delta``
        is out of range, or a ``threshold`` is given for feature vectors.
    """
    sa = np.asarray(stats_a, dtype=float)
    sb = np.asarray(stats_b, dtype=float)
    if sa.ndim not in (1, 2) or sb.ndim != sa.ndim or (sa.ndim == 2 and sa.shape[1] != sb.shape[1]):
        raise ValueError("stats_a and stats_b must both be 1-D (one statistic per run) or 2-D (runs × features, "
                         "the same features)")
    if sa.shape[0] < 4 or sb.shape[0] < 4:
        raise ValueError("trials must give at least 4 runs on each side (2 to choose the threshold, 2 to test)")
    if orientation not in (">=", "<="):
        raise ValueError(f"orientation must be '>=' or '<='; got {orientation!r}")
    confidence = check_real(confidence, "confidence", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    delta = check_real(delta, "delta", 0.0, 1.0)
    features_a = features_b = None
    score = "statistic"
    split = threshold is None
    ha, hb = (sa.shape[0] // 2, sb.shape[0] // 2) if split else (0, 0)
    if sa.ndim == 2:
        if not split:
            raise ValueError("threshold must be None for feature vectors (the score is fitted on half of the runs)")
        features_a, features_b = sa, sb
        fit = fit_lr_score(sa[:ha], sb[:hb], confidence, delta)
        score = f"likelihood-ratio score ({fit.kind}), fitted on the first half"
        sa, sb = fit(sa), fit(sb)
    if split:
        t, orient, _ = _choose_threshold(sa[:ha], sb[:hb], confidence, delta)
    else:
        t, orient = check_real(threshold, "threshold"), orientation
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
        confidence=confidence, delta=delta, nominal_epsilon=nominal_epsilon, stats_a=sa, stats_b=sb,
        split=split, score=score, features_a=features_a, features_b=features_b, statistic=statistic,
        relation=relation, claimed_relation=claimed_relation)



@dataclass
class GDPAudit:
    """A GDP (f-DP) audit: ``mu_lower`` bounds μ and ``epsilon_lower`` = the ε of μ_lower-GDP at
    ``delta``; both valid only if the mechanism's tradeoff curve is Gaussian.

    Attributes
    ----------
    mu_lower : float
        Lower bound on μ at ``confidence``.
    epsilon_lower : float
        ε of μ_lower-GDP at ``delta`` (0 when ``mu_lower`` is 0).
    threshold : float
        Threshold of the test.
    orientation : str
        "D if statistic >= threshold" or "D if statistic <= threshold".
    fpr, fnr : float
        False-positive and false-negative rates on the held-out runs.
    n_heldout : int
        Held-out runs on both sides.
    confidence : float
        Confidence of the bound.
    delta : float
        δ at which ``epsilon_lower`` is stated.
    """
    mu_lower: float
    epsilon_lower: float
    threshold: float
    orientation: str
    fpr: float
    fnr: float
    n_heldout: int
    confidence: float
    delta: float


def gdp_audit_from_statistics(stats_a, stats_b, delta, confidence=0.95, threshold=None, orientation=">="):
    """μ and ε lower bounds under the Gaussian-tradeoff assumption from scalar statistics.

    As in :func:`audit_from_statistics`, the threshold maximising the μ bound is chosen on
    the first half of each side and the bound is computed on the held-out second half —
    unless ``threshold`` is fixed before the runs (then every run is held out).

    Parameters
    ----------
    stats_a, stats_b : array_like
        Scalar statistics of the runs on D and on D′ (flattened); at least 4 on each side.
    delta : float in (0, 1)
        δ at which the ε bound is stated.
    confidence : float in (0, 1), default 0.95
        Confidence of the bound.
    threshold : float, optional
        A threshold fixed before the runs.
    orientation : {">=", "<="}, default ">="
        Direction of a fixed ``threshold``.

    Returns
    -------
    GDPAudit

    Raises
    ------
    ValueError
        If a side has fewer than 4 runs, or (when μ̂ > 0) ``delta`` is out of range.
    """
    sa, sb = np.asarray(stats_a, dtype=float).ravel(), np.asarray(stats_b, dtype=float).ravel()
    if sa.size < 4 or sb.size < 4:
        raise ValueError("trials must give at least 4 runs on each side (2 to choose the threshold, 2 to test)")
    if threshold is None:
        ha, hb = sa.size // 2, sb.size // 2
        xa, xb = sa[:ha], sb[:hb]
        pooled = np.unique(np.r_[xa, xb])
        if pooled.size > 256:
            pooled = np.unique(np.quantile(pooled, np.linspace(0, 1, 256)))
        ge_a, ge_b, le_a, le_b = _threshold_counts(xa, xb, pooled)
        vals = gdp_mu_lower_bound(np.column_stack([ge_a, le_a]).ravel(), ha,
                                  np.column_stack([ge_b, le_b]).ravel(), hb, confidence)
        i = int(np.argmax(vals))
        t, orient = float(pooled[i // 2]), (">=", "<=")[i % 2]
    else:
        ha = hb = 0
        t, orient = float(threshold), orientation
    ea, eb = sa[ha:], sb[hb:]
    tp = int(np.sum(ea >= t) if orient == ">=" else np.sum(ea <= t))
    fp = int(np.sum(eb >= t) if orient == ">=" else np.sum(eb <= t))
    mu = gdp_mu_lower_bound(tp, ea.size, fp, eb.size, confidence)
    return GDPAudit(mu, gdp_epsilon(mu, delta) if mu > 0 else 0.0, t, f"D if statistic {orient} threshold",
                    fp / eb.size, 1 - tp / ea.size, ea.size + eb.size, confidence, delta)



def run_audit(statistic, data_a, data_b, trials, confidence=0.95, delta=0.0, nominal_epsilon=None, seed=0,
              executor=None, chunks=None, progress=None, labels=None):
    """Run ``statistic(data, rng)`` (the mechanism followed by the test statistic: a float, or
    a 1-D feature vector of fixed length for a likelihood-ratio score fitted on half the runs)
    ``trials`` times on each dataset and bound ε with :func:`audit_from_statistics`
    (``labels``: a dict of its ``statistic``, ``relation`` and ``claimed_relation``).

    Every run's generator is ``SeedSequence(seed, spawn_key=(side, trial))``, so results do
    not depend on the executor or the chunking. The runs go in ``chunks`` pieces per side
    (default 8 with an executor, 25 in process, so that ``progress(done, total)`` moves
    often); with ``executor`` (any ``concurrent.futures.Executor``, e.g. a process pool or a
    Dask client's) ``statistic`` must be picklable.

    Parameters
    ----------
    statistic : callable
        ``statistic(data, rng) -> float or 1-D ndarray``.
    data_a, data_b : object
        D and D′, passed to ``statistic`` unchanged.
    trials : int ≥ 4
        Runs per side.
    confidence : float in (0, 1), default 0.95
        Confidence of the bound.
    delta : float in [0, 1], default 0.0
        The mechanism's δ.
    nominal_epsilon : float, optional
        The claimed ε (None for a non-private algorithm).
    seed : int, default 0
        Root of every run's ``SeedSequence``.
    executor : concurrent.futures.Executor, optional
        Runs the pieces; None runs them in this process.
    chunks : int ≥ 1, optional
        Pieces per side (default 8 with an executor, 25 without).
    progress : callable, optional
        ``progress(done, total)`` called after each piece.
    labels : dict, optional
        ``statistic``, ``relation`` and ``claimed_relation`` for :func:`audit_from_statistics`.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        If ``trials`` < 4, ``chunks`` < 1, or :func:`audit_from_statistics` refuses the runs.
    """
    trials = check_int(trials, "trials", 4)
    chunks = check_int(chunks if chunks is not None else (8 if executor is not None else 25), "chunks", 1)
    bounds = np.unique(np.linspace(0, trials, min(chunks, trials) + 1).astype(int))
    pieces = [(side, lo, hi) for side in (0, 1) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
    results = {}

    def finish(side, lo, hi, values):
        results[(side, lo)] = values
        if progress:
            progress(sum(v.shape[0] for v in results.values()), 2 * trials)

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
    return audit_from_statistics(sa, sb, confidence, delta, nominal_epsilon, **(labels or {}))


def _run_range(statistic, data, side, seed, lo, hi):
    """The statistic of runs lo..hi−1 of one side: (runs,) for scalars, (runs, f) for feature vectors."""
    label = ("audit: D", "audit: D'")[side]        # the one seed recipe: run t of a side
    out = [np.asarray(statistic(data, np.random.default_rng(run_seed(seed, label, math.nan, t))), dtype=float)
           for t in range(lo, hi)]
    return np.stack(out) if out else np.empty(0)



def audit_delta(name, dataset, params=None):
    """The δ an (ε, δ) method is run with in an audit, and that the bound subtracts:
    ``params["delta"]`` if given, else the estimator's own default computed on D (e.g.
    1/(n ln n) for the subspace methods, 10⁻⁶ for the k-means ones). It is passed to the
    estimator explicitly so that D and D′ (which may differ in n) use the same public δ.
    0 for pure ε-DP methods.

    Parameters
    ----------
    name : str or dpcore.lab.methods.Method
        A key of :data:`dpcore.lab.methods.METHODS`, or an entry.
    dataset : dpcore.data.Dataset
        D.
    params : dict, optional
        The audit's parameters.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``name`` is not in the catalogue.
    """
    method = get_method(name)
    if not (method.private and method.takes_delta):
        return 0.0
    given = {**method.params, **(params or {})}.get("delta")
    if given is not None:
        return float(given)
    default = inspect.signature(method.cls.__init__).parameters["delta"].default
    if default is None:                             # the subspace methods: δ = 1/(n ln n) of D
        return default_delta(dataset.n)
    return float(default)


def audit_verdict(name, dataset, epsilon=None, params=None, seed=None, *, label=""):
    """The verdict of ONE run of an audit of ``dataset`` (every run on D and on D′ is one fit,
    one release about the same people): what it spends and whether it is private, planned by
    :func:`dpcore.lab.verdicts.plan_run` for the estimator :func:`audit_estimator` fits (the
    dataset's defaults, ``params``, ε and the audit's δ, :func:`audit_delta`) in the context of
    an audit (``where="an audit"``, mixing not checked, ``seed`` a public seed or None).

    A meter charges ``verdict.times(n)`` for n finished runs (in one entry);
    :func:`audit_plan` is the whole audit's.

    Parameters
    ----------
    name : str or dpcore.lab.methods.Method
    dataset : dpcore.data.Dataset
        D (the user's data when the audit is charged).
    epsilon : float > 0 or None
        ε of a private method; None for a non-private one.
    params : dict, optional
        The audit's parameters (over the dataset defaults).
    seed : int or None, optional
        A public seed the runs' noise comes from (None: secret noise).
    label : str, optional

    Returns
    -------
    dpcore.privacy.meter.Verdict
        ``claim=False`` for a method without a privacy claim.

    Raises
    ------
    ValueError
        For an ε missing for a private method or given for a non-private one, or a parameter
        the estimator's plan refuses.
    """
    from ..verdicts import RunContext, plan_run

    method = get_method(name)
    if method.private and epsilon is None:
        raise ValueError(f"epsilon must be given (> 0) for the private method {method.name}")
    if not method.private and epsilon is not None:
        raise ValueError(f"epsilon must be empty for {method.name}: it is not private and makes no privacy claim "
                         "(the audit then measures how much it leaks)")
    params = {**method.dataset_defaults(dataset), **dict(params or {})}
    delta = audit_delta(method, dataset, params) if epsilon is not None else 0.0
    if delta > 0:
        params["delta"] = delta
    est = method.build(params=params, epsilon=epsilon)
    context = RunContext(seed=seed, dataset=dataset, where="an audit", checks_mixing=False)
    return plan_run(method, est, dataset.X, context, label=label)


def audit_plan(name, dataset, trials, epsilon=None, params=None, seed=None, *, label=""):
    """The planned verdict of a whole audit: :func:`audit_verdict` × 2 × ``trials`` (the runs on D
    and on D′), what a budget reserves before the audit starts.

    Parameters
    ----------
    name, dataset, epsilon, params, seed, label
        As :func:`audit_verdict`.
    trials : int ≥ MIN_TRIALS
        Runs per side.

    Returns
    -------
    dpcore.privacy.meter.Verdict

    Raises
    ------
    ValueError
        As :func:`audit_verdict`, and for too few trials.
    """
    trials = check_int(trials, "trials", MIN_TRIALS)
    return audit_verdict(name, dataset, epsilon, params, seed, label=label).times(2 * trials)


def _first_row(M):
    """The first row of a dense or sparse matrix, as a dense float vector."""
    return np.asarray(M[0].toarray()).ravel() if sp.issparse(M) else np.asarray(M[0], dtype=float)


def audit_estimator(name, dataset, neighbour, trials, epsilon=None, params=None, confidence=0.95, seed=0,
                    executor=None, progress=None, statistic=None):
    """Audit a method of the catalogue on ``dataset`` and its neighbour (see :func:`make_neighbour`).

    ``neighbour`` None takes :func:`default_neighbour`: a construction of the relation the
    method claims (its entry's ``relation``). Another construction is allowed — the result's
    ``relation`` and ``claimed_relation`` then differ, and a "leak" found on it is not a
    violation of the claim. The statistic is the entry's ``audit_statistic`` (``statistic``
    overrides it): for the subspace and k-means methods a likelihood-ratio score of release
    features (:func:`release_features`) fitted on the first half of the runs, for DP-τCC the
    released table cell. The bound is always computed on the held-out second half. δ for the
    bound (and for the runs) is :func:`audit_delta`.

    Parameters
    ----------
    name : str or dpcore.lab.methods.Method
        A key of :data:`dpcore.lab.methods.METHODS`, or an entry.
    dataset : dpcore.data.Dataset
        D.
    neighbour : str or None
        A key of ``NEIGHBOURS[dataset.kind]``; None for the default.
    trials : int ≥ MIN_TRIALS (50)
        Runs per side.
    epsilon : float > 0, optional
        ε of a private method; None for a non-private one.
    params : dict, optional
        Estimator parameters (over the dataset defaults).
    confidence : float in (0, 1), default 0.95
    seed : int, default 0
    executor : concurrent.futures.Executor, optional
    progress : callable, optional
        As in :func:`run_audit`.
    statistic : str, optional
        A key of :data:`STATISTIC_HELP`; defaults to the entry's ``audit_statistic``.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        Naming the parameter, for: too few trials, an ε for a non-private method (or none for
        a private one), a method that does not run on this kind of data, a neighbour
        construction that does not exist for it, or ``epsilon`` or ``confidence`` out of range.
    """
    trials = check_int(trials, "trials", MIN_TRIALS)
    if epsilon is not None:
        epsilon = check_real(epsilon, "epsilon", 0.0, None, low_inclusive=False)
    method = get_method(name)
    name, family = method.name, method.family
    kinds = FAMILY_KINDS[family]
    if dataset.kind not in kinds:
        raise ValueError(f"algorithm {name} runs on data of kind {' or '.join(sorted(kinds))}; this dataset is of "
                         f"kind {dataset.kind!r}")
    confidence = check_real(confidence, "confidence", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if neighbour is None:
        neighbour = default_neighbour(method, dataset.kind)
        if neighbour is None:
            raise ValueError(f"neighbour: no construction for data of kind {dataset.kind!r} belongs to the relation "
                             f"{name} claims ({claimed_relation(method)!r}); pass one explicitly")
    D_b, target = make_neighbour(dataset, neighbour)
    if family == "cocluster" and not isinstance(target, tuple):
        raise ValueError(f"neighbour must be change_cell for {name}: its statistics look at the released table cell "
                         f"of one changed count; got {neighbour!r}")
    if family == "documents" and isinstance(target, tuple):   # a changed cell changes one document: audit that row
        target = {"point": _first_row(D_b), "replaced": _first_row(dataset.X)}
    params = dict(params or {})
    delta = audit_delta(method, dataset, params) if epsilon is not None else 0.0
    if delta > 0:
        params["delta"] = delta
    stat = EstimatorStatistic.for_dataset(method, dataset, epsilon, target, params, statistic)
    # D (without the change) is side a; for "remove_point" D′ is the smaller set
    labels = {"statistic": stat.statistic, "relation": NEIGHBOUR_RELATION[neighbour],
              "claimed_relation": claimed_relation(method)}
    return run_audit(stat, dataset.X, D_b, trials, confidence, delta, epsilon, seed, executor, progress=progress,
                     labels=labels)
