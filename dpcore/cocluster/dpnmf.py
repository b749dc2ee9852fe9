"""DPNMF: (ε, δ)-differentially private non-negative matrix factorisation (Saha & Imtiaz,
"Privacy-preserving non-negative matrix factorization with outliers", ACM TKDD 18, 2024) -
reference [26] of the co-clustering paper, its DPNMF peer in §5 (δ = 1e-5, at most 4
iterations).

The mechanism (facts of the original method; the code is ours)
---------------------------------------------------------------
Documents are the rows v_j of X (n × m), each L2-normalised to norm ≤ 1 (public radius 1,
a per-row map, so it keeps the neighbouring relation). NMF looks for X ≈ H Wᵀ with W ≥ 0
(m × K, the basis: one column per topic) and H ≥ 0 (n × K, one row of coefficients per
document), every column of W and every row of H kept in the unit ball. Each iteration:

1. **H-step (per document, not released)**: h_j ← projected gradient steps on
   ½‖v_j − W h_j‖² given the current (released) W; h_j depends on v_j and W only.
2. **W-step (released)**: the two sufficient statistics of the W-subproblem
   min_W ½ tr(Wᵀ W A) − tr(Wᵀ B),  A = Hᵀ H / n (K × K),  B = Xᵀ H / n (m × K),
   are released with the Gaussian mechanism, and W is updated from the *noisy* A, B only
   (projected gradient, post-processing).

Neighbouring datasets: **one document (row) replaced** by another (n public). Replacing
v_j changes h_j only (given the released W's), so A moves by (h hᵀ − h′h′ᵀ)/n and B by
(v hᵀ − v′h′ᵀ)/n. For non-negative vectors of norm ≤ 1 the cross terms are ≥ 0, so
‖h hᵀ − h′h′ᵀ‖_F² = ‖h‖⁴ + ‖h′‖⁴ − 2(h·h′)² ≤ 2 and likewise for B: each release has L2
sensitivity √2/n (the original paper bounds it by 2/n, without using non-negativity). The
2·𝓘 releases are composed exactly with Gaussian DP (:class:`dpcore.privacy.GaussianBudget`),
where the original uses Rényi DP with the classic σ = Δ√(2 ln(1.25/δ))/ε, valid only for
ε < 1 - the reason the co-clustering paper runs DPNMF at ε ≤ 0.99999. The analytic σ used
here holds for every ε > 0.

Decisions where the published code differs from the paper's argument
---------------------------------------------------------------------
- **Fixed numbers of inner steps.** The public code stops the H-loop when the loss over
  *all* documents stops decreasing, so h_i would depend on every v_j and the sensitivity
  argument above would fail. Here both inner loops run a fixed number of steps
  (``h_steps``, ``w_steps``) with step 1/L, L the largest eigenvalue of the public K × K
  matrix (Wᵀ W, resp. the symmetrised noisy A).
- **No outlier matrix R.** The paper's model is X ≈ WH + R; the public code the
  co-clustering paper ran never updates R (its ``update_H_R`` updates H only), so R is
  omitted.
- **The W step.** ``w_step_size=None`` (default) steps W by 1/L (L the largest eigenvalue of
  the symmetrised noisy A), so the released statistics move the basis. A float is a fixed step
  instead: the co-clustering paper's run of the public code used 1e-4 (``alpha_W``), and that
  code's W-loop stops after one step at ε ≥ 0.5 (at ε = 0.1 its noise makes it run 201 steps
  per iteration), so W moves by at most about 4·10⁻⁴·‖∇‖ over 4 iterations and stays at its
  NNDSVD start. ``init="nndsvd", w_step_size=1e-4, w_steps=1`` is that run ("DPNMF as
  published"); since the start is not private and W barely leaves it, it is in effect a
  non-private NNDSVD clustering. Its plotted curve also assigned each document to its
  *farthest* basis vector (Euclidean distance of A/max(A) to the columns of W, its ``nmi_xc``
  column); ``labels_`` here is always the argmax of h (the nearest topic), never that.
- **Initialisation.** ``init="random"`` (default) is a blind start (uniform random factors,
  no data access), for which the released basis is (ε, δ)-DP. ``init="nndsvd"`` (the paper's
  setting, only when asked, with a :class:`~dpcore.exceptions.PrivacyLeakWarning`) starts from
  the non-negative double SVD (Boutsidis & Gallopoulos 2008) of a randomised truncated SVD of
  the raw, row-normalised data: it reads every document without noise, so the run is NOT
  private (``released_private_`` False, ``components_`` listed in ``nonprivate_outputs_``
  and the ledger note says so).

The row partition (``labels_``) is argmax_k h_jk for each raw document against the last
released W (the evaluation step, like DP-τCC's ``row_assignment_``): NOT private.

Its measured utility on the CLUTO sets is in docs/benchmarks.md ("The paper's peers").
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..validation import (check_array, check_delta, check_epsilon, check_fitted_input, check_int, check_random_state,
                          input_float_dtype, record_features)
from ..work import Work, matmul_cost, param_int, unit_cost
from ..preprocessing import normalize_rows
from ..privacy import GaussianBudget, PrivacyLedger, PrivateEstimatorMixin

__all__ = ["DPNMF", "DPNMF_INITS", "nndsvd_init", "project_unit_rows", "h_step", "w_step"]

#: Initialisations: "random" (blind, the default) and "nndsvd" (the paper's, reads the data: NOT private).
DPNMF_INITS = ("random", "nndsvd")

#: L2 sensitivity of A = HᵀH/n and of B = XᵀH/n, times n (see the module docstring).
STAT_SENSITIVITY_FACTOR = math.sqrt(2.0)

_NNDSVD_REASON = ("the initial factors come from a truncated SVD of the raw documents (NNDSVD, the paper's "
                  "start): the released basis depends on that noiseless computation, so the run is NOT private")


def _leak_warning():
    """dpcore's privacy-leak warning class (:mod:`dpcore.exceptions`), UserWarning where it is absent."""
    try:
        from ..exceptions import PrivacyLeakWarning
    except ImportError:          # pragma: no cover - older trees
        return UserWarning
    return PrivacyLeakWarning


def project_unit_rows(M):
    """Project every row of ``M`` onto {x ≥ 0, ‖x‖ ≤ 1} (clip negatives, then shrink rows of
    norm > 1 onto the sphere: the exact Euclidean projection onto that intersection).

    Parameters
    ----------
    M : ndarray of shape (r, K)

    Returns
    -------
    ndarray of float64 of shape (r, K)
        A new array.
    """
    M = np.maximum(np.asarray(M, dtype=np.float64), 0.0)
    norms = np.sqrt(np.einsum("ij,ij->i", M, M))
    return M / np.maximum(norms, 1.0)[:, None]


def _top_eigenvalue(S):
    """Largest eigenvalue of the symmetric part of the small matrix ``S`` (at least a tiny
    positive number, so 1/L is a finite step)."""
    S = np.asarray(S, dtype=np.float64)
    lam = float(np.linalg.eigvalsh((S + S.T) / 2.0)[-1]) if S.size else 0.0
    return lam if lam > 1e-12 else 1e-12


def h_step(V, W, H, n_steps):
    """The H-step: ``n_steps`` projected gradient steps on ½‖v_j − W h_j‖² for every row
    (document) j at once, with step 1/λ_max(WᵀW), each row projected onto {h ≥ 0, ‖h‖ ≤ 1}.
    Row j of the result depends on v_j, W and row j of ``H`` only.

    Parameters
    ----------
    V : ndarray or scipy.sparse matrix of shape (n, m)
        The (row-normalised) documents.
    W : ndarray of shape (m, K)
        The basis (public: released, or the initial one).
    H : ndarray of shape (n, K)
        The current coefficients.
    n_steps : int ≥ 1

    Returns
    -------
    ndarray of float64 of shape (n, K)
    """
    G = W.T @ W
    VW = np.asarray(V @ W)
    step = 1.0 / _top_eigenvalue(G)
    for _ in range(n_steps):
        H = project_unit_rows(H - step * (H @ G - VW))
    return H


def w_step(W, A, B, n_steps, step_size=None):
    """The W-step from the released statistics only (post-processing): ``n_steps`` projected
    gradient steps on ½ tr(WᵀWA) − tr(WᵀB) (gradient WA − B, step 1/λ_max of the
    symmetrised A, or ``step_size``), every column of W projected onto {w ≥ 0, ‖w‖ ≤ 1}.
    The projection is non-expansive, so from a feasible W one step moves W by at most
    step·‖WA − B‖_F (Frobenius).

    Parameters
    ----------
    W : ndarray of shape (m, K)
    A : ndarray of shape (K, K)
        Released (noisy) HᵀH/n.
    B : ndarray of shape (m, K)
        Released (noisy) XᵀH/n.
    n_steps : int ≥ 1
    step_size : float > 0, optional
        A fixed step; None = 1/λ_max(A).

    Returns
    -------
    ndarray of float64 of shape (m, K)
    """
    A = (A + A.T) / 2.0
    step = 1.0 / _top_eigenvalue(A) if step_size is None else float(step_size)
    for _ in range(n_steps):
        W = project_unit_rows((W - step * (W @ A - B)).T).T
    return W


def nndsvd_init(V, k, seed):
    """NNDSVD start (Boutsidis & Gallopoulos 2008) from a randomised truncated SVD of ``V``:
    factor 0 from the leading singular pair (absolute values), every other from the positive
    or negative part of its pair, whichever carries more mass. Reads the data: NOT private.

    Parameters
    ----------
    V : ndarray or scipy.sparse matrix of shape (n, m)
    k : int
        Rank, ≤ min(n, m).
    seed : int
        Seed of the randomised SVD.

    Returns
    -------
    W : ndarray of shape (m, k)
    H : ndarray of shape (n, k)
    """
    from sklearn.utils.extmath import randomized_svd
    P, S, Qt = randomized_svd(V, k, random_state=seed)
    H = np.zeros((V.shape[0], k))
    W = np.zeros((V.shape[1], k))
    for j in range(k):
        x, y = P[:, j], Qt[j, :]
        if j == 0:
            u, v, s = np.abs(x), np.abs(y), 1.0
        else:
            xp, yp, xn, yn = np.maximum(x, 0), np.maximum(y, 0), np.maximum(-x, 0), np.maximum(-y, 0)
            mp = np.linalg.norm(xp) * np.linalg.norm(yp)
            mn = np.linalg.norm(xn) * np.linalg.norm(yn)
            (u, v, s) = (xp, yp, mp) if mp > mn else (xn, yn, mn)
            nu, nv = np.linalg.norm(u), np.linalg.norm(v)
            if nu == 0 or nv == 0:
                continue
            u, v = u / nu, v / nv
        lbd = math.sqrt(S[j] * s)
        H[:, j] = lbd * u
        W[:, j] = lbd * v
    return W, H


class DPNMF(PrivateEstimatorMixin, BaseEstimator):
    """DPNMF (Saha & Imtiaz 2024): (ε, δ)-DP NMF by Gaussian noise on the statistics of the
    basis update; documents clustered by their largest coefficient. See the module docstring
    for the mechanism, the sensitivity argument and the decisions.

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (n_iter × (h_steps·n·k² + w_steps·m·k²); :meth:`planned_work`) is refused past the caps of
    :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=3
        Rank K ≥ 1 of the factorisation = number of row (document) clusters; at most
        min(n, m).
    epsilon : float, default=0.5
        ε > 0 of the whole run (any ε: the analytic Gaussian σ; the paper's classic σ needs
        ε < 1). Neighbouring datasets: one row (document) replaced.
    delta : float, default=1e-5
        δ in (0, 1) of the whole run (the co-clustering paper's 1e-5).
    n_iter : int, default=4
        Number 𝓘 ≥ 1 of outer iterations (H-step then released W-step), run exactly (the
        paper's "at most 4").
    init : {"random", "nndsvd"}, default="random"
        ``"random"``: a blind uniform random start; the released basis is (ε, δ)-DP.
        ``"nndsvd"``: the paper's start from an SVD of the raw data - NOT private (the whole
        run is then not private: ``released_private_`` is False; ``fit`` warns).
    h_steps : int, default=50
        Projected gradient steps ≥ 1 of each H-step (fixed, no data-dependent stopping).
    w_steps : int, default=50
        Projected gradient steps ≥ 1 of each W-step (on the released statistics).
    w_step_size : float or None, default=None
        Step of the W-steps: None = 1/L (see the module docstring); a float > 0 = that fixed
        step. The co-clustering paper's run used 1e-4 with one step per iteration
        (``w_steps=1``): W then moves by at most 𝓘·1e-4·‖WA − B‖_F and stays at its start.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of every random draw (start, SVD seed, noise).

    Attributes
    ----------
    initial_components_ : ndarray of shape (K, m)
        The starting basis: NOT private with ``init="nndsvd"`` (an SVD of the raw data), data
        independent with ``init="random"``.
    components_ : ndarray of shape (K, m)
        The basis Wᵀ (one row per topic), computed from the released noisy statistics;
        (ε, δ)-DP with ``init="random"``, NOT private with ``init="nndsvd"``. float32 for
        float32 input (as scikit-learn's NMF), else float64; computed in float64.
    coefficients_ : ndarray of shape (n, K)
        NOT private - H of every raw document against the final basis (dtype as
        ``components_``).
    labels_ : ndarray of int64 of shape (n,)
        NOT private - argmax_k of each row of ``coefficients_`` (the row partition used for
        NMI, like DP-τCC's ``row_assignment_``).
    noise_sigma_ : float
        σ of the Gaussian noise on every entry of every released A and B (public).
    n_features_in_ : int
        m, the number of columns of X.
    feature_names_in_ : ndarray of str of shape (m,)
        Column names, when X is a DataFrame with string column names.
    is_private_ : bool
        False with the non-private ``"nndsvd"`` start.
    ledger_ : PrivacyLedger
        One entry, the 2·𝓘 Gaussian releases composed exactly (GDP) at (ε, δ).
    private_outputs_ : list of str
        See :class:`~dpcore.privacy.PrivateEstimatorMixin`.
    nonprivate_outputs_ : dict
        See :class:`~dpcore.privacy.PrivateEstimatorMixin`.

    Notes
    -----
    ``fit(X, callback=f)`` calls ``f(t, n_iter)`` after each outer iteration. Bases:
    ``BaseEstimator`` only (as :class:`~dpcore.cocluster.dptaucc.DPTauCC`: a count matrix in).
    ``fit_predict`` returns ``labels_``; ``score`` is minus the factorisation's objective on a
    matrix of the fitted shape. No ``predict``: ``labels_`` are read off the coefficients the run
    iterated for each training document; a new document's coefficients would need an H-step
    of its own, which the published method does not define.
    """

    #: The neighbouring relation the guarantee is stated for, as a key of
    #: :data:`dpcore.lab.audit.RELATIONS` ("replace_one": one row replaced, n public).
    claimed_relation = "replace_one"

    def __init__(self, *, n_clusters=3, epsilon=0.5, delta=1e-5, n_iter=4, init="random", h_steps=50,
                 w_steps=50, w_step_size=None, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.init = init
        self.h_steps = h_steps
        self.w_steps = w_steps
        self.w_step_size = w_step_size
        self.random_state = random_state

    def _check_params(self):
        k = check_int(self.n_clusters, "n_clusters", 1)
        eps = check_epsilon(self.epsilon)
        dlt = check_delta(self.delta)
        n_iter = check_int(self.n_iter, "n_iter", 1)
        if self.init not in DPNMF_INITS:
            raise ValueError(f"init must be one of {DPNMF_INITS}; got {self.init!r}")
        h_steps = check_int(self.h_steps, "h_steps", 1)
        w_steps = check_int(self.w_steps, "w_steps", 1)
        step = self.w_step_size
        if step is not None:
            if isinstance(step, bool) or not isinstance(step, (int, float, np.integer, np.floating)) \
                    or not (math.isfinite(step) and step > 0):
                raise ValueError(f"w_step_size must be None or a finite number > 0; got {step!r}")
            step = float(step)
        return k, eps, dlt, n_iter, h_steps, w_steps, step

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): n_iter × (h_steps H-steps,
        two releases, w_steps W-steps)."""
        w = Work(n, d, nnz, sparse)
        k = min(param_int(self, "n_clusters", 3), n, d)
        n_iter, h, ws = param_int(self, "n_iter", 4), param_int(self, "h_steps", 50), param_int(self, "w_steps", 50)
        if self.init == "nndsvd":
            w.add("DPNMF: the NNDSVD start (randomised SVD, rank k)",
                  unit_cost("sparse", 20 * nnz * k) + 20 * matmul_cost(n + d, k, k))
        per = unit_cost("sparse", 2 * nnz * k) + h * (matmul_cost(n, k, k) + unit_cost("elem", 6 * n * k)) \
            + matmul_cost(n, k, k) + unit_cost("draw", k * k + d * k) + unit_cost("call", 2) \
            + ws * (matmul_cost(d, k, k) + unit_cost("elem", 6 * d * k)) + unit_cost("loop", 20 * (h + ws))
        w.add("DPNMF: n_iter × (h_steps H-steps n·k² + 2 releases (k² + m·k draws) + w_steps W-steps m·k²)",
              n_iter * per, "n_iter", "h_steps", "w_steps", "n_clusters")
        w.hold("DPNMF: H and its products n·k, W and its products m·k", 5 * (n + d) * k * 8 + 2 * nnz * 12,
               "n_clusters")
        return w.plan(type(self).__name__)

    def fit(self, X, y=None, *, callback=None):
        """Factorise the non-negative matrix X (rows = documents) privately.

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, m)
            Non-negative counts (or weights); rows are L2-normalised inside.
        y : None
            Ignored (present for scikit-learn's API).
        callback : callable, optional
            ``callback(t, n_iter)`` after each outer iteration t.

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter is out of range (the message names it), X is not finite, has a
            negative entry, no row or no column, or ``n_clusters`` exceeds min(n, m).
        """
        dtype = input_float_dtype(X)
        record_features(self, X)
        k, eps, dlt, n_iter, h_steps, w_steps, w_step_size = self._check_params()
        X = check_array(X, "X", allow_sparse=True)
        n, m = X.shape
        if m < 1:
            raise ValueError(f"X must have at least one column; got shape {X.shape}")
        has_neg = (X.data < 0).any() if sp.issparse(X) else (X < 0).any()
        if has_neg:
            raise ValueError("Negative values in data passed to DPNMF: X must be non-negative (counts)")
        if k > min(n, m):
            raise ValueError(f"n_clusters must be <= min(n_samples, n_features); got n_clusters = {k} with "
                             f"n_samples = {n}, n_features = {m}")
        V = normalize_rows(X, 1.0)
        rng = check_random_state(self.random_state)

        if self.init == "nndsvd":
            warnings.warn("DPNMF(init='nndsvd'): " + _NNDSVD_REASON + "; init='random' is the private start",
                          _leak_warning(), stacklevel=3)     # 3: past the accountant's wrapper of fit
            W, H = nndsvd_init(V, k, int(rng.integers(0, 2 ** 31 - 1)))
        else:  # blind: depends on (n, m, K) only
            W, H = rng.random((m, k)), rng.random((n, k))
        W = project_unit_rows(W.T).T
        H = project_unit_rows(H)
        self.initial_components_ = W.T.copy()

        budget = GaussianBudget(eps, dlt, 2 * n_iter)
        sens = STAT_SENSITIVITY_FACTOR / n
        for t in range(1, n_iter + 1):
            H = h_step(V, W, H, h_steps)
            A = budget.release(H.T @ H / n, sens, rng)
            B = budget.release(np.asarray(V.T @ H) / n, sens, rng)
            W = w_step(W, A, B, w_steps, w_step_size)
            if callback is not None:
                callback(t, n_iter)

        private = self.init == "random"
        ledger = PrivacyLedger(budget_epsilon=eps, budget_delta=dlt)
        self.noise_sigma_ = float(budget.sigma(sens))
        note = (f"{2 * n_iter} releases (A = HᵀH/n, B = XᵀH/n per iteration), L2 sensitivity √2/n each "
                f"(one document replaced, rows and h in the non-negative unit ball), composed exactly (GDP): "
                f"σ = {self.noise_sigma_:.4g}")
        if not private:
            note = "NOT PRIVATE AS A RUN: " + _NNDSVD_REASON + ". " + note
        ledger.record(f"basis W over {n_iter} iteration(s)", "Gaussian (analytic σ) on the W-step statistics",
                      eps, dlt, note=note, events=budget.events(self.claimed_relation))

        # evaluation (NOT private): every raw document against the final basis
        H = h_step(V, W, H, h_steps)
        self.components_ = W.T.astype(dtype)
        self.coefficients_ = H.astype(dtype, copy=False)
        self.labels_ = np.argmax(H, axis=1).astype(np.int64)
        self.n_features_in_ = m
        self.is_private_ = private
        self.ledger_ = ledger
        self.private_outputs_ = ["components_", "initial_components_"] if private else []
        self.nonprivate_outputs_ = {
            "coefficients_": "coefficients of every raw document against the final basis (reads the data without "
                             "noise)",
            "labels_": "argmax of each raw document's coefficients (reads the data without noise; the evaluation "
                       "step for NMI)",
        }
        if not private:
            self.nonprivate_outputs_["components_"] = _NNDSVD_REASON
            self.nonprivate_outputs_["initial_components_"] = ("NNDSVD start: a truncated SVD of the raw "
                                                               "documents, computed without noise")
        return self

    def _plan_reasons(self):
        return [] if self.init == "random" else [_NNDSVD_REASON]

    def fit_predict(self, X, y=None, **fit_params):
        """Fit, then return ``labels_`` (the row partition; NOT private).

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, m)
            Non-negative counts (see :meth:`fit`).
        y : None
            Ignored (present for scikit-learn's API).
        **fit_params
            Passed to :meth:`fit` (e.g. ``callback``).

        Returns
        -------
        ndarray of int64 of shape (n,)
            ``labels_``.
        """
        return self.fit(X, y, **fit_params).labels_

    def score(self, X, y=None):
        """−½‖V − H Wᵀ‖²_F: minus the objective the H-steps minimise, with V the L2-normalised rows of
        X, H = ``coefficients_`` and Wᵀ = ``components_``. Higher is better; NOT private (reads X
        without noise).

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, m)
            A non-negative matrix with the fit's n rows and m columns (and feature names): the
            coefficients belong to the fit's documents.
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        float

        Raises
        ------
        ValueError
            If X does not have the fitted shape.
        """
        X = check_fitted_input(self, X, "components_", allow_sparse=True)
        shape = self.coefficients_.shape[0], self.components_.shape[1]
        if X.shape != shape:
            raise ValueError(f"X must have the fitted shape {shape} (coefficients_ belong to the fit's rows); "
                             f"got {X.shape}")
        V = normalize_rows(X, 1.0)
        H = np.asarray(self.coefficients_, dtype=np.float64)
        Wt = np.asarray(self.components_, dtype=np.float64)
        # ‖V − HWᵀ‖² = ‖V‖² − 2⟨V, HWᵀ⟩ + ‖HWᵀ‖², without densifying a sparse V
        VW = np.asarray(V @ Wt.T)
        vv = float(V.multiply(V).sum()) if sp.issparse(V) else float(np.einsum("ij,ij->", V, V))
        sq = vv - 2.0 * float(np.einsum("ik,ik->", VW, H)) + float(np.einsum("ij,jk,ik->", H, Wt @ Wt.T, H))
        return -0.5 * max(sq, 0.0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags
