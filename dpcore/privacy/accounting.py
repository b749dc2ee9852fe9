"""Privacy accounting: composition theorems, the privacy ledger, Gaussian-DP budgets and the
mixin every private estimator of :mod:`dpcore` exposes.

The mechanisms themselves (every noise draw) are in :mod:`dpcore.privacy.mechanisms`.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, fields

import numpy as np

from ..exceptions import _CURRENT_LEAKS
from ..validation import check_delta, check_epsilon, check_int, check_real
from ..work import BoundedWorkMixin, check_work, inside_checked_fit
from .accountant import _IN_FIT, PrivacyEvent, active_accountants
from .exact import gaussian_release
from .mechanisms import gaussian_sigma

__all__ = [
    "basic_composition", "advanced_composition", "advanced_composition_inverse", "GaussianBudget",
    "Release", "PrivacyLedger", "PrivateEstimatorMixin", "PrivacyPlan", "public_shape",
]


# --------------------------------------------------------------------------- composition
def basic_composition(epsilons, deltas=None):
    """Sequential composition: (Σ εᵢ, Σ δᵢ), each sum correctly rounded (``math.fsum``),
    so a total does not depend on the order of the releases and a split that ends with
    "the rest of ε" adds up to exactly ε.

    Parameters
    ----------
    epsilons : float or array_like of float
        The ε of every release.
    deltas : float or array_like of float, optional
        The δ of every release (0 when omitted).

    Returns
    -------
    (float, float)
        Total (ε, δ).
    """
    eps = math.fsum(float(e) for e in np.ravel(epsilons))
    dlt = 0.0 if deltas is None else math.fsum(float(d) for d in np.ravel(deltas))
    return eps, dlt


def advanced_composition(epsilon, delta, k, delta_slack=None):
    """Advanced composition of k (ε, δ)-DP mechanisms (Dwork, Rothblum & Vadhan 2010).

    ε' = √(2k ln(1/δ̃))·ε + k·ε(e^ε − 1),  δ' = k·δ + δ̃.

    With the default ``delta_slack=None`` the slack δ̃ equals δ, which is exactly Prop. E.2
    of the subspace clustering paper: δ' = (k + 1)·δ.

    Parameters
    ----------
    epsilon : float > 0
        ε of each mechanism.
    delta : float in (0, 1)
        δ of each mechanism.
    k : int >= 1
        Number of mechanisms composed.
    delta_slack : float in (0, 1), optional
        The slack δ̃ (default: ``delta``).

    Returns
    -------
    (float, float)
        Total (ε', δ').
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_int(k, "k", 1)
    slack = delta if delta_slack is None else check_delta(delta_slack, "delta_slack")
    eps_total = math.sqrt(2.0 * k * math.log(1.0 / slack)) * epsilon + k * epsilon * math.expm1(epsilon)
    return eps_total, k * delta + slack


def advanced_composition_inverse(total_epsilon, total_delta, k):
    """Per-query (ε, δ) whose k-fold advanced composition (Prop. E.2, slack = δ) is exactly
    (total_epsilon, total_delta): δ = δ'/(k+1) and ε solves the monotone equation by Brent's
    method. The root is bracketed by hi = min(ε′, ln(1 + ε′) + 1): composing k ≥ 1 queries of
    ε costs more than ε, and at ε = ln(1 + ε′) + 1 ≥ 1 the term k·ε(e^ε − 1) alone is at
    least e(1 + ε′) − 1 > ε′ — so e^ε never overflows, even for ε′ = 1e6.

    Parameters
    ----------
    total_epsilon : float > 0
    total_delta : float in (0, 1)
    k : int >= 1
        Number of queries.

    Returns
    -------
    (float, float)
        Per-query (ε, δ).
    """
    from scipy import optimize
    total_epsilon = check_epsilon(total_epsilon, "total_epsilon")
    total_delta = check_delta(total_delta, "total_delta")
    k = check_int(k, "k", 1)
    delta = total_delta / (k + 1)

    def f(eps):
        return advanced_composition(eps, delta, k)[0] - total_epsilon

    hi = min(total_epsilon, math.log1p(total_epsilon) + 1.0)
    eps = optimize.brentq(f, 1e-300, hi, xtol=1e-300, rtol=1e-14, maxiter=1000)
    return eps, delta


# --------------------------------------------------------------------------- Gaussian-DP budgets
class GaussianBudget:
    """An (ε, δ) budget shared by ``n_releases`` adaptive Gaussian releases, composed exactly
    with Gaussian differential privacy (Dong, Roth & Su 2019).

    A Gaussian release of L2 sensitivity Δ and noise σ is (Δ/σ)-GDP; T adaptive releases of
    μ₀-GDP each are √T·μ₀-GDP, and μ-GDP is (ε, δ)-DP exactly on the analytic Gaussian curve
    of :func:`~dpcore.privacy.mechanisms.gaussian_sigma_analytic`. So each release uses the σ
    of one analytic Gaussian mechanism of sensitivity Δ·√n_releases at the budget's (ε, δ).

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)
    n_releases : int >= 1
        Number of releases the budget covers.
    """

    def __init__(self, epsilon, delta, n_releases):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.n_releases = check_int(n_releases, "n_releases", 1)
        self.used = 0

    def sigma(self, sensitivity):
        """Noise standard deviation of one release of L2 sensitivity ``sensitivity``.

        Parameters
        ----------
        sensitivity : float > 0
            L2 sensitivity Δ of one release.

        Returns
        -------
        float
            The analytic Gaussian σ for sensitivity Δ·√n_releases at the budget's (ε, δ).

        Raises
        ------
        ValueError
            If ``sensitivity`` is not a finite positive number.
        """
        return gaussian_sigma(sensitivity * math.sqrt(self.n_releases), self.epsilon, self.delta)

    def release(self, value, sensitivity, rng):
        """One release: ``value`` plus the Gaussian noise :meth:`sigma` (calibrated for Δ·√n_releases),
        exactly on a public grid (:func:`~dpcore.privacy.exact.gaussian_release`, the rounding paid
        at this release's own Δ).

        Raises ``ValueError`` once all ``n_releases`` releases are used.

        Parameters
        ----------
        value : array_like
            The exact answer.
        sensitivity : float > 0
            L2 sensitivity Δ of this release.
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray of float64
            ``value`` plus the noise.

        Raises
        ------
        ValueError
            If the budget's releases are all used or ``sensitivity`` is not positive.
        """
        if self.used >= self.n_releases:
            raise ValueError(f"this Gaussian budget covers {self.n_releases} release(s); all are used")
        self.used += 1
        # σ for Δ·√n, released with the rounding paid at this release's own Δ (σ_int/Δ_int ≥ σ/Δ)
        return gaussian_release(value, self.sigma(sensitivity), sensitivity, rng)

    def events(self, relation=None):
        """The budget's releases as typed events: ``n_releases`` Gaussian releases of noise
        multiplier σ/Δ = :meth:`sigma` (1) (σ is linear in Δ), stated (ε, δ) the budget's.

        Parameters
        ----------
        relation : str, optional
            The neighbouring relation the sensitivities are stated for (a key of
            :data:`dpcore.privacy.accountant.RELATIONS`); None: the run's.

        Returns
        -------
        list of PrivacyEvent
            One event of count ``n_releases``.
        """
        return [PrivacyEvent.gaussian(self.sigma(1.0), count=self.n_releases, relation=relation,
                                      stated=(self.epsilon, self.delta))]


# --------------------------------------------------------------------------- ledger
@dataclass
class Release:
    """One private release: what was released, by which mechanism, at what price.

    Attributes
    ----------
    what : str
        What was released.
    mechanism : str
        The mechanism (or composition) used.
    epsilon : float
    delta : float, default 0.0
    note : str, default ""
        E.g. which theorem gives the (ε, δ) of a composed release.
    events : tuple of PrivacyEvent, default ()
        The release described exactly (see :mod:`dpcore.privacy.accountant`); empty: one
        (ε, δ) release.
    """
    what: str
    mechanism: str
    epsilon: float
    delta: float = 0.0
    note: str = ""
    events: tuple = ()

    def as_dict(self):
        """The release as a dict of its fields (without ``events``).

        Returns
        -------
        dict
        """
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "events"}

    def privacy_events(self):
        """``events``, or one approx_dp event of (ε, δ) when there are none.

        Returns
        -------
        list of PrivacyEvent
        """
        return list(self.events) or [PrivacyEvent.approx_dp(self.epsilon, self.delta)]


@dataclass
class PrivacyLedger:
    """Record of every private release, totalled by sequential (basic) composition.

    A release that is itself a composition (e.g. the kT SuLQ queries composed by Prop. E.2,
    or disjoint rows answered in parallel) is recorded as one entry whose ``note`` says which
    theorem gives its (ε, δ). With a ``budget_epsilon``/``budget_delta`` a release that would
    exceed the budget raises ``ValueError`` and is not recorded.

    Attributes
    ----------
    budget_epsilon : float or None, default None
        ε budget (None: no limit).
    budget_delta : float or None, default None
        δ budget (None: no limit).
    entries : list of Release
        The recorded releases, in order.
    """
    budget_epsilon: float | None = None
    budget_delta: float | None = None
    entries: list = field(default_factory=list)

    def record(self, what, mechanism, epsilon, delta=0.0, note="", *, events=None):
        """Record one release, after checking it fits the budget.

        Parameters
        ----------
        what : str
        mechanism : str
        epsilon : float ≥ 0
        delta : float in [0, 1], default 0.0
        note : str, default ""
            See :class:`Release`.
        events : list of PrivacyEvent, optional
            The release described exactly (their stated (ε, δ) add up to ``epsilon``,
            ``delta``); None: one (ε, δ) release.

        Returns
        -------
        Release
            The recorded entry.

        Raises
        ------
        ValueError
            If ``epsilon`` or ``delta`` is out of range, ``events`` add up (basic composition) to
            more than (``epsilon``, ``delta``), or the release would exceed the budget (by more
            than a relative 1e-9); nothing is recorded then.
        """
        epsilon = check_real(epsilon, "epsilon", 0.0, None)
        delta = check_real(delta, "delta", 0.0, 1.0)
        events = tuple(events or ())
        if not all(isinstance(e, PrivacyEvent) for e in events):
            raise ValueError("events must be PrivacyEvent instances (dpcore.privacy.PrivacyEvent)")
        if events:      # the entry's (ε, δ) is what the ledger adds up: it must cover its releases
            pairs = [e.basic() for e in events]
            ev_eps, ev_dlt = math.fsum(p[0] for p in pairs), min(1.0, math.fsum(p[1] for p in pairs))
            if ev_eps > epsilon * (1 + 1e-9) + 1e-300 or ev_dlt > delta * (1 + 1e-9) + 1e-300:
                raise ValueError(f"{what}: the entry states (epsilon {epsilon:.6g}, delta {delta:.3g}) but its releases "
                                 f"add up to (epsilon {ev_eps:.6g}, delta {ev_dlt:.3g}); an entry must not understate "
                                 "what it released")
        eps_total, delta_total = self.total()
        tol = 1e-9
        if self.budget_epsilon is not None and eps_total + epsilon > self.budget_epsilon * (1 + tol):
            raise ValueError(f"epsilon budget exceeded: {eps_total:g} spent + {epsilon:g} asked > budget {self.budget_epsilon:g}")
        if self.budget_delta is not None and delta_total + delta > self.budget_delta * (1 + tol) + 1e-300:
            raise ValueError(f"delta budget exceeded: {delta_total:g} spent + {delta:g} asked > budget {self.budget_delta:g}")
        entry = Release(what, mechanism, epsilon, delta, note, events)
        self.entries.append(entry)
        return entry

    def rest_of(self, epsilon):
        """The ε a last release may take so that the total is ``epsilon``: ε minus what was
        spent, moved by units in the last place so that the (correctly rounded) total is
        exactly ``epsilon``, or, in the rare case where rounding makes that impossible (a
        tie), the largest value whose total stays below it: never more than the budget.

        Parameters
        ----------
        epsilon : float
            The total ε to reach.

        Returns
        -------
        float
        """
        spent = [e.epsilon for e in self.entries]
        total = lambda r: math.fsum(spent + [r])
        rest = epsilon - math.fsum(spent)
        for _ in range(64):                                   # down until the budget holds
            if total(rest) <= epsilon:
                break
            rest = math.nextafter(rest, -math.inf)
        for _ in range(64):                                   # up while it still holds
            up = math.nextafter(rest, math.inf)
            if total(up) > epsilon:
                break
            rest = up
        return rest

    def extend(self, other: "PrivacyLedger", prefix: str = ""):
        """Record every entry of ``other``, in order, each checked against this ledger's budget.

        Parameters
        ----------
        other : PrivacyLedger
        prefix : str, default ""
            Prepended to each entry's ``what``.

        Raises
        ------
        ValueError
            If an entry would exceed the budget (the entries before it stay recorded).
        """
        for e in other.entries:
            self.record(prefix + e.what, e.mechanism, e.epsilon, e.delta, e.note, events=e.events)

    def events(self):
        """Every release as typed events (:meth:`Release.privacy_events`), in order.

        Returns
        -------
        list of PrivacyEvent
        """
        return [ev for e in self.entries for ev in e.privacy_events()]

    def total(self):
        """(ε, δ) spent so far by sequential composition of the entries.

        Returns
        -------
        epsilon, delta : float
        """
        return basic_composition([e.epsilon for e in self.entries], [e.delta for e in self.entries])

    @property
    def epsilon(self):
        """ε spent so far (``total()[0]``)."""
        return self.total()[0]

    @property
    def delta(self):
        """δ spent so far (``total()[1]``)."""
        return self.total()[1]

    def as_records(self):
        """A list of dicts (one per release), e.g. for ``pandas.DataFrame``.

        Returns
        -------
        list of dict
        """
        return [e.as_dict() for e in self.entries]

    def __len__(self):
        return len(self.entries)


# --------------------------------------------------------------------------- plans
def public_shape(X):
    """(n, d) of ``X`` (an array, a sparse matrix, a DataFrame, nested lists or a shape tuple),
    read without looking at any value: what a plan may depend on.

    Parameters
    ----------
    X : array_like, sparse matrix or tuple of two ints

    Returns
    -------
    (int, int)

    Raises
    ------
    ValueError
        If ``X`` is not two-dimensional, or has no rows or no features.
    """
    if isinstance(X, tuple) and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in X):
        shape = X
    else:
        shape = getattr(X, "shape", None)
        if shape is None:
            shape = np.shape(X)
    shape = tuple(int(v) for v in shape)
    if len(shape) != 2:
        raise ValueError(f"X must be a 2-D array (rows are records); got {len(shape)} dimension(s)")
    n, d = shape
    if n < 1:
        raise ValueError(f"X has no rows: 0 sample(s) (shape=({n}, {d})) while a minimum of 1 is required; there is "
                         "nothing to cluster, and nothing was spent")
    if d < 1:
        raise ValueError(f"X has no features: 0 feature(s) (shape=({n}, {d})) while a minimum of 1 is required; "
                         "there is nothing to cluster, and nothing was spent")
    return n, d


@dataclass(frozen=True)
class PrivacyPlan:
    """What a fit would spend, known before it reads any value of the data
    (:meth:`PrivateEstimatorMixin.planned_privacy`).

    Attributes
    ----------
    epsilon, delta : float
        What the ledger will record (basic composition of the releases).
    relation : str
        The neighbouring relation they are stated for.
    events : tuple of PrivacyEvent
        The releases, each with ``relation``.
    private : bool
        Whether the fit, as configured, releases anything private (False: a non-private
        start or selection, a radius read off the data, float noise; see ``reasons``).
    reasons : tuple of str
        Why it would not (empty when ``private``).
    """
    epsilon: float
    delta: float
    relation: str
    events: tuple = ()
    private: bool = True
    reasons: tuple = ()

    @property
    def reason(self):
        """The reasons in one sentence ("" when private)."""
        return "; ".join(self.reasons)


class PrivateEstimatorMixin(BoundedWorkMixin):
    """What every private estimator of dpcore exposes after ``fit``.

    Put it before scikit-learn's mixins and ``BaseEstimator`` (after dpcore's own method mixins
    such as :class:`~dpcore.kmeans.common.CentresPredictMixin`, which add ``predict`` and ``score``):
    ``class X(PrivateEstimatorMixin, ClusterMixin, BaseEstimator)``. It adds no parameter
    and sets nothing in ``__init__``, so ``get_params``, ``set_params`` and ``clone`` are
    those of ``BaseEstimator``.

    Subclasses set in ``fit``:

    - ``ledger_``: the :class:`PrivacyLedger` of the run;
    - ``private_outputs_``: names of fitted attributes that are differentially private;
    - ``nonprivate_outputs_``: dict name -> why it is *not* private (e.g. labels computed by
      assigning the raw points to released subspaces).

    Read off the ledger (the one spelling for every private estimator): ``epsilon_spent_``
    and ``delta_spent_`` (the totals), so no estimator keeps its own ``delta_``. How a
    budget was split between stages, where an estimator reports it, is ``budget_split_``.

    ``claimed_relation`` (class attribute, default "replace_one") is the neighbouring relation
    the estimator's ε is stated for (a key of :data:`dpcore.privacy.accountant.RELATIONS`).
    Every subclass's own ``fit`` is wrapped once (same signature and docstring): it refuses an
    input with no rows or no features before anything else, then a fit whose estimated work or
    memory is past its cap (:func:`dpcore.work.check_work`, from the parameters and the shape of X:
    :meth:`planned_work`), and while a
    :class:`~dpcore.privacy.accountant.PrivacyAccountant` is active (``with acc:``) it first
    calls ``acc.check`` with the plan (:meth:`planned_privacy`: what the fit will spend, from
    the parameters and the shape of X), raising before anything is read or released, and after
    a successful fit records the fit (``acc.record(self)``). A fit that calls another
    estimator's fit inside is recorded once.

    Before a fit, :meth:`planned_privacy` says what it would spend and whether it would
    release anything private; :meth:`public_constants` lists the run's public settings.

    Model selection: every fit is a release, so ``GridSearchCV(est, grid, cv=c).fit(X)`` inside
    ``with acc:`` records c fits per grid point plus the refit, and refuses the first fit over
    the budget. ``score`` and ``predict`` read the data without noise and are not recorded: a
    hyper-parameter chosen by them is not private. Fits run in other processes (``n_jobs`` > 1)
    or threads do not see a ``with acc:`` block of this thread (the process-wide default
    accountant covers other threads, not other processes): they are not recorded.
    """

    #: the neighbouring relation the estimator's ε is stated for
    claimed_relation = "replace_one"

    def __init_subclass__(cls, **kwargs):
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "_dpcore_accounted", False):
            cls.fit = _accounted_fit(fit)
        super().__init_subclass__(**kwargs)

    def planned_privacy(self, X=None):
        """What a fit on ``X`` would spend, known before any value of ``X`` is read.

        Read from the parameters and the public shape of ``X`` only (n rows, d features):
        the (ε, δ) the ledger will record, the neighbouring relation it is stated for, the
        releases as typed events and whether the fit, as configured, releases anything
        private (e.g. not from a non-private start, nor with a radius read off the data).
        A leak that only the values can reveal (input scaled by its own statistics) is
        found by the fit itself (``released_private_``).

        Parameters
        ----------
        X : array_like, sparse matrix or tuple (n, d), optional
            The data, or its shape; only the shape is read. Needed where δ defaults to a
            function of n (``delta=None``).

        Returns
        -------
        PrivacyPlan

        Raises
        ------
        ValueError
            If ``X`` has no rows or no features, or ε or δ is not valid (the message says
            which), before anything is read or spent.
        """
        shape = public_shape(X) if X is not None else None
        eps, dlt = self._planned_spend(shape)
        relation = self.claimed_relation
        events = tuple(self._planned_events(eps, dlt, relation, shape))
        reasons = tuple(self._plan_reasons())
        return PrivacyPlan(float(eps), float(dlt), relation, events, not reasons, reasons)

    def data_leaks(self, X):
        """Why a fit on these values would not be private although its parameters allow it: the
        checks the fit itself makes on the data's values (e.g. input scaled by its own
        statistics, :func:`dpcore.kmeans.common.data_scaling`), run before the fit so that a
        budget can refuse it. They read the values, as the fit would, and release nothing
        beyond what the fit's own warning says. None by default.

        Parameters
        ----------
        X : array_like or sparse matrix

        Returns
        -------
        list of str
        """
        return []

    def _planned_spend(self, shape):
        """(ε, δ) the ledger will record, for data of ``shape`` ((n, d) or None): ``epsilon`` and
        ``delta`` (0 when absent; ``delta=None`` is the estimator's ``_default_delta(n)`` where
        it has one). Estimators whose fit spends more than ``epsilon`` override it."""
        eps = getattr(self, "epsilon", 0.0)
        eps = 0.0 if eps is None else check_epsilon(eps)
        dlt = getattr(self, "delta", 0.0)
        if dlt is None and hasattr(self, "_default_delta"):
            if shape is None:
                raise ValueError(f"delta=None is a function of the number of rows: give "
                                 f"{type(self).__name__}.planned_privacy the data or its shape")
            dlt = self._default_delta(int(shape[0]))
        dlt = 0.0 if dlt is None else check_real(dlt, "delta", 0.0, 1.0)
        return float(eps), float(dlt)

    def _planned_events(self, epsilon, delta, relation, shape):
        """The planned releases as typed events: one (ε, δ) release by default."""
        return [PrivacyEvent.approx_dp(epsilon, delta, relation=relation)]

    def _plan_reasons(self):
        """Why a fit with these parameters would release nothing private (empty: it would). By
        default: a ``radius="data"`` parameter (the k-means family's radius Λ read off the data)."""
        if isinstance(getattr(self, "radius", None), str) and self.radius == "data":
            return ["the radius Λ is read off the data (radius='data'): nothing the run releases is private"]
        return []

    def public_constants(self):
        """The run's public settings and constants as (name, value, meaning) rows: what a page
        shows beside a run. From the parameters before ``fit``; after it, what the ledger
        spent and the fitted public constants (subclasses add theirs). Nothing here is
        computed from the data's values.

        Returns
        -------
        list of (str, object, str)
        """
        from .accountant import RELATIONS
        fitted = hasattr(self, "ledger_")
        eps = self.epsilon_spent_ if fitted else getattr(self, "epsilon", None)
        dlt = self.delta_spent_ if fitted else getattr(self, "delta", 0.0)
        rows = [("ε", eps, "total ε of the run" + (" (spent)" if fitted else " (planned)")),
                ("δ", "default" if dlt is None else dlt, "total δ of the run" + (" (spent)" if fitted else " (planned)")),
                ("relation", self.claimed_relation, RELATIONS.get(self.claimed_relation, ""))]
        return rows + list(self._public_constants())

    def _public_constants(self):
        """The estimator's own public constants, as (name, value, meaning) rows (none by default)."""
        return []

    @property
    def epsilon_spent_(self):
        """Total ε spent by the fit (from ``ledger_``)."""
        return self.ledger_.epsilon

    @property
    def delta_spent_(self):
        """Total δ spent by the fit (from ``ledger_``)."""
        return self.ledger_.delta

    @property
    def released_private_(self):
        """Whether the fit released anything private: some private output, and not marked
        not private as a whole (``is_private_`` False: a non-private start or selection).
        What a privacy meter may count; a radius read off the data empties
        ``private_outputs_``; a :class:`~dpcore.exceptions.PrivacyLeakWarning` during the fit
        (``privacy_leaks_``: e.g. input scaled by its own statistics) makes it False."""
        return (bool(list(self.private_outputs_)) and getattr(self, "is_private_", True) is not False
                and not getattr(self, "privacy_leaks_", ()))

    def privacy_report(self):
        """What the fit released and at what price.

        Returns
        -------
        dict
            "epsilon" and "delta" (the ledger's totals), "private" (names of the private
            fitted attributes), "not_private" (name -> why it is not private) and "releases"
            (:meth:`PrivacyLedger.as_records`).
        """
        eps, dlt = self.ledger_.total()
        return {
            "epsilon": eps,
            "delta": dlt,
            "private": list(self.private_outputs_),
            "not_private": dict(self.nonprivate_outputs_),
            "releases": self.ledger_.as_records(),
        }


def _accounted_fit(fit):
    """``fit`` checked against and recorded in the active accountant (see :class:`PrivateEstimatorMixin`)."""
    @functools.wraps(fit)
    def accounted_fit(self, *args, **kwargs):
        if _IN_FIT.get():
            return fit(self, *args, **kwargs)
        X = args[0] if args else kwargs.get("X")
        public_shape(X)                     # no rows or no features: refused before anything is spent
        check_work(self, X)                 # past the work or memory cap: refused before anything is read
        accs = active_accountants()
        if accs:
            plan = self.planned_privacy(X)  # a parameter the plan refuses is refused before anything is read
            for acc in accs:                # every enclosing budget, before anything is read
                acc.check(plan.epsilon, plan.delta, relation=plan.relation)
        token, leaks = _IN_FIT.set(True), _CURRENT_LEAKS.set([])
        try:
            with inside_checked_fit():      # fits inside (solvers, a start) are part of this estimate
                out = fit(self, *args, **kwargs)
            # a value read off the data without noise (a radius, a scaler's statistics) voids the guarantee
            self.privacy_leaks_ = list(_CURRENT_LEAKS.get())
        finally:
            _IN_FIT.reset(token)
            _CURRENT_LEAKS.reset(leaks)
        for acc in accs:
            acc.record(self)
        return out

    accounted_fit._dpcore_accounted = True
    return accounted_fit
