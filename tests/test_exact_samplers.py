"""Laws of the exact integer samplers of :mod:`dpcore.privacy.exact_samplers`.

Every statistical test uses a fixed seed and a threshold derived from the math, so a
correct sampler fails a given test with the stated (tiny) probability and an incorrect
one with a large probability:

- goodness of fit: Pearson chi-square on the integers whose expected count is >= 20, the
  two tails pooled into the end bins, against the exact pmf (50-digit ``decimal`` sums);
  pass iff the p-value > ``P_MIN`` = 1e-4;
- moments (CLT): |mean - μ| <= Z·sqrt(Var/n) and |mean((x-μ)²) - Var| <= Z·sqrt((μ4 - Var²)/n),
  Z = 5 (two-sided 6e-7);
- large σ: DKW, P(sup |F_n - F| > ε) <= 2 exp(-2nε²), ε for probability 1e-6, plus 1/σ for
  the distance between the discrete Gaussian's CDF and Φ((x+1/2)/σ);
- a Bernoulli with exact p: |k/n - p| <= Z·sqrt(p(1-p)/n);
- two samples: chi-square test of homogeneity, p-value > P_MIN.

Exact equalities (no statistics): the compiled kernel, the pure-Python twin (numba
disabled) and the kernel with forced overflow fallbacks give identical arrays for a seed.
"""
from __future__ import annotations

import math
import subprocess
import sys
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpcore.privacy import exact_samplers as es

P_MIN = 1e-4
Z = 5.0


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    es.warm_up()


# ----------------------------------------------------------------------------- exact laws
def _decimal_law(weights):
    """Normalised pmf (dict of Decimal) and its exact mean, variance, 4th central moment."""
    Zs = sum(weights.values())
    pmf = {x: v / Zs for x, v in weights.items()}
    mean = sum(x * p for x, p in pmf.items())
    var = sum((x - mean) ** 2 * p for x, p in pmf.items())
    mu4 = sum((x - mean) ** 4 * p for x, p in pmf.items())
    return pmf, float(mean), float(var), float(mu4)


def dgauss_law(sigma2):
    sigma2 = Fraction(sigma2)
    with localcontext() as ctx:
        ctx.prec = 50
        s2 = Decimal(sigma2.numerator) / Decimal(sigma2.denominator)
        X = math.isqrt(math.ceil(120 * sigma2)) + 2          # exp(-X²/2σ²) < e^-60
        return _decimal_law({x: (-Decimal(x * x) / (2 * s2)).exp() for x in range(-X, X + 1)})


def dlap_law(t):
    with localcontext() as ctx:
        ctx.prec = 50
        q = (-Decimal(1) / Decimal(t)).exp()
        return _decimal_law({x: q ** abs(x) for x in range(-70 * t, 70 * t + 1)})


def geom_law(t):
    with localcontext() as ctx:
        ctx.prec = 50
        q = (-Decimal(1) / Decimal(t)).exp()
        return _decimal_law({x: q ** x for x in range(0, 70 * t + 1)})


def gof_pvalue(draws, pmf):
    """Pearson chi-square p-value of integer draws against an exact pmf (tails pooled)."""
    n = draws.size
    xs = sorted(pmf)
    keep = [x for x in xs if n * pmf[x] >= 20]
    lo, hi = keep[0], keep[-1]
    exp = [n * pmf[x] for x in range(lo, hi + 1)]
    exp[0] = n * sum(pmf[x] for x in xs if x <= lo)
    exp[-1] = n * sum(pmf[x] for x in xs if x >= hi)
    exp = np.array([float(e) for e in exp])
    exp *= n / exp.sum()                                     # truncation < e^-60
    obs = np.bincount(np.clip(draws, lo, hi) - lo, minlength=hi - lo + 1)
    return stats.chisquare(obs, exp).pvalue


def check_moments(draws, mean, var, mu4):
    n = draws.size
    x = draws.astype(np.float64)
    assert abs(x.mean() - mean) <= Z * math.sqrt(var / n)
    assert abs(np.mean((x - mean) ** 2) - var) <= Z * math.sqrt((mu4 - var * var) / n)


def two_sample_pvalue(a, b):
    """Chi-square homogeneity of two integer samples, bins with pooled count >= 40."""
    allx = np.concatenate([a, b])
    vals, counts = np.unique(allx, return_counts=True)
    keep = vals[counts >= 40]
    lo, hi = keep.min(), keep.max()
    table = np.array([np.bincount(np.clip(s, lo, hi) - lo, minlength=hi - lo + 1) for s in (a, b)])
    return stats.chi2_contingency(table).pvalue


# ----------------------------------------------------------------------------- laws of the fast samplers
@pytest.mark.parametrize("t", [1, 3, 10])
def test_discrete_laplace_law(t):
    x = es.discrete_laplace_int_noise(t, size=200_000, random_state=100 + t)
    pmf, mean, var, mu4 = dlap_law(t)
    assert gof_pvalue(x, pmf) > P_MIN
    check_moments(x, mean, var, mu4)


@pytest.mark.parametrize("t", [1, 3, 10])
def test_geometric_law(t):
    x = es.geometric_noise(t, size=200_000, random_state=200 + t)
    assert x.min() >= 0
    pmf, mean, var, mu4 = geom_law(t)
    assert gof_pvalue(x, pmf) > P_MIN
    check_moments(x, mean, var, mu4)


# (m, w): k = m (2^m <= w < 2^(m+1)), k > m (w >= 2^(m+1), incl. w > 2^(m+2)), k < m (w < 2^m);
# n1·n2 > 1 is frequent in all of them (|B'| > d1 or > d2 for a sizeable share of proposals).
GAUSS_SMALL = [(0, 1), (2, 5), (3, 9), (0, 9), (1, 50), (4, 1), (5, 3)]


@pytest.mark.parametrize("m,w", GAUSS_SMALL)
def test_discrete_gaussian_law_small_sigma(m, w):
    x = es.discrete_gaussian_noise(m, w, size=200_000, random_state=300 + 7 * m + w)
    pmf, mean, var, mu4 = dgauss_law(2 ** m * w)
    assert gof_pvalue(x, pmf) > P_MIN
    check_moments(x, mean, var, mu4)


@pytest.mark.parametrize("w", [2 ** 40 + 1, 3 * 2 ** 40 + 7])     # proposal t = 2^40, resp. 2^41
def test_discrete_gaussian_large_sigma_dkw(w):
    n, m = 200_000, 40
    x = es.discrete_gaussian_noise(m, w, size=n, random_state=7)
    sigma = math.sqrt(2 ** m * w)
    # moments: the discrete Gaussian's variance is σ²(1 - O(e^-2π²σ²)), μ4 = 3σ⁴ likewise
    check_moments(x, 0.0, sigma ** 2, 3 * sigma ** 4)
    xs = np.sort(x)
    F = stats.norm.cdf((xs + 0.5) / sigma)
    Fm = stats.norm.cdf((xs - 0.5) / sigma)                  # P(X < x)
    i = np.arange(1, n + 1)
    D = max(np.max(i / n - F), np.max(Fm - (i - 1) / n))
    eps = math.sqrt(math.log(2 / 1e-6) / (2 * n)) + 1 / sigma
    assert D <= eps


@pytest.mark.parametrize("m,w,bp_over_w,n12", [
    (40, 2 ** 40, Fraction(3, 2), (1, 2)),                   # γ = 9/8
    (40, 2 ** 40, Fraction(5, 2), (2, 3)),                   # γ = 25/8
    (40, 2 ** 40, Fraction(1, 4), (1, 1)),                   # γ = 1/32, |y| < c
    (40, 3 * 2 ** 40 + 7, Fraction(7, 3), (2, 2)),           # proposal 2^41, s = 1
    (3, 9, Fraction(20, 9), (2, 3)),                         # small σ
])
def test_acceptance_step_exact_probability(m, w, bp_over_w, n12):
    """The Alg. 3 acceptance for a fixed proposal y is Bernoulli(exp(-B'²/(d1 d2))) exactly."""
    t, s, c, e1, d2 = es._gauss_params(m, w)
    bp = int(bp_over_w * w)
    sign = 1 if bp_over_w > 1 else -1                        # B' > 0: |y| above the centre
    y = (c + sign * bp) >> s
    bp = abs((abs(y) << s) - c)                              # the B' of that integer y
    n1, n2 = -(-bp // 2 ** e1), -(-bp // d2)
    assert (n1, n2) == n12                                   # n1·n2 runs of Alg. 1
    with localcontext() as ctx:
        ctx.prec = 40
        p = float((-Decimal(bp * bp) / Decimal(2 ** e1 * d2)).exp())
    n = 200_000
    k = int(es._acceptance_draws(m, w, y, n, random_state=11).sum())
    assert abs(k / n - p) <= Z * math.sqrt(p * (1 - p) / n)
    k = int(es._acceptance_draws(m, w, -y, n, random_state=12).sum())    # depends on |y| only
    assert abs(k / n - p) <= Z * math.sqrt(p * (1 - p) / n)


# ----------------------------------------------------------------------------- exact equalities
CASES = [
    (es.discrete_gaussian_noise, (3, 9)), (es.discrete_gaussian_noise, (0, 1)), (es.discrete_gaussian_noise, (1, 50)),
    (es.discrete_gaussian_noise, (4, 1)), (es.discrete_gaussian_noise, (40, 2 ** 41 + 3)),
    (es.discrete_laplace_int_noise, (3,)), (es.discrete_laplace_int_noise, (2 ** 40 + 5,)),
    (es.geometric_noise, (10,)), (es.geometric_noise, (2 ** 56,)),
]


@pytest.mark.parametrize("f,args", CASES)
def test_kernel_equals_python_twin(f, args, monkeypatch):
    """A seed's draws do not depend on numba: the Python twin makes the same draws."""
    a = f(*args, size=2000, random_state=5)
    monkeypatch.setattr(es, "_KERNELS", False)               # as if numba were not importable
    b = f(*args, size=2000, random_state=5)
    np.testing.assert_array_equal(a, b)


def test_forced_overflow_fallback_gives_identical_draws(monkeypatch):
    """Lowering the kernels' limit forces the Python continuation at every stage; the
    draws do not change (same function of the same words), so neither does their law."""
    ref = {(f, a): f(*a, size=3000, random_state=5) for f, a in CASES[:4] + CASES[5:6] + CASES[7:8]}
    seen = set()
    for limit in (2, 8, 16, 40):
        monkeypatch.setattr(es, "_OVERFLOW_LIMIT", limit)
        es._FALLBACKS.clear()
        for (f, a), x in ref.items():
            np.testing.assert_array_equal(f(*a, size=3000, random_state=5), x)
        seen |= {k for k, v in es._FALLBACKS.items() if v > 0}
    assert seen == {1, 2, 3, 4}         # U-test, U + tV, acceptance at its start and mid-run


@pytest.mark.parametrize("kind,limit", [("gauss", 16), ("laplace", 16), ("geometric", 12)])
def test_forced_overflow_fallback_law(kind, limit, monkeypatch):
    monkeypatch.setattr(es, "_OVERFLOW_LIMIT", limit)
    es._FALLBACKS.clear()
    n = 60_000
    if kind == "gauss":
        x, law = es.discrete_gaussian_noise(3, 9, size=n, random_state=21), dgauss_law(72)
    elif kind == "laplace":
        x, law = es.discrete_laplace_int_noise(10, size=n, random_state=22), dlap_law(10)
    else:
        x, law = es.geometric_noise(10, size=n, random_state=23), geom_law(10)
    assert sum(es._FALLBACKS.values()) > n // 20
    assert gof_pvalue(x, law[0]) > P_MIN
    check_moments(x, *law[1:])


def test_lemire_rejection_path_matches_twin(monkeypatch):
    """Bounds just above 2^61 reject about half of the words: kernel and twin must consume
    the same words (equal Generator states afterwards) and give the same outcomes."""
    m, w = 0, 2 ** 55 - 3                                    # proposal 2^27, s = 27
    t, s, c, e1, d2 = es._gauss_params(m, w)
    y = (2 ** 61 + 2 ** 57 + c) >> s
    bp = (y << s) - c
    D2 = d2 * -(-bp // d2)
    assert 2 ** 61 < D2 <= 2 ** 62 and (2 ** 62 % D2) / 2 ** 62 > 0.4
    runs = []
    for kernels in (True, False):
        monkeypatch.setattr(es, "_KERNELS", kernels)
        g = np.random.default_rng(3)
        runs.append((es._acceptance_draws(m, w, y, 5000, random_state=g), g.bit_generator.state))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1]


def test_mul62_limbs():
    rng = np.random.default_rng(0)
    edge = [0, 1, 2, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 61, 2 ** 62 - 1]
    pairs = [(a, b) for a in edge for b in edge[1:] + [2 ** 62]]
    pairs += [(int(a), int(b) + 1) for a, b in zip(rng.integers(0, 2 ** 62, 2000), rng.integers(0, 2 ** 62, 2000))]
    mul = es._k_mul62                                        # compiled by warm_up
    for a, b in pairs:
        hi, lo = mul(a, b)
        assert (int(hi), int(lo)) == divmod(a * b, 2 ** 62)


def test_multiword_uniform():
    """The Python twin's uniform integers beyond one word (n > 2^62)."""
    buf, ctl = np.empty(es._BUF_WORDS, np.int64), np.zeros(7, np.int64)
    ctl[0] = es._BUF_WORDS
    W = es._Words(np.random.default_rng(4), buf, ctl)
    n = 5 * 2 ** 64 + 1
    x = [W.below(n) for _ in range(50_000)]
    assert min(x) >= 0 and max(x) < n
    top = np.bincount([v >> 64 for v in x], minlength=6)
    assert top[5] <= 1                                       # P(x = 5·2^64) = 1/n
    assert stats.chisquare(top[:5]).pvalue > P_MIN
    assert stats.chisquare(np.bincount([v & 3 for v in x])).pvalue > P_MIN


# ----------------------------------------------------------------------------- references
@pytest.mark.parametrize("which", ["laplace", "geometric", "gauss", "gauss_fraction", "gauss_t"])
def test_reference_laws(which):
    n = 30_000
    if which == "laplace":
        x, law = es.discrete_laplace_reference(3, size=n, random_state=31), dlap_law(3)
    elif which == "geometric":
        x = es.geometric_reference(Fraction(10, 3), size=n, random_state=32)
        with localcontext() as ctx:
            ctx.prec = 50
            q = (-Decimal(3) / Decimal(10)).exp()
            law = _decimal_law({g: q ** g for g in range(0, 300)})
    elif which == "gauss":
        x, law = es.discrete_gaussian_reference(72, size=n, random_state=33), dgauss_law(72)
    elif which == "gauss_fraction":
        x, law = es.discrete_gaussian_reference(Fraction(9, 2), size=n, random_state=34), dgauss_law(Fraction(9, 2))
    else:
        x = es.discrete_gaussian_reference(20, size=n, random_state=35, t=Fraction(7, 3))
        law = dgauss_law(20)
    assert gof_pvalue(x, law[0]) > P_MIN
    check_moments(x, *law[1:])


@pytest.mark.parametrize("which", ["laplace", "gauss"])
def test_kernel_and_reference_same_law(which):
    if which == "laplace":
        a = es.discrete_laplace_int_noise(3, size=200_000, random_state=41)
        b = es.discrete_laplace_reference(3, size=30_000, random_state=42)
    else:
        a = es.discrete_gaussian_noise(3, 9, size=200_000, random_state=43)
        b = es.discrete_gaussian_reference(72, size=30_000, random_state=44)
    assert two_sample_pvalue(a, b) > P_MIN


# ----------------------------------------------------------------------------- determinism, API
def test_determinism_and_exact_consumption():
    for f, a in CASES[:1] + CASES[5:6] + CASES[7:8]:
        x = f(*a, size=500, random_state=9)
        np.testing.assert_array_equal(x, f(*a, size=500, random_state=9))
        np.testing.assert_array_equal(x, f(*a, size=500, random_state=np.random.default_rng(9)))
        assert not np.array_equal(x, f(*a, size=500, random_state=10))
        for bitgen in (np.random.PCG64, np.random.MT19937):
            g, h = np.random.Generator(bitgen(1)), np.random.Generator(bitgen(1))
            g.integers(0, 3, dtype=np.uint32)                # a buffered 32-bit half word
            h.integers(0, 3, dtype=np.uint32)
            one = f(*a, size=300, random_state=g)
            many = np.array([f(*a, random_state=h) for _ in range(300)])
            np.testing.assert_array_equal(one, many)
            assert g.integers(0, 2 ** 40, size=3).tolist() == h.integers(0, 2 ** 40, size=3).tolist()
            assert g.integers(0, 9, dtype=np.uint32) == h.integers(0, 9, dtype=np.uint32)


def test_shapes_and_types():
    x = es.discrete_gaussian_noise(3, 9, random_state=0)
    assert isinstance(x, np.int64)
    assert es.discrete_laplace_int_noise(3, size=(2, 3), random_state=0).shape == (2, 3)
    assert es.geometric_noise(3, size=0, random_state=0).shape == (0,)
    y = es.discrete_gaussian_noise(40, 2 ** 41, size=7, random_state=0)
    assert y.dtype == np.int64 and y.shape == (7,)
    assert isinstance(es.warm_up(), float)
    assert es.VALID_RANGES == {"t": (1, 2 ** 56), "m": (0, 52), "w": (1, 2 ** 55)}


def test_extreme_parameters():
    for m, w in [(52, 2 ** 55), (0, 2 ** 55), (52, 1), (0, 1)]:
        x = es.discrete_gaussian_noise(m, w, size=2000, random_state=1)
        assert abs(x.std() / math.sqrt(2 ** m * w) - 1) < 0.1
    x = es.discrete_laplace_int_noise(2 ** 56, size=2000, random_state=1)
    assert abs(x.std() / (math.sqrt(2) * 2 ** 56) - 1) < 0.15


def test_unrepresentable_sample_raises(monkeypatch):
    """Values beyond int64 can only come from the Python path (kernel values are <= 2^62)."""
    monkeypatch.setattr(es, "_INT64_MAX", 3)
    for kernels, limit in ((True, 8), (False, es._OVERFLOW_LIMIT)):
        monkeypatch.setattr(es, "_KERNELS", kernels)
        monkeypatch.setattr(es, "_OVERFLOW_LIMIT", limit)
        with pytest.raises(OverflowError):
            es.geometric_noise(10, size=100, random_state=0)


@pytest.mark.parametrize("call,name", [
    (lambda: es.discrete_laplace_int_noise(0), "t"),
    (lambda: es.discrete_laplace_int_noise(2 ** 56 + 1), "t"),
    (lambda: es.discrete_laplace_int_noise(1.5), "t"),
    (lambda: es.discrete_laplace_int_noise("3"), "t"),
    (lambda: es.geometric_noise(-1), "t"),
    (lambda: es.discrete_gaussian_noise(53, 1), "m"),
    (lambda: es.discrete_gaussian_noise(-1, 1), "m"),
    (lambda: es.discrete_gaussian_noise(0, 0), "w"),
    (lambda: es.discrete_gaussian_noise(0, 2 ** 55 + 1), "w"),
    (lambda: es.discrete_gaussian_noise(3, 9, size=-1), "size"),
    (lambda: es.discrete_gaussian_noise(3, 9, size=1.5), "size"),
    (lambda: es.discrete_gaussian_noise(3, 9, size=(2, -1)), "size"),
    (lambda: es.discrete_gaussian_noise(3, 9, size=True), "size"),
    (lambda: es.geometric_noise(3, random_state="x"), "random_state"),
    (lambda: es.discrete_gaussian_reference(0), "sigma2"),
    (lambda: es.discrete_gaussian_reference(1.5), "sigma2"),
    (lambda: es.discrete_gaussian_reference(2, t=0), "t"),
    (lambda: es.discrete_laplace_reference(-1), "scale"),
    (lambda: es.geometric_reference(0.5), "scale"),
])
def test_bad_arguments(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


def test_without_numba_in_a_subprocess():
    """numba not importable: the pure-Python path runs and gives the kernel's draws."""
    code = ("import sys; sys.modules['numba'] = None\n"
            "from dpcore.privacy import exact_samplers as es\n"
            "assert es.warm_up() == 0.0\n"
            "print(es.discrete_gaussian_noise(3, 9, size=50, random_state=8).tolist())\n"
            "print(es.discrete_laplace_int_noise(7, size=50, random_state=8).tolist())\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    lines = res.stdout.strip().splitlines()
    assert lines[0] == str(es.discrete_gaussian_noise(3, 9, size=50, random_state=8).tolist())
    assert lines[1] == str(es.discrete_laplace_int_noise(7, size=50, random_state=8).tolist())
