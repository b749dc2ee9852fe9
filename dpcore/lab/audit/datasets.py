"""Small public datasets for audits (:data:`AUDIT_SETS`): hundreds of runs on each take seconds.

:func:`three_axes` is built so that one far outlier flips a non-private k-plane start, which
shows that a Gibbs chain stopped after one sweep from that start leaks more than its ε.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...data import Dataset, make_block_matrix, make_gaussian_mixture, make_union_of_subspaces
from ...validation import check_int

__all__ = ["three_axes", "AuditSet", "AUDIT_SETS", "audit_dataset"]


def three_axes(n_per_axis=400, d=3):
    """Points ±e₁, ±e₂, ±e₃ of R^d (``n_per_axis`` on each axis, signs alternating), except
    that one point of the third axis has norm √½. Built to show the Gibbs sampler's
    start leak: with k = 2 lines, the best pair on D is {e₁, e₂} (leaving e₃
    out costs ½ less than leaving out another axis), and the far outlier e₃ (the direction
    least explained by the data) makes {e₃, e₁ or e₂} the best pair on D′ — a non-private
    k-plane start flips deterministically with one record. Rows lie in the unit ball;
    ``extras["public_radius"] = 1``.

    Parameters
    ----------
    n_per_axis : int ≥ 2, default 400
    d : int ≥ 3, default 3

    Returns
    -------
    dpcore.data.Dataset
        3 · ``n_per_axis`` points, labelled by axis.

    Raises
    ------
    ValueError
        If ``n_per_axis`` < 2 or ``d`` < 3.
    """
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
    parameters that go with it, per family (merged over the family defaults).

    Attributes
    ----------
    label : str
        Human-readable name.
    build : callable
        ``() -> Dataset``.
    params : dict
        family -> dict of parameters.
    note : str, default ""
        What the set shows.
    """
    label: str
    build: object          # () -> Dataset
    params: dict           # family -> dict of parameters
    note: str = ""


def _subspaces_small():
    return make_union_of_subspaces(n=200, d=5, k=2, q=1, sigma=0.05, random_state=0)


def _gaussians_small():
    return make_gaussian_mixture(n=200, d=5, k=3, sigma=0.1, random_state=0)


def _blocks_small():
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
    """(Dataset, params per family) of the audit set ``key`` of :data:`AUDIT_SETS`.

    Parameters
    ----------
    key : str
        A key of :data:`AUDIT_SETS`.

    Returns
    -------
    dataset : dpcore.data.Dataset
    params : dict
        family -> dict of parameters (a copy).

    Raises
    ------
    ValueError
        If ``key`` is unknown.
    """
    if key not in AUDIT_SETS:
        raise ValueError(f"audit set must be one of {', '.join(AUDIT_SETS)}; got {key!r}")
    a = AUDIT_SETS[key]
    return a.build(), dict(a.params)

