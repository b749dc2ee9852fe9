"""dpcore.lab.reachability: the exact decision "can this released float come from value v?" for
numpy's float Laplace, checked against numpy itself and against a brute-force scan, and the
end-to-end audit of DP-τCC's released table: the old float Laplace release is caught (ε̂ far
above the claimed ε), the exact discrete Laplace release never is.

Audits give ε̂, a Clopper–Pearson lower bound at 95 % confidence (dpcore.lab.audit.
epsilon_lower_bound, two tests combined by Bonferroni): for an ε-DP release ε̂ > ε has
probability ≤ 5 %; the seeds are fixed, so the outcomes are deterministic and were checked.
"""
import math

import numpy as np
import pytest

from dpcore.lab.audit import audit_dataset, change_cell, reachability_audit
from dpcore.cocluster.dptaucc import DPTauCC, release_table
from dpcore.cocluster.taucc import contingency_table
from dpcore.privacy import discrete_laplace_mechanism
from dpcore.lab.reachability import float_laplace_release, reachable


def laplace_mechanism(value, sensitivity, epsilon, rng):
    """The float Laplace release dpcore used before its releases were made exact (value +
    numpy's Generator.laplace in float64): what dpcore.lab.reachability models, kept here as the
    attack's target. dpcore.privacy.laplace_mechanism now releases on a grid
    (tests/test_exact_release.py)."""
    value = np.asarray(value, dtype=np.float64)
    return value + rng.laplace(0.0, sensitivity / epsilon, size=value.shape)


# ----------------------------------------------------------------------------- the model of numpy
@pytest.mark.parametrize("scale", [80.0, 1.0, 1.0 / 0.3, 1e-3])
def test_model_reproduces_generator_laplace_bit_for_bit(scale):
    """Releases generated from known U values: the generator's raw 64-bit words give
    U = (word >> 11)·2⁻⁵³ (numpy's next_double for PCG64), and the modelled release equals
    value + Generator.laplace(0.0, scale) exactly, for every draw."""
    n = 200_000
    bg = np.random.PCG64(12345)
    state = bg.state
    value = np.random.default_rng(1).integers(0, 2000, n).astype(float)
    released = value + np.random.Generator(bg).laplace(0.0, scale, size=n)
    bg.state = state
    k = (bg.random_raw(n) >> np.uint64(11)).astype(np.int64)
    assert np.all(k > 0)                                   # (k = 0 would be redrawn: P = 2⁻⁵³)
    assert np.array_equal(float_laplace_release(value, k, scale), released)


def _brute_force_reachable(y, v, scale, radius=4096):
    """Independent check: every k within ``radius`` of the real-valued inverse of the noise
    (on both branches) is tried. The float noise moves by scale·2⁻⁵²/U per step of k and a
    release y in [−2¹², 2¹²] spans ulp(y) ≤ 2⁻⁴¹, so all k that round to y lie within
    2⁵³·U·2⁻⁴⁰/scale + a few ≤ 4096 of the inverse for scale ≥ 1 - the window holds them all."""
    n = y - v
    out = False
    for upper in (False, True):
        if upper:
            u = 1.0 - 0.5 * math.exp(-max(n, 0.0) / scale)  # U ≥ 0.5: noise = −scale·ln(2 − 2U)
        else:
            u = 0.5 * math.exp(min(n, 0.0) / scale)         # U < 0.5: noise = scale·ln(2U)
        k0 = int(u * 2.0 ** 53)
        ks = np.arange(k0 - radius, k0 + radius + 1, dtype=np.int64)
        first, last = ((1 << 52), (1 << 53) - 1) if upper else (1, (1 << 52) - 1)
        ks = ks[(ks >= first) & (ks <= last)]
        out |= bool(np.any(float_laplace_release(v, ks, scale) == y))
    return out


@pytest.mark.parametrize("scale", [80.0, 1.0, 2.5])
def test_decision_agrees_with_brute_force(scale):
    rng = np.random.default_rng(int(scale * 10))
    v = 37.0
    own = laplace_mechanism(np.full(150, v), 1.0, 1.0 / scale, rng)
    # releases from v + 1 judged against v, their float neighbours (mostly unreachable), and
    # releases from v judged against v (always reachable)
    other = laplace_mechanism(np.full(150, v + 1.0), 1.0, 1.0 / scale, rng)
    nudged = np.nextafter(own[:50], np.inf)
    ys = np.r_[own, other, nudged]
    decided = reachable(ys, v, "float_laplace", scale)
    assert decided[:150].all()                            # every release is reachable from its own value
    brute = np.array([_brute_force_reachable(float(y), v, scale) for y in ys])
    assert np.array_equal(decided, brute)
    assert not decided.all()                              # the float holes exist


def test_holes_are_common_for_numpy_laplace_at_scale_80():
    """At ε = 1, 𝓘 = 4 a DP-τCC table cell gets scale 80, and for small and moderate counts
    most releases rule out the neighbouring value."""
    rng = np.random.default_rng(0)
    # measured: 0.82 at v = 0, 0.80 at 3, 0.77 at 20, 0.63 at 60, 0.41 at 150; it falls for
    # large counts, whose float spacing is coarser than the noise's (0.06 at 1200)
    for v, lo in ((3.0, 0.7), (20.0, 0.7), (150.0, 0.3)):
        y = laplace_mechanism(np.full(2000, v), 1.0, 1.0 / 80.0, rng)
        frac = 1.0 - reachable(y, v + 1.0, "float_laplace", 80.0).mean()
        assert lo < frac < 0.9


def test_discrete_releases_are_always_reachable():
    y = discrete_laplace_mechanism(np.full(500, 10), 1, 1.0, 0)
    assert reachable(y, 11, "discrete_laplace").all() and reachable(y, -5, "discrete_laplace").all()
    with pytest.raises(ValueError, match="must be integers for mechanism 'discrete_laplace'"):
        reachable([1.5], 1, "discrete_laplace")
    with pytest.raises(ValueError, match="mechanism must be one of"):
        reachable([1.0], 1, "gaussian")
    with pytest.raises(ValueError, match="scale must be given"):
        reachable([1.0], 1, "float_laplace")


def test_clipped_release_is_reachable():
    assert reachable([0.0, 0.0], [5.0, 900.0], "float_laplace", 80.0, clip_low=0.0).all()


# ----------------------------------------------------------------------------- release level
def test_audit_of_one_count_old_float_vs_discrete():
    """At the level of one count (v = 20 on D, 21 on D′, ε = 1/80 as a DP-τCC table cell at
    ε = 1, 𝓘 = 4): the float release is caught far above its ε, the discrete never."""
    eps, N = 1.0 / 80.0, 2000
    rng = np.random.default_rng(3)
    fa = laplace_mechanism(np.full(N, 20.0), 1.0, eps, rng)
    fb = laplace_mechanism(np.full(N, 21.0), 1.0, eps, rng)
    old = reachability_audit(fa, fb, 20.0, 21.0, "float_laplace", scale=1.0 / eps)
    assert old.fired_a_on_b == 0 and old.fired_b_on_a == 0      # exact: never fires on the other side
    assert old.fraction_unreachable_a > 0.4 and old.epsilon_lower > 4.0
    da = discrete_laplace_mechanism(np.full(N, 20), 1, eps, rng)
    db = discrete_laplace_mechanism(np.full(N, 21), 1, eps, rng)
    new = reachability_audit(da, db, 20, 21, "discrete_laplace")
    assert new.fired_a_on_a == new.fired_b_on_b == 0 and new.epsilon_lower == 0.0


# ----------------------------------------------------------------------------- DP-τCC end to end
def _dptaucc_cell_releases(A, A_ref, cell, n_runs, seed, epsilon=1.0, n_iter=4):
    """Run DP-τCC ``n_runs`` times on A and read, from each run, the final released table's
    cell holding matrix cell ``cell`` (0 if clipping deleted its row or column), the value of
    that co-cluster on A_ref (= D) under the run's released partitions, and - for the OLD
    mechanism - numpy's float Laplace of the same scale added to the same exact table cell
    (what release_table did before), clipped at 0 like the table.

    Returns (discrete_release, float_release, value_on_D, scale_used)."""
    i, j = cell
    disc, flt, v_d = (np.empty(n_runs) for _ in range(3))
    scale = None
    children = np.random.SeedSequence(seed).spawn(n_runs)
    for run, ss in enumerate(children):
        rng = np.random.default_rng(ss)
        m = DPTauCC(n_row_clusters=3, n_col_clusters=3, epsilon=epsilon, n_iter=n_iter, random_state=rng).fit(A)
        r, c = m.row_labels_, m.column_labels_
        eps_last = m.ledger_.entries[-1].epsilon             # the last table release's ε₁
        scale = 1.0 / eps_last                               # what laplace_mechanism computes
        if r[i] < 0 or c[j] < 0:                             # cluster deleted: nothing released
            disc[run] = flt[run] = v_d[run] = 0.0
            continue
        disc[run] = m.T_[r[i], c[j]]
        cell_exact = m.T_exact_[r[i], c[j]]
        flt[run] = max(float(laplace_mechanism(cell_exact, 1.0, eps_last, rng)), 0.0)
        K, L = m.T_.shape
        v_d[run] = contingency_table(A_ref, r, c, K, L)[r[i], c[j]]
    return disc, flt, v_d, scale


def _end_to_end(n_runs, epsilon):
    ds = audit_dataset("blocks")[0]                          # the audit's 60×40 block matrix
    A = ds.X
    j = int(A[0].indices[0])
    A2 = change_cell(A, 0, j, 1)                             # the paper's neighbour: +1 in one cell
    da, fa, va, scale = _dptaucc_cell_releases(A, A, (0, j), n_runs, 1, epsilon)
    db, fb, vb_d, _ = _dptaucc_cell_releases(A2, A, (0, j), n_runs, 2, epsilon)
    # value on D and on D′ for every run (the co-cluster holding the changed cell is a
    # released, public choice of the run; on D′ that cell counts one more)
    v_a, v_b = (va, vb_d), (va + 1.0, vb_d + 1.0)
    new = reachability_audit(da, db, v_a, v_b, "discrete_laplace", clip_low=0.0)
    old = reachability_audit(fa, fb, v_a, v_b, "float_laplace", scale=scale, clip_low=0.0)
    return new, old


def test_release_table_end_to_end_fast():
    """Fast version at the level of release_table (DP-τCC's Alg. 2): the 60×40 block matrix
    and its +1 neighbour with the true (public) partitions, 1500 releases per side at
    ε₁ = 1/80 (the table's share at ε = 1, 𝓘 = 4): the discrete release gives ε̂ = 0, the old
    float release of the same tables (laplace_mechanism, clipped at 0) ε̂ > 1."""
    ds = audit_dataset("blocks")[0]
    A, r, c = ds.X, ds.labels, ds.extras["column_labels"]
    j = int(A[0].indices[0])
    A2 = change_cell(A, 0, j, 1)
    Ta, Tb = contingency_table(A, r, c, 3, 3), contingency_table(A2, r, c, 3, 3)
    cell = (int(r[0]), int(c[j]))
    va = float(Ta[cell])
    eps1 = 1.0 / 80.0
    rng = np.random.default_rng(8)
    N = 1500

    def disc(T):
        out = np.empty(N)
        for k in range(N):
            R, rows, cols = release_table(T, eps1, rng)
            ri, ci = np.flatnonzero(rows == cell[0]), np.flatnonzero(cols == cell[1])
            out[k] = R[ri[0], ci[0]] if ri.size and ci.size else 0.0
        return out

    def old(T):
        return np.maximum(laplace_mechanism(np.full(N, T[cell]), 1.0, eps1, rng), 0.0)

    new = reachability_audit(disc(Ta), disc(Tb), va, va + 1, "discrete_laplace", clip_low=0.0)
    flt = reachability_audit(old(Ta), old(Tb), va, va + 1, "float_laplace", scale=1.0 / eps1, clip_low=0.0)
    assert new.epsilon_lower == 0.0 and new.fired_a_on_a == new.fired_b_on_b == 0
    assert flt.fired_a_on_b == 0 and flt.fired_b_on_a == 0
    assert flt.epsilon_lower > 1.0


@pytest.mark.slow
def test_dptaucc_end_to_end_3000_runs():
    """Acceptance (c): 3000 full DP-τCC runs per side (ε = 1, 𝓘 = 4) on the 60×40 block matrix
    and its +1 neighbour, statistic = the final released table's cell holding the changed
    matrix cell: ε̂ ≤ ε for the discrete release, ε̂ > ε for the old float release of the
    same exact tables. The final cells are large (median ≈ 1460: DP-τCC at ε = 1 merges
    clusters), where fewer floats are holes than for small counts, hence 3000 runs."""
    new, old = _end_to_end(3000, 1.0)
    assert new.epsilon_lower <= 1.0 and new.fired_a_on_a == new.fired_b_on_b == 0
    assert old.fired_a_on_b == 0 and old.fired_b_on_a == 0
    assert old.epsilon_lower > 1.0
