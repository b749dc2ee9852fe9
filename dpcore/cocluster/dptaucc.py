"""DP-τCC: ε-differentially private co-clustering (Battaglia & Pensa, §4, Alg. 1–3).

Neighbouring matrices differ by +1 in ONE cell (a′_uv = a_uv + 1): one unit count (one
occurrence of one word in one document, one unit of one product bought by one customer).
This is the paper's definition; it protects a single count, not a whole row (document).

Building blocks (each a function so it can be tested on its own):

- :func:`dpcore.cocluster.taucc.random_matrix_init` – the blind ``RandomMatrix`` initialisation
  (no data access; shared with τCC's ``init='random_matrix'``, so it lives in the non-private module);
- :func:`dp_update_part` – Alg. 3: every object draws its cluster with the exponential
  mechanism, P(k) ∝ exp(ε₂ σ(a_i, t_k) / Δ(σ)) (eq. 4.9–4.10), drawn exactly through
  :func:`dpcore.privacy.exponential_mechanism` (``range_sensitivity=True``): utilities on a
  public grid h ≤ Δ(σ)·2⁻²⁰ with the range sensitivity paid as Δ(σ) + 2h, the scale rounded
  down to a dyadic, integer draws only (:mod:`dpcore.privacy.exact_choice`), so every cluster
  keeps a positive probability however far its utility is below the best, and huge utilities
  never overflow;
- :func:`release_table` / :func:`dp_compute_t` – Alg. 2: T = Rᵀ A C plus Laplace noise of
  scale 1/ε₁ (sensitivity 1, eq. 4.11), negative cells set to 0, all-zero rows deleted.

The table noise is the **discrete** Laplace of scale 1/ε₁ (rounded up to a rational, see
:func:`dpcore.privacy.discrete_laplace_mechanism`), drawn by an exact integer sampler: T is an
integer table, and numpy's float Laplace added to integers leaves floating-point holes that
tell neighbouring tables apart on about half of the releases at ε₁ = 1/80 (Mironov 2012;
measured with :mod:`dpcore.lab.reachability`). Discrete and continuous Laplace of the same scale
have the same tails, so the utility is unchanged (checked in tests/test_dptaucc.py).

Integer counts only (decision). Integer noise on a non-integer table keeps every released
cell's exact fractional part (a release then tells the true cell's fraction), and "+1 in one
cell" is 1 ± ulp in float, so the exact argument fails. :class:`DPTauCC` and
:func:`release_table` refuse non-integer input with a ``ValueError`` saying so and how to fix
it (round to whole counts first): rounding silently would change the user's data (weights such
as TF-IDF below 0.5 would all become 0), and a user of the field expects count data here.
``DPTauCC(round_counts=True)`` rounds instead (⌊x + ½⌋ per cell, a per-cell map) and says so on
the ledger; the guarantee is then for the rounded matrix (neighbours: ±1 in one of its cells).
Counts must also sum to at most 2⁵³ (so every table cell is exact in float64).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..validation import check_epsilon, check_int, check_random_state, check_real, record_features
from ..work import Work, matmul_cost, param_int, unit_cost
from ..privacy import (PrivacyEvent, PrivacyLedger, PrivateEstimatorMixin, discrete_laplace_mechanism,
                       discrete_laplace_scale, exponential_mechanism)
from .taucc import (TauCoclusterMixin, aggregate_columns, aggregate_rows, association_weights, check_count_matrix,
                    compact_labels, contingency_table, random_matrix_init, range_sensitivity, tau_scores)

__all__ = ["dp_update_part", "release_table", "dp_compute_t", "dptaucc_budget", "DPTauCC",
           "TABLE_MECHANISM", "check_integer_counts"]

#: Ledger name of the table release (Alg. 2).
TABLE_MECHANISM = "discrete Laplace (exact sampler, Alg. 2)"
#: Largest total count: every cell of every contingency table is then an exact float64 integer.
MAX_TOTAL_COUNT = 2.0 ** 53


def check_integer_counts(A, name="X"):
    """Refuse a count matrix (or table) with a non-integer entry or a total above 2⁵³.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix
        Finite, non-negative values (as :func:`~dpcore.cocluster.taucc.check_count_matrix` returns).
    name : str, default "X"
        Name used in the message.

    Raises
    ------
    ValueError
        Naming the first non-integer entry and the fix (round to whole counts first).
    """
    values = A.data if sp.issparse(A) else np.asarray(A, dtype=np.float64).ravel()
    frac = np.flatnonzero(np.mod(values, 1.0) != 0.0)
    if frac.size:
        if sp.issparse(A):
            coo = A.tocoo()
            where = f"row {coo.row[frac[0]]}, column {coo.col[frac[0]]}"
        else:
            where = "at index " + ", ".join(map(str, np.unravel_index(frac[0], np.shape(A))))
        raise ValueError(
            f"DP-τCC needs whole counts, but {name} has {frac.size:,} non-integer "
            f"{'entry' if frac.size == 1 else 'entries'} (e.g. "
            f"{values[frac[0]]:g} {where}). Its noise is integer (exact discrete Laplace), so on non-integer "
            "counts every released cell would keep the exact fractional part of the true one, and the "
            "neighbouring relation (+1 in one cell) would not describe the data. Round the data to whole "
            "counts first (e.g. numpy.floor(X + 0.5); DPTauCC(round_counts=True) does it and says so on its "
            "ledger), or use raw counts instead of weights such as TF-IDF.")
    total = float(values.sum())
    if total > MAX_TOTAL_COUNT:
        raise ValueError(f"DP-τCC needs counts that sum to at most 2^53 (exact in float64); {name} sums to "
                         f"{total:.4g}")


# ----------------------------------------------------------------------------- Alg. 3
def dp_update_part(B, T, epsilon, random_state=None):
    """Alg. 3 DP-updatePart: a private partition of the n objects whose aggregated data are the
    rows of ``B`` (n×L, dense or sparse) given the public K×L table ``T``.

    Utilities u_ik = σ(b_i, t_k) = Σ_l b_il (t_kl/t_·l − t_k·/T) (eq. 4.9), range sensitivity
    Δ(σ) of eq. 4.10 computed from T (public). Each object draws k with P ∝ exp(ε u_ik / Δ).
    One changed cell changes the utilities of one object only, so the n draws together are
    ε-DP (parallel composition). When Δ = 0 (one cluster, or every cluster equally good for
    every object) the utilities do not depend on k and the draw is uniform.

    Returns ``(labels, delta_sigma)``; labels in 0..K−1 (not compacted).

    Parameters
    ----------
    B : ndarray or scipy.sparse matrix of shape (n, L)
        Data aggregated over the other mode's clusters.
    T : array_like of shape (K, L)
        The public (released) table.
    epsilon : float > 0
        ε of this update (checked when Δ > 0).
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    labels : ndarray of int64 of shape (n,)
    delta_sigma : float
        Δ(σ) (0 when the draw was uniform).

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite positive number (when Δ > 0).
    """
    rng = check_random_state(random_state)
    T = np.asarray(T, dtype=np.float64)
    K = T.shape[0]
    W = association_weights(T)
    delta = range_sensitivity(W)
    n = B.shape[0]
    if K == 1:
        return np.zeros(n, dtype=np.int64), 0.0
    if not delta > 0:
        return rng.integers(0, K, size=n), 0.0
    U = np.asarray(B @ W.T)
    return exponential_mechanism(U, epsilon, delta, rng, range_sensitivity=True).astype(np.int64), delta


# ----------------------------------------------------------------------------- Alg. 2
def _table_event(epsilon):
    """The table release as a typed event: the discrete Laplace of the exact integer scale
    :func:`release_table` draws at ``epsilon`` (L1 sensitivity 1), for the tight totals; stated at
    ``epsilon`` (its scale's ε, s/t, is at most that), so basic totals add up to the ledger's."""
    s, t = discrete_laplace_scale(1, epsilon)
    return PrivacyEvent.discrete_laplace(Fraction(t, s), 1, stated=(float(epsilon), 0.0))


def release_table(T_exact, epsilon, random_state=None):
    """Lines 4–15 of Alg. 2: add Laplace noise of scale 1/ε to every cell of the exact table
    (L1 sensitivity 1, eq. 4.11), set negative cells to 0 and delete the rows that became
    all zero.

    The noise is the discrete Laplace P(z) ∝ exp(−|z|/σ), σ = 1/ε rounded up to a rational
    (:func:`dpcore.privacy.discrete_laplace_mechanism`, exact integer sampler): the released
    table is an integer table (returned as float64) and the release is ε-DP as executed -
    every integer is reachable from every count, unlike numpy's float Laplace added to
    integers (Mironov 2012). A table with a non-integer cell is refused
    (:func:`check_integer_counts`): integer noise would leave its fractional part exact.

    Columns that became all zero are deleted too (the paper only says rows): their t_·l = 0
    would make eq. 4.9–4.10 divide by zero in the next row update, and in the column update
    (which uses Tᵀ) they are exactly the "all-zero rows" Alg. 2 deletes. If *every* cell is
    0 nothing is deleted (a K×L zero table: the next update is then uniform).
    Deletion is post-processing of the noisy table and costs no privacy.

    Returns ``(T_released, kept_rows, kept_cols)`` (index arrays into the exact table).

    Parameters
    ----------
    T_exact : array_like of shape (K, L)
        The exact contingency table.
    epsilon : float > 0
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    T_released : ndarray of float64 of shape (K', L')
    kept_rows : ndarray of int of shape (K',)
    kept_cols : ndarray of int of shape (L',)

    Raises
    ------
    ValueError
        If ``epsilon`` is not positive or 1/ε exceeds 2^40, or a cell is not an integer (or
        the cells sum to more than 2^53).
    """
    T_exact = np.asarray(T_exact, dtype=np.float64)
    check_integer_counts(np.abs(T_exact), "the table")
    T = discrete_laplace_mechanism(T_exact.astype(np.int64), 1, epsilon, random_state).astype(np.float64)
    np.maximum(T, 0.0, out=T)
    if not np.any(T > 0):
        return T, np.arange(T.shape[0]), np.arange(T.shape[1])
    kept_rows = np.flatnonzero(T.sum(axis=1) > 0)
    kept_cols = np.flatnonzero(T.sum(axis=0) > 0)
    return T[np.ix_(kept_rows, kept_cols)], kept_rows, kept_cols


def _drop_deleted(labels, kept):
    """Labels after deleting clusters: members of a deleted cluster get −1, the kept clusters
    are renumbered 0..len(kept)−1 in their order."""
    labels = np.asarray(labels, dtype=np.int64)
    K = int(max(labels.max() + 1, kept.max() + 1 if kept.size else 0))
    mapping = np.full(K + 1, -1, dtype=np.int64)  # index K (= label −1) stays −1
    mapping[kept] = np.arange(kept.size)
    return mapping[np.where(labels >= 0, labels, K)]


def dp_compute_t(A, row_labels, col_labels, epsilon, random_state=None):
    """Alg. 2 DP-computeT: release Rᵀ A C privately (see :func:`release_table`).

    ``row_labels``/``col_labels`` must already be public (released privately before); their
    cluster counts are K = max label + 1 and L likewise. Returns
    ``(T_released, row_labels, col_labels, T_exact)`` where the labels are renumbered to the
    rows/columns of ``T_released`` (members of a deleted cluster get −1: they are in no
    cluster until the next private update re-assigns them), and ``T_exact`` (NOT private,
    for teaching and tests only) is the noise-free table of the same kept clusters.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (n, m)
        The count matrix.
    row_labels : array_like of int of shape (n,)
    col_labels : array_like of int of shape (m,)
    epsilon : float > 0
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    T_released : ndarray of float64
    row_labels : ndarray of int64 of shape (n,)
    col_labels : ndarray of int64 of shape (m,)
    T_exact : ndarray of float64
        NOT private.

    Raises
    ------
    ValueError
        As :func:`release_table`.
    """
    row_labels = np.asarray(row_labels, dtype=np.int64)
    col_labels = np.asarray(col_labels, dtype=np.int64)
    K = int(row_labels.max()) + 1 if np.any(row_labels >= 0) else 0
    L = int(col_labels.max()) + 1 if np.any(col_labels >= 0) else 0
    T_exact = contingency_table(A, row_labels, col_labels, K, L)
    T, kept_r, kept_c = release_table(T_exact, epsilon, random_state)
    return (T, _drop_deleted(row_labels, kept_r), _drop_deleted(col_labels, kept_c),
            T_exact[np.ix_(kept_r, kept_c)])


# ----------------------------------------------------------------------------- Alg. 1
def _table_note(T):
    return (f"{T.shape[0]}×{T.shape[1]} cells + discrete Laplace of scale 1/ε₁ (rounded up; exact integer "
            "sampler, no floating-point holes), L1 sensitivity 1 (eq. 4.11); negatives set to 0, all-zero "
            "rows/columns deleted (post-processing)")


def _check_k0_l0(K0, L0, n, m):
    if K0 > n or L0 > m:
        raise ValueError(f"n_row_clusters (K0) must be <= the number of rows ({n}) and n_col_clusters (L0) "
                         f"<= the number of columns ({m}); got K0={K0}, L0={L0}")


def dptaucc_budget(epsilon, n_iter, assignment_share=0.9):
    """Alg. 1's split of ε: ``(ε′, ε₂, ε₁)`` with ε′ = ε/(2𝓘) per half-iteration, ε₂ =
    share·ε′ for the exponential-mechanism assignments and ε₁ = ε′ − ε₂ for the discrete
    Laplace table (noise scale 1/ε₁ per cell, rounded up: one cell change moves one table
    cell by 1).

    Parameters
    ----------
    epsilon : float
        Total ε (not checked here; the estimator checks it).
    n_iter : int
        𝓘, the number of iterations.
    assignment_share : float, default 0.9
        Share of ε′ spent on the assignments.

    Returns
    -------
    eps_half, eps_assign, eps_table : float
        ε′, ε₂ and ε₁.
    """
    eps_half = epsilon / (2 * n_iter)
    eps2 = assignment_share * eps_half
    return eps_half, eps2, eps_half - eps2


class DPTauCC(TauCoclusterMixin, PrivateEstimatorMixin, BaseEstimator):
    """DP-τCC (Alg. 1): ε-DP co-clustering of a non-negative count matrix of whole counts
    (non-integer input is refused unless ``round_counts=True``).

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (n_iter × (nnz + (n + m)·K·L and n + m exact choices); :meth:`planned_work`) is refused past the
    caps of :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_row_clusters : int, default=3
        K0 (≥ 2; at most the number of rows). The paper sets both K0 and L0 to the
        expected number of classes.
    n_col_clusters : int, default=3
        L0 (≥ 2; at most the number of columns).
    epsilon : float, default=1.0
        Total privacy budget ε > 0; neighbouring matrices differ by +1 in one cell.
    n_iter : int, default=4
        𝓘 ≥ 1, the exact number of full iterations (each = a column update and a row update;
        no early stopping, as ``n_iter`` means in every dpcore estimator, while
        ``max_iter`` is a cap with early stopping). Formerly ``n_iterations``.
    assignment_share : float, default=0.9
        Share in (0, 1) of each half-step's budget spent on the exponential-mechanism
        assignment (paper: 0.9); the rest goes to the (discrete) Laplace contingency table.
    flip_fraction : float, default=0.01
        Fraction in [0, 0.5] of cells switched in the blind RandomMatrix initialisation
        (paper: 0.01).
    round_counts : bool, default=False
        False: a non-integer entry is refused (``ValueError``). True: every entry is rounded to
        the nearest whole count (⌊x + ½⌋) before the run, and the ledger says so; the
        guarantee is then for the rounded matrix.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the initialisation, the exponential mechanism and the noise.

    Attributes
    ----------
    T_ : ndarray of float64 of shape (K, L)
        The last released (private) contingency table, K×L.
    column_labels_ : ndarray of int64 of shape (m,)
        Private column partition (indices into the columns of ``T_``, −1 = none).
    row_labels_ : ndarray of int64 of shape (n,)
        Private row partition released by the last exponential-mechanism row
        update (renumbered like ``T_``, −1 = in a deleted cluster).
    n_row_clusters_ : int
        K, the number of rows of ``T_``.
    n_col_clusters_ : int
        L, the number of columns of ``T_``.
    tau_rc_ : float
        τ̂_{R|C} of ``T_`` (post-processing: private).
    tau_cr_ : float
        τ̂_{C|R} of ``T_`` (post-processing: private).
    history_ : list of dict
        Per released table: iteration, half-step, K, L, Δ(σ) used, τ̂ values (private).
    row_assignment_ : ndarray of int64 of shape (n,)
        NOT private - every row assigned to argmax_k σ(a_i, t_k) with the raw
        data and the last private T (the paper's evaluation step, used for NMI).
    T_exact_ : ndarray of float64
        NOT private - the noise-free table of the final partitions (for teaching).
    budget_split_ : dict
        ``per_half_step`` (ε′), ``assignment`` (ε₂), ``table`` (ε₁) - how ε
        was split (public; the same attribute name as :class:`~dpcore.kmeans.candidate.CandidateKMeans`'s
        per-stage split). Formerly ``epsilon_split_``.
    n_features_in_ : int
        Number of columns of X.
    feature_names_in_ : ndarray of str of shape (m,)
        Column names, when X is a DataFrame with string column names.
    ledger_ : PrivacyLedger
        See :class:`PrivateEstimatorMixin`.
    private_outputs_ : list of str
        See :class:`PrivateEstimatorMixin`.
    nonprivate_outputs_ : dict
        See :class:`PrivateEstimatorMixin`.

    Notes
    -----
    ``fit_predict`` returns ``row_labels_`` (the private partition, −1 for rows of a deleted
    cluster; the paper's NMI uses ``row_assignment_``, not private) and ``score`` is τ̂_{R|C} +
    τ̂_{C|R} of the released partitions on a matrix of the fitted shape, read without noise
    (:class:`~dpcore.cocluster.taucc.TauCoclusterMixin`); no ``predict``.

    Progress: ``fit(X, callback=f)`` calls ``f(t, n_iter)`` after each full iteration (a
    ``fit`` argument, as in every dpcore estimator, not a constructor parameter).

    Input: whole counts only; a non-integer entry is refused with a ``ValueError`` (see the
    module docstring: integer noise cannot hide a fractional part), unless ``round_counts=True``.

    Bases: ``BaseEstimator`` only. Not ``ClusterMixin``: the input is a count matrix whose
    rows *and* columns are clustered. Not ``BiclusterMixin``: its contract is ``rows_`` /
    ``columns_`` indicator matrices of individual biclusters, while τCC releases a
    checkerboard of two partitions (K × L co-clusters, K and L chosen by the run) with
    rows of deleted clusters at −1 (in no co-cluster); ``row_labels_`` and
    ``column_labels_`` (the names scikit-learn's biclustering estimators use) carry it.

    **Budget and schedule (decisions where Alg. 1 is ambiguous).**
    ε′ = ε/(2𝓘), ε₂ = ``assignment_share``·ε′ (assignment), ε₁ = ε′ − ε₂ (table). **𝓘 full
    iterations are run**, t = 1..𝓘, each made of two half-steps costing ε′:

        column half-step: C ← DP-updatePart(Aᵀ R, Tᵀ, ε₂)   (t = 1: DP-updatePart(Aᵀ, C⁽⁰⁾ᵀMᵀ, ε₂))
                          T ← DP-computeT(A, R, C, ε₁)
        row half-step:    R ← DP-updatePart(A C, T, ε₂)
                          T ← DP-computeT(A, R, C, ε₁)

    so the ledger has 4𝓘 entries summing to 2𝓘·ε′ = ε (sequential composition). Alg. 1 as
    printed loops ``while t < 𝓘`` and would run only 𝓘 − 1 iterations, spending (𝓘−1)/𝓘 of ε
    (and nothing at all for 𝓘 = 1); ε′ = ε/(2𝓘) only adds up with 𝓘 full iterations, which is
    also what the authors' public code runs, so we run 𝓘. The last table release takes the
    rest of ε (ε₁ up to floating-point rounding), so the entries add up to exactly ε.

    Other decisions:

    - **Empty clusters disappear**: after each private assignment, clusters nobody chose
      are dropped and labels renumbered (post-processing of the private partition).
    - **"Delete row k" (Alg. 2)**: a row (or column, see :func:`release_table`) of the noisy T
      that is all zero after clipping is deleted; the rows (columns) of that cluster then
      belong to no cluster (label −1): they count in no aggregate until the next private
      update of their mode re-assigns them among the surviving clusters. If the final T
      deleted a cluster, its members keep −1 in ``row_labels_`` / ``column_labels_``.
    - A mode that collapses to a single cluster stays at one cluster (its utility no
      longer depends on the cluster); nothing is forced back.
    """

    #: The neighbouring relation the guarantee is stated for, as a key of
    #: :data:`dpcore.lab.audit.RELATIONS` ("cell_pm1": one count changed by ±1).
    claimed_relation = "cell_pm1"

    def __init__(self, *, n_row_clusters=3, n_col_clusters=3, epsilon=1.0, n_iter=4,
                 assignment_share=0.9, flip_fraction=0.01, round_counts=False, random_state=None):
        self.n_row_clusters = n_row_clusters
        self.n_col_clusters = n_col_clusters
        self.epsilon = epsilon
        self.n_iter = n_iter
        self.assignment_share = assignment_share
        self.flip_fraction = flip_fraction
        self.round_counts = round_counts
        self.random_state = random_state

    def _check_params(self):
        eps = check_epsilon(self.epsilon)
        I = check_int(self.n_iter, "n_iter (I)", 1)
        K0 = check_int(self.n_row_clusters, "n_row_clusters (K0)", 2)
        L0 = check_int(self.n_col_clusters, "n_col_clusters (L0)", 2)
        share = check_real(self.assignment_share, "assignment_share", 0.0, 1.0, low_inclusive=False,
                           high_inclusive=False)
        flip = check_real(self.flip_fraction, "flip_fraction", 0.0, 0.5)
        return eps, I, K0, L0, share, flip

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): n_iter iterations of
        aggregates, (n + m) exact choices and 4 noisy tables."""
        w = Work(n, d, nnz, sparse)
        K, L = min(param_int(self, "n_row_clusters", 3, 2), n), min(param_int(self, "n_col_clusters", 3, 2), d)
        passes = (matmul_cost(n, L, K) + unit_cost("elem", 3 * n * K)
                  + matmul_cost(d, K, L) + unit_cost("elem", 3 * d * L))
        per = unit_cost("sparse", 8 * nnz) + passes + unit_cost("choice", n * K + d * L) \
            + unit_cost("draw", 4 * K * L) + unit_cost("call", 6) + unit_cost("loop", 40)
        w.add("DP-τCC: n_iter × (aggregates of the nnz counts, (n + m)·K·L utilities, n + m exact choices, "
              "4 tables)",
              param_int(self, "n_iter", 4) * per + unit_cost("sparse", nnz * L), "n_iter", "n_row_clusters",
              "n_col_clusters")
        w.hold("DP-τCC: the matrix and its transpose, aggregates n·L and m·K",
               3 * nnz * 12 + (n * L + d * K) * 4 * 8)
        return w.plan(type(self).__name__)

    def fit(self, X, y=None, *, callback=None):
        """Run Alg. 1 on the count matrix ``X``.

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, m)
            The count matrix: non-negative whole counts.
        y : None
            Ignored (present for scikit-learn's API).
        callback : callable, optional
            ``callback(t, n_iter)``, called after each full iteration t (for a progress bar).

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter is out of range, or X is not a non-negative matrix of whole counts
            (the message names the first non-integer entry and says to round the data first),
            unless ``round_counts=True``.
        """
        record_features(self, X)
        eps, I, K0, L0, share, flip = self._check_params()
        A = check_count_matrix(X)
        if not isinstance(self.round_counts, (bool, np.bool_)):
            raise ValueError(f"round_counts must be True or False; got {self.round_counts!r}")
        if self.round_counts:
            A.data = np.floor(A.data + 0.5)
            A.eliminate_zeros()
            if A.nnz == 0:
                raise ValueError("X has no entry >= 0.5: rounded to whole counts it is all zero (no co-clusters)")
        check_integer_counts(A)
        _check_k0_l0(K0, L0, *A.shape)
        n, m = A.shape
        rng = check_random_state(self.random_state)
        At = A.T.tocsr()

        eps_half, eps2, eps1 = dptaucc_budget(eps, I, share)
        ledger = PrivacyLedger(budget_epsilon=eps)
        history = []

        r, _, T_init = random_matrix_init(n, m, K0, L0, flip, rng)
        for t in range(1, I + 1):
            # ---- column half-step
            if t == 1:
                c, dsig = dp_update_part(At, T_init, eps2, rng)  # utilities Aᵀ (C⁽⁰⁾ᵀMᵀ)ᵀ: m × L0
            else:
                c, dsig = dp_update_part(aggregate_rows(A, r, T.shape[0], At), T.T, eps2, rng)
            c, _ = compact_labels(c)
            ledger.record(f"iteration {t}: column partition", "exponential mechanism (Alg. 3)", eps2,
                          events=[PrivacyEvent.exponential(eps2)],
                          note=f"one draw per column, P ∝ exp(ε₂σ/Δ), Δ(σ) = {dsig:.4g} (eq. 4.10); "
                               "a changed cell moves one column's utilities only (parallel composition); drawn "
                               "exactly on a public grid, the rounding paid in the range sensitivity")
            T, r, c, _ = dp_compute_t(A, r, c, eps1, rng)
            ledger.record(f"iteration {t}: contingency table T (after columns)", TABLE_MECHANISM, eps1,
                          note=_table_note(T), events=[_table_event(eps1)])
            history.append(self._history_row(t, "columns", T, dsig))
            # ---- row half-step
            r, dsig = dp_update_part(aggregate_columns(A, c, T.shape[1]), T, eps2, rng)
            r, _ = compact_labels(r)
            ledger.record(f"iteration {t}: row partition", "exponential mechanism (Alg. 3)", eps2,
                          events=[PrivacyEvent.exponential(eps2)],
                          note=f"one draw per row, P ∝ exp(ε₂σ/Δ), Δ(σ) = {dsig:.4g} (eq. 4.10); "
                               "a changed cell moves one row's utilities only (parallel composition); drawn "
                               "exactly on a public grid, the rounding paid in the range sensitivity")
            # the very last release takes the rest of ε (= ε₁ up to rounding), so the ledger adds
            # up to exactly ε and the noise scale is that of the ε recorded
            eps1_t = ledger.rest_of(eps) if t == I else eps1
            T, r, c, T_exact = dp_compute_t(A, r, c, eps1_t, rng)
            ledger.record(f"iteration {t}: contingency table T (after rows)", TABLE_MECHANISM, eps1_t,
                          note=_table_note(T), events=[_table_event(eps1_t)])
            history.append(self._history_row(t, "rows", T, dsig))
            if callback is not None:
                callback(t, I)

        self.T_ = T
        self.row_labels_ = r
        self.column_labels_ = c
        self.n_row_clusters_, self.n_col_clusters_ = T.shape
        self.tau_rc_, self.tau_cr_ = tau_scores(T)
        self.history_ = history
        # evaluation only (NOT private): the raw rows against the last private T
        U = aggregate_columns(A, c, T.shape[1]) @ association_weights(T).T
        self.row_assignment_ = U.argmax(axis=1).astype(np.int64)
        self.T_exact_ = T_exact
        self.n_features_in_ = m
        if self.round_counts:
            ledger.entries[0].note = ("input rounded to whole counts (⌊x + ½⌋ per cell, round_counts=True) before the "
                                      "run; the guarantee is for the rounded matrix. " + ledger.entries[0].note)
        self.ledger_ = ledger
        self.budget_split_ = dict(per_half_step=eps_half, assignment=eps2, table=eps1)
        self.private_outputs_ = ["T_", "column_labels_", "row_labels_", "tau_rc_", "tau_cr_", "history_"]
        self.nonprivate_outputs_ = {
            "row_assignment_": "each raw row assigned to its best cluster under the last private T "
                               "(reads the data without noise; the paper's evaluation step for NMI)",
            "T_exact_": "noise-free contingency table of the final partitions (shown for teaching only)",
        }
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True   # a count matrix
        return tags

    @staticmethod
    def _history_row(t, mode, T, dsig):
        tau_rc, tau_cr = tau_scores(T)
        return dict(iteration=t, after=mode, K=int(T.shape[0]), L=int(T.shape[1]), delta_sigma=float(dsig),
                    tau_rc=tau_rc, tau_cr=tau_cr)
