"""Co-clustering with the de-normalised Goodman–Kruskal τ: the objective, the contingency
table and Fast-τCC (Battaglia, Peiretti & Pensa 2024; §3.2 of the DP co-clustering paper).

Notation (paper §3.2). ``A`` is an n×m non-negative matrix (documents × terms), ``R`` (n×K)
and ``C`` (m×L) are 0/1 cluster-incidence matrices and ``T = Rᵀ A C`` the K×L contingency
table, t_k· / t_·l its row / column sums and T its total.

    τ̂_{R|C} = Σ_kl t_kl² / (T t_·l) − Σ_k t_k·² / T²                         (3.2)
    σ(a_i, t_k) = Σ_l a_il (t_kl / t_·l − t_k· / T)                            (4.9)

σ is the row-to-prototype similarity of eq. 3.5 multiplied by the total A (a positive
constant, so the arg-max is the same); the column version swaps the roles of rows and
columns (use ``Aᵀ`` and ``Tᵀ``).

Sparse throughout: ``A`` is kept as CSR and every aggregate is a product with a sparse
indicator matrix (``A C`` is n×L, ``Aᵀ R`` is m×K, ``Rᵀ A C`` is K×L); the n×m matrix is
never densified. Labels equal to −1 mean "in no cluster": such rows/columns contribute to
no aggregate (DP-τCC uses this after it deletes a cluster; see :mod:`.dptaucc`).
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..validation import check_array, check_fitted_input, check_int, check_random_state, check_real, record_features
from ..work import BoundedWorkMixin, Work, matmul_cost, param_int, unit_cost
from ..data import MAX_DENSE_CELLS

__all__ = ["check_count_matrix", "indicator_matrix", "compact_labels",
           "aggregate_columns", "aggregate_rows", "contingency_table", "association_weights",
           "range_sensitivity", "assignment_utilities", "tau_scores", "random_matrix_init", "TauCoclusterMixin", "FastTauCC",
           "figure1_matrices", "best_cocluster_bruteforce"]


# ----------------------------------------------------------------------------- validation
def check_count_matrix(A, name: str = "A") -> sp.csr_matrix:
    """A non-empty, finite, non-negative matrix as a CSR float64 copy.

    Raises ``ValueError`` naming the problem: not 2-D, no rows or columns, a dense array
    with more than :data:`dpcore.data.MAX_DENSE_CELLS` cells, NaN/inf, negative entries, or no positive
    entry at all (an all-zero matrix has no co-clustering).

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (n, m)
    name : str, default "A"
        Name used in error messages.

    Returns
    -------
    scipy.sparse.csr_matrix
        Duplicates summed, explicit zeros removed.

    Raises
    ------
    ValueError
        As listed above.
    """
    if sp.issparse(A):
        if len(A.shape) != 2:
            raise ValueError(f"{name} must be a 2-D matrix (rows × columns); got shape {A.shape}")
        A = sp.csr_matrix(A, dtype=np.float64, copy=True)
    else:
        shape = np.shape(A)
        if len(shape) != 2:
            raise ValueError(f"{name} must be a 2-D matrix (rows × columns); got {len(shape)} dimension(s)")
        cells = int(shape[0]) * int(shape[1])
        if cells > MAX_DENSE_CELLS:
            raise ValueError(
                f"{name} is a dense {shape[0]}×{shape[1]} array ({cells:,} cells), more than the "
                f"{MAX_DENSE_CELLS:,} cells allowed for dense input; pass a scipy.sparse matrix instead")
        if cells == 0:
            raise ValueError(f"{name} must be a non-empty matrix (at least 1 row and 1 column); got shape {shape}")
        A = sp.csr_matrix(check_array(A, name))
    n, m = A.shape
    if n == 0 or m == 0:
        raise ValueError(f"{name} must be a non-empty matrix (at least 1 row and 1 column); got shape {A.shape}")
    if not np.all(np.isfinite(A.data)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    n_neg = int(np.count_nonzero(A.data < 0))
    if n_neg:
        raise ValueError(f"{name} must contain only non-negative counts; found {n_neg} negative entr"
                         f"{'y' if n_neg == 1 else 'ies'}")
    A.sum_duplicates()
    A.eliminate_zeros()
    if A.nnz == 0:
        raise ValueError(f"{name} must have at least one positive entry (an all-zero matrix has no co-clusters)")
    return A


# ----------------------------------------------------------------------------- aggregates
def indicator_matrix(labels, n_clusters: int) -> sp.csr_matrix:
    """Sparse 0/1 incidence matrix (len(labels) × n_clusters); label −1 gives an all-zero row.

    Parameters
    ----------
    labels : array_like of int of shape (n,)
        Labels in [−1, n_clusters).
    n_clusters : int

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, n_clusters)
    """
    labels = np.asarray(labels, dtype=np.int64)
    idx = np.flatnonzero(labels >= 0)
    return sp.csr_matrix((np.ones(idx.size), (idx, labels[idx])), shape=(labels.size, int(n_clusters)))


def compact_labels(labels):
    """Renumber the used labels ≥ 0 to 0..K'−1 (in increasing order); −1 stays −1.

    Returns ``(labels, K')``: empty clusters disappear.

    Parameters
    ----------
    labels : array_like of int

    Returns
    -------
    labels : ndarray of int64
    K : int
        Number of clusters used.
    """
    labels = np.asarray(labels, dtype=np.int64)
    used = np.unique(labels[labels >= 0])
    out = np.full(labels.shape, -1, dtype=np.int64)
    keep = labels >= 0
    out[keep] = np.searchsorted(used, labels[keep])
    return out, int(used.size)


def aggregate_columns(A, col_labels, n_col_clusters: int) -> np.ndarray:
    """``A C``: n×L dense, entry (i, l) = Σ_{j in column cluster l} a_ij.

    Parameters
    ----------
    A : scipy.sparse matrix or ndarray of shape (n, m)
    col_labels : array_like of int of shape (m,)
    n_col_clusters : int

    Returns
    -------
    ndarray of shape (n, n_col_clusters)
    """
    return np.asarray((A @ indicator_matrix(col_labels, n_col_clusters)).todense())


def aggregate_rows(A, row_labels, n_row_clusters: int, At=None) -> np.ndarray:
    """``Aᵀ R``: m×K dense, entry (j, k) = Σ_{i in row cluster k} a_ij. Pass ``At`` (a CSR
    copy of Aᵀ) to avoid transposing again.

    Parameters
    ----------
    A : scipy.sparse matrix of shape (n, m)
    row_labels : array_like of int of shape (n,)
    n_row_clusters : int
    At : scipy.sparse.csr_matrix of shape (m, n), optional

    Returns
    -------
    ndarray of shape (m, n_row_clusters)
    """
    At = A.T.tocsr() if At is None else At
    return np.asarray((At @ indicator_matrix(row_labels, n_row_clusters)).todense())


def contingency_table(A, row_labels, col_labels, n_row_clusters: int | None = None,
                      n_col_clusters: int | None = None) -> np.ndarray:
    """``T = Rᵀ A C`` (K×L): t_kl = Σ_{i∈R_k} Σ_{j∈C_l} a_ij, by sparse products.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (n, m)
    row_labels : array_like of int of shape (n,)
    col_labels : array_like of int of shape (m,)
    n_row_clusters, n_col_clusters : int, optional
        K and L; default the largest label + 1.

    Returns
    -------
    ndarray of shape (K, L)
    """
    A = sp.csr_matrix(A)
    row_labels = np.asarray(row_labels, dtype=np.int64)
    col_labels = np.asarray(col_labels, dtype=np.int64)
    K = int(row_labels.max()) + 1 if n_row_clusters is None else int(n_row_clusters)
    L = int(col_labels.max()) + 1 if n_col_clusters is None else int(n_col_clusters)
    AC = A @ indicator_matrix(col_labels, L)
    return np.asarray((indicator_matrix(row_labels, K).T @ AC).todense())


def association_weights(T) -> np.ndarray:
    """W (K×L) with w_kl = t_kl / t_·l − t_k· / T, so that σ(a_i, t_k) = Σ_l a_il w_kl (eq. 4.9).

    Conventions for degenerate tables: a column of T summing to 0 contributes 0 to the first
    term (0/0 := 0, as in the τ formula where q_kl²/q_·l = 0 when q_·l = 0); an all-zero T gives
    W = 0 (every cluster equally good).

    Parameters
    ----------
    T : array_like of shape (K, L)
        Contingency table.

    Returns
    -------
    ndarray of shape (K, L)
    """
    T = np.asarray(T, dtype=np.float64)
    total = T.sum()
    if total <= 0:
        return np.zeros_like(T)
    col = T.sum(axis=0)
    first = np.divide(T, col[None, :], out=np.zeros_like(T), where=col[None, :] > 0)
    return first - T.sum(axis=1)[:, None] / total


def range_sensitivity(W) -> float:
    """Δ(σ) of eq. 4.10: max over columns l of (max_k w_kl − min_k w_kl).

    If one cell a_uv grows by 1 and column v is in column cluster l, the utility of row u for
    cluster k grows by exactly w_kl (eq. 4.9 is linear in a_i), so this is the range
    sensitivity of Def. 4 for the assignment of row u; other rows are unaffected.

    Parameters
    ----------
    W : array_like of shape (K, L)
        From :func:`association_weights`.

    Returns
    -------
    float
        0 when K < 2 or W is empty.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.size == 0 or W.shape[0] < 2:
        return 0.0
    return float(np.max(W.max(axis=0) - W.min(axis=0)))


def assignment_utilities(B, T) -> np.ndarray:
    """u_ik = σ(b_i, t_k) = Σ_l b_il w_kl for aggregated data B (n×L, dense or sparse) and a
    K×L table T; returns the n×K utility matrix.

    Parameters
    ----------
    B : ndarray or scipy.sparse matrix of shape (n, L)
    T : array_like of shape (K, L)

    Returns
    -------
    ndarray of shape (n, K)
    """
    W = association_weights(T)
    U = B @ W.T
    return np.asarray(U)


def tau_scores(T):
    """(τ̂_{R|C}, τ̂_{C|R}) of a contingency table (eq. 3.2 and its transpose).

    τ̂_{R|C} = Σ_kl t_kl²/(T t_·l) − Σ_k t_k·²/T²; τ̂_{C|R} swaps rows and columns. Empty
    rows/columns contribute 0; an all-zero table gives (0, 0).

    Parameters
    ----------
    T : array_like of shape (K, L)

    Returns
    -------
    tau_rc, tau_cr : float
    """
    T = np.asarray(T, dtype=np.float64)
    total = T.sum()
    if total <= 0:
        return 0.0, 0.0
    row = T.sum(axis=1)
    col = T.sum(axis=0)
    sq = T ** 2
    a_rc = np.sum(np.divide(sq.sum(axis=0), col, out=np.zeros_like(col), where=col > 0)) / total
    a_cr = np.sum(np.divide(sq.sum(axis=1), row, out=np.zeros_like(row), where=row > 0)) / total
    return float(a_rc - np.sum(row ** 2) / total ** 2), float(a_cr - np.sum(col ** 2) / total ** 2)


# ----------------------------------------------------------------------------- Fast-τCC
def _mode_passes(B, labels, K, max_passes):
    """Alternate prototype update and re-assignment of one mode while the other is fixed.

    ``B`` (n×L) is the data aggregated over the fixed mode's clusters. Each pass computes
    T = Rᵀ B, the utilities σ(b_i, t_k) and moves every object to its best cluster (an object
    stays put when its current cluster is among the best, so ties never cause oscillation);
    empty clusters disappear. Returns (labels, K, passes, total_moves).
    """
    n = B.shape[0]
    rows = np.arange(n)
    moves_total = 0
    passes = 0
    for passes in range(1, max_passes + 1):
        T = np.asarray((indicator_matrix(labels, K).T @ B))
        U = B @ association_weights(T).T
        best = U.argmax(axis=1)
        cur = U[rows, labels]
        tol = 1e-12 * max(1.0, float(np.abs(U).max()))
        new = np.where(U[rows, best] > cur + tol, best, labels)
        moves = int(np.count_nonzero(new != labels))
        labels, K = compact_labels(new)
        moves_total += moves
        if moves == 0:
            break
    return labels, K, passes, moves_total


# ----------------------------------------------------------------------------- RandomMatrix
def _block_pattern(K0, L0):
    """K0×L0 0/1 pattern of the initial block co-clusters.

    The first min(K0, L0) clusters of both modes form a block diagonal (identity). Each of
    the |K0 − L0| extra clusters of the larger mode gets a distinct 0/1 vector over the
    smaller mode with at least two ones, taken by increasing number of ones (the choice of
    the authors' public code); when they run out (|K0 − L0| > 2^min − min − 1) they repeat.
    """
    small, large = min(K0, L0), max(K0, L0)
    rows = [tuple(int(i == j) for j in range(small)) for i in range(small)]
    # only the first |K0 − L0| vectors are needed: listing all 2^small of them would exhaust the
    # memory already at K0 = L0 = 30
    vectors = (v for w in range(2, small + 1) for v in itertools.combinations(range(small), w))
    extra = list(itertools.islice(vectors, large - small))
    for e in range(large - small):
        v = extra[e % len(extra)] if extra else tuple(range(small))
        rows.append(tuple(int(j in v) for j in range(small)))
    P = np.array(rows, dtype=np.int8)  # large × small
    return P if K0 >= L0 else P.T


def random_matrix_init(n, m, K0, L0, flip_fraction=0.01, random_state=None):
    """The blind initialisation ``RandomMatrix(n, m, K0, L0)`` of Alg. 1 (described after
    Alg. 3), computed without forming the n×m boolean matrix M.

    M has K0 equally sized row clusters R⁽⁰⁾ and L0 equally sized column clusters C⁽⁰⁾
    (sizes differ by at most 1; random order); block (k, l) is all ones when the
    :func:`_block_pattern` has a 1 there; then every cell is switched independently with
    probability ``flip_fraction`` (the paper's "a random 1 % of the entries are switched",
    read as 1 % in expectation). M depends only on (n, m, K0, L0) and the random generator,
    never on the data: it costs no privacy.

    Only ``T_init = C⁽⁰⁾ᵀ Mᵀ`` is needed - the L0×n table that Alg. 1 line 6 passes to the
    first column update (its "row clusters" are the n individual rows): entry (l, i) is the
    number of ones of row i of M in column cluster l. The number of switched cells of row i
    in column cluster l is Binomial(|C_l|, flip_fraction), so T_init is drawn in O(n·L0)
    time and memory, never O(n·m).

    Returns ``(row_labels0, col_labels0, T_init)``.

    Parameters
    ----------
    n, m : int
        Numbers of rows and columns.
    K0, L0 : int ≥ 1
        Initial numbers of row and column clusters.
    flip_fraction : float in [0, 1], default 0.01
        Probability that a cell of M is switched (not checked).
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    row_labels0 : ndarray of int of shape (n,)
    col_labels0 : ndarray of int of shape (m,)
    T_init : ndarray of float of shape (L0, n)
    """
    rng = check_random_state(random_state)
    P = _block_pattern(K0, L0)
    r0 = rng.permutation(np.arange(n) % K0)
    c0 = rng.permutation(np.arange(m) % L0)
    col_sizes = np.bincount(c0, minlength=L0)
    ones = P[r0].astype(np.float64)  # n × L0: is block (r0_i, l) a block of ones?
    flips = rng.binomial(col_sizes[None, :], flip_fraction, size=(n, L0)) if flip_fraction > 0 else 0
    T_init = ones * col_sizes[None, :] + (1.0 - 2.0 * ones) * flips  # a 1 switched -> −1, a 0 switched -> +1
    return r0, c0, T_init.T.copy()


# ----------------------------------------------------------------------------- τCC
class TauCoclusterMixin:
    """What the τ co-clustering estimators share once fitted: ``fit_predict`` (the row
    partition ``row_labels_``) and ``score`` (their objective, τ̂_{R|C} + τ̂_{C|R}, of the fitted
    partitions on a matrix of the fitted shape).

    No ``predict``: the column partition is part of the model, so a new row has no place in
    it without the whole matrix, and ``score`` is defined on a matrix with the fit's rows and
    columns only (e.g. another period's counts of the same documents and words).
    """

    def fit_predict(self, X, y=None, **fit_params):
        """Fit, then return ``row_labels_``.

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, m)
            The count matrix (see ``fit``).
        y : None
            Ignored (present for scikit-learn's API).
        **fit_params
            Passed to ``fit`` (e.g. ``callback``).

        Returns
        -------
        ndarray of int64 of shape (n,)
            ``row_labels_``.
        """
        return self.fit(X, y, **fit_params).row_labels_

    def score(self, X, y=None):
        """τ̂_{R|C} + τ̂_{C|R} (eq. 3.2 and its transpose) of the contingency table of X under the
        fitted row and column partitions (rows or columns labelled −1 count in no cell): the sum
        the method maximises. Higher is better; NOT private (reads X without noise).

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, m)
            A non-negative matrix with the fit's n rows and m columns (and feature names).
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        float
            In [0, 2].

        Raises
        ------
        ValueError
            If X does not have the fitted shape, or is not a non-negative matrix with a positive entry.
        """
        A = check_count_matrix(check_fitted_input(self, X, "row_labels_", allow_sparse=True), "X")
        shape = (self.row_labels_.shape[0], self.column_labels_.shape[0])
        if A.shape != shape:
            raise ValueError(f"X must have the fitted shape {shape} (the partitions label the fit's rows and "
                             f"columns); got {A.shape}")
        T = contingency_table(A, self.row_labels_, self.column_labels_, self.n_row_clusters_, self.n_col_clusters_)
        return float(sum(tau_scores(T)))


class FastTauCC(TauCoclusterMixin, BoundedWorkMixin, BaseEstimator):
    """Fast-τCC (non-private): alternating prototype-based maximisation of τ̂_{R|C} and τ̂_{C|R}.

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (n_init × max_iter × max_iter_per_mode passes of (n + m)·K·L; :meth:`planned_work`) is refused
    past the caps of :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_row_clusters : int, default=3
        Initial number K0 of row clusters (≥ 2, at most the number of rows).
        The algorithm may end with fewer: a cluster that loses all its members disappears.
        Fast-τCC is meant to start from an *over-estimate* and find the number of clusters
        itself (§3.2); started at exactly the true number it often loses a cluster (a
        cluster whose prototype is slightly worse for every object empties in one pass and
        cannot come back), so use ``n_init`` > 1 or a larger K0/L0 when that matters.
    n_col_clusters : int, default=3
        Initial number L0 of column clusters (≥ 2, at most the number of columns); like
        ``n_row_clusters``, it may end lower.
    init : {"random", "blind"}, default="random"
        ``"random"``: uniform random labels (the authors' default). ``"blind"``: the
        data-independent RandomMatrix start of DP-τCC (:func:`random_matrix_init`)
        followed by its first column update done exactly (arg-max); with the same
        ``random_state`` it starts exactly where :class:`.dptaucc.DPTauCC` starts, so the two
        differ only by the privacy noise and the number of iterations.
    n_init : int, default=1
        Number (≥ 1) of runs from independent initial partitions; the run with the largest
        τ̂_{R|C} + τ̂_{C|R} is kept (the paper's reference runs once: ``n_init=1``).
    max_iter : int, default=50
        Maximum number (≥ 1) of rounds (a round = row phase then column phase).
    max_iter_per_mode : int, default=100
        Maximum number (≥ 1) of passes in one phase (a pass = recompute T, move every object).
        ``max_iter_per_mode=1`` alternates single passes, the schedule of DP-τCC.
    flip_fraction : float, default=0.01
        Fraction in [0, 0.5] of switched cells of the ``"blind"`` initial matrix (paper: 1 %).
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the initial partitions of every run.

    Attributes
    ----------
    row_labels_ : ndarray of int64 of shape (n,)
        Final row partition (0..K−1).
    column_labels_ : ndarray of int64 of shape (m,)
        Final column partition (0..L−1).
    T_ : ndarray of shape (K, L)
        Final contingency table Rᵀ A C.
    tau_rc_ : float
        τ̂_{R|C} of ``T_``.
    tau_cr_ : float
        τ̂_{C|R} of ``T_``.
    n_row_clusters_ : int
        Final K.
    n_col_clusters_ : int
        Final L.
    n_iter_ : int
        Rounds run (kept run).
    converged_ : bool
        Whether the kept run stopped at a fixed point (see Notes) rather than after
        ``max_iter`` rounds.
    history_ : list of dict
        One dict (round, mode, passes, moves, K, L, tau_rc, tau_cr) per phase.
    n_features_in_ : int
        Number of columns of X.
    feature_names_in_ : ndarray of str of shape (m,)
        Column names, when X is a DataFrame with string column names.

    Notes
    -----
    ``fit_predict`` returns ``row_labels_`` and ``score`` is τ̂_{R|C} + τ̂_{C|R} of the fitted
    partitions on a matrix of the fitted shape (:class:`TauCoclusterMixin`); no ``predict``.

    Vocabulary: ``max_iter`` and ``max_iter_per_mode`` are caps with early stopping (as
    ``max_iter`` in every dpcore estimator); :class:`.dptaucc.DPTauCC`'s ``n_iter`` is an
    exact count. Bases: ``BaseEstimator`` only - the input is a count matrix whose rows
    and columns are both clustered, so neither ``ClusterMixin`` (one ``labels_`` of the
    rows) nor ``BiclusterMixin`` (``rows_``/``columns_`` indicators of single biclusters,
    while τCC releases a checkerboard of two partitions) fits; ``row_labels_`` and
    ``column_labels_`` use scikit-learn's biclustering names.

    Algorithm (Battaglia et al. 2024, as summarised in §3.2). A row phase fixes the column
    partition, aggregates B = A C once and repeats: T = Rᵀ B; move each row to
    argmax_k σ(a_i, t_k) (eq. 3.5/3.6 with the prototypes of the current partition; a row
    whose current cluster ties for best stays), until no row moves or
    ``max_iter_per_mode`` passes; empty clusters disappear. The column phase does the same
    with Aᵀ R and Tᵀ. **Stopping rule:** stop when one round moves no object at all (both
    partitions are a fixed point of the assignment), or after ``max_iter`` rounds
    (``converged_`` says which).
    """

    def __init__(self, *, n_row_clusters=3, n_col_clusters=3, init="random", n_init=1, max_iter=50,
                 max_iter_per_mode=100, flip_fraction=0.01, random_state=None):
        self.n_row_clusters = n_row_clusters
        self.n_col_clusters = n_col_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.max_iter_per_mode = max_iter_per_mode
        self.flip_fraction = flip_fraction
        self.random_state = random_state

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): n_init × max_iter rounds
        of max_iter_per_mode passes over the rows and the columns."""
        w = Work(n, d, nnz, sparse)
        K, L = min(param_int(self, "n_row_clusters", 3), n), min(param_int(self, "n_col_clusters", 3), d)
        n_init, max_iter = param_int(self, "n_init", 1), param_int(self, "max_iter", 50)
        per_mode = param_int(self, "max_iter_per_mode", 100)
        passes = (matmul_cost(n, L, K) + unit_cost("elem", 3 * n * K)
                  + matmul_cost(d, K, L) + unit_cost("elem", 3 * d * L))
        w.add("Fast-τCC: n_init × max_iter × (aggregates of the nnz counts + max_iter_per_mode passes of "
              "(n + m)·K·L)",
              n_init * max_iter * (unit_cost("sparse", 6 * nnz) + per_mode * passes),
              "max_iter", "n_init", "max_iter_per_mode")
        w.hold("Fast-τCC: the matrix and its transpose, aggregates n·L and m·K",
               2 * nnz * 12 + (n * L + d * K) * 3 * 8)
        return w.plan(type(self).__name__)

    def fit(self, X, y=None):
        """Co-cluster the count matrix X (scipy.sparse or dense, n × m, non-negative).

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, m)
            The count matrix: non-negative counts.
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        self
            The fitted estimator.
        """
        record_features(self, X)
        K0 = check_int(self.n_row_clusters, "n_row_clusters (K0)", 2)
        L0 = check_int(self.n_col_clusters, "n_col_clusters (L0)", 2)
        if self.init not in ("random", "blind"):
            raise ValueError(f"init must be 'random' or 'blind'; got {self.init!r}")
        n_init = check_int(self.n_init, "n_init", 1)
        max_iter = check_int(self.max_iter, "max_iter", 1)
        per_mode = check_int(self.max_iter_per_mode, "max_iter_per_mode", 1)
        flip = check_real(self.flip_fraction, "flip_fraction", 0.0, 0.5)
        A = check_count_matrix(X)
        n, m = A.shape
        if K0 > n or L0 > m:
            raise ValueError(f"n_row_clusters (K0) must be <= the number of rows ({n}) and n_col_clusters (L0) "
                             f"<= the number of columns ({m}); got K0={K0}, L0={L0}")
        rng = check_random_state(self.random_state)
        At = A.T.tocsr()
        best = None
        for _ in range(n_init):
            run = self._run(A, At, K0, L0, max_iter, per_mode, flip, rng)
            if best is None or sum(run["taus"]) > sum(best["taus"]) + 1e-12:
                best = run
        self.row_labels_, self.column_labels_ = best["r"], best["c"]
        self.T_ = best["T"]
        self.tau_rc_, self.tau_cr_ = best["taus"]
        self.n_row_clusters_, self.n_col_clusters_ = best["T"].shape
        self.n_iter_ = best["n_iter"]
        self.converged_ = best["converged"]
        self.history_ = best["history"]
        self.n_features_in_ = m
        return self

    def _run(self, A, At, K, L, max_iter, per_mode, flip, rng):
        n, m = A.shape
        if self.init == "random":
            r, K = compact_labels(rng.integers(0, K, size=n))
            c, L = compact_labels(rng.integers(0, L, size=m))
        else:
            r, _, T_init = random_matrix_init(n, m, K, L, flip, rng)
            r, K = compact_labels(r)
            c, L = compact_labels(np.asarray(At @ association_weights(T_init).T).argmax(axis=1))
        history = []
        converged = False
        it = 0
        for it in range(1, max_iter + 1):
            r, K, p_r, mv_r = _mode_passes(aggregate_columns(A, c, L), r, K, per_mode)
            T = contingency_table(A, r, c, K, L)
            history.append(dict(round=it, mode="rows", passes=p_r, moves=mv_r, K=K, L=L,
                                **dict(zip(("tau_rc", "tau_cr"), tau_scores(T)))))
            c, L, p_c, mv_c = _mode_passes(aggregate_rows(A, r, K, At), c, L, per_mode)
            T = contingency_table(A, r, c, K, L)
            history.append(dict(round=it, mode="columns", passes=p_c, moves=mv_c, K=K, L=L,
                                **dict(zip(("tau_rc", "tau_cr"), tau_scores(T)))))
            if mv_r == 0 and mv_c == 0:
                converged = True
                break
        return dict(r=r, c=c, T=T, taus=tau_scores(T), n_iter=it, converged=converged, history=history)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True   # a count matrix
        return tags


# ----------------------------------------------------------------------------- Fig. 1 of the paper
def figure1_matrices():
    """The two neighbouring 4×6 purchase matrices of Fig. 1 (§3.3): A′ = A except a′₃₃ = 1
    (customer 3 buys one unit of product 3). Returns ``(A, A_prime)`` as dense float arrays.

    Returns
    -------
    A, A_prime : ndarray of float64 of shape (4, 6)
    """
    A = np.array([[2, 3, 1, 0, 0, 0],
                  [2, 2, 0, 0, 0, 1],
                  [0, 0, 0, 2, 2, 3],
                  [0, 0, 1, 0, 5, 2]], dtype=np.float64)
    A2 = A.copy()
    A2[2, 2] = 1.0
    return A, A2


def best_cocluster_bruteforce(A, n_row_clusters=2, n_col_clusters=2):
    """Exhaustive search (tiny matrices only: at most 12 rows/columns) of the co-clustering
    with at most K row and L column clusters that maximises τ̂_{R|C} + τ̂_{C|R}, the two
    objectives Fast-τCC alternates on. Returns ``(row_labels, col_labels, T, (tau_rc, tau_cr))``
    with labels numbered by first appearance. Used to show the leak of Fig. 1 exactly.

    Parameters
    ----------
    A : array_like of shape (n, m)
        n, m ≤ 12.
    n_row_clusters : int in [1, 4], default 2
    n_col_clusters : int in [1, 4], default 2

    Returns
    -------
    row_labels : ndarray of int of shape (n,)
    col_labels : ndarray of int of shape (m,)
    T : ndarray of shape (K', L')
    (tau_rc, tau_cr) : tuple of float

    Raises
    ------
    ValueError
        If a cluster count is out of range or A has more than 12 rows or columns.
    """
    A = np.asarray(A, dtype=np.float64)
    n, m = A.shape
    K = check_int(n_row_clusters, "n_row_clusters", 1, 4)
    L = check_int(n_col_clusters, "n_col_clusters", 1, 4)
    if n > 12 or m > 12:
        raise ValueError(f"A must have at most 12 rows and 12 columns for an exhaustive search; got {n}×{m}")

    def partitions(size, k):  # label vectors with labels in first-appearance order (no duplicates)
        for lab in itertools.product(range(k), repeat=size - 1):
            lab = (0,) + lab
            if all(lab[i] <= max(lab[:i]) + 1 for i in range(1, size)):
                yield np.array(lab)

    best = None
    col_parts = list(partitions(m, L))
    for r in partitions(n, K):
        RA = np.zeros((r.max() + 1, m))
        np.add.at(RA, r, A)
        for c in col_parts:
            T = np.zeros((RA.shape[0], c.max() + 1))
            np.add.at(T.T, c, RA.T)
            score = sum(tau_scores(T))
            if best is None or score > best[0] + 1e-12:
                best = (score, r, c, T)
    _, r, c, T = best
    return r, c, T, tau_scores(T)
