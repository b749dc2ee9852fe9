"""Work bounded before it starts: every fit estimates its work from public inputs and refuses
what is past a stated cap (issue 33, item 1), before it reads any value of the data.

What a fit will cost is known from its parameters and the *shape* of its input alone: n rows,
d columns, the number of stored entries (nnz) of a sparse matrix, and the parameters that set
the loops (k, iterations, restarts, sweeps, chains, subsets, candidates, …). Each estimator
declares its work model, a method ``_planned_work(self, n, d, nnz, sparse)`` that returns a
:class:`WorkPlan` (built with :class:`Work` and the cost formulas below): an estimate of the
compute, part by part, in work units, and of the peak memory of its largest arrays.
:func:`planned_work` asks it; :func:`check_work` refuses a plan past :data:`MAX_WORK` or
:data:`MAX_MEMORY` with a ``ValueError`` that names the part of the run that is too large, its
parameters, the estimate, the cap, and what to change (the largest value of the parameter that
would fit, and the largest number of rows).

Where the check happens. Every estimator's ``fit`` is wrapped once: private estimators by the
fit wrapper of :class:`~dpcore.privacy.accounting.PrivateEstimatorMixin`, non-private ones
(k-plane, TSC, SSC, LRR, k-means++, Fast-τCC) by :class:`BoundedWorkMixin`; both call
:func:`check_work` right after checking the shape, before the fit reads any value (and before
any budget is checked or charged). A fit inside another (the solver runs of sample-and-aggregate,
a Gibbs start) is not checked again: the outer estimate includes it. Before a run,
:meth:`BoundedWorkMixin.planned_work` gives the plan, and :func:`dpcore.lab.verdicts.plan_run`
refuses a run past a cap (what the app's pages show when they plan a run). A new estimator gets
the check by inheriting one of the two mixins and defining ``_planned_work``; a class one cannot
edit gets a model with :func:`register_work_model` (the Gibbs sampler's is declared here).

The unit. A *work unit* is about one nanosecond of one core of the reference machine (a 2-core
x86-64 server, single-threaded BLAS): each model counts the operations of its loops by kind and
weights each kind by what one such operation costs there (:data:`UNIT_COSTS`: a multiply-add
inside a large matrix product 0.05 units, one inside a thin product 0.5, one element of an
element-wise array operation 2, one exact noise draw 400, one call of an exact mechanism 3·10⁵,
a Python-level loop step 1,000, …). Measured against the fits themselves, the estimates are
between about 0.7 and 5 times the CPU time of runs that go to their iteration caps, and up to 100
times it for runs that stop early. Iterations that stop early are counted at their cap
(``max_iter``, ``max_redraws``, scikit-learn's 300 k-means iterations): a typed cap with a
tolerance that is never met runs to it. The one exception is k-plane, whose cost falls at every
iteration until no point moves, so that it always ends: its iterations are counted up to
:data:`KPLANE_ITERATIONS`. Sizes that depend on the data are bounded from the public inputs: the
candidate set by the cubes the partition can keep at each depth, the LSH tree by the nodes its
thresholds let branch.

The caps (:data:`CAPS`). :data:`MAX_WORK` = 3·10¹¹ units (about 5 minutes of one core here, 2½ on
both) passes every setting of the app's presets and of the papers' full reproductions
(``dpcore.lab.figures``; the largest: k-means++ on the high-dimensional paper's 100,000 points
with k = 64, 2.2·10¹¹, and the subspace paper's SSC on 5,000 points, 9·10¹⁰);
:data:`MAX_MEMORY` = 4 GiB keeps a handful of runs inside a 24 GiB server. The Gibbs sampler has
a third cap, on ε·n (:data:`dpcore.subspace.gibbs.MAX_EPSILON_N`), the one input where ε drives
the cost: the concentration of the exponential mechanism's conditionals grows with ε·n until its
rejection samplers never accept. The table of every estimator's model: docs/limits.md.
"""
from __future__ import annotations

import contextvars
import copy
import functools
import math
import sys
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .validation import check_int

__all__ = ["MAX_WORK", "MAX_MEMORY", "CAPS", "UNIT_COSTS", "SKLEARN_KMEANS_ITERATIONS", "KPLANE_ITERATIONS", "Work",
           "WorkTerm", "WorkPlan", "WorkCapError", "planned_work", "check_work", "refusal", "input_size",
           "param_int", "clusters_of", "unit_cost", "matmul_cost", "small_eig_cost", "subspace_distances_cost",
           "add_sklearn_kmeans", "add_spectral", "add_fit_subspaces", "add_kplane", "add_tsc", "add_ssc", "add_lrr",
           "expected_draws", "add_aggregate", "register_work_model", "work_model_of", "BoundedWorkMixin",
           "bounded_fit", "inside_checked_fit", "is_inside_checked_fit"]

#: the largest estimated compute of one fit, in work units (≈ ns of one core of the reference machine)
MAX_WORK = 3e11
#: the largest estimated peak memory of one fit's largest arrays, in bytes (4 GiB)
MAX_MEMORY = 4 * 2 ** 30
#: one stated cap per kind of cost: name -> (cap, unit, meaning)
CAPS = {
    "work": (MAX_WORK, "work units",
             "estimated compute of one fit; a unit is about one nanosecond of one core of the reference "
             "machine (about 5 minutes of one core, 2½ on two)"),
    "memory": (MAX_MEMORY, "bytes", "estimated peak memory of the fit's largest arrays (4 GiB)"),
    "epsilon_n": (1e12, "ε × rows", "Gibbs sampler only: beyond it its rejection samplers never accept "
                                    "(dpcore.subspace.gibbs.MAX_EPSILON_N)"),
}

#: work units (≈ ns here) per operation of each kind (single-threaded BLAS, measured on the reference machine)
UNIT_COSTS = {
    "gemm": 0.05,      # one multiply-add inside a large dense matrix product (every dimension ≥ 64)
    "thin": 0.5,       # one multiply-add inside a thin product (a dimension between 8 and 63)
    "narrow": 1.5,     # one multiply-add inside a product with a dimension below 8
    "sparse": 3.0,     # one stored entry times one column inside a sparse × dense product
    "elem": 2.0,       # one element of an element-wise array operation (numpy, memory bound)
    "sort": 10.0,      # one element of a sort, a partition or a unique (log factor included)
    "eig": 0.25,       # per n³ of a dense symmetric eigendecomposition (all or some eigenvectors)
    "small_eig": 1.5,  # per d³ of a small (d ≤ 256) eigendecomposition or SVD (plus 10 µs a matrix)
    "svd": 1.5,        # per m·n·min(m, n) of a thin SVD
    "draw": 400.0,     # one exact noise draw (discrete Gaussian or Laplace, dpcore.privacy.exact)
    "choice": 15.0,    # one candidate of an exact exponential-mechanism draw
    "call": 3e5,       # one call of an exact mechanism (a release, a small exponential-mechanism draw): its set-up
    "loop": 1e3,       # one Python-level loop step with a few small numpy calls
}
#: the iterations counted for scikit-learn's k-means: its cap (300), not a parameter of ours
SKLEARN_KMEANS_ITERATIONS = 300
_F64 = 8


# ----------------------------------------------------------------------------- plans
@dataclass(frozen=True)
class WorkTerm:
    """One part of a fit's estimated work.

    Attributes
    ----------
    what : str
        The part in words, with its formula (e.g. "ADMM iterations: max_iter × 3·n²·d").
    units : float
        Its estimated compute, in work units.
    levers : tuple of str
        The parameters it grows with, the first the one to lower.
    """
    what: str
    units: float
    levers: tuple = ()


@dataclass(frozen=True)
class WorkPlan:
    """What a fit will cost, known before it reads any value of the data (:func:`planned_work`).

    Attributes
    ----------
    estimator : str
        The estimator's class name.
    n, d : int
        Rows and columns of the input.
    nnz : int
        Stored entries (n·d for a dense input).
    terms : tuple of WorkTerm
        The parts of the compute.
    memory : float
        Estimated peak bytes of the largest arrays (the input's own storage included).
    memory_what : str
        The largest arrays, in words.
    memory_levers : tuple of str
        The parameters the memory grows with.
    """
    estimator: str
    n: int
    d: int
    nnz: int
    terms: tuple = ()
    memory: float = 0.0
    memory_what: str = ""
    memory_levers: tuple = ()

    @property
    def work(self):
        """Total estimated compute, in work units."""
        return float(math.fsum(t.units for t in self.terms))

    @property
    def largest(self):
        """The term with the most work (None without terms)."""
        return max(self.terms, key=lambda t: t.units) if self.terms else None

    @property
    def within_caps(self):
        """Whether the plan is within :data:`MAX_WORK` and :data:`MAX_MEMORY`."""
        return self.work <= MAX_WORK and self.memory <= MAX_MEMORY

    @property
    def seconds(self):
        """The compute as seconds of one core of the reference machine (a unit is about a nanosecond)."""
        return self.work * 1e-9

    def as_rows(self):
        """The plan as (part, work units) rows, largest first, then the memory (bytes).

        Returns
        -------
        list of (str, float)
        """
        rows = [(t.what, t.units) for t in sorted(self.terms, key=lambda t: -t.units)]
        return rows + [(f"peak memory (bytes): {self.memory_what}", self.memory)]


class Work:
    """Builder of a :class:`WorkPlan`: ``add`` a compute term, ``hold`` an array size.

    Parameters
    ----------
    n, d, nnz : int
        Rows, columns and stored entries of the input.
    sparse : bool
        Whether the input is a sparse matrix.
    """

    def __init__(self, n, d, nnz, sparse=False):
        self.n, self.d, self.nnz, self.sparse = int(n), int(d), int(nnz), bool(sparse)
        self.terms = []
        self.holdings = []

    def add(self, what, units, *levers):
        """Add ``units`` of compute for the part ``what``, growing with the parameters ``levers``.

        Returns
        -------
        Work
            self.
        """
        if units > 0:
            self.terms.append(WorkTerm(what, float(units), tuple(levers)))
        return self

    def hold(self, what, nbytes, *levers):
        """Record that the fit holds ``nbytes`` bytes at once for ``what`` (the plan keeps the largest).

        Returns
        -------
        Work
            self.
        """
        self.holdings.append((float(nbytes), what, tuple(levers)))
        return self

    def extend(self, other, prefix="", times=1, *levers, inner="{}"):
        """Add the terms of another plan (e.g. a solver run on each subset) ``times`` times.

        Parameters
        ----------
        other : WorkPlan or None
        prefix : str
            Put before the other plan's parts.
        times : float
            How many times it runs.
        *levers : str
            This estimator's parameters the other plan's work grows with (first).
        inner : str or None
            How the other plan's own parameters are named here (e.g. "solver_params['{}']"); None: not
            named (they cannot be set from here).

        Returns
        -------
        Work
            self.
        """
        if other is None:
            return self

        def named(ls):
            return () if inner is None else tuple(inner.format(x) for x in ls)
        for t in other.terms:
            self.add(prefix + t.what + (f" (× {times:g})" if times != 1 else ""), t.units * times,
                     *dict.fromkeys(levers + named(t.levers)))
        if other.memory_what:
            self.hold(prefix + other.memory_what, other.memory - _input_bytes(other.n, other.d, other.nnz, False),
                      *named(other.memory_levers))
        return self

    def plan(self, estimator):
        """The :class:`WorkPlan` (peak memory: the input's storage plus the largest holding).

        Returns
        -------
        WorkPlan
        """
        base = _input_bytes(self.n, self.d, self.nnz, self.sparse)
        top = max(self.holdings, key=lambda h: h[0]) if self.holdings else (0.0, "", ())
        return WorkPlan(estimator, self.n, self.d, self.nnz, tuple(self.terms), base + max(top[0], 0.0),
                        top[1], top[2])


def _input_bytes(n, d, nnz, sparse):
    return float(nnz) * 12 + (n + 1) * 8 if sparse else float(n) * d * _F64


# ----------------------------------------------------------------------------- reading the input
def input_size(X):
    """(n, d, nnz, sparse) of ``X``, read without looking at any value: the shape, and the number
    of stored entries of a sparse matrix (its storage, like its shape; n·d for dense input).

    Parameters
    ----------
    X : array_like, sparse matrix, DataFrame or tuple (n, d)

    Returns
    -------
    (int, int, int, bool) or None
        None when ``X`` is not two-dimensional with at least one row and one column (the fit
        refuses it in its own words).
    """
    if X is None:
        return None
    if isinstance(X, tuple) and len(X) == 2 and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                                     for v in X):
        n, d = int(X[0]), int(X[1])
        return (n, d, n * d, False) if n >= 1 and d >= 1 else None
    try:
        shape = getattr(X, "shape", None)
        if shape is None:
            shape = np.shape(X)
        shape = tuple(int(v) for v in shape)
    except (TypeError, ValueError):
        return None
    if len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
        return None
    n, d = shape
    if sp.issparse(X):
        return n, d, int(X.nnz), True
    return n, d, n * d, False


# ----------------------------------------------------------------------------- parameters
def param_int(est, name, default=None, low=1):
    """The integer parameter ``name`` of ``est`` (``default`` when None), checked as the fit checks it.

    Raises
    ------
    ValueError
        If it is not an integer ≥ ``low`` (the plan is then skipped: the fit refuses it in its own words).
    """
    v = getattr(est, name, default)
    return default if v is None else check_int(v, name, low)


def clusters_of(est, n, name="n_clusters", default=8):
    """k = the parameter ``name`` of ``est``, at most n (the fit refuses more)."""
    return min(param_int(est, name, default), max(n, 1))


# ----------------------------------------------------------------------------- cost formulas
def unit_cost(kind, count):
    """``count`` operations of ``kind`` (a key of :data:`UNIT_COSTS`), in work units."""
    return UNIT_COSTS[kind] * float(count)


def matmul_cost(a, b, c):
    """Work of an (a×b)·(b×c) dense product: the kind follows its smallest dimension."""
    count = float(a) * float(b) * float(c)
    inner = min(a, b, c)
    return unit_cost("gemm" if inner >= 64 else "thin" if inner >= 8 else "narrow", count)


def small_eig_cost(d):
    """One small dense eigendecomposition or SVD (d×d, numpy's LAPACK): d³ and a fixed cost."""
    return unit_cost("small_eig", float(d) ** 3) + 1e4


def subspace_distances_cost(n, d, k, q):
    """dpcore.metrics.squared_distances_to_subspaces: an einsum of n·d·k·q (not BLAS) and n·d squares."""
    return unit_cost("elem", 1.2 * n * d * k * q + n * d + 3 * n * k * q)


def add_sklearn_kmeans(w, n, d, nnz, k, n_init, what="k-means", levers=()):
    """scikit-learn's k-means (k-means++ seeding, Lloyd) on n points: n_init × (a fixed cost, the
    seeding's k·(2 + ln k) passes over the data and :data:`SKLEARN_KMEANS_ITERATIONS` Lloyd iterations
    of n·k·d, its cap counted in full; measured 0.08 ns per n·k·d on 10⁵ uniform points of R^100)."""
    sparse = nnz < n * d
    per = nnz if sparse else n * d
    seed = k * (2 + math.log(max(k, 2))) * ((unit_cost("sparse", per) if sparse else unit_cost("thin", per))
                                            + unit_cost("elem", n))
    lloyd = SKLEARN_KMEANS_ITERATIONS * ((unit_cost("sparse", per * k) if sparse else 0.1 * float(n) * k * d)
                                         + unit_cost("elem", 0.25 * n * k))
    w.add(f"{what}: n_init × (k-means++ seeding + {SKLEARN_KMEANS_ITERATIONS} Lloyd iterations of n·k·d)",
          n_init * (unit_cost("call", 50) + seed + lloyd), *levers)
    w.hold(f"{what}: distances n·k", 3 * n * k * _F64, *levers)


def add_spectral(w, n, k, dense, nnz_w=0):
    """The shared spectral step (dpcore.subspace.common.spectral_clustering) on an n×n affinity."""
    if k <= 1:
        return
    if dense or n <= 3000:
        w.add("spectral step: eigenvectors of an n×n matrix (n³)",
              unit_cost("eig", float(n) ** 3) + unit_cost("elem", 6 * n * n))
        w.hold("spectral step: n×n matrices", 4 * float(n) * n * _F64)
    else:
        w.add("spectral step: k eigenvectors of the sparse graph",
              300 * k * (unit_cost("sparse", nnz_w) + unit_cost("elem", n * k)), "n_clusters")
    add_sklearn_kmeans(w, n, k, n * k, k, 10, "spectral step's k-means (10 restarts)", ("n_clusters",))


def add_fit_subspaces(w, n, d, k, q, times=1, what="subspaces fitted to the clusters", levers=()):
    """dpcore.subspace.common.fit_subspaces, ``times`` times: the clusters' scatter and eigenvectors."""
    if d <= 256:
        units = matmul_cost(n, d, d) + unit_cost("elem", n * d) + k * small_eig_cost(d) + unit_cost("loop", k)
    else:
        units = unit_cost("svd", float(n) * d * min(n, d)) + unit_cost("elem", n * d) + unit_cost("loop", k)
    w.add(what + (f": {times:g} ×" if times != 1 else ":") + " scatter (n·d²) and k eigendecompositions (d³)",
          times * units, *levers)


#: the iterations of one k-plane run counted: its cost falls at every iteration until no point changes
#: subspace (so it always ends), typically within 10–30 iterations (23 on the 1,797 digits, k = 10), far
#: below its default max_iter = 100; counting 100 would refuse the sample-and-aggregate presets
KPLANE_ITERATIONS = 30


def add_kplane(w, n, d, k, q, n_init, max_iter):
    """k-plane (dpcore.subspace.kplane.KPlane): n_init runs of min(max_iter, :data:`KPLANE_ITERATIONS`)
    iterations, each nearest subspaces (n·k·d·q) and a refit."""
    iters = min(max_iter, KPLANE_ITERATIONS)
    per = subspace_distances_cost(n, d, k, q) + unit_cost("sort", n)
    w.add(f"k-plane iterations: n_init × (min(max_iter, {KPLANE_ITERATIONS}) + 1) × nearest subspaces (n·k·d·q)",
          n_init * (iters + 1) * per, "max_iter", "n_init", "n_clusters")
    add_fit_subspaces(w, n, d, k, q, n_init * iters, "k-plane refits", ("max_iter", "n_init"))
    w.hold("distances n×k and k scatter matrices d×d", 4 * n * k * _F64 + k * d * d * _F64 + n * d * _F64)


def add_tsc(w, n, d, k, q, s):
    """TSC (dpcore.subspace.tsc.TSC) with s neighbours: all inner products, the graph, the spectral step."""
    w.add("TSC: inner products of all pairs (n²·d) and the s nearest of each", matmul_cost(n, d, n)
          + unit_cost("sort", float(n) * n) + unit_cost("elem", 4 * float(n) * n))
    w.add("TSC: the neighbour graph (n·s edges)", 50.0 * n * s, "n_neighbors")
    w.hold("TSC: n×n inner products and their partition", 3 * float(n) * n * _F64)
    add_spectral(w, n, k, False, 4 * n * s)
    add_fit_subspaces(w, n, d, k, q)


def add_ssc(w, n, d, k, q, max_iter):
    """SSC (dpcore.subspace.ssc.SSC): coherence, max_iter ADMM iterations of n², the spectral step."""
    w.add("SSC: mutual coherence (n²·d)", matmul_cost(n, d, n) + unit_cost("elem", 3 * float(n) * n))
    # blocks of columns that fit in the cache: measured 6.6 ns per n² per iteration at d = 10
    w.add("SSC's ADMM: max_iter × n²·(3·d multiply-adds + 10 element operations), in cache-sized blocks",
          max_iter * unit_cost("elem", float(n) * n * (0.25 * d + 0.75)), "max_iter")
    w.add("SSC: affinity |C| + |C|ᵀ (n²)", unit_cost("elem", 6 * float(n) * n))
    w.hold("SSC: n×n coefficients, affinity and spectral matrices", 6 * float(n) * n * _F64)
    add_spectral(w, n, k, True)
    add_fit_subspaces(w, n, d, k, q)


def add_lrr(w, n, d, k, q, max_iter):
    """LRR (dpcore.subspace.lrr.LRR): an SVD, max_iter ALM iterations on r = min(n, d) rows, Z (n²·r)."""
    r = min(n, d)
    w.add("LRR: SVD of the data (n·d·min(n, d))", unit_cost("svd", float(n) * d * r))
    per = unit_cost("svd", float(n) * r * r) + 3 * matmul_cost(d, r, n) + 2 * matmul_cost(r, r, n) \
        + unit_cost("elem", 15 * (d + r) * n)
    w.add("LRR's ALM: max_iter × (SVD of r×n + 3·n·d·r multiply-adds), r = min(n, d)", max_iter * per, "max_iter")
    w.add("LRR: representation Z = Q·Z̃ (n²·r)", matmul_cost(n, r, n) + unit_cost("elem", 6 * float(n) * n))
    w.hold("LRR: n×n representation, affinity and spectral matrices", 6 * float(n) * n * _F64)
    add_spectral(w, n, k, True)
    add_fit_subspaces(w, n, d, k, q)


def expected_draws(p_accept, max_redraws):
    """How many draws of subsets sample-and-aggregate makes: 1/p expected, at most ``max_redraws``
    (none when p < 1/max_redraws: dpcore.privacy.sample_aggregate.draw_subsets refuses at once)."""
    if p_accept < 1.0 / max_redraws:
        return 0
    return min(max_redraws, math.ceil(1.0 / max(p_accept, 1e-300)))


def add_aggregate(w, n, m, D, k, draws, what="aggregation"):
    """Alg. 1's subset draws, pairwise matching distances and release (dpcore.privacy.sample_aggregate)
    of m outputs of D numbers in k blocks."""
    size = max(n // m, 1)
    w.add(f"{what}: subset draws (expected draws × m·n keys)",
          draws * (unit_cost("elem", 3 * m * n) + unit_cost("sort", m * size)), "n_subsets", "max_redraws")
    w.hold(f"{what}: m×n subset keys", 2 * float(m) * n * _F64, "n_subsets")
    cells = float(m) * m * k * k
    match = matmul_cost(m * m, D // max(k, 1), k) + unit_cost("elem", 4 * cells)
    if k > 5:
        match += unit_cost("loop", m * m / 2) + unit_cost("elem", 10 * m * m / 2 * k ** 3)
    w.add(f"{what}: matching distances between the m outputs (m²·k²·D/k)", match, "n_subsets", "n_clusters")
    w.hold(f"{what}: m²·k² matching costs, m×m distances and radii", 3 * min(cells, 4_000_000) * _F64
           + float(m) * D * _F64 + 3 * float(m) * m * _F64, "n_subsets")
    w.add(f"{what}: sorted distances of every output to the others (m² log m)", unit_cost("sort", float(m) * m),
          "n_subsets")
    w.add(f"{what}: the exact Gaussian release of D = {D:,} numbers", unit_cost("draw", D) + 2e8)


# ----------------------------------------------------------------------------- the models
_MODELS = {}


def register_work_model(target, model=None):
    """Declare the work model of an estimator class one cannot edit: ``model(estimator, n, d, nnz,
    sparse) -> WorkPlan``. Usable as a decorator. A class of one's own defines ``_planned_work(self,
    n, d, nnz, sparse)`` instead (every dpcore estimator does); subclasses inherit their base's model.

    Parameters
    ----------
    target : type or str
        The class, or "module:Class".
    model : callable, optional

    Returns
    -------
    callable
        ``model`` (or the decorator).
    """
    key = target if isinstance(target, str) else f"{target.__module__}:{target.__qualname__}"

    def deco(fn):
        _MODELS[key] = fn
        return fn
    return deco if model is None else deco(model)


def work_model_of(cls):
    """The work model of ``cls``: its own (or a base class's) ``_planned_work``, or a model registered
    for it or a base class (:func:`register_work_model`), the nearest in its method resolution order;
    None without one.

    Parameters
    ----------
    cls : type

    Returns
    -------
    callable or None
        ``model(estimator, n, d, nnz, sparse) -> WorkPlan``.
    """
    for c in cls.__mro__:
        fn = _MODELS.get(f"{c.__module__}:{c.__qualname__}")
        if fn is not None:
            return fn
        own = c.__dict__.get("_planned_work")
        if own is not None:
            return lambda est, n, d, nnz, sparse, _f=own: _f(est, n, d, nnz, sparse)
    return None


#: the defaults of the solvers a Gibbs chain may start from (dpcore.subspace.solvers.make_solver)
_SOLVER_DEFAULTS = {"kplane": dict(n_init=10, max_iter=100), "ssc": dict(max_iter=200), "lrr": dict(max_iter=1000)}


@register_work_model("dpcore.subspace.gibbs:GibbsSubspaceClustering")
def _gibbs(est, n, d, nnz, sparse):
    """The Gibbs sampler (declared here: its module is the engine's). Measured with the compiled engine:
    0.08 ms per chain-sweep at n = 1,000, d = 10, k = q = 3; the numpy engine draws each column with an
    eigendecomposition. Its ε·n is capped by the sampler itself (:data:`dpcore.subspace.gibbs.MAX_EPSILON_N`)."""
    w = Work(n, d, nnz, sparse)
    k, q = clusters_of(est, n, default=3), min(param_int(est, "subspace_dim", 3), max(d - 1, 1))
    T = param_int(est, "n_iter", 1000)
    C = param_int(est, "n_chains", 1)
    m = min(param_int(est, "n_average", 100), T) if est.release == "mean" else 1
    sweep = unit_cost("elem", 0.8 * n * k * d * q + 2 * n * k + 0.25 * n * d * (d + 1) / 2 + 5 * k * q * d * d) + 2e5
    kernels = getattr(sys.modules.get(type(est).__module__), "_kernels", None)
    numpy_engine = est.engine == "numpy" or est.column_sampler != "acg" or (
        est.engine == "auto" and not getattr(kernels, "AVAILABLE", True))
    if numpy_engine:
        sweep = 3 * sweep + k * q * (small_eig_cost(d) + unit_cost("loop", 100))
    w.add("Gibbs sweeps: n_chains × n_iter × (z-step n·k·d·q + U-step n·d²/2 + k·q column draws d²)",
          C * T * sweep + unit_cost("elem", 10 * C * T), "n_iter", "n_chains", "n_clusters")
    if est.init in _SOLVER_DEFAULTS:
        s = Work(n, d, n * d)
        if est.init == "kplane":
            add_kplane(s, n, d, k, q, **_SOLVER_DEFAULTS["kplane"])
        elif est.init == "ssc":
            add_ssc(s, n, d, k, q, **_SOLVER_DEFAULTS["ssc"])
        else:
            add_lrr(s, n, d, k, q, **_SOLVER_DEFAULTS["lrr"])
        w.extend(s.plan(est.init), f"the {est.init} start: ", C if est.init == "kplane" else 1, "init", inner=None)
    B = min(64, T)
    w.hold("Gibbs: packed outer products n·d(d+1)/2, traces 6·n_chains·n_iter, the averaged samples "
           "n_average·n_chains·k·d·q and a block of 64 sweeps' samples",
           n * d * (d + 1) / 2 * _F64 + 6 * C * T * _F64 + m * C * k * d * q * _F64 + B * C * (k * d * q + n) * _F64,
           "n_iter", "n_average", "n_chains")
    return w.plan(type(est).__name__)


# ----------------------------------------------------------------------------- checking
def planned_work(estimator, X):
    """The :class:`WorkPlan` of ``estimator.fit(X)``, from its parameters and the shape of ``X``
    (and its stored entries when sparse) only; None when ``X`` has no valid 2-D shape, the
    estimator has no work model, or a parameter is invalid (the fit then refuses it in its own
    words).

    Parameters
    ----------
    estimator : estimator
    X : array_like, sparse matrix, DataFrame or tuple (n, d)

    Returns
    -------
    WorkPlan or None
    """
    size = input_size(X)
    model = work_model_of(type(estimator))
    if size is None or model is None:
        return None
    n, d, nnz, sparse = size
    try:
        return model(estimator, n, d, nnz, sparse)
    except (ValueError, TypeError, ArithmeticError, AttributeError, KeyError):
        return None


def _with(estimator, name, value):
    est = copy.copy(estimator)
    setattr(est, name, value)
    return est


def _fits(estimator, X):
    plan = planned_work(estimator, X)
    return plan is not None and plan.within_caps


def _largest_int(estimator, name, X, low):
    """The largest integer value of ``name`` in [low, current) whose plan is within the caps, or None."""
    try:
        cur = check_int(getattr(estimator, name), name, low)
    except (ValueError, TypeError, AttributeError):
        return None
    if cur <= low or not _fits(_with(estimator, name, low), X):
        return None
    lo, hi = low, cur                       # lo fits, hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _fits(_with(estimator, name, mid), X):
            lo = mid
        else:
            hi = mid
    return lo


def _largest_n(estimator, size):
    n, d, nnz, sparse = size
    if n <= 1 or not _fits(estimator, (1, d)):
        return None
    lo, hi = 1, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _fits(estimator, (mid, d)) if not sparse else _fits_sparse(estimator, mid, d, nnz * mid / n):
            lo = mid
        else:
            hi = mid
    return lo


def _fits_sparse(estimator, n, d, nnz):
    model = work_model_of(type(estimator))
    try:
        return model(estimator, n, d, int(nnz), True).within_caps
    except (ValueError, TypeError, ArithmeticError, AttributeError, KeyError):
        return False


_LOW = {"refine_iter": 0, "n_iter": 1}


def _hints(estimator, X, levers):
    out = []
    for name in levers:
        if not hasattr(estimator, name):
            continue
        best = _largest_int(estimator, name, X, _LOW.get(name, 1))
        if best is not None:
            out.append(f"{name} at most {best:,}")
    return out


def refusal(estimator, X, plan=None):
    """Why ``estimator.fit(X)`` is refused (its plan past a cap), in words, or None.

    Parameters
    ----------
    estimator : estimator
    X : array_like, sparse matrix, DataFrame or tuple (n, d)
    plan : WorkPlan, optional
        Its plan (computed when not given).

    Returns
    -------
    str or None
    """
    plan = planned_work(estimator, X) if plan is None else plan
    if plan is None or plan.within_caps:
        return None
    name = type(estimator).__name__
    where = f"{name} on {plan.n:,} rows × {plan.d:,} columns" + (
        f" ({plan.nnz:,} stored entries)" if plan.nnz != plan.n * plan.d else "")
    if plan.work > MAX_WORK:
        top = plan.largest
        levers = top.levers
        head = (f"{where} would take too long: its work is estimated at {plan.work:.2g} units (about "
                f"{_duration(plan.seconds)} of one core), above the cap of {MAX_WORK:.0e} (about "
                f"{_duration(MAX_WORK * 1e-9)}); the largest part is {top.what} ({top.units:.2g})")
    else:
        levers = plan.memory_levers
        head = (f"{where} would need too much memory: about {plan.memory / 2 ** 30:.3g} GiB for "
                f"{plan.memory_what}, above the cap of {MAX_MEMORY / 2 ** 30:g} GiB")
    if plan.work > MAX_WORK and plan.memory > MAX_MEMORY:
        head += (f"; it would also need about {plan.memory / 2 ** 30:.3g} GiB of memory for {plan.memory_what} "
                 f"(cap {MAX_MEMORY / 2 ** 30:g} GiB)")
    fixes = _hints(estimator, X, levers)
    size = input_size(X)
    rows = _largest_n(estimator, size) if size is not None else None
    if rows is not None and rows < plan.n:
        fixes.append(f"at most {rows:,} rows")
    named = ", ".join(dict.fromkeys(levers))
    lower = f"Lower {named}, or use fewer rows" if named else "Use fewer rows"
    advice = (f". {lower}: with the other settings unchanged, " + ", or ".join(fixes) + " would fit" if fixes
              else f". {lower}")
    return head + advice + ". Nothing was run or spent"


def _duration(seconds):
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    if seconds < 2 * 365 * 86400:
        return f"{seconds / 86400:.0f} days"
    return f"{seconds / (365 * 86400):.2g} years"


class WorkCapError(ValueError):
    """A fit refused by :func:`check_work`: its estimated work or memory is past a cap. A
    ``ValueError`` (every refusal of dpcore is one), told apart so that a page can show it before
    its Run button is pressed.

    Attributes
    ----------
    plan : WorkPlan
        The refused plan.
    """

    def __init__(self, message, plan=None):
        super().__init__(message)
        self.plan = plan


def check_work(estimator, X):
    """Refuse ``estimator.fit(X)`` when its plan (:func:`planned_work`) is past :data:`MAX_WORK` or
    :data:`MAX_MEMORY`, before any value of ``X`` is read.

    Parameters
    ----------
    estimator : estimator
    X : array_like, sparse matrix, DataFrame or tuple (n, d)

    Returns
    -------
    WorkPlan or None
        The plan (None when there is none: see :func:`planned_work`).

    Raises
    ------
    WorkCapError
        A ``ValueError`` naming the part of the run past its cap, its parameters, the estimate, the
        cap and the largest values that would fit.
    """
    plan = planned_work(estimator, X)
    why = refusal(estimator, X, plan)
    if why:
        raise WorkCapError(why, plan)
    return plan


# ----------------------------------------------------------------------------- the fit wrapper
_IN_CHECKED_FIT = contextvars.ContextVar("dpcore_in_checked_fit", default=False)


@contextmanager
def inside_checked_fit():
    """Mark the code inside as part of a fit whose work was checked: fits inside it are not checked
    again (their work is part of the outer estimate)."""
    token = _IN_CHECKED_FIT.set(True)
    try:
        yield
    finally:
        _IN_CHECKED_FIT.reset(token)


def is_inside_checked_fit():
    """Whether the caller runs inside a fit whose work was checked.

    Returns
    -------
    bool
    """
    return _IN_CHECKED_FIT.get()


def bounded_fit(fit):
    """``fit`` refused past the caps (:func:`check_work`) before it runs (see :class:`BoundedWorkMixin`).

    Parameters
    ----------
    fit : callable
        An estimator's ``fit(self, X, ...)``.

    Returns
    -------
    callable
    """
    @functools.wraps(fit)
    def checked_fit(self, *args, **kwargs):
        if _IN_CHECKED_FIT.get():
            return fit(self, *args, **kwargs)
        check_work(self, args[0] if args else kwargs.get("X"))
        with inside_checked_fit():
            return fit(self, *args, **kwargs)

    checked_fit._dpcore_bounded = True
    return checked_fit


class BoundedWorkMixin:
    """Work bounded before a fit starts: every subclass's own ``fit`` is wrapped once (same
    signature and docstring) to refuse, with a ``ValueError`` and before any value of X is read,
    a fit whose estimated work or memory (:meth:`planned_work`) is past :data:`MAX_WORK` or
    :data:`MAX_MEMORY`. Private estimators get the same check from
    :class:`~dpcore.privacy.accounting.PrivateEstimatorMixin`'s wrapper. It adds no parameter.
    """

    def __init_subclass__(cls, **kwargs):
        fit = cls.__dict__.get("fit")
        if fit is not None and not (getattr(fit, "_dpcore_bounded", False) or getattr(fit, "_dpcore_accounted", False)):
            cls.fit = bounded_fit(fit)
        super().__init_subclass__(**kwargs)

    def planned_work(self, X):
        """What a fit on ``X`` would cost, known before any value of ``X`` is read: the estimated
        compute (work units, about a nanosecond of one core each) and peak memory, from the
        parameters and the shape of ``X`` (and the stored entries of a sparse matrix).

        Parameters
        ----------
        X : array_like, sparse matrix, DataFrame or tuple (n, d)

        Returns
        -------
        WorkPlan or None
            None without a valid shape or a work model, or with an invalid parameter.
        """
        return planned_work(self, X)
