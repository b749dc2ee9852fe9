"""Bingham distributions on the sphere and on the Stiefel manifold.

Three levels, all batched (a leading batch axis holds clusters × chains):

1. **1-D conditional** of Hoff's vector Bingham Gibbs step (App. D.2, eq. (25) of the
   subspace clustering paper)::

       f(x; k, a) ∝ x^(-1/2) (1 − x)^k e^(a x),   0 < x < 1,   k > −1.

   :func:`sample_bingham_1d` draws it exactly for every real ``a`` (tested from −1e5 to 1e5)
   with one of

   - ``"case1"`` - the paper's Case 1 (a ≪ 0): envelope x^(-1/2) e^(ax) on (0, 1), i.e. a
     Γ(1/2, 1/|a|) truncated to (0, 1), accepted with probability (1 − x)^k. The truncation
     is done by inverting the CDF (x = erfinv(u·erf(√|a|))²/|a|) instead of re-drawing,
     which gives the same distribution without wasted draws. Needs k ≥ 0. Acceptance
     E[(1 − x)^k] → 1 as a → −∞.
   - ``"case2"`` - the paper's Case 2 (a ≫ 0) made *exact*: the paper's envelope for
     z = 1 − x is a truncated Γ(k + 1, 1/a) and a Beta(1/2, k + 1) mixture component covers
     the singularity at x = 0 with a weight 1/Z that the paper then drops (Z → ∞). We keep
     both parts with exact weights: on x > 1/2 the envelope is z^k e^(−(a − ln 2) z) (the
     chord bound (1 − z)^(-1/2) ≤ 2^z on z ∈ [0, 1/2], so this piece accepts ≥ 97 % of its
     proposals), on x < 1/2 it is x^(-1/2)·max(1, 2^(−k))·e^(−a/2) (x = u²/2). The weights
     are computed in log space so a = 1e5 does not overflow; the piece x < 1/2 only
     matters for moderate a. Needs a > ln 2.
   - ``"case2_paper"`` - the paper's simplified Case 2 verbatim (Z → ∞). It is *not* exact:
     it reweights f by 1/(1 + e^(−ax)·Beta(x; 1/2, k+1)), which only matters where f has
     mass ≈ B(1/2, k+1)·a^(k+1) e^(−a)/Γ(k+1) (nothing for a ≳ k + 50), and its
     acceptance is only ≈ 1/(2√a). Kept to benchmark against, never used by ``"auto"``.
   - ``"acg"`` - exact for every a and k > −1: f is the law of y₁² for a Bingham vector in
     D = 2k + 3 dimensions with A = diag(a, 0, …, 0), so the angular central Gaussian
     rejection sampler of Kent, Ganeiber & Mardia (2018) applies; only y₁ and ‖y₋₁‖² (a
     scaled χ² with 2k + 2 degrees of freedom) are drawn. Its acceptance is bounded below
     for all a (≈ √(2/(e·D)) in the worst case, 0.30 for k = 5/2); this is the sampler for
     moderate |a|, where neither envelope of the paper is tight.
   - ``"auto"`` (default) - case1 for a ≪ 0, case2 for a ≫ 0, acg in between; the rule
     (:func:`_auto_choice`) picks the method with the higher measured acceptance, so
     every draw costs at most a few proposals for all a and k (benchmarks/bench_gibbs.py
     prints the acceptance table).

2. **Vector Bingham** p(x) ∝ exp(xᵀAx) on the unit sphere of R^D:
   :func:`sample_vector_bingham` (exact, ACG rejection of Kent et al. 2018 with the optimal
   b solving Σᵢ 1/(b + 2λᵢ) = 1) and :func:`vector_bingham_gibbs_step` (Hoff's coordinate
   Gibbs sweep, App. D Alg. 4, with the 1-D sampler above). In Alg. 4 the other coordinates
   are rescaled to norm √(1 − θ) by dividing by their *computed* norm (not by √(1 − yᵢ²),
   which overflows / loses all digits near a coordinate axis).

3. **Matrix Bingham** p(U) ∝ exp(tr(B Uᵀ A U)) on the Stiefel manifold (B diagonal):
   :func:`matrix_bingham_gibbs_sweep` is Hoff's column-wise Gibbs scheme (App. D Alg. 3);
   each column is redrawn from its exact conditional (a vector Bingham on the null space
   of the other columns) by ACG (``column_sampler="acg"``, default, fastest) or by one
   coordinate sweep of Alg. 4 (``column_sampler="hoff"``). Both leave the matrix Bingham
   distribution invariant. :func:`sample_matrix_bingham` runs several sweeps.

Every random choice goes through a ``numpy.random.Generator``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..validation import check_int, check_random_state

__all__ = [
    "sample_bingham_1d", "acg_b", "sample_vector_bingham",
    "vector_bingham_gibbs_step", "vector_bingham_gibbs", "matrix_bingham_gibbs_sweep",
    "sample_matrix_bingham", "random_stiefel", "SAMPLERS_1D",
]

SAMPLERS_1D = ("auto", "case1", "case2", "case2_paper", "acg")
_LN2 = math.log(2.0)


def _make_eigh():
    """Batched symmetric eigendecomposition for the hot loop. ``np.linalg.eigh`` spends
    more time in its Python wrapper than in LAPACK for a few 8×8 matrices, so the
    underlying gufunc is called directly when this numpy has it (checked once against
    ``np.linalg.eigh``); otherwise the public function is used."""
    try:
        from numpy.linalg import _umath_linalg

        def fast(a):
            return _umath_linalg.eigh_lo(a, signature="d->dd")

        M = np.array([[[2.0, 1.0], [1.0, 3.0]]])
        w1, v1 = fast(M)
        w2, v2 = np.linalg.eigh(M)
        if np.allclose(w1, w2) and np.allclose(np.abs(v1), np.abs(v2)):
            return fast
    except Exception:  # pragma: no cover - other numpy versions
        pass
    return np.linalg.eigh  # pragma: no cover


_eigh = _make_eigh()
_add = np.add.reduce  # ndarray.sum without its Python wrapper (hot loops)


# =============================================================================== 1-D conditional
def _case2_log_weights(a, k):
    """log masses of the two envelope pieces of :func:`_draw_case2` (relative to e^a) and
    Γ(k+1, ·)'s regularised CDF at the truncation point, for a > ln 2."""
    r = a - _LN2
    log_wa = 0.5 * _LN2 + np.maximum(0.0, -k) * _LN2 - 0.5 * a   # ∫_0^{1/2} x^(−1/2) dx · c_k e^(−a/2)
    p_half = special.gammainc(k + 1.0, 0.5 * r)
    log_wb = special.gammaln(k + 1.0) + np.log(p_half) - (k + 1.0) * np.log(r)
    return log_wa, log_wb, p_half


def _auto_choice(a, k):
    """0 = case1, 1 = case2, 2 = acg, per entry (rule from the measured acceptance rates:
    benchmarks/bench_gibbs.py prints them).

    - a < 0: case1 when k = 0 (then it is an exact inverse-CDF draw, acceptance 1) or
      a ≤ −3(k + 1)² (case1's acceptance ≈ 1 − k/(2|a|) beats ACG's there);
    - a > 0: case2 when its small-x piece carries < 25 % of the envelope mass (then its
      acceptance is ≥ 0.75, and → 1; ACG's tends to ≈ √(2/(e(2k+3))));
    - ACG everywhere else (acceptance ≥ 0.3 for k ≤ 5/2 whatever a).
    """
    which = np.full(a.shape, 2, dtype=np.int8)
    neg = (a < 0) & (k >= 0) & ((k == 0) | (a <= -3.0 * (k + 1.0) ** 2))
    which[neg] = 0
    big = np.flatnonzero(a > 2.0)
    if big.size:
        log_wa, log_wb, _ = _case2_log_weights(a[big], k[big])
        which[big[special.expit(log_wa - log_wb) < 0.25]] = 1
    return which


def _draw_case1(a, k, rng):
    """One proposal + accept of the paper's Case 1 for each entry (a < 0, k ≥ 0).

    Returns (x, 1 − x, accepted)."""
    c = -a
    u = rng.random(a.shape)
    # Γ(1/2, rate c) truncated to (0, 1): x = N²/(2c) with |N| < √(2c); inverse CDF.
    s = special.erfinv(u * special.erf(np.sqrt(c)))
    x = s * s / c
    x = np.clip(x, 1e-300, 1.0 - 1e-16)
    acc = rng.random(a.shape) <= np.exp(k * np.log1p(-x))
    return x, 1.0 - x, acc


def _draw_case2(a, k, rng):
    """One proposal + accept of the exact two-piece Case 2 (a > ln 2, k > −1).

    Piece B (x > 1/2, z = 1 − x < 1/2): f = (1−z)^(−1/2) z^k e^(−az)·e^a ≤ z^k e^(−(a−ln2)z)·e^a,
    z from a Γ(k+1, rate a − ln 2) truncated to (0, 1/2), accepted w.p. (1−z)^(−1/2) 2^(−z).
    Piece A (x < 1/2): f ≤ x^(−1/2)·c_k·e^(a/2) with c_k = max(1, 2^(−k)); x = u²/2, accepted
    w.p. (1−x)^k e^(a(x − 1/2))/c_k. Weights in log space, everything relative to e^a.
    """
    r = a - _LN2
    log_wa, log_wb, p_half = _case2_log_weights(a, k)
    prob_a = special.expit(log_wa - log_wb)
    pick_a = rng.random(a.shape) < prob_a
    u = rng.random(a.shape)
    v = rng.random(a.shape)
    x = np.empty(a.shape)
    xc = np.empty(a.shape)
    acc = np.empty(a.shape, dtype=bool)
    # piece A
    ia = pick_a
    if ia.any():
        xa = 0.5 * u[ia] ** 2
        xa = np.maximum(xa, 1e-300)
        ka, aa = k[ia], a[ia]
        log_acc = ka * np.log1p(-xa) + aa * (xa - 0.5) - np.maximum(0.0, -ka) * _LN2
        x[ia], xc[ia] = xa, 1.0 - xa
        acc[ia] = np.log(v[ia]) <= log_acc
    ib = ~pick_a
    if ib.any():
        kb, rb, pb = k[ib], r[ib], p_half[ib]
        zb = _truncated_gamma_half(kb + 1.0, rb, pb, u[ib], rng)
        log_acc = -0.5 * np.log1p(-zb) - zb * _LN2
        x[ib], xc[ib] = 1.0 - zb, zb
        acc[ib] = np.log(v[ib]) <= log_acc
    return x, xc, acc


def _truncated_gamma_half(shape, rate, p_half, u, rng):
    """Γ(shape, rate) truncated to (0, 1/2); ``p_half`` = its mass there. Where that mass
    is ≥ 0.9, plain gamma draws are redrawn while ≥ 1/2 (cheap, exact); elsewhere the
    CDF is inverted with ``u``."""
    z = np.empty(shape.shape)
    easy = p_half >= 0.9
    hard = ~easy
    if hard.any():
        z[hard] = special.gammaincinv(shape[hard], u[hard] * p_half[hard]) / rate[hard]
    idx = np.flatnonzero(easy)
    while idx.size:
        z[idx] = rng.standard_gamma(shape[idx]) / rate[idx]
        idx = idx[z[idx] >= 0.5]
    return np.clip(z, 1e-300, 0.5)


def _draw_case2_paper(a, k, rng):
    """The paper's simplified Case 2 (Z → ∞), verbatim. Approximate, see module docstring."""
    u = rng.random(a.shape)
    z = special.gammaincinv(k + 1.0, u * special.gammainc(k + 1.0, a)) / a
    z = np.clip(z, 1e-300, 1.0 - 1e-16)
    x = 1.0 - z
    B = special.beta(0.5, k + 1.0)
    M = np.maximum(2.0 * np.sqrt(a), math.e * B)
    beta_pdf = np.exp(-0.5 * np.log(x) + k * np.log(z) - np.log(B))
    ratio = x ** -0.5 / (M * (1.0 + np.exp(-a * x) * beta_pdf))
    acc = rng.random(a.shape) < ratio
    return x, z, acc


def _acg_1d_b(a, D):
    """Optimal b of Kent et al. for the 1-D reduction (closed form, numerically stable)."""
    absa = np.abs(a)
    pos = a >= 0
    # a ≥ 0: Λ = diag(0, a, …, a) -> b² + (2a − D) b − 2a = 0
    # a < 0: Λ = diag(|a|, 0, …, 0) -> b² + (2|a| − D) b − 2|a|(D − 1) = 0
    c = np.where(pos, 2.0 * absa, 2.0 * absa * (D - 1.0))
    p = 2.0 * absa - D
    disc = np.sqrt(p * p + 4.0 * c)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(p > 0, 2.0 * c / (p + disc), 0.5 * (-p + disc))
    return np.where(absa == 0, D, np.clip(b, 1e-300, D))


def _draw_acg_1d(a, k, rng):
    """One ACG proposal + accept for each entry: y₁² of a Bingham vector in D = 2k + 3
    dimensions with A = diag(a, 0, …, 0). Returns (x, 1 − x, accepted)."""
    D = 2.0 * k + 3.0
    b = _acg_1d_b(a, D)
    absa = np.abs(a)
    pos = a >= 0
    w1 = rng.standard_normal(a.shape)
    R = 2.0 * rng.standard_gamma(k + 1.0, a.shape)  # χ² with 2k + 2 degrees of freedom
    prec = 1.0 + 2.0 * absa / b                    # precision of the concentrated part(s)
    w1sq = np.where(pos, w1 * w1, w1 * w1 / prec)
    R = np.where(pos, R / prec, R)
    tot = w1sq + R
    x = w1sq / tot
    xc = R / tot
    t = np.where(pos, absa * xc, absa * x)         # t = yᵀΛy
    log_ratio = -t + 0.5 * D * np.log((b + 2.0 * t) / D) + 0.5 * (D - b)
    acc = np.log(rng.random(a.shape)) <= np.minimum(log_ratio, 0.0)
    return x, xc, acc


_DRAWERS = {"case1": _draw_case1, "case2": _draw_case2, "case2_paper": _draw_case2_paper, "acg": _draw_acg_1d}


def _sample_1d(a, k, rng, method="auto", return_complement=False, max_rounds=100000):
    """Vectorised rejection sampling of eq. (25); a, k float arrays of the same shape."""
    a = np.asarray(a, dtype=np.float64)
    k = np.broadcast_to(np.asarray(k, dtype=np.float64), a.shape)
    shape = a.shape
    a = a.ravel()
    k = np.ascontiguousarray(k).ravel()
    x = np.empty(a.size)
    xc = np.empty(a.size)
    if method == "auto":
        which = _auto_choice(a, k)
        groups = [("case1", which == 0), ("case2", which == 1), ("acg", which == 2)]
    else:
        groups = [(method, np.ones(a.size, dtype=bool))]
    for name, mask in groups:
        idx = np.flatnonzero(mask)
        draw = _DRAWERS[name]
        rounds = 0
        while idx.size:
            xs, xcs, acc = draw(a[idx], k[idx], rng)
            done = idx[acc]
            x[done], xc[done] = xs[acc], xcs[acc]
            idx = idx[~acc]
            rounds += 1
            if rounds > max_rounds:  # pragma: no cover - would mean a bug in an envelope
                raise RuntimeError(f"1-D Bingham sampler '{name}' did not accept in {max_rounds} rounds")
    x, xc = x.reshape(shape), xc.reshape(shape)
    return (x, xc) if return_complement else x


def sample_bingham_1d(a, k, size=None, random_state=None, method="auto"):
    """Draw from f(x) ∝ x^(−1/2) (1 − x)^k e^(a x) on (0, 1) (eq. (25)), exactly.

    Parameters
    ----------
    a : float or array
        Linear coefficient (any real; |a| up to 1e5 and beyond is fine). Must be finite.
    k : float or array
        Exponent, k > −1 (Hoff's step uses k = (D − 3)/2 for a D-dimensional sphere).
        ``"case1"`` needs k ≥ 0. Must be finite.
    size : int or tuple, optional
        Output shape; ``a`` and ``k`` are broadcast to it. Default: the broadcast shape of
        ``a`` and ``k``.
    random_state : None, int or numpy.random.Generator, optional
        Seed or generator for every random choice.
    method : {"auto", "case1", "case2", "case2_paper", "acg"}
        See the module docstring. ``"case1"`` needs a < 0, ``"case2"``/``"case2_paper"`` a > ln 2.

    Returns
    -------
    ndarray of float64
        The draws, one per entry of the output shape, in (0, 1).

    Raises
    ------
    ValueError
        If ``method`` is unknown, ``a`` or ``k`` is not finite, some k ≤ −1, or ``a``/``k``
        are outside the range the chosen ``method`` needs.
    """
    if method not in SAMPLERS_1D:
        raise ValueError(f"method must be one of {SAMPLERS_1D}; got {method!r}")
    rng = check_random_state(random_state)
    a = np.asarray(a, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    shape = np.broadcast_shapes(a.shape, k.shape) if size is None else tuple(np.atleast_1d(size))
    a = np.broadcast_to(a, shape).astype(np.float64)
    k = np.broadcast_to(k, shape).astype(np.float64)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(k))):
        raise ValueError("a and k must be finite")
    if np.any(k <= -1):
        raise ValueError("k must be > -1")
    if method == "case1" and (np.any(a >= 0) or np.any(k < 0)):
        raise ValueError("method 'case1' needs a < 0 and k >= 0")
    if method in ("case2", "case2_paper") and np.any(a <= _LN2):
        raise ValueError(f"method '{method}' needs a > ln 2")
    return _sample_1d(a, k, rng, method)


# =============================================================================== vector Bingham
def acg_b(lam, n_newton=2, shifted=False):
    """Kent et al.'s optimal b: the root in [1, D] of Σᵢ 1/(b + 2Λᵢ) = 1.

    Here Λ = λ_max − λ ≥ 0 (last axis), batched (``shifted=True``: ``lam`` is Λ already).

    Newton's method on h(b) = 1/Σᵢ 1/(b + 2Λᵢ), from b = 1: h is concave and increasing
    (a harmonic sum of affine functions) with h(1) ≤ 1, so the iterates increase
    monotonically to the root without overshooting, and one step is exact when the Λᵢ
    are equal. Any b in (0, D] gives an *exact* sampler (see :func:`_acg_draw`); the root
    only maximises the acceptance, and one step already gets within 1 % of the optimal
    acceptance on every spectrum we tried (D ≤ 10, scales 0 to 1e4), so the Gibbs hot
    loop uses one step.

    Parameters
    ----------
    lam : array_like, shape (..., D)
        Eigenvalues λ of the Bingham parameter matrix (or Λ = λ_max − λ when ``shifted``),
        along the last axis; leading axes are a batch.
    n_newton : int, default=2
        Number of Newton steps from b = 1 (0 returns b = 1).
    shifted : bool, default=False
        Whether ``lam`` already holds Λ = λ_max − λ ≥ 0.

    Returns
    -------
    ndarray of float64, shape (...)
        b for every batch entry.
    """
    Lam = np.asarray(lam, dtype=np.float64)
    if not shifted:
        Lam = Lam.max(axis=-1, keepdims=True) - Lam
    L2 = 2.0 * Lam
    b = np.ones(Lam.shape[:-1])
    for _ in range(n_newton):
        inv = 1.0 / (b[..., None] + L2)
        g = inv.sum(-1)
        b = b + g * (g - 1.0) / np.einsum("...i,...i->...", inv, inv)
    return b


def _full_exponentials(rng, shape):
    """Standard exponentials E = −log U with U uniform on (0, 1) to full relative precision, so
    that the acceptance test E ≥ L of :func:`_acg_draw` realises e^(−L) to a relative error
    ≈ 2⁻⁵⁰·(1 + L) for every L (numpy's ``standard_exponential`` stops at ≈ 44: a proposal with
    L beyond it could never be accepted). U = 2^(−64(j+1))·(w + w′2⁻⁶⁴) from 64-bit words w (j
    leading zero words, probability 2⁻⁶⁴ each) and, when w < 2⁵³ (probability 2⁻¹¹), a second
    word w′ for the missing bits; as ``gibbs_kernels._exponential``."""
    w = rng.integers(0, 2 ** 64, size=shape, dtype=np.uint64, endpoint=False)
    j = np.zeros(shape)
    zero = np.flatnonzero(w == 0)
    while zero.size:                                            # probability 2⁻⁶⁴ per entry
        j.flat[zero] += 1.0
        w.flat[zero] = rng.integers(0, 2 ** 64, size=zero.size, dtype=np.uint64, endpoint=False)
        zero = zero[w.flat[zero] == 0]
    x = w.astype(np.float64)
    small = np.flatnonzero(w < 2 ** 53)
    if small.size:                                              # probability 2⁻¹¹ per entry
        extra = rng.integers(0, 2 ** 64, size=small.size, dtype=np.uint64, endpoint=False) >> np.uint64(11)
        x.flat[small] += extra.astype(np.float64) * 2.0 ** -53
    return (64.0 * _LN2) * (j + 1.0) - np.log(x)


def _acg_draw(Lam, rng, n_prop=None, b=None, noise=None):
    """Exact draws y (m, D) from p(y) ∝ exp(−yᵀ diag(Λ) y) on the unit sphere, Λ ≥ 0 (m, D).

    Kent, Ganeiber & Mardia (2018): propose y = w/‖w‖ with w ~ N(0, Ω⁻¹), Ω = I + 2Λ/b
    (an angular central Gaussian), and accept with probability

        exp(−t) · ((b + 2t)/D)^(D/2) · e^((D − b)/2) ≤ 1,   t = yᵀΛy,

    (the bound holds for every t ≥ 0 and every b in (0, D], so the draw is exact whatever
    b; the optimal b of :func:`acg_b` maximises the acceptance, ≈ √(2/(e·D)) at the worst,
    i.e. at extreme concentration). ``n_prop`` proposals per row are made at once (default
    12 for small batches, where the number of numpy calls dominates, 4 for large ones);
    rows with none accepted are redrawn. ``noise`` may pass the first round's standard
    normals (m, P, D) and standard exponentials (m, P), drawn in advance (the Gibbs sweep
    draws them for all columns at once).
    """
    m, D = Lam.shape
    if noise is not None:
        n_prop = noise[1].shape[1]
    elif n_prop is None:
        n_prop = 12 if m <= 64 else 4
    L2 = Lam + Lam
    if b is None:                                              # one Newton step of acg_b, inlined
        inv = 1.0 / (1.0 + L2)
        g = _add(inv, 1)
        inv *= inv
        b = g * (g - 1.0)
        b /= _add(inv, 1)
        b += 1.0
    b1 = b[:, None]
    sd = np.sqrt(b1 / (b1 + L2))                               # Ω^(−1/2), diagonal
    const = 0.5 * (D - b1) - 0.5 * D * math.log(D)             # log ratio = ½D log(b + 2t) − t + const
    halfD = 0.5 * D
    out = None
    todo = rows = None
    P = n_prop
    while True:
        if rows is None:
            nrow, Lr, sdr, br, cr = m, Lam, sd, b1, const
        else:
            nrow, Lr, sdr, br, cr = rows.size, Lam[rows], sd[rows], b1[rows], const[rows]
        if noise is not None and rows is None:
            w, ex = noise
            w *= sdr[:, None, :]
        else:
            w = rng.standard_normal((nrow, P, D))
            w *= sdr[:, None, :]
            ex = _full_exponentials(rng, (nrow, P))
        w2 = w * w
        s_all = _add(w2, -1)
        t = (w2 @ Lr[:, :, None])[:, :, 0]
        t /= s_all                                             # t = yᵀΛy with y = w/‖w‖
        log_ratio = np.log(br + 2.0 * t)
        log_ratio *= halfD
        log_ratio += cr - t
        acc = ex >= -log_ratio                                 # log U = −Exp(1), U of full relative precision
        first = acc.argmax(axis=1)
        ii = np.arange(nrow)
        ok = acc[ii, first]
        chosen = w[ii, first]
        chosen /= np.sqrt(s_all[ii, first])[:, None]
        if out is None:
            if ok.all():
                return chosen
            out = np.empty((m, D))
            todo = np.arange(m)
        out[todo[ok]] = chosen[ok]
        todo = todo[~ok]
        if todo.size == 0:
            return out
        rows = todo


def _as_batch_sym(A, name="A"):
    A = np.asarray(A, dtype=np.float64)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"{name} must be a square matrix or a stack of them (..., D, D); got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} must contain only finite values")
    return 0.5 * (A + np.swapaxes(A, -1, -2))


def sample_vector_bingham(A, size=None, random_state=None, n_prop=None):
    """Exact draws from p(x) ∝ exp(xᵀ A x) on the unit sphere (Kent, Ganeiber & Mardia 2018).

    Parameters
    ----------
    A : array_like, shape (D, D) or (..., D, D)
        Symmetric parameter matrix, or a stack of them (one draw per matrix); it is
        symmetrised as (A + Aᵀ)/2. Must be finite.
    size : int or tuple, optional
        With a single A, the number (shape) of i.i.d. draws.
    random_state : None, int or numpy.random.Generator, optional
        Seed or generator for every random choice.
    n_prop : int, optional
        ACG proposals made at once per row (default 12 for at most 64 rows, else 4).

    Returns
    -------
    ndarray of float64
        Unit vectors, shape (..., D) (one per matrix) or (*size, D) when ``size`` is given.

    Raises
    ------
    ValueError
        If ``A`` is not square (or a stack of square matrices) or not finite, or if
        ``size`` is given with a stack of matrices.
    """
    rng = check_random_state(random_state)
    A = _as_batch_sym(A)
    D = A.shape[-1]
    if size is not None:
        if A.ndim != 2:
            raise ValueError("size is only allowed with a single matrix A")
        shape = tuple(np.atleast_1d(size))
        lam, E = np.linalg.eigh(A)  # one decomposition for all the draws
        m = int(np.prod(shape))
        lam, E = np.broadcast_to(lam, (m, D)), E
        batch = shape
    else:
        batch = A.shape[:-2]
        lam, E = np.linalg.eigh(A.reshape(-1, D, D))
        m = lam.shape[0]
    if D == 1:
        y = np.where(rng.random((m, 1)) < 0.5, -1.0, 1.0)
    else:
        y = _acg_draw(lam[:, -1:] - lam, rng, n_prop)
    x = y @ E.T if E.ndim == 2 else np.einsum("mij,mj->mi", E, y)
    return x.reshape(batch + (D,))


def vector_bingham_gibbs_step(A, x, random_state=None, sampler="auto", eig=None):
    """One sweep of Hoff's coordinate Gibbs sampler (App. D Alg. 4) for p(x) ∝ exp(xᵀAx).

    Coordinates are visited in a random order (the same order across the batch).

    Parameters
    ----------
    A : array_like, shape (..., D, D)
        Symmetric parameter matrices (symmetrised as (A + Aᵀ)/2); must be finite.
    x : array_like, shape (..., D)
        Current unit vectors, one per matrix.
    random_state : None, int or numpy.random.Generator, optional
        Seed or generator for every random choice.
    sampler : {"auto", "case1", "case2", "case2_paper", "acg"}, default="auto"
        The 1-D method (see :func:`sample_bingham_1d`).
    eig : tuple (eigenvalues, eigenvectors), optional
        A precomputed ``np.linalg.eigh(A)``.

    Returns
    -------
    ndarray of float64, shape (..., D)
        The new x.

    Raises
    ------
    ValueError
        If ``A`` is not square (or a stack of square matrices) or not finite.
    """
    rng = check_random_state(random_state)
    A = _as_batch_sym(A)
    D = A.shape[-1]
    x = np.asarray(x, dtype=np.float64)
    batch = A.shape[:-2]
    lam, E = np.linalg.eigh(A.reshape(-1, D, D)) if eig is None else (eig[0].reshape(-1, D), eig[1].reshape(-1, D, D))
    y = np.einsum("mji,mj->mi", E, x.reshape(-1, D))
    y = _hoff_sweep(lam, y, rng, sampler)
    return np.einsum("mij,mj->mi", E, y).reshape(batch + (D,))


def _hoff_sweep(lam, y, rng, sampler="auto"):
    """Alg. 4 in the eigenbasis: lam (m, D), y (m, D) unit; returns the updated y."""
    m, D = y.shape
    if D == 1:
        return np.where(rng.random((m, 1)) < 0.5, -1.0, 1.0)
    y = y.copy()
    k = 0.5 * (D - 3.0)
    for i in rng.permutation(D):
        rest = np.ones(D, dtype=bool)
        rest[i] = False
        yr = y[:, rest]
        r2 = np.einsum("md,md->m", yr, yr)
        r = np.sqrt(r2)
        axis = r2 <= 1e-300
        if axis.any():  # y on the i-th axis: the direction of the rest is undefined; pick one at random
            g = rng.standard_normal((int(axis.sum()), D - 1))
            yr[axis] = g / np.linalg.norm(g, axis=1, keepdims=True)
            r[axis] = 1.0
            r2[axis] = 1.0
        u = yr / r[:, None]
        a = lam[:, i] - np.einsum("md,md->m", u * u, lam[:, rest])
        th, thc = _sample_1d(a, np.full(m, k), rng, sampler, return_complement=True)
        s = np.where(rng.random(m) < 0.5, -1.0, 1.0)
        y[:, i] = s * np.sqrt(th)
        y[:, rest] = u * np.sqrt(thc)[:, None]
    return y


def vector_bingham_gibbs(A, n_sweeps, x0=None, random_state=None, sampler="auto"):
    """Run ``n_sweeps`` of Alg. 4 from ``x0`` (uniform random if None); returns the last x.

    Parameters
    ----------
    A : array_like, shape (D, D) or (..., D, D)
        Symmetric parameter matrices (symmetrised as (A + Aᵀ)/2); must be finite.
    n_sweeps : int
        Number of coordinate sweeps, ≥ 1.
    x0 : array_like, shape (D,) or (..., D), optional
        Starting unit vectors (broadcast to the batch); uniform random if None.
    random_state : None, int or numpy.random.Generator, optional
        Seed or generator for every random choice.
    sampler : {"auto", "case1", "case2", "case2_paper", "acg"}, default="auto"
        The 1-D method (see :func:`sample_bingham_1d`).

    Returns
    -------
    ndarray of float64, shape (..., D)
        The last x of every chain.

    Raises
    ------
    ValueError
        If ``A`` is not square or not finite, or ``n_sweeps`` < 1.
    """
    rng = check_random_state(random_state)
    A = _as_batch_sym(A)
    n_sweeps = check_int(n_sweeps, "n_sweeps", 1)
    D = A.shape[-1]
    batch = A.shape[:-2]
    lam, E = np.linalg.eigh(A.reshape(-1, D, D))
    if x0 is None:
        y = rng.standard_normal((lam.shape[0], D))
        y /= np.linalg.norm(y, axis=1, keepdims=True)
    else:
        y = np.einsum("mji,mj->mi", E, np.broadcast_to(np.asarray(x0, dtype=np.float64), batch + (D,)).reshape(-1, D))
    for _ in range(n_sweeps):
        y = _hoff_sweep(lam, y, rng, sampler)
    return np.einsum("mij,mj->mi", E, y).reshape(batch + (D,))


# =============================================================================== matrix Bingham
def random_stiefel(shape, d, q, random_state=None):
    """Uniform random d×q orthonormal matrices (Haar), shape (*shape, d, q).

    QR of a Gaussian matrix with the signs of R's diagonal fixed.

    Parameters
    ----------
    shape : int or tuple
        Batch shape (``()`` for a single matrix).
    d : int
        Number of rows (ambient dimension).
    q : int
        Number of orthonormal columns, q ≤ d (not checked).
    random_state : None, int or numpy.random.Generator, optional
        Seed or generator for the Gaussian draws.

    Returns
    -------
    ndarray of float64, shape (*shape, d, q)
        Matrices with orthonormal columns.
    """
    rng = check_random_state(random_state)
    shape = tuple(np.atleast_1d(shape)) if shape != () else ()
    G = rng.standard_normal(shape + (d, q))
    Q, R = np.linalg.qr(G)
    sgn = np.sign(np.diagonal(R, axis1=-2, axis2=-1))
    sgn[sgn == 0] = 1.0
    return Q * sgn[..., None, :]


def _complement(U):
    """Orthonormal basis (m, d, d − q) of the orthogonal complement of range(U) (complete QR)."""
    q = U.shape[2]
    Q, _ = np.linalg.qr(U, mode="complete")
    return Q[:, :, q:]


def matrix_bingham_gibbs_sweep(A, U, beta=1.0, random_state=None, column_sampler="acg", sampler_1d="auto",
                               complement=None):
    """One sweep of Hoff's column-wise Gibbs sampler (App. D Alg. 3).

    Targets p(U) ∝ exp(tr(B Uᵀ A U)), B = diag(beta), on the Stiefel manifold.

    Parameters
    ----------
    A : (m, d, d) symmetric (or (d, d))
    U : (m, d, q) current orthonormal samples (or (d, q))
    beta : scalar, (q,) or (m, q) - the diagonal of B
    random_state : None, int or numpy.random.Generator, optional
        Seed or generator for every random choice.
    column_sampler : ``"acg"`` (exact draw of each column's vector Bingham conditional,
        default) or ``"hoff"`` (one coordinate sweep of Alg. 4 per column).
    sampler_1d : {"auto", "case1", "case2", "case2_paper", "acg"}, default="auto"
        The 1-D method of the ``"hoff"`` column sampler (see :func:`sample_bingham_1d`).
    complement : optional (m, d, d − q) orthonormal basis of range(U)^⊥ (else computed).

    Returns
    -------
    U : ndarray of float64, shape like ``U``
        The updated orthonormal samples.
    complement : ndarray of float64, shape (m, d, d − q) (or (d, d − q))
        Orthonormal basis of range(U)^⊥ after the sweep; only returned when ``complement``
        was given.

    Raises
    ------
    ValueError
        If ``column_sampler`` is not ``"acg"`` or ``"hoff"``, or ``beta`` has a shape other
        than scalar, (q,) or (m, q).

    Notes
    -----
    Columns are visited in a random order (one permutation for the whole batch). The null
    space of the other columns is N = [u_r, U⊥]; after u_r ← N z the complement becomes
    N·H[:, 1:] with H the Householder reflection exchanging e₁ and ±z, so only one QR is
    needed per sweep. Returns U (and the complement when ``complement`` was given).
    """
    rng = check_random_state(random_state)
    single = np.ndim(U) == 2
    A = np.asarray(A, dtype=np.float64)
    U = np.array(U, dtype=np.float64, copy=True)
    if single:
        A, U = A[None], U[None]
    m, d, q = U.shape
    if column_sampler not in ("acg", "hoff"):
        raise ValueError(f"column_sampler must be 'acg' or 'hoff'; got {column_sampler!r}")
    if np.ndim(beta) == 0:                                      # B = βI: scale A once per sweep
        uniform = True
        As = A * float(beta)
    else:
        beta = np.asarray(beta, dtype=np.float64)
        if beta.shape not in ((q,), (m, q)):
            raise ValueError(f"beta must be a scalar, shape (q,) or (m, q) = ({m}, {q}); got shape {beta.shape}")
        beta = np.broadcast_to(beta, (m, q))
        uniform = bool(np.all(beta == beta[:, :1]))
        As = A * beta[:, 0, None, None] if uniform else A
    given = complement is not None
    Uc = _complement(U) if complement is None else complement
    D = d - q + 1
    N = np.empty((m, d, D))
    Nt = np.swapaxes(N, 1, 2)                                   # a view: stays in sync with N
    fast = column_sampler == "acg" and D > 1
    if fast:                                                    # first-round ACG noise of every column at once
        P = 12 if m <= 64 else 4
        normals = rng.standard_normal((q, m, P, D))
        expos = _full_exponentials(rng, (q, m, P))
    for r in rng.permutation(q):
        N[:, :, 0] = U[:, :, r]
        N[:, :, 1:] = Uc
        At = Nt @ As @ N
        if not uniform:
            At *= beta[:, r, None, None]
        lam, E = _eigh(At)
        if D == 1:
            z = np.where(rng.random((m, 1)) < 0.5, -1.0, 1.0)
        else:
            if fast:
                y = _acg_draw(lam[:, -1:] - lam, rng, noise=(normals[r], expos[r]))
            else:
                y = _hoff_sweep(lam, E[:, 0, :], rng, sampler_1d)   # current column = e₁ in N's coordinates
            z = (E @ y[:, :, None])[:, :, 0]                          # new column in N's coordinates (unit)
        col = (N @ z[:, :, None])[:, :, 0]
        U[:, :, r] = col
        if D > 1:
            # Householder v = z + s·e₁ (s = sign z₁, vᵀv = 2(1 + |z₁|)): H = I − 2vvᵀ/vᵀv maps
            # e₁ to −s·z and H[:, 1:] = I[:, 1:] − v z[1:]ᵀ/(1 + |z₁|) is an orthonormal basis
            # of z^⊥, so N·H[:, 1:] = N[:, 1:] − (N v) z[1:]ᵀ/(1 + |z₁|) spans range(U)^⊥ again.
            z0 = z[:, :1]
            Nv = N[:, :, :1] * np.copysign(1.0, z0)[:, None]
            Nv += col[:, :, None]
            Nv /= (1.0 + np.abs(z0))[:, None]
            Uc = N[:, :, 1:] - Nv * z[:, None, 1:]
    if single:
        U, Uc = U[0], Uc[0]
    return (U, Uc) if given else U


def sample_matrix_bingham(A, B=1.0, n_sweeps=100, U0=None, q=None, random_state=None, column_sampler="acg"):
    """Approximate draw from p(U) ∝ exp(tr(B Uᵀ A U)) by Gibbs sweeps.

    Runs ``n_sweeps`` sweeps of :func:`matrix_bingham_gibbs_sweep` from ``U0`` (uniform
    random d×q if None; then ``q`` or the length of ``B`` gives the number of columns).
    Batched over leading axes of A.

    Parameters
    ----------
    A : array_like, shape (d, d) or (..., d, d)
        Symmetric parameter matrices (symmetrised as (A + Aᵀ)/2); must be finite.
    B : float or array_like, default=1.0
        The diagonal of B: a scalar, shape (q,), or one row per matrix of the batch.
    n_sweeps : int, default=100
        Number of sweeps, ≥ 1.
    U0 : array_like, shape (d, q) or (..., d, q), optional
        Starting orthonormal matrices (broadcast to the batch).
    q : int, optional
        Number of columns when ``U0`` is None and ``B`` is a scalar; 1 ≤ q ≤ d.
    random_state : None, int or numpy.random.Generator, optional
        Seed or generator for every random choice.
    column_sampler : {"acg", "hoff"}, default="acg"
        See :func:`matrix_bingham_gibbs_sweep`.

    Returns
    -------
    ndarray of float64, shape (..., d, q)
        The last sample of every chain.

    Raises
    ------
    ValueError
        If ``A`` is not square or not finite, ``n_sweeps`` < 1, ``U0`` is None with a scalar
        ``B`` and no ``q``, ``q`` is outside [1, d], or ``column_sampler``/``B`` is invalid.
    """
    rng = check_random_state(random_state)
    A = _as_batch_sym(A)
    n_sweeps = check_int(n_sweeps, "n_sweeps", 1)
    d = A.shape[-1]
    batch = A.shape[:-2]
    Af = A.reshape(-1, d, d)
    B = np.asarray(B, dtype=np.float64)
    if U0 is None:
        if q is None:
            if B.ndim == 0:
                raise ValueError("give q (number of columns) or a vector B when U0 is None")
            q = B.shape[-1]
        q = check_int(q, "q", 1, d)
        U = random_stiefel(Af.shape[0], d, q, rng)
    else:
        U = np.broadcast_to(np.asarray(U0, dtype=np.float64), batch + np.shape(U0)[-2:]).reshape(Af.shape[0], d, -1).copy()
        q = U.shape[2]
    beta = np.broadcast_to(B, (q,)) if B.ndim <= 1 else B.reshape(-1, q)
    for _ in range(n_sweeps):
        U = matrix_bingham_gibbs_sweep(Af, U, beta, rng, column_sampler)
    return U.reshape(batch + (d, q))
