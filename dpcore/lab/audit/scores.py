"""Test statistics of a release: exact log-likelihood ratios for known noise laws and a
likelihood-ratio score fitted on runs' feature vectors (:func:`fit_lr_score`).

Why likelihood ratios: ``docs/audit.md`` ("Scores").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...validation import check_real
from .bounds import _choose_threshold

__all__ = ["gaussian_llr", "laplace_llr", "exponential_llr", "LRScore", "fit_lr_score"]


def gaussian_llr(x, mean_a, mean_b, sigma):
    """log p_D(x)/p_D′(x) for x ~ N(mean, σ² I) around ``mean_a`` on D and ``mean_b`` on D′
    (summed over the last axis).

    Parameters
    ----------
    x : array_like of shape (..., d)
        Releases.
    mean_a, mean_b : array_like of shape (d,)
        Means on D and on D′.
    sigma : float > 0
        Noise standard deviation.

    Returns
    -------
    ndarray of shape (...) or float
        The log-likelihood ratio of each release.

    Raises
    ------
    ValueError
        If ``sigma`` is not a finite positive number.
    """
    x = np.asarray(x, dtype=float)
    sigma = check_real(sigma, "sigma", 0.0, None, low_inclusive=False)
    d = np.sum((x - np.asarray(mean_b)) ** 2 - (x - np.asarray(mean_a)) ** 2, axis=-1, keepdims=x.ndim > 0)
    return np.squeeze(d / (2 * sigma ** 2), axis=-1) if x.ndim > 0 else d / (2 * sigma ** 2)


def laplace_llr(x, mean_a, mean_b, scale):
    """log p_D(x)/p_D′(x) for x = mean + Lap(scale) i.i.d. per coordinate (summed over the last axis).

    Parameters
    ----------
    x : array_like of shape (..., d)
        Releases.
    mean_a, mean_b : array_like of shape (d,)
        Means on D and on D′.
    scale : float > 0
        Laplace scale b.

    Returns
    -------
    ndarray of shape (...) or float
        The log-likelihood ratio of each release.

    Raises
    ------
    ValueError
        If ``scale`` is not a finite positive number.
    """
    x = np.asarray(x, dtype=float)
    scale = check_real(scale, "scale", 0.0, None, low_inclusive=False)
    d = np.abs(x - np.asarray(mean_b)) - np.abs(x - np.asarray(mean_a))
    return (d.sum(-1) if x.ndim > 0 else d) / scale


def exponential_llr(index, probs_a, probs_b):
    """log p_D(i)/p_D′(i) for a release i drawn from the finite laws ``probs_a`` (on D) and
    ``probs_b`` (on D′), e.g. :func:`dpcore.privacy.exponential_mechanism_probabilities`.

    Parameters
    ----------
    index : int or array_like of int
        Released indices.
    probs_a, probs_b : array_like of shape (m,)
        The release's law on D and on D′.

    Returns
    -------
    float or ndarray
        log probs_a[i] − log probs_b[i] (±inf where a probability is 0).

    Raises
    ------
    ValueError
        If ``probs_a`` and ``probs_b`` are not 1-D of the same length.
    """
    pa, pb = np.asarray(probs_a, dtype=float), np.asarray(probs_b, dtype=float)
    if pa.shape != pb.shape or pa.ndim != 1:
        raise ValueError("probs_a and probs_b must be 1-D laws of the same length")
    i = np.asarray(index, dtype=int)
    with np.errstate(divide="ignore"):
        return np.log(pa[i]) - np.log(pb[i])


@dataclass
class LRScore:
    """A fitted score ``F -> s`` (larger: more like D) over feature vectors ``F`` (runs ×
    features): ``kind`` is "feature j" (one standardised feature), "linear" (shrunk Fisher
    discriminant: the log-likelihood ratio of two Gaussians with a common covariance, i.e.
    the projection on the difference of the two sides' means, whitened) or "quadratic" (the
    log-likelihood ratio of two Gaussians with their own, shrunk covariances).

    Attributes
    ----------
    kind : str
        "feature j", "linear" or "quadratic".
    mean : ndarray of shape (features,)
        Mean used to standardise the features.
    scale : ndarray of shape (features,)
        Scale used to standardise the features (1 where a feature is constant).
    w : ndarray of shape (features,) or None
        Weights of the "linear" score.
    gauss : tuple or None
        ``((mean_a, precision_a, logdet_a), (mean_b, precision_b, logdet_b))`` of the
        "quadratic" score.
    feature : int or None
        Index of the feature of a "feature j" score.
    """
    kind: str
    mean: np.ndarray
    scale: np.ndarray
    w: np.ndarray | None = None
    gauss: tuple | None = None
    feature: int | None = None

    def __call__(self, F):
        Z = (np.atleast_2d(np.asarray(F, dtype=float)) - self.mean) / self.scale
        if self.feature is not None:
            return Z[:, self.feature]
        if self.w is not None:
            return Z @ self.w
        (ma, Pa, lda), (mb, Pb, ldb) = self.gauss
        qa = np.einsum("ij,jk,ik->i", Z - ma, Pa, Z - ma)
        qb = np.einsum("ij,jk,ik->i", Z - mb, Pb, Z - mb)
        return 0.5 * (qb - qa) + 0.5 * (ldb - lda)


def _shrunk_cov(Z, shrink):
    S = np.atleast_2d(np.cov(Z, rowvar=False)) if Z.shape[0] > 1 else np.eye(Z.shape[1])
    f = S.shape[0]
    return (1 - shrink) * S + shrink * (np.trace(S) / f + 1e-9) * np.eye(f)


def _fit_one(kind, Za, Zb, mean, scale, shrink=0.2):
    if kind.startswith("feature"):
        return LRScore(kind, mean, scale, feature=int(kind.split()[1]))
    ma, mb = Za.mean(0), Zb.mean(0)
    if kind == "linear":
        S = _shrunk_cov(np.r_[Za - ma, Zb - mb], shrink)
        return LRScore(kind, mean, scale, w=np.linalg.solve(S, ma - mb))
    gauss = []
    for Z, m in ((Za, ma), (Zb, mb)):
        S = _shrunk_cov(Z, shrink)
        gauss.append((m, np.linalg.inv(S), np.linalg.slogdet(S)[1]))
    return LRScore(kind, mean, scale, gauss=tuple(gauss))


def fit_lr_score(features_a, features_b, confidence=0.95, delta=0.0):
    """Fit a likelihood-ratio style score on runs' feature vectors (one row per run).

    Candidates: every single (standardised) feature, the shrunk linear discriminant and the
    shrunk quadratic (Gaussian) log-likelihood ratio. Each is ranked by two-fold
    cross-fitting *within the given runs* (fit on one fold, best threshold bound on the
    other), and the best is refitted on all the given runs. Call it on the selection half
    only: the held-out half must not be seen by the fit (:func:`~dpcore.lab.audit.audit_from_statistics` does
    so), otherwise the bound is biased upwards.

    Parameters
    ----------
    features_a, features_b : array_like of shape (runs, features)
        Feature vectors of the runs on D and on D′ (same number of features).
    confidence : float in (0, 1), default 0.95
        Confidence of the bound used to rank the candidates.
    delta : float, default 0.0
        δ of the bound used to rank the candidates.

    Returns
    -------
    LRScore

    Raises
    ------
    ValueError
        If the inputs are not 2-D with the same number of features.
    """
    Fa, Fb = np.asarray(features_a, dtype=float), np.asarray(features_b, dtype=float)
    if Fa.ndim != 2 or Fb.ndim != 2 or Fa.shape[1] != Fb.shape[1]:
        raise ValueError("features_a and features_b must be 2-D (runs × features) with the same number of features")
    pooled = np.r_[Fa, Fb]
    mean = pooled.mean(0)
    scale = pooled.std(0)
    scale[~(scale > 1e-12)] = 1.0
    Za, Zb = (Fa - mean) / scale, (Fb - mean) / scale
    f = Fa.shape[1]
    kinds = [f"feature {j}" for j in range(f) if np.ptp(pooled[:, j]) > 0] + (["linear", "quadratic"] if f > 1 else [])
    if not kinds:
        return LRScore("feature 0", mean, scale, feature=0)
    ia, ib = np.arange(Za.shape[0]) % 2, np.arange(Zb.shape[0]) % 2
    best, best_val = kinds[0], -1.0
    for kind in kinds:
        val = 0.0
        for fold in (0, 1):
            fit = _fit_one(kind, Za[ia != fold], Zb[ib != fold], 0.0, 1.0)
            sa, sb = fit(Za[ia == fold]), fit(Zb[ib == fold])
            val += _choose_threshold(sa, sb, confidence, delta)[2]
        if val > best_val + 1e-12:
            best, best_val = kind, val
    return _fit_one(best, Za, Zb, mean, scale)

