"""Private k-means (and k-median) by a private candidate set and local swaps: Algorithm 4 of
Balcan, Dick, Liang, Mou & Zhang (ICML 2017), with its extensions (Alg. 5 for sparse data,
§6.2 k-median) and the SuLQ refinement of its experiments (§7).

Pipeline of :class:`CandidateKMeans`:

0. clip the points to the public ball B(0, Λ) (per record: free);
1. JL projection to R^p, p = ⌈ln(n)/2⌉ by default (data-independent: free); projected
   points clipped to B(0, Λ) again (per record: free);
2. stage ``candidate`` — Alg. 2 (:func:`dpcore.kmeans.partition.candidate_set`):
   ``n_repeats`` private partitions (Alg. 1) of randomly shifted cubes; pure ε_cand-DP;
3. stage ``localswap`` — Alg. 3 (:func:`dpcore.kmeans.localswap.localswap`): k of the
   candidates by local swaps with the exponential mechanism; pure ε_swap-DP;
4. stage ``recovery`` — every point goes to its nearest chosen candidate in R^p, and the
   k clusters' centres in R^d are released by noisy means (Gaussian), or by Alg. 5
   (``recovery="sparse"``, pure ε), or by a private 1-median (``objective="kmedian"``),
   parallel over clusters (Lemma 1); then ``refine_iter`` optional SuLQ (private Lloyd)
   iterations in R^d (§7 runs 8). All Gaussian releases of this stage share (ε_rec, δ) by
   exact Gaussian-DP composition (:class:`dpcore.privacy.GaussianBudget`).

Budget. ε is split over the three stages by ``budget_split`` (default
:data:`DEFAULT_SPLIT`: candidate 0.40 · localswap 0.10 · recovery 0.50); each stage is one
ledger entry, the last stage gets ε minus the others so the entries sum to exactly ε
(basic composition); δ goes entirely to the recovery stage (the only one that is not pure
ε-DP; 0 with ``recovery="sparse"``). The local swaps and the Gaussian recovery also carry typed
events (exponential mechanism uses, Gaussian releases; :mod:`dpcore.privacy.accountant`) for tight
accounting across fits; the candidate set and Alg. 5 are recorded by their (ε, 0). Why this
split: with honest accounting the candidate set decides the partition of the points (the largest share of the final loss, see
``benchmarks/bench_kmeans.py``), the Gaussian noise of the means in R^d is the other part of
the loss, and the exponential mechanism of the local search has a scale 8Λ²(T+1)/ε that at
practical n dwarfs most loss differences, so extra budget there buys little. The authors'
public code is known to overspend; nothing here is taken from it.

Practical parameters versus the theory — all privacy-neutral (privacy holds for any value),
each documented where it is defined: p = ⌈ln n / 2⌉ (the paper's §7); ``n_repeats = 1``
(§7 repeats k times, i.e. ε_cand/k per partition, with which no cube holds γ points at
practical n); ``max_depth = ⌈log₂ n / 2⌉`` (ε′ = ε/(2·max_depth): each level costs budget);
γ = max((p ln 2 + ln n)/ε′, n/(10k)) (:func:`~dpcore.kmeans.partition.default_gamma`; the
paper's 20 ln(n/δ)/ε′ exceeds n); T = max(2, ⌈k/4⌉) swaps
(:func:`~dpcore.kmeans.localswap.default_swap_iterations`) from a seed drawn from the
released candidates (:func:`~dpcore.kmeans.localswap.seed_from_candidates`);
``refine_iter = 0`` (at ε ≈ 1 and n ≤ 10⁵ the extra Gaussian releases cost more than the
Lloyd steps gain; the page lets users try §7's 8).

Neighbouring datasets: one point replaced (or added/removed); n is public, as in the paper.
"""
from __future__ import annotations

import math
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import (check_delta, check_epsilon, check_int, check_random_state, check_real, input_float_dtype,
                          record_features)
from ..work import Work, clusters_of, matmul_cost, param_int, unit_cost
from ..privacy import GaussianBudget, PrivacyEvent, PrivacyLedger, PrivateEstimatorMixin
from ..preprocessing import clip_rows, row_sq_norms, truncate_rows_to_sparsity
from .common import (CentresPredictMixin, RADIUS_LEAK_REASON, check_points, nearest_centres, resolve_radius,
                     warn_if_data_scaled)
from .localswap import default_swap_iterations, localswap, seed_from_candidates
from .partition import (MAX_ACTIVE_CUBES, candidate_set, default_gamma, default_projection_dim, jl_matrix, jl_project,
                        max_projection_dim)
from .recovery import (private_lloyd, private_medians, noisy_means, sparse_noisy_means,
                       MEANS_SENSITIVITY_FACTOR, MEDIAN_STEP_SENSITIVITY_FACTOR)

__all__ = ["CandidateKMeans", "CandidateKMedian", "DEFAULT_SPLIT", "STAGES", "resolve_budget_split",
           "stage_explanations", "default_candidate_depth"]

STAGES = ("candidate", "localswap", "recovery")
DEFAULT_SPLIT = {"candidate": 0.40, "localswap": 0.10, "recovery": 0.50}
MEDIAN_GRADIENT_STEPS = 5


def default_candidate_depth(n):
    """⌈log₂(n)/2⌉: half the paper's depth bound log n. Cubes then reach edge ≈ 4Λ/√n;
    deeper cubes rarely hold γ points at practical n, and every extra level divides ε′.

    Parameters
    ----------
    n : int
        Number of points (values below 2 count as 2).

    Returns
    -------
    int ≥ 1
    """
    return max(1, math.ceil(math.log2(max(n, 2)) / 2))


def resolve_budget_split(budget_split, epsilon):
    """Stage -> ε, summing to exactly ε (the last stage gets ε minus the others).

    ``budget_split``: dict of positive shares over :data:`STAGES` summing to 1 (within
    1e-9); None -> :data:`DEFAULT_SPLIT`.

    Parameters
    ----------
    budget_split : dict or None
        Stage ("candidate", "localswap", "recovery") -> share in (0, 1].
    epsilon : float
        Total ε.

    Returns
    -------
    dict
        Stage -> ε.

    Raises
    ------
    ValueError
        If ``budget_split`` is not a dict with exactly the stages, a share is out of
        (0, 1], or the shares do not sum to 1.
    """
    split = DEFAULT_SPLIT if budget_split is None else budget_split
    if not isinstance(split, dict) or set(split) != set(STAGES):
        raise ValueError(f"budget_split must be a dict with exactly the stages {', '.join(STAGES)}; got {split!r}")
    shares = {s: check_real(split[s], f"budget_split['{s}']", 0.0, 1.0, low_inclusive=False) for s in STAGES}
    if abs(sum(shares.values()) - 1.0) > 1e-9:
        raise ValueError(f"budget_split shares must sum to 1; got {sum(shares.values()):g}")
    eps = {s: epsilon * shares[s] for s in STAGES[:-1]}
    eps[STAGES[-1]] = epsilon - math.fsum(eps.values())     # the ledger totals with math.fsum too
    return eps


def stage_explanations(objective="kmeans", recovery="dense"):
    """One sentence per stage for the app: what it releases and why it costs that much.

    Parameters
    ----------
    objective : {"kmeans", "kmedian"}, default "kmeans"
    recovery : {"dense", "sparse"}, default "dense"
        Ignored for "kmedian" (its recovery is the private 1-median).

    Returns
    -------
    dict
        Stage ("candidate", "localswap", "recovery") -> str.
    """
    loss = "‖x − z‖²" if objective == "kmeans" else "‖x − z‖"
    rec = {"dense": "noisy sums and counts of the k clusters in R^d (Gaussian; clusters are disjoint, so "
                    "the k releases cost the budget once — parallel composition, Lemma 1)",
           "sparse": "Alg. 5: per cluster, the largest coordinates of the sum chosen by the exponential "
                     "mechanism and their values by Laplace noise (parallel composition)",
           "median": "a private 1-median per cluster: noisy mean then noisy gradient steps (Gaussian, "
                     "parallel composition)"}[recovery if objective == "kmeans" else "median"]
    return {
        "candidate": "Alg. 1–2: shifted grids are subdivided where a cube holds more than γ points; every "
                     "keep/drop decision is a noisy threshold, so the budget is split over repetitions and "
                     "over depths (a point sits in one cube per depth).",
        "localswap": f"Alg. 3: T swaps chosen by the exponential mechanism on the loss {loss} plus one final "
                     "choice among the iterates; the budget is split over the T + 1 uses.",
        "recovery": "Alg. 4: " + rec + "; then the optional SuLQ refinement of §7 (private Lloyd iterations in R^d, "
                    "each reassigns the points and releases again). Gaussian releases share the stage's (ε, δ) "
                    "by exact Gaussian-DP composition.",
    }


class CandidateKMeans(CentresPredictMixin, PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """(ε, δ)-DP k-means by a private candidate set, local swaps and noisy means
    (Balcan et al. 2017, Alg. 4; see the module docstring for the stages and the budget).

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (n_swaps × n × the candidates (bounded from n_repeats, max_depth and γ), and the recovery's
    refine_iter + 1 releases; :meth:`planned_work`) is refused past the caps of :mod:`dpcore.work`
    with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=8
        Number k of clusters, in [1, n].
    epsilon : float, default=1.0
        Total ε > 0 (split over the stages by ``budget_split``).
    radius : float or "data", default=None
        The public radius Λ > 0 (required: None is refused with a ValueError): points
        outside B(0, Λ) are clipped. ``"data"`` uses max ‖x‖ with a warning: nothing
        released is then private.
    delta : float, default=1e-6
        The δ of the recovery stage, in (0, 1); may be 0 for the pure-ε pipeline
        (``recovery="sparse"``), which spends no δ anyway.
    objective : {"kmeans", "kmedian"}, default="kmeans"
        ``"kmeans"`` or ``"kmedian"`` (§6.2: the same candidate set and local
        search with the loss ‖x − z‖, recovery by a private 1-median).
    projection_dim : int or None, default=None
        Projection dimension p in [1, ⌈8 ln n⌉]; None for ⌈ln(n)/2⌉ (at least 1).
    n_repeats : int, default=1
        Repetitions of the private partition (Alg. 2's T), in [1, 1000].
    max_depth : int or None, default=None
        Depth bound of Alg. 1, in [1, 60]; None for ⌈log₂(n)/2⌉ (at least 1). No cube
        is deeper.
    gamma : float or None, default=None
        Threshold (≥ 0) of Alg. 1; None for :func:`~dpcore.kmeans.partition.default_gamma`.
    n_swaps : int or None, default=None
        Exact number T of local-search swaps, in [1, 100000]; None for max(2, ⌈k/4⌉). A
        count of swaps of Alg. 3, not of iterations of the whole method, hence not
        ``n_iter``.
    swap_init : {"seeded", "uniform"}, default="seeded"
        ``"seeded"`` (default: Z⁽⁰⁾ by :func:`~dpcore.kmeans.localswap.seed_from_candidates`,
        free post-processing of the candidates) or ``"uniform"`` (the paper's uniform draw).
    refine_iter : int, default=0
        Exact number of SuLQ refinement iterations after recovery, in [0, 1000]
        (default 0; §7 uses 8). Kept apart from ``n_iter`` (exact count of a method's main
        loop, e.g. :class:`~dpcore.kmeans.sulq.SuLQKMeans`) because it counts an optional
        last stage; no early stopping either.
    recovery : {"dense", "sparse"}, default="dense"
        ``"dense"`` (noisy means) or ``"sparse"`` (Alg. 5; needs ``sparsity``; k-means
        only).
    sparsity : int or None, default=None
        Sparsity s, in [1, d] (required with ``recovery="sparse"``, read only then): rows are
        truncated to their s largest entries, per record.
    eta : float, default=0.5
        The accuracy η in (0, 1] of Alg. 5 (m = ⌈2s/η⌉ coordinates kept per centre); read
        only with ``recovery="sparse"``.
    budget_split : dict or None, default=None
        Stage ("candidate", "localswap", "recovery") -> share of ε in (0, 1], the shares
        summing to 1; None for :data:`DEFAULT_SPLIT`.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the projection, every private stage and the noise (a RandomState
        seeds a Generator, :func:`~dpcore.validation.check_random_state`).

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        Private; float32 for float32 input, else float64 (computed in float64).
    projected_centers_ : ndarray of shape (k, p)
        Private.
    candidates_ : ndarray of shape (m, p)
        Private.
    projection_ : ndarray of shape (d, p)
        Public randomness.
    budget_split_ : dict
        Stage -> (ε, δ) spent (the resolved ``budget_split``; formerly ``budget_``; the
        same name as DP-τCC's split).
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.
    labels_ : ndarray of int of shape (n,)
        Nearest released centre of every point — NOT private.
    n_clipped_ : int
        Computed from the data — NOT private (shown for teaching).
    n_projected_clipped_ : int
        Computed from the data — NOT private (shown for teaching).
    n_truncated_ : int
        Computed from the data — NOT private (shown for teaching).
    swap_losses_ : ndarray of shape (T + 1,)
        Computed from the data — NOT private (shown for teaching).
    radius_ : float
        Λ used (NOT private with ``radius="data"``).
    stage_explanations_ : dict
        Stage -> one sentence for the app (:func:`stage_explanations`).
    ledger_ : PrivacyLedger
        The ledger of the run.
    """

    def __init__(self, *, n_clusters=8, epsilon=1.0, radius=None, delta=1e-6, objective="kmeans", projection_dim=None,
                 n_repeats=1, max_depth=None, gamma=None, n_swaps=None, swap_init="seeded", refine_iter=0,
                 recovery="dense", sparsity=None, eta=0.5, budget_split=None, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.radius = radius
        self.delta = delta
        self.objective = objective
        self.projection_dim = projection_dim
        self.n_repeats = n_repeats
        self.max_depth = max_depth
        self.gamma = gamma
        self.n_swaps = n_swaps
        self.swap_init = swap_init
        self.refine_iter = refine_iter
        self.recovery = recovery
        self.sparsity = sparsity
        self.eta = eta
        self.budget_split = budget_split
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    def _validate(self, X):
        X = check_points(X)
        n, d = X.shape
        k = check_int(self.n_clusters, "n_clusters", 1, n)
        eps = check_epsilon(self.epsilon)
        if self.objective not in ("kmeans", "kmedian"):
            raise ValueError(f"objective must be 'kmeans' or 'kmedian'; got {self.objective!r}")
        if self.recovery not in ("dense", "sparse"):
            raise ValueError(f"recovery must be 'dense' or 'sparse'; got {self.recovery!r}")
        if self.recovery == "sparse" and self.objective != "kmeans":
            raise ValueError("recovery='sparse' (Alg. 5) is for objective='kmeans' only")
        refine = check_int(self.refine_iter, "refine_iter", 0, 1000)
        if self.swap_init not in ("seeded", "uniform"):
            raise ValueError(f"swap_init must be 'seeded' or 'uniform'; got {self.swap_init!r}")
        if self.recovery == "sparse":
            if self.sparsity is None:
                raise ValueError("sparsity must be given with recovery='sparse': a public bound s >= 1 on the "
                                 "non-zeros per row")
            check_int(self.sparsity, "sparsity", 1, d)
            check_real(self.eta, "eta", 0.0, 1.0, low_inclusive=False)
        gaussian = self.recovery == "dense"
        delta = check_delta(self.delta, allow_zero=not gaussian)
        p = default_projection_dim(n) if self.projection_dim is None else \
            check_int(self.projection_dim, "projection_dim", 1, max_projection_dim(n))
        n_rep = check_int(self.n_repeats, "n_repeats", 1, 1000)
        depth = default_candidate_depth(n) if self.max_depth is None else \
            check_int(self.max_depth, "max_depth", 1, 60)
        if self.gamma is not None:
            check_real(self.gamma, "gamma", 0.0, None)
        swaps = default_swap_iterations(k) if self.n_swaps is None else check_int(self.n_swaps, "n_swaps", 1, 100_000)
        eps_stage = resolve_budget_split(self.budget_split, eps)
        return X, n, d, k, eps, delta, p, n_rep, depth, swaps, refine, eps_stage, gaussian

    def _planned_spend(self, shape):
        """(ε, δ) the ledger records: δ goes to the Gaussian recovery only, so ``recovery="sparse"``
        (Alg. 5, pure ε-DP) spends δ = 0 whatever ``delta`` says (k-median recovers with Gaussian
        releases and spends δ)."""
        eps, dlt = super()._planned_spend(shape)
        gaussian = self.objective == "kmedian" or self.recovery != "sparse"
        return eps, (dlt if gaussian else 0.0)

    # ------------------------------------------------------------------ row maps
    def _input_map(self, X):
        """Per-record map applied to the validated input before the pipeline (identity here;
        :class:`~dpcore.kmeans.dphd.DPHD` normalises the documents)."""
        return X

    def _map_rows(self, X):
        """What ``fit`` does to every row before assigning it (for ``predict`` and ``score``):
        :meth:`_input_map`, clipping to B(0, Λ) and, with ``recovery="sparse"``, truncation to the
        s largest entries."""
        X, _ = clip_rows(self._input_map(X), self.radius_)
        if self.recovery == "sparse":
            X, _ = truncate_rows_to_sparsity(X, int(self.sparsity))
        return X

    # ------------------------------------------------------------------ fit
    def _candidate_count(self, n, k, eps):
        """(p, n_repeats, max_depth, m): an upper estimate m of the candidate set's size from public
        inputs. n_repeats partitions of (max_depth + 1) depths of active cubes; at a depth at most
        min(n, MAX_ACTIVE_CUBES) cubes are active, and of those holding fewer than γ/2 points each is kept
        with probability at most ½·e^(−ε′γ/2), so about 2n/γ + n·½e^(−ε′γ/2) + 1 are."""
        p = default_projection_dim(n) if self.projection_dim is None else \
            check_int(self.projection_dim, "projection_dim", 1)
        reps = param_int(self, "n_repeats", 1)
        depth = default_candidate_depth(n) if self.max_depth is None else check_int(self.max_depth, "max_depth", 1)
        eps_p = resolve_budget_split(self.budget_split, eps)["candidate"] / reps / (2.0 * depth)
        gamma = default_gamma(n, p, eps_p, k) if self.gamma is None else check_real(self.gamma, "gamma", 0.0)
        kept = 2.0 * n / max(gamma, 1.0) + n * 0.5 * math.exp(-min(eps_p * gamma / 2.0, 700.0)) + 1.0
        return p, reps, depth, reps * (1.0 + depth * min(float(n), float(MAX_ACTIVE_CUBES), kept))

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): the partitions, n_swaps
        local swaps over an upper estimate of the candidates, the recovery and its refinements."""
        w = Work(n, d, nnz, sparse)
        k = clusters_of(self, n)
        p, reps, depth, m = self._candidate_count(n, k, check_epsilon(self.epsilon))
        T = default_swap_iterations(k) if self.n_swaps is None else check_int(self.n_swaps, "n_swaps", 1)
        refine = param_int(self, "refine_iter", 0, 0)
        per_x = unit_cost("sparse", nnz) if sparse else unit_cost("elem", nnz)
        w.add("projection to R^p (nnz·p) and clipping",
              (unit_cost("sparse", nnz * p) if sparse else matmul_cost(n, d, p)) + 2 * per_x)
        w.add("candidate set: n_repeats × max_depth × (the cubes of n points, sorted)",
              reps * depth * (unit_cost("sort", n * p * math.log2(max(n, 2))) + unit_cost("draw", n)
                              + unit_cost("loop", 20)), "n_repeats", "max_depth")
        w.add(f"local swaps: n_swaps × n·m·p over the m ≈ {m:,.0f} candidates (+ an exact choice among k·m "
              "swaps)",
              T * (n * m * (0.5 * p + 16.0) + unit_cost("choice", k * m) + unit_cost("call", 1))
              + unit_cost("elem", k * m * p) + unit_cost("loop", k), "n_swaps", "n_repeats", "max_depth")
        w.hold("local swaps: a chunk of 2·10⁶ distances and the k·m swap losses",
               6 * 2e6 * 8 + 4 * k * m * 8 + 2 * m * p * 8, "n_repeats", "max_depth")
        near = (unit_cost("sparse", nnz * k) if sparse else matmul_cost(n, d, k)) + unit_cost("elem", 4 * n * k)
        if self.objective == "kmedian":
            steps = MEDIAN_GRADIENT_STEPS + 1
            w.add("private 1-medians: (refine_iter + 1) × 6 noisy gradient steps on the dense n×d points",
                  (refine + 1) * (near + steps * (unit_cost("elem", 8 * n * d) + unit_cost("draw", k * d + k)
                                                  + unit_cost("call", 1))), "refine_iter")
            w.hold("private 1-medians: dense copies of the points (n·d, 3 of them)", 3 * float(n) * d * 8)
        elif self.recovery == "sparse":
            s = 1 if self.sparsity is None else check_int(self.sparsity, "sparsity", 1)
            mm = min(d, math.ceil(2 * s / check_real(self.eta, "eta", 0.0, 1.0, low_inclusive=False)))
            w.add(f"Alg. 5: (refine_iter + 1) × k × min(d, ⌈2s/η⌉) = {mm:,} exact choices among the d "
                  "coordinates",
                  (refine + 1) * (near + k * mm * (unit_cost("call", 1) + unit_cost("choice", d)
                                                   + unit_cost("elem", d))),
                  "refine_iter", "sparsity", "n_clusters")
            w.hold("Alg. 5: k·d sums and centres", 4 * k * d * 8)
        else:
            w.add("noisy means: (refine_iter + 1) × (nearest centres n·k·d + k·d exact Gaussian draws)",
                  (refine + 1) * (near + unit_cost("sparse", nnz) + unit_cost("draw", k * d + k)
                                  + unit_cost("call", 1)), "refine_iter", "n_clusters")
            w.hold("noisy means: k·d sums and centres, n·k distances", 4 * k * d * 8 + 3 * n * k * 8)
        w.add("labels: nearest released centre (n·k·d)", near)
        return w.plan(type(self).__name__)

    def fit(self, X, y=None):
        """Run the pipeline on the rows of X.

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, d)
            The points as rows (clipped to B(0, Λ)).
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        self
            The fitted estimator.
        """
        dtype = input_float_dtype(X)
        record_features(self, X)
        X, n, d, k, eps, delta, p, n_rep, depth, swaps, refine, eps_stage, gaussian = self._validate(X)
        warn_if_data_scaled(X, type(self).__name__)
        X = self._input_map(X)
        lam, derived = resolve_radius(self.radius, X)
        rng = check_random_state(self.random_state)
        ledger = PrivacyLedger(budget_epsilon=eps, budget_delta=delta)
        relation = self.claimed_relation
        self.nonprivate_outputs_ = {
            "labels_": "each point assigned to its nearest released centre using the raw data",
            "n_clipped_": "exact number of points outside B(0, Λ), computed from the data",
            "n_projected_clipped_": "exact number of projected points outside B(0, Λ), computed from the data",
            "swap_losses_": "losses L(Z⁽ᵗ⁾) of the local-search iterates on the raw (projected) data",
        }
        if derived:
            self.nonprivate_outputs_["radius_"] = RADIUS_LEAK_REASON

        # 0. public ball, optional s-sparsity (per record)
        X, self.n_clipped_ = clip_rows(X, lam)
        self.n_truncated_ = 0
        if self.recovery == "sparse":
            X, self.n_truncated_ = truncate_rows_to_sparsity(X, int(self.sparsity))
            self.nonprivate_outputs_["n_truncated_"] = "exact number of rows with more than s non-zeros"
        sq = row_sq_norms(X)

        # 1. JL projection (public randomness) and the projected ball
        A = jl_matrix(d, p, rng)
        Y, self.n_projected_clipped_ = clip_rows(jl_project(X, A), lam)

        # 2. candidate set (Alg. 2)
        e = eps_stage["candidate"]
        cand = candidate_set(Y, e, lam, n_rep, depth, self.gamma, min_size=k + 1, random_state=rng,
                             n_clusters=k)
        part = cand.partitions[0]
        ledger.record("candidate set (Alg. 1–2)", "randomised subdivision f(m) (Laplace threshold)", e, 0.0,
                      note=f"{n_rep} repetition(s) × {depth} depth(s), 2 cubes per depth change when a point is "
                           f"replaced: ε′ = {part.epsilon_prime:.3g} per decision, γ = {part.gamma:.4g}; "
                           f"{cand.centers.shape[0]} candidates; every decision drawn exactly (ε′ rounded down to a "
                           "dyadic, integer draws only: dpcore.kmeans.partition.subdivision_coins)")

        # 3. local swaps (Alg. 3)
        e = eps_stage["localswap"]
        init = seed_from_candidates(cand.centers, cand.leaves, k, rng) if self.swap_init == "seeded" else None
        ls = localswap(Y, cand.centers, k, e, lam, swaps, self.objective, rng, init=init)
        ledger.record("k centres among the candidates (Alg. 3)", "exponential mechanism", e, 0.0,
                      note=f"{swaps} swaps + 1 final choice, ε/{swaps + 1} each, utility −L with sensitivity "
                           f"{'4Λ²' if self.objective == 'kmeans' else '2Λ'} (exponent ε·ΔL/"
                           f"{'8Λ²' if self.objective == 'kmeans' else '4Λ'}); each choice drawn exactly on a "
                           "public grid, the rounding paid in the sensitivity (dpcore.privacy.exact_choice)",
                      events=[PrivacyEvent.exponential(e / (swaps + 1), count=swaps + 1, relation=relation,
                                                       stated=(e, 0.0))])
        Zp = cand.centers[ls.centers_index]
        labels_p, _ = nearest_centres(Y, Zp)

        # 4. recovery in R^d, then 5. refinement — one stage sharing (ε_rec, δ_rec)
        e_rec = eps_stage["recovery"]
        d_rec = delta if gaussian else 0.0
        if self.objective == "kmedian":
            n_steps = MEDIAN_GRADIENT_STEPS
            budget = GaussianBudget(e_rec, d_rec, (refine + 1) * (n_steps + 1))
            centres, _ = private_medians(X, labels_p, k, lam, budget, n_steps, rng)
            for _ in range(refine):
                lab, _ = nearest_centres(X, centres, sq_norms=sq)
                centres, _ = private_medians(X, lab, k, lam, budget, n_steps, rng, previous=centres)
            ledger.record("cluster 1-medians in R^d (§6.2)" + (f" + {refine} refinement(s)" if refine else ""),
                          "Gaussian (noisy mean + noisy gradient steps)", e_rec, d_rec,
                          note=f"{budget.n_releases} releases composed exactly (GDP), sensitivities "
                               f"{MEANS_SENSITIVITY_FACTOR:g}Λ and {MEDIAN_STEP_SENSITIVITY_FACTOR:.3g}Λ; "
                               "parallel over clusters (Lemma 1)", events=budget.events(relation))
        elif self.recovery == "sparse":
            e_alg5 = e_rec / (refine + 1)
            centres, _, _ = sparse_noisy_means(X, labels_p, k, lam, int(self.sparsity), self.eta, e_alg5, rng)
            for _ in range(refine):
                lab, _ = nearest_centres(X, centres, sq_norms=sq)
                centres, _, _ = sparse_noisy_means(X, lab, k, lam, int(self.sparsity), self.eta, e_alg5, rng,
                                                   previous=centres)
            ledger.record("sparse cluster centres in R^d (Alg. 5)" + (f" + {refine} refinement(s)" if refine else ""),
                          "exponential + Laplace", e_rec, 0.0,
                          note=f"{refine + 1} use(s) of Alg. 5 at ε/{refine + 1} each (basic composition): "
                               "coordinate choice ε/2, values and counts ε/2; parallel over clusters")
        else:
            budget = GaussianBudget(e_rec, d_rec, refine + 1)
            centres, _ = noisy_means(X, labels_p, k, lam, budget, rng)
            if refine:
                centres, _ = private_lloyd(X, centres, lam, refine, budget, rng, sq)
            ledger.record("cluster means in R^d (Alg. 4)" + (f" + {refine} SuLQ refinement(s) (§7)" if refine else ""),
                          "Gaussian (noisy sums and counts)", e_rec, d_rec,
                          note=f"{refine + 1} release(s) of (sums, Λ·counts), L2 sensitivity 2Λ, composed exactly "
                               f"(GDP): σ = {budget.sigma(MEANS_SENSITIVITY_FACTOR * lam):.4g} each; parallel over "
                               "clusters (Lemma 1)", events=budget.events(relation))

        self.radius_ = lam
        self.projection_ = A
        self.candidates_ = cand.centers
        self.candidate_result_ = cand
        self.projected_centers_ = Zp
        self.swap_result_ = ls
        self.swap_losses_ = ls.losses
        self._set_centres(centres, dtype, X, sq)
        self.budget_split_ = {s: (eps_stage[s], d_rec if s == "recovery" else 0.0) for s in STAGES}
        self.stage_explanations_ = stage_explanations(self.objective, self.recovery)
        self.n_features_in_ = d
        self.ledger_ = ledger
        self.private_outputs_ = ["cluster_centers_", "projected_centers_", "candidates_"]
        if derived:
            self.private_outputs_ = []
        return self


class CandidateKMedian(CandidateKMeans):
    """The k-median variant (§6.2): :class:`CandidateKMeans` with ``objective="kmedian"``.

    Every parameter of :class:`CandidateKMeans` is exposed (so ``get_params``, ``clone`` and
    "reproduce in Python" see them all); ``objective`` must stay ``"kmedian"`` and
    ``recovery`` ``"dense"`` (Alg. 5's sparse recovery is for k-means only): other values
    are refused by ``fit`` with a ValueError.

    Parameters
    ----------
    n_clusters : int, default=8
        As in :class:`CandidateKMeans`.
    epsilon : float, default=1.0
        As in :class:`CandidateKMeans`.
    radius : float or "data", default=None
        As in :class:`CandidateKMeans` (required).
    delta : float, default=1e-6
        As in :class:`CandidateKMeans`.
    objective : str, default="kmedian"
        Must be "kmedian".
    projection_dim : int or None, default=None
        As in :class:`CandidateKMeans`.
    n_repeats : int, default=1
        As in :class:`CandidateKMeans`.
    max_depth : int or None, default=None
        As in :class:`CandidateKMeans`.
    gamma : float or None, default=None
        As in :class:`CandidateKMeans`.
    n_swaps : int or None, default=None
        As in :class:`CandidateKMeans`.
    swap_init : {"seeded", "uniform"}, default="seeded"
        As in :class:`CandidateKMeans`.
    refine_iter : int, default=0
        As in :class:`CandidateKMeans`.
    recovery : str, default="dense"
        Must be "dense".
    sparsity : int or None, default=None
        As in :class:`CandidateKMeans` (unused, since ``recovery`` is ``"dense"``).
    eta : float, default=0.5
        As in :class:`CandidateKMeans` (unused, since ``recovery`` is ``"dense"``).
    budget_split : dict or None, default=None
        As in :class:`CandidateKMeans`.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        As in :class:`CandidateKMeans`.

    Attributes
    ----------
    As in :class:`CandidateKMeans`.
    """

    def __init__(self, *, n_clusters=8, epsilon=1.0, radius=None, delta=1e-6, objective="kmedian",
                 projection_dim=None, n_repeats=1, max_depth=None, gamma=None, n_swaps=None, swap_init="seeded",
                 refine_iter=0, recovery="dense", sparsity=None, eta=0.5, budget_split=None, random_state=None):
        super().__init__(n_clusters=n_clusters, epsilon=epsilon, radius=radius, delta=delta, objective=objective,
                         projection_dim=projection_dim, n_repeats=n_repeats, max_depth=max_depth, gamma=gamma,
                         n_swaps=n_swaps, swap_init=swap_init, refine_iter=refine_iter, recovery=recovery,
                         sparsity=sparsity, eta=eta, budget_split=budget_split, random_state=random_state)

    def _validate(self, X):
        if self.objective != "kmedian":
            raise ValueError(f"objective must be 'kmedian' for CandidateKMedian (use CandidateKMeans for "
                             f"'kmeans'); got {self.objective!r}")
        return super()._validate(X)
