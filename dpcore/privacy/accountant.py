"""One privacy accountant: typed release events, neighbouring relations, basic and tight totals,
and a budget that refuses a fit before it releases anything.

- :class:`PrivacyEvent` describes one or more identical releases exactly (a Gaussian or Laplace
  release by its noise multiplier, a discrete Laplace release by its scale and integer
  sensitivity, the exponential mechanism by its ε, or, as the generic fallback, an (ε, δ)
  release) together with the neighbouring relation it is stated for. A ``stated`` (ε, δ) must
  follow from the noise (:meth:`PrivacyEvent.check_stated`, against the exact Gaussian profile
  :func:`gaussian_delta` or the pure ε): an understatement is refused when the event is built.
- :data:`RELATIONS` are the relations a claim can be stated for, and :func:`convert_event`
  moves an event from its relation to another by group privacy (or refuses where no conversion
  holds); :func:`weakest_common_relation` is the relation a set of runs can be added up in.
- :class:`PrivacyAccountant` records fitted estimators, ledgers or events and reports the
  basic total (sequential composition of what each release states), a tight total through
  Google's ``dp-accounting`` (privacy-loss distributions, a pessimistic upper bound) and an RDP
  total (:meth:`PrivacyAccountant.rdp_total`, :mod:`dpcore.privacy.rdp`). With a
  budget, :meth:`PrivacyAccountant.check` refuses a planned spend; used as a context manager
  (``with acc:``) it makes every private estimator's ``fit`` check first and record after.

Relation conversions (group privacy, Dwork & Roth 2014, Thm 2.2 and its (ε, δ) form):

============  ============  ==========================================================
from          to            how
============  ============  ==========================================================
add_remove    replace_one   ×2: a replaced record is one removal and one addition; an additive
                            mechanism's sensitivity doubles, (ε, δ) → (2ε, (1 + e^ε)δ)
replace_one   cell_pm1      ×1: one cell ±1 changes one document (row), n fixed
add_remove    cell_pm1      ×2, as add_remove → replace_one
cell_pm1      any other     refused: one record can change many cells
replace_one   add_remove    refused: n is public under replace-one
============  ============  ==========================================================
"""
from __future__ import annotations

import contextvars
import functools
import math
from dataclasses import dataclass, replace
from fractions import Fraction
from numbers import Integral, Real

__all__ = ["RELATIONS", "RELATION_ORDER", "PrivacyEvent", "convert_event", "conversion_factor",
           "weakest_common_relation", "group_privacy", "PrivacyAccountant", "AccountedRun", "TightTotal", "RdpTotal",
           "active_accountant", "VALUE_DISCRETIZATION_INTERVAL", "STATED_RTOL", "gaussian_delta",
           "gaussian_epsilon"]

#: neighbouring relations a privacy claim can be stated for (key -> words); dpcore.lab.audit uses these
RELATIONS = {
    "replace_one": "replace-one (one record replaced; n public)",
    "add_remove": "add/remove-one (one record added or removed)",
    "cell_pm1": "one cell ±1 (count matrices)",
}
#: from the strongest protection to the weakest: a total is given in the first relation of this
#: order that every run converts to
RELATION_ORDER = ("add_remove", "replace_one", "cell_pm1")
#: (from, to) -> k: one neighbouring step of ``to`` is at most k steps of ``from``
_GROUP = {("add_remove", "add_remove"): 1, ("replace_one", "replace_one"): 1, ("cell_pm1", "cell_pm1"): 1,
          ("add_remove", "replace_one"): 2, ("replace_one", "cell_pm1"): 1, ("add_remove", "cell_pm1"): 2}
#: dp-accounting's value discretisation interval for the tight totals (its own default); larger
#: totals use a coarser grid (see :meth:`PrivacyAccountant.tight_total`)
VALUE_DISCRETIZATION_INTERVAL = 1e-4
#: the tight total's grid holds about this many points at most (a coarser grid above; see tight_total)
_MAX_PLD_POINTS = 2e5
#: releases of a larger per-release ε (or Gaussians of a larger total μ) are added by basic composition
#: in the tight total: their privacy-loss distribution does not fit a grid (e^ε overflows near 700)
_PLD_MAX_EPSILON = 50.0
_PLD_MAX_MU = 50.0

KINDS = ("gaussian", "laplace", "discrete_laplace", "exponential", "approx_dp", "joint")
#: set while :func:`convert_event` restates an event (its statement then holds by group privacy)
_CONVERTING = contextvars.ContextVar("dpcore_converting_event", default=False)


def _check_relation(relation, name="relation", allow_none=False):
    if relation is None and allow_none:
        return None
    if relation not in RELATIONS:
        raise ValueError(f"{name} must be one of {', '.join(RELATIONS)}; got {relation!r}")
    return relation


def conversion_factor(source, target):
    """The group size k of a conversion: one neighbouring step of ``target`` is at most k steps of
    ``source``.

    Parameters
    ----------
    source, target : str
        Keys of :data:`RELATIONS`.

    Returns
    -------
    int
        1 or 2.

    Raises
    ------
    ValueError
        If either is unknown, or no conversion holds (cell_pm1 to another relation,
        replace_one to add_remove); the message names both.
    """
    _check_relation(source, "source relation")
    _check_relation(target, "target relation")
    try:
        return _GROUP[(source, target)]
    except KeyError:
        raise ValueError(f"no conversion from {RELATIONS[source]} to {RELATIONS[target]}: a guarantee for "
                         f"'{source}' says nothing about '{target}' neighbours") from None


def group_privacy(epsilon, delta, k):
    """(ε, δ)-DP for one step is (kε, δ·Σ_{i<k} e^{iε})-DP for k steps (for k = 2: (2ε, (1 + e^ε)δ)).

    Parameters
    ----------
    epsilon, delta : float ≥ 0
    k : int ≥ 1

    Returns
    -------
    (float, float)
    """
    if k == 1:
        return float(epsilon), float(delta)
    factor = math.fsum(math.exp(i * epsilon) for i in range(k)) if delta else 0.0
    return k * float(epsilon), min(1.0, float(delta) * factor) if delta else 0.0


def weakest_common_relation(relations):
    """The relation every one of ``relations`` converts to, the strongest such (first of
    :data:`RELATION_ORDER`): e.g. {add_remove, replace_one} → replace_one, {replace_one,
    cell_pm1} → cell_pm1.

    Parameters
    ----------
    relations : iterable of str
        Keys of :data:`RELATIONS` (None entries are ignored).

    Returns
    -------
    str or None
        None for no relation at all.

    Raises
    ------
    ValueError
        If one is unknown or no relation is common to all.
    """
    rels = {_check_relation(r) for r in relations if r is not None}
    if not rels:
        return None
    for target in RELATION_ORDER:
        if all((r, target) in _GROUP for r in rels):
            return target
    raise ValueError(f"no neighbouring relation is common to {', '.join(sorted(rels))}")  # pragma: no cover


def _pair(value, name):
    if value is None:
        return None
    try:
        eps, dlt = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (epsilon, delta); got {value!r}") from None
    eps = _nonneg(eps, f"{name} epsilon")
    dlt = _nonneg(dlt, f"{name} delta", 1.0)
    return eps, dlt


def _nonneg(x, name, hi=None):
    if isinstance(x, bool) or not isinstance(x, Real) or not math.isfinite(float(x)) or x < 0 or \
            (hi is not None and x > hi):
        rng = f"[0, {hi:g}]" if hi is not None else ">= 0"
        raise ValueError(f"{name} must be a finite number in {rng}; got {x!r}")
    return float(x)


def _positive(x, name):
    if isinstance(x, bool) or not isinstance(x, Real) or not (0 < float(x) < math.inf):
        raise ValueError(f"{name} must be a finite number > 0; got {x!r}")
    return x


# --------------------------------------------------------------------------- what a statement must cover
#: relative tolerance of the statement check (:meth:`PrivacyEvent.check_stated`): a stated (ε, δ) may
#: be below what the noise gives by this much (floating-point rounding of the caller's calibration)
STATED_RTOL = 1e-9
_SQRT2 = math.sqrt(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _gaussian_log_delta(mu, epsilon):
    """log δ_μ(ε) of the analytic Gaussian curve, accurate to ~1e-10 relative wherever δ ≥ 1e-308.

    With x = ε/μ − μ/2 and Φ(−x) = ½·erfcx(x/√2)·e^(−x²/2), the identity ε − (x + μ)²/2 = −x²/2 gives
    δ = ½·e^(−x²/2)·(erfcx(x/√2) − erfcx((x + μ)/√2)): no e^ε (ε up to 1e3 and beyond), no
    difference of two tiny numbers. A difference of two close erfcx values (μ ≪ x) is taken by the
    midpoint rule (erfcx′(y) = 2y·erfcx(y) − 2/√π; relative error (μ/x)²/24). For x ≤ −5 (δ near 1)
    the direct form Φ(−x) − e^ε·Φ(−x − μ) has no cancellation to fear.
    """
    from scipy import special
    mu, epsilon = float(mu), float(epsilon)
    x = epsilon / mu - mu / 2.0
    if x > -5.0:
        ya, dy = x / _SQRT2, mu / _SQRT2
        if dy <= 1e-5 * max(1.0, abs(ya)):
            ym = ya + dy / 2.0
            diff = (_TWO_OVER_SQRT_PI - 2.0 * ym * float(special.erfcx(ym))) * dy
        else:
            diff = float(special.erfcx(ya)) - float(special.erfcx(ya + dy))
        if not diff > 0.0:           # x/μ beyond ~1e16: δ far below any double
            return -math.inf
        return -x * x / 2.0 - math.log(2.0) + math.log(diff)
    d = float(special.ndtr(-x)) - math.exp(epsilon + float(special.log_ndtr(-x - mu)))
    return math.log(d) if d > 0.0 else -math.inf


def gaussian_delta(mu, epsilon):
    """The exact privacy profile of a Gaussian mechanism: the smallest δ for which μ-GDP (a Gaussian
    of noise multiplier σ/Δ = 1/μ) is (ε, δ)-DP, δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)
    (Balle & Wang 2018, Thm 8; Dong, Roth & Su 2019).

    Computed without e^ε and without cancellation (see ``_gaussian_log_delta``): accurate to about
    1e-10 relative for every μ in [1e-4, 300] and every ε ≥ 0 whose δ is a normal double, ε ≥ 1e3
    included. n releases of multiplier z compose to μ = √n/z exactly.

    Parameters
    ----------
    mu : float > 0
    epsilon : float ≥ 0

    Returns
    -------
    float
        δ in [0, 1) (0 where it is below the smallest double).

    Raises
    ------
    ValueError
        If ``mu`` is not a finite number > 0 or ``epsilon`` not a finite number ≥ 0.
    """
    _positive(mu, "mu")
    _nonneg(epsilon, "epsilon")
    return math.exp(_gaussian_log_delta(mu, epsilon))


def gaussian_epsilon(mu, delta):
    """The smallest ε at which μ-GDP is (ε, δ)-DP: the root of :func:`gaussian_delta` (μ, ε) = δ
    (Brent's method on log δ, to 1e-13 relative).

    Parameters
    ----------
    mu : float > 0
    delta : float in [0, 1]

    Returns
    -------
    float
        0 when δ ≥ δ(0) = 2Φ(μ/2) − 1; inf when δ = 0 (no Gaussian is pure ε-DP).

    Raises
    ------
    ValueError
        If ``mu`` is not a finite number > 0 or ``delta`` not in [0, 1].
    """
    from scipy import optimize
    mu = float(_positive(mu, "mu"))
    delta = _nonneg(delta, "delta", 1.0)
    if delta == 0.0:
        return math.inf
    log_d = math.log(delta)
    if _gaussian_log_delta(mu, 0.0) <= log_d:
        return 0.0
    hi = mu * mu / 2.0 + mu * math.sqrt(2.0 * max(1.0, -log_d))
    while _gaussian_log_delta(mu, hi) > log_d:
        hi *= 2.0
    return optimize.brentq(lambda e: _gaussian_log_delta(mu, e) - log_d, 0.0, hi, xtol=1e-300, rtol=1e-13,
                           maxiter=500)


@functools.lru_cache(maxsize=4096)
def _understatement(kind, count, noise_multiplier, scale, sensitivity, epsilon, stated):
    """None if ``stated`` covers the noise of the event, else the refusal's message (see
    :meth:`PrivacyEvent.check_stated`)."""
    eps_s, dlt_s = stated
    what = f"{count} {kind.replace('_', ' ')} release(s)"
    if kind == "gaussian":
        z = float(noise_multiplier)
        mu = math.sqrt(count) / z
        log_d = _gaussian_log_delta(mu, eps_s)
        if dlt_s > 0.0 and log_d <= math.log(dlt_s) + math.log1p(STATED_RTOL):
            return None
        true_eps = gaussian_epsilon(mu, dlt_s)
        return (f"the stated (epsilon, delta) = ({eps_s:.10g}, {dlt_s:.10g}) understates {what} of noise multiplier "
                f"{z:.10g} (one Gaussian of mu = sqrt({count})/{z:.10g} = {mu:.10g}): at epsilon = {eps_s:.10g} they "
                f"give delta = {math.exp(log_d):.10g}, and at delta = {dlt_s:.10g} epsilon = {true_eps:.10g}"
                + (" (no Gaussian is pure epsilon-DP)" if dlt_s == 0.0 else ""))
    if kind == "discrete_laplace":
        need = Fraction(count * int(sensitivity)) / Fraction(scale)
        if need <= Fraction(eps_s) * (1 + Fraction(STATED_RTOL)):
            return None
        detail = f"scale {float(Fraction(scale)):.6g}, sensitivity {sensitivity}"
    else:
        need = count / float(noise_multiplier) if kind == "laplace" else count * float(epsilon)
        if need <= eps_s * (1.0 + STATED_RTOL):
            return None
        detail = f"noise multiplier {float(noise_multiplier):.6g}" if kind == "laplace" else \
            f"epsilon {float(epsilon):.6g} each"
    return (f"the stated (epsilon, delta) = ({eps_s:.10g}, {dlt_s:.10g}) understates {what} ({detail}): they "
            f"are epsilon = {float(need):.10g}-DP (pure), and the statement of a pure event must cover its pure "
            f"epsilon (whatever its delta)")


@dataclass(frozen=True)
class PrivacyEvent:
    """One or more (``count``) identical releases, described exactly.

    Build it with a constructor: :meth:`gaussian`, :meth:`laplace`, :meth:`discrete_laplace`,
    :meth:`exponential`, :meth:`approx_dp` or :meth:`joint`.

    Attributes
    ----------
    kind : str
        One of "gaussian", "laplace", "discrete_laplace", "exponential", "approx_dp", "joint".
    count : int
        Number of identical releases (adaptive composition of all of them).
    relation : str or None
        The neighbouring relation the parameters are stated for (a key of :data:`RELATIONS`);
        None: the relation of the run it is recorded with.
    noise_multiplier : float or None
        Gaussian: σ/Δ₂; Laplace: b/Δ₁ (per release).
    scale : Fraction, float or None
        Discrete Laplace: t/s, P(z) ∝ e^(−|z|/scale) on the integers.
    sensitivity : int
        Discrete Laplace: integer L1 sensitivity of the query (1 otherwise).
    epsilon, delta : float
        Exponential (ε, pure) and approx_dp ((ε, δ)) per release; 0 for the others.
    stated : (float, float) or None
        The (ε, δ) the caller states for the noise of all ``count`` releases together (what basic
        composition adds; e.g. a :class:`~dpcore.privacy.accounting.GaussianBudget`'s); None:
        computed from the parameters (a Gaussian event needs it). It does not include
        ``slack``: :meth:`basic` adds count × slack to it. For the gaussian, laplace,
        discrete_laplace and exponential kinds it is checked at construction
        (:meth:`check_stated`): a statement the noise does not support is refused.
    slack : (float, float)
        Extra (ε, δ) per release that an exact sampler's analysis adds (default (0, 0)): added
        to the basic total and composed as one more (ε, δ)-DP release per release.
    parts : tuple of PrivacyEvent
        Joint: the noise events one release is made of (e.g. Laplace counts and Gaussian sums
        calibrated together by privacy-loss distributions): the tight and RDP totals compose
        the parts; ``epsilon`` / ``delta`` are the (ε, δ) the parts give together, which basic
        composition adds and which is checked against the parts at construction.

    Raises
    ------
    ValueError
        On construction, if a parameter is out of range or ``stated`` understates the noise.
    """

    kind: str
    count: int = 1
    relation: str | None = None
    noise_multiplier: float | None = None
    scale: Fraction | float | None = None
    sensitivity: int = 1
    epsilon: float = 0.0
    delta: float = 0.0
    stated: tuple | None = None
    slack: tuple = (0.0, 0.0)
    parts: tuple = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {self.kind!r}")
        if isinstance(self.count, bool) or not isinstance(self.count, Integral) or self.count < 1:
            raise ValueError(f"count must be an integer >= 1; got {self.count!r}")
        _check_relation(self.relation, allow_none=True)
        if self.kind in ("gaussian", "laplace"):
            _positive(self.noise_multiplier, "noise_multiplier")
        if self.kind == "discrete_laplace":
            _positive(self.scale, "scale")
            if isinstance(self.sensitivity, bool) or not isinstance(self.sensitivity, Integral) or self.sensitivity < 1:
                raise ValueError(f"sensitivity must be an integer >= 1; got {self.sensitivity!r}")
        if self.kind == "exponential":
            _positive(self.epsilon, "epsilon")
        if self.kind in ("approx_dp", "joint"):
            _nonneg(self.epsilon, "epsilon")
            _nonneg(self.delta, "delta", 1.0)
        object.__setattr__(self, "parts", tuple(self.parts))
        if self.kind == "joint":
            if not self.parts or not all(isinstance(p, PrivacyEvent) and p.kind != "joint" for p in self.parts):
                raise ValueError("a joint event needs parts: PrivacyEvents of the noise kinds (not joint)")
            if any(p.relation not in (None, self.relation) for p in self.parts):
                raise ValueError("a joint event's parts are stated for its own relation")
            if any(any(p.slack) for p in self.parts):
                raise ValueError("a joint event's parts carry no slack (give the joint event the slack)")
        elif self.parts:
            raise ValueError(f"only a joint event has parts; got kind {self.kind!r}")
        object.__setattr__(self, "stated", _pair(self.stated, "stated"))
        object.__setattr__(self, "slack", _pair(self.slack, "slack"))
        if self.stated is not None and self.kind != "approx_dp" and not _CONVERTING.get():
            self.check_stated()
        if self.kind == "joint" and not _CONVERTING.get():
            _check_joint(self)

    def check_stated(self):
        """Refuse a ``stated`` (ε, δ) that the event's noise does not give (run at construction).

        ``stated`` is the (ε, δ) of the noise of all ``count`` releases, slack not included (the
        slack is added by :meth:`basic`). It must follow from the parameters, up to a relative
        :data:`STATED_RTOL` (1e-9):

        - gaussian: the count releases of multiplier z are one Gaussian of μ = √count/z; the
          check is stated in δ: refused when the exact δ at the stated ε, :func:`gaussian_delta`
          (μ, ε) (Balle & Wang 2018), exceeds δ_stated·(1 + 1e-9) (so δ_stated = 0 is always
          refused). The message also gives the ε the noise gives at the stated δ
          (:func:`gaussian_epsilon`).
        - laplace: ε_stated ≥ count/z; discrete_laplace: ε_stated ≥ count·Δ/scale (exact, in
          Fractions); exponential: ε_stated ≥ count·ε. A pure event's statement covers its pure ε
          whatever its δ: a smaller ε at a δ > 0 (an advanced-composition bound, say) is refused.

        approx_dp events are not checked (their ``stated`` may come from a composition theorem).

        Raises
        ------
        ValueError
            If the statement understates the noise; the message gives the stated (ε, δ) and
            what the noise gives (the true δ at the stated ε and the true ε at the stated δ for
            a Gaussian, the pure ε otherwise).
        """
        if self.stated is None or self.kind == "approx_dp":
            return
        msg = _understatement(self.kind, int(self.count), self.noise_multiplier, self.scale, int(self.sensitivity),
                              float(self.epsilon), self.stated)
        if msg is not None:
            raise ValueError(msg)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def gaussian(cls, noise_multiplier, count=1, relation=None, *, stated=None, slack=(0.0, 0.0)):
        """``count`` Gaussian releases of noise σ = noise_multiplier·Δ₂ (Δ₂ the L2 sensitivity
        under ``relation``). ``stated``: the (ε, δ) the caller states for all of them (needed
        for the basic total)."""
        return cls("gaussian", count, relation, noise_multiplier=noise_multiplier, stated=stated, slack=slack)

    @classmethod
    def laplace(cls, noise_multiplier, count=1, relation=None, *, stated=None, slack=(0.0, 0.0)):
        """``count`` Laplace releases of scale b = noise_multiplier·Δ₁ (each (1/noise_multiplier)-DP)."""
        return cls("laplace", count, relation, noise_multiplier=noise_multiplier, stated=stated, slack=slack)

    @classmethod
    def discrete_laplace(cls, scale, sensitivity=1, count=1, relation=None, *, stated=None, slack=(0.0, 0.0)):
        """``count`` discrete Laplace releases, P(z) ∝ e^(−|z|/scale) (``scale`` a Fraction t/s
        or a float), of an integer query of L1 sensitivity ``sensitivity`` (each (Δ/scale)-DP)."""
        return cls("discrete_laplace", count, relation, scale=scale, sensitivity=sensitivity, stated=stated,
                   slack=slack)

    @classmethod
    def exponential(cls, epsilon, count=1, relation=None, *, stated=None, slack=(0.0, 0.0)):
        """``count`` uses of the exponential mechanism, each ε-DP (pure)."""
        return cls("exponential", count, relation, epsilon=epsilon, stated=stated, slack=slack)

    @classmethod
    def joint(cls, epsilon, delta, parts, count=1, relation=None, *, slack=(0.0, 0.0)):
        """``count`` releases, each made of the noise events ``parts`` calibrated together:
        (ε, δ)-DP by their composition (privacy-loss distributions), not part by part. Refused
        at construction when the parts' optimistic PLD (a lower bound on their true ε at δ)
        already exceeds ε (:func:`_check_joint`)."""
        return cls("joint", count, relation, epsilon=epsilon, delta=delta, slack=slack, parts=tuple(parts))

    @classmethod
    def approx_dp(cls, epsilon, delta=0.0, count=1, relation=None, *, stated=None, slack=(0.0, 0.0)):
        """``count`` releases, each (ε, δ)-DP: the generic form (a composition proved by a
        theorem, a smooth-sensitivity analysis, a ledger entry without a finer description)."""
        return cls("approx_dp", count, relation, epsilon=epsilon, delta=delta, stated=stated, slack=slack)

    # ------------------------------------------------------------------ what it costs
    def per_release(self):
        """(ε, δ) of one release computed from the parameters (pure kinds and approx_dp).

        Returns
        -------
        (float, float)

        Raises
        ------
        ValueError
            For a Gaussian event, which has no single (ε, δ).
        """
        if self.kind == "laplace":
            return 1.0 / float(self.noise_multiplier), 0.0
        if self.kind == "discrete_laplace":
            return float(Fraction(self.sensitivity) / Fraction(self.scale)), 0.0
        if self.kind in ("exponential", "approx_dp", "joint"):
            return float(self.epsilon), float(self.delta)
        raise ValueError("a Gaussian release has no single (epsilon, delta): state it (stated=(epsilon, delta))")

    def basic(self):
        """(ε, δ) of all ``count`` releases for basic composition: ``stated`` if given, else
        count × :meth:`per_release`, plus count × ``slack``.

        Returns
        -------
        (float, float)

        Raises
        ------
        ValueError
            For a Gaussian event without ``stated``.
        """
        eps, dlt = self.stated if self.stated is not None else tuple(self.count * v for v in self.per_release())
        return eps + self.count * self.slack[0], min(1.0, dlt + self.count * self.slack[1])

    @property
    def n_releases(self):
        """Number of releases (``count``)."""
        return int(self.count)

    def with_relation(self, relation):
        """The same event stated for ``relation`` (where it has none yet)."""
        return self if self.relation is not None else replace(self, relation=_check_relation(relation))

    def to_relation(self, target):
        """This event for the neighbouring relation ``target`` (see :func:`convert_event`)."""
        return convert_event(self, target)

    def dp_event(self):
        """The ``dp_accounting`` event: ``GaussianDpEvent``, ``LaplaceDpEvent`` or
        ``DiscreteLaplaceDpEvent`` (in a ``SelfComposedDpEvent`` when count > 1); None for
        exponential and approx_dp (their form is :meth:`pld`'s ``from_privacy_parameters``).
        The parameters are those of the event's own relation, for dp-accounting's
        ``ADD_OR_REMOVE_ONE`` (a pair of inputs whose statistic differs by the sensitivity)."""
        from dp_accounting import dp_event
        if self.kind == "gaussian":
            ev = dp_event.GaussianDpEvent(float(self.noise_multiplier))
        elif self.kind == "laplace":
            ev = dp_event.LaplaceDpEvent(float(self.noise_multiplier))
        elif self.kind == "discrete_laplace":
            ev = dp_event.DiscreteLaplaceDpEvent(float(1 / Fraction(self.scale)), int(self.sensitivity))
        elif self.kind == "joint":
            parts = [p.dp_event() for p in self.parts]
            if any(p is None for p in parts):
                return None
            ev = dp_event.ComposedDpEvent(parts)
        else:
            return None
        return ev if self.count == 1 else dp_event.SelfComposedDpEvent(ev, int(self.count))

    def pld(self, value_discretization_interval=VALUE_DISCRETIZATION_INTERVAL, pessimistic=True):
        """The privacy-loss distribution of all ``count`` releases (slack included), pessimistic
        (an upper bound on ε at every δ) unless ``pessimistic=False`` (a lower bound, for the
        noise kinds; an (ε, δ) statement has no lower bound and stays as stated). A joint event
        composes its parts.

        Parameters
        ----------
        value_discretization_interval : float, default 1e-4
        pessimistic : bool, default True

        Returns
        -------
        dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        """
        from dp_accounting.pld import privacy_loss_distribution as P
        vdi = float(value_discretization_interval)
        kw = dict(value_discretization_interval=vdi, pessimistic_estimate=bool(pessimistic))
        if self.kind == "gaussian":    # n Gaussians of multiplier z are one Gaussian of multiplier z/√n
            out = P.from_gaussian_mechanism(float(self.noise_multiplier) / math.sqrt(self.count), **kw)
        else:
            if self.kind == "laplace":
                one = P.from_laplace_mechanism(float(self.noise_multiplier), **kw)
            elif self.kind == "discrete_laplace":
                one = P.from_discrete_laplace_mechanism(float(1 / Fraction(self.scale)), int(self.sensitivity), **kw)
            elif self.kind == "joint":
                one = self.parts[0].pld(vdi, pessimistic)
                for p in self.parts[1:]:
                    one = one.compose(p.pld(vdi, pessimistic))
            else:
                one = _pld_eps_delta(self.epsilon, self.delta, vdi)
            out = one if self.count == 1 else one.self_compose(int(self.count))
        if any(self.slack):
            s = _pld_eps_delta(*self.slack, vdi)
            out = out.compose(s if self.count == 1 else s.self_compose(int(self.count)))
        return out


def _pld_eps_delta(epsilon, delta, vdi):
    from dp_accounting.pld import common, privacy_loss_distribution as P
    return P.from_privacy_parameters(common.DifferentialPrivacyParameters(float(epsilon), float(delta)),
                                     value_discretization_interval=vdi)


def convert_event(event, target):
    """``event`` restated for the neighbouring relation ``target`` by group privacy: for a
    group of k = :func:`conversion_factor` steps an additive mechanism's sensitivity is k times
    larger (Gaussian and Laplace noise multipliers ÷ k, discrete Laplace sensitivity × k), the
    exponential mechanism's ε × k, and an (ε, δ) statement (approx_dp, ``stated``, ``slack``)
    becomes (kε, δ·Σ_{i<k} e^{iε}).

    Parameters
    ----------
    event : PrivacyEvent
        With a relation.
    target : str
        A key of :data:`RELATIONS`.

    Returns
    -------
    PrivacyEvent

    Raises
    ------
    ValueError
        If the event has no relation or no conversion holds (the message names both relations).

    Notes
    -----
    The restated event is not checked again (:meth:`PrivacyEvent.check_stated`): its statement
    holds whenever the original one does. For a Gaussian, the k = 2 steps x → x′ → x″ of the
    source relation move the statistic by at most Δ each, so the pair (x, x″) at distance 2Δ is
    two steps of a mechanism that is (ε, δ)-DP per step; group privacy bounds it by
    (2ε, (1 + e^ε)δ), and the exact profile of the restated Gaussian (μ doubled) is exactly that
    pair's. So δ_{2μ}(2ε) ≤ (1 + e^ε)·δ_μ(ε) ≤ (1 + e^ε)·δ_stated; the pure kinds scale exactly
    (k·count/z, k·count·Δ/scale, k·count·ε against kε). ``tests/test_accountant_checks.py``
    runs the check on restated tight statements.
    """
    if event.relation is None:
        raise ValueError("the event states no neighbouring relation: give it one (relation=...)")
    k = conversion_factor(event.relation, target)
    if k == 1:
        return replace(event, relation=target)
    token = _CONVERTING.set(True)     # group privacy is a theorem: the restated claim holds (Notes)
    try:
        return _convert(event, target, k)
    finally:
        _CONVERTING.reset(token)


def _convert(event, target, k):
    changes = dict(relation=target,
                   stated=None if event.stated is None else group_privacy(*event.stated, k),
                   slack=group_privacy(*event.slack, k))
    if event.kind in ("gaussian", "laplace"):
        changes["noise_multiplier"] = float(event.noise_multiplier) / k
    elif event.kind == "discrete_laplace":
        changes["sensitivity"] = int(event.sensitivity) * k
    elif event.kind == "exponential":
        changes["epsilon"] = k * float(event.epsilon)
    else:
        changes["epsilon"], changes["delta"] = group_privacy(event.epsilon, event.delta, k)
    if event.kind == "joint":      # the parts scale exactly; the joint claim by group privacy
        changes["parts"] = tuple(_convert(p.with_relation(event.relation), target, k) for p in event.parts)
    return replace(event, **changes)


# --------------------------------------------------------------------------- the accountant
_ACTIVE = contextvars.ContextVar("dpcore_active_accountant", default=None)
_IN_FIT = contextvars.ContextVar("dpcore_in_private_fit", default=False)


#: the process-wide default accountant (:meth:`PrivacyAccountant.make_default`), seen by every thread
_DEFAULT = None


def active_accountant():
    """The accountant of the innermost ``with accountant:`` block of this thread, else the
    process-wide default (:meth:`PrivacyAccountant.make_default`), else None.

    ``with acc:`` is per thread (concurrent sessions of the app never see each other's
    accountant), so a fit run in another thread or process — ``GridSearchCV(n_jobs=2)``, a
    thread pool — does not see it: use :meth:`PrivacyAccountant.make_default` for threads, and
    for worker processes record the fitted estimators afterwards (``acc.record(est)``)."""
    acc = _ACTIVE.get()
    return acc if acc is not None else _DEFAULT


def active_accountants():
    """Every accountant a fit here must satisfy, innermost first.

    These are the accountants of the nested ``with accountant:`` blocks of this thread (an
    inner block does not hide a fit from an outer one's budget), then the process-wide
    default (:meth:`PrivacyAccountant.make_default`) if it is not among them. A private fit
    checks its planned spend against each before it releases anything and is recorded in
    each afterwards; a sweep sent to worker processes plans and records its runs in them.

    Returns
    -------
    list of PrivacyAccountant
        Empty when no accountant is active; :func:`active_accountant` is its first entry.
    """
    chain, acc = [], _ACTIVE.get()
    while acc is not None:
        chain.append(acc)
        acc = acc._parents[-1] if acc._parents else None
    if _DEFAULT is not None and _DEFAULT not in chain:
        chain.append(_DEFAULT)
    return chain


@dataclass(frozen=True)
class AccountedRun:
    """One recorded run: its events (in their own relation), whether it counts, and why not.

    Attributes
    ----------
    label : str
    relation : str
        The run's neighbouring relation.
    events : tuple of PrivacyEvent
        Every event with a relation.
    private : bool
        False: listed apart and not counted.
    reason : str
        Why it is not private ("" when it is).
    epsilon, delta : float
        Basic (ε, δ) of the run in its own relation.
    """
    label: str
    relation: str
    events: tuple
    private: bool = True
    reason: str = ""
    epsilon: float = 0.0
    delta: float = 0.0

    @property
    def n_releases(self):
        """Releases of the run (the events' counts added up)."""
        return sum(e.count for e in self.events)


@dataclass(frozen=True)
class TightTotal:
    """A tight total: ε at δ through privacy-loss distributions.

    Attributes
    ----------
    epsilon : float
        An upper bound (dp-accounting's pessimistic discretisation) on the ε of the composition
        at ``delta``; inf when none exists at that δ.
    delta : float
    relation : str
    value_discretization_interval : float
        The PLD grid used.
    """
    epsilon: float
    delta: float
    relation: str
    value_discretization_interval: float


@dataclass(frozen=True)
class RdpTotal:
    """An RDP total: ε at δ through Rényi differential privacy (:meth:`PrivacyAccountant.rdp_total`).

    Attributes
    ----------
    epsilon : float
        An upper bound on the ε of the composition at ``delta`` (inf when none exists at that δ).
    delta : float
    relation : str
    order : float or None
        The optimal Rényi order α of :data:`dpcore.privacy.rdp.RDP_ORDERS` (inf: the pure limit
        α = ∞; None: no RDP part, e.g. no runs).
    """
    epsilon: float
    delta: float
    relation: str
    order: float | None


class PrivacyAccountant:
    """Records private runs as typed events and adds them up, per neighbouring relation.

    Parameters
    ----------
    budget_epsilon : float or None, default None
        ε budget (None: no limit), by basic composition in ``relation``.
    budget_delta : float or None, default None
        δ budget (None: no limit).
    relation : str or None, default None
        The relation the budget and totals are stated in; None: the weakest common relation
        of the recorded runs (:func:`weakest_common_relation`).
    delta : float or None, default None
        The δ of :meth:`tight_epsilon`; None: the basic δ total.

    Notes
    -----
    ``with acc:`` makes it the active accountant of this thread: every
    :class:`~dpcore.privacy.accounting.PrivateEstimatorMixin` estimator's ``fit`` then calls
    :meth:`check` with its ``epsilon`` / ``delta`` and its ``claimed_relation`` before it reads
    the data, and records its ledger after a successful fit.
    """

    def __init__(self, budget_epsilon=None, budget_delta=None, relation=None, delta=None):
        self.budget_epsilon = None if budget_epsilon is None else _nonneg(budget_epsilon, "budget_epsilon")
        self.budget_delta = None if budget_delta is None else _nonneg(budget_delta, "budget_delta", 1.0)
        self.relation = _check_relation(relation, allow_none=True)
        self.delta = None if delta is None else _nonneg(delta, "delta", 1.0)
        self.runs = []              # AccountedRun, private: counted
        self.nonprivate_runs = []   # AccountedRun, not private: listed apart, not counted
        self._tokens = []
        self._parents = []
        self._tight_cache = {}
        self._rdp_cache = {}

    # ------------------------------------------------------------------ recording
    def _events_of(self, source, relation):
        """(events with a relation, the run's relation, estimator or None)."""
        estimator = None      # a ledger is told by its entries (accounting imports this module, not back)
        if isinstance(source, PrivacyEvent):
            events = [source]
        elif hasattr(source, "ledger_"):
            estimator = source
            events = source.ledger_.events()
            if relation is None:
                relation = getattr(source, "claimed_relation", None)
        elif hasattr(source, "entries") and callable(getattr(source, "events", None)):
            events = source.events()
        else:
            try:
                events = list(source)
            except TypeError:
                raise ValueError("record takes a fitted private estimator, a PrivacyLedger or PrivacyEvents; got "
                                 f"{type(source).__name__}") from None
            if not all(isinstance(e, PrivacyEvent) for e in events):
                raise ValueError("record takes a fitted private estimator, a PrivacyLedger or PrivacyEvents")
        if relation is None:
            rels = {e.relation for e in events if e.relation is not None}
            relation = rels.pop() if len(rels) == 1 else self.relation
        if relation is None:
            raise ValueError("the run states no neighbouring relation: pass relation= (one of "
                             f"{', '.join(RELATIONS)})")
        relation = _check_relation(relation)
        return [e.with_relation(relation) for e in events], relation, estimator

    def record(self, source, relation=None, *, label="", private=None, reason=""):
        """Record one run (nothing is checked against the budget: it has happened).

        Parameters
        ----------
        source : fitted private estimator, PrivacyLedger, PrivacyEvent or iterable of PrivacyEvent
            An estimator's ``ledger_`` is read (and its ``claimed_relation``).
        relation : str, optional
            The run's relation (events without one get it); default: the estimator's claim, the
            events' own, or the accountant's.
        label : str, default ""
        private : bool or None, default None
            None: an estimator's ``released_private_`` (True for ledgers and events). False:
            listed in :attr:`nonprivate_runs`, not counted.
        reason : str, default ""
            Why it is not private.

        Returns
        -------
        AccountedRun

        Raises
        ------
        ValueError
            If the source is not one of the above, no relation is known, or the run's relation
            cannot be converted to the accountant's ``relation``.
        """
        events, relation, estimator = self._events_of(source, relation)
        if private is None:
            private = bool(getattr(estimator, "released_private_", True)) if estimator is not None else True
            if not private and not reason:
                reason = "the fit released nothing private (a non-private start or selection, or a radius read " \
                         "off the data)"
        if private and self.relation is not None:
            conversion_factor(relation, self.relation)
        eps, dlt = _fsum_pairs(e.basic() for e in events) if events else (0.0, 0.0)
        run = AccountedRun(label or (type(estimator).__name__ if estimator is not None else "run"), relation,
                           tuple(events), bool(private), "" if private else str(reason), eps, dlt)
        (self.runs if private else self.nonprivate_runs).append(run)
        self._tight_cache.clear()
        self._rdp_cache.clear()
        return run

    # ------------------------------------------------------------------ totals
    def target_relation(self, extra=()):
        """The relation totals are given in: ``relation``, or the weakest common relation of the
        recorded runs (and of ``extra``)."""
        if self.relation is not None:
            return self.relation
        return weakest_common_relation([r.relation for r in self.runs] + list(extra))

    def events(self, relation=None):
        """Every counted event, converted to ``relation`` (default :meth:`target_relation`)."""
        target = relation if relation is not None else self.target_relation()
        if target is None:
            return []
        return [convert_event(e, target) for r in self.runs for e in r.events]

    def basic_total(self, relation=None):
        """(ε, δ) of the private runs by basic composition of what each release states, in
        ``relation`` (default :meth:`target_relation`).

        Returns
        -------
        (float, float)
            (0, 0) with no runs.

        Raises
        ------
        ValueError
            If a run cannot be converted to ``relation``.
        """
        events = self.events(relation)
        return _fsum_pairs(e.basic() for e in events) if events else (0.0, 0.0)

    @property
    def n_releases(self):
        """Releases of the private runs (an event of count 140 is 140 releases)."""
        return sum(r.n_releases for r in self.runs)

    def tight_total(self, delta=None, relation=None):
        """ε at δ of the private runs through privacy-loss distributions (``dp-accounting``).

        Every event becomes its PLD (:meth:`PrivacyEvent.pld`: Gaussian, Laplace and discrete
        Laplace exactly; exponential and approx_dp through ``from_privacy_parameters``, i.e. the
        optimal composition of (ε, δ)-DP releases), all Gaussians are merged into one Gaussian
        of multiplier (Σ countᵢ/zᵢ²)^(−1/2) (exact), and the PLDs are composed with dp-accounting's
        PLD library (what its ``PLDAccountant`` does, which cannot take (ε, δ) events). Its
        pessimistic estimate makes the result an upper bound on the true ε. Grid:
        value_discretization_interval = max(1e-4, width/2·10⁵), width the range of privacy
        losses to cover (the non-Gaussian events' ε plus μ²/2 + 10μ of the Gaussians): 1e-4 up to
        a width of 20, coarser above. Releases whose per-release ε exceeds 50 (and Gaussians of
        total μ above 50 when stated) are added by basic composition instead (their PLD does not
        fit a grid); their δ is taken off the δ first.

        Parameters
        ----------
        delta : float in [0, 1], optional
            Default: the accountant's ``delta``, else the basic δ total.
        relation : str, optional
            Default :meth:`target_relation`.

        Returns
        -------
        TightTotal
        """
        target = relation if relation is not None else self.target_relation()
        if delta is None:
            delta = self.delta if self.delta is not None else self.basic_total(target)[1]
        delta = _nonneg(delta, "delta", 1.0)
        key = (target, delta)
        if key in self._tight_cache:
            return self._tight_cache[key]
        events = self.events(target)
        if not events:
            out = TightTotal(0.0, delta, target, VALUE_DISCRETIZATION_INTERVAL)
        else:
            out = _tight(events, delta, target)
        self._tight_cache[key] = out
        return out

    def tight_epsilon(self, delta=None, relation=None):
        """``tight_total(delta, relation).epsilon``: an upper bound on ε at δ (see :meth:`tight_total`)."""
        return self.tight_total(delta, relation).epsilon

    def rdp_total(self, delta=None, relation=None):
        """ε at δ of the private runs through Rényi differential privacy (:mod:`dpcore.privacy.rdp`).

        Every event's RDP curve on the public orders :data:`dpcore.privacy.rdp.RDP_ORDERS`
        (dp-accounting's default grid) is added up: Gaussians α·count/(2z²) (exact), Laplace by
        Mironov 2017's exact formula, discrete Laplace by its exact formula, exponential and
        other pure ε-DP releases (approx_dp and slack with δ = 0) by randomized response's curve,
        which bounds every ε-DP release (never above Bun & Steinke 2016's min(ε, αε²/2)).
        Releases with δ > 0 (approx_dp, slack) are not RDP: their δ is taken off ``delta`` and
        their ε added. The curve is converted with Canonne, Kamath & Steinke 2020, Prop. 12 (as
        dp-accounting's ``RdpAccountant``), minimised over the orders and, when every RDP part
        is pure, the limit α = ∞ (the sum of the pure ε).

        A looser bound than :meth:`tight_total` (up to its discretisation), often far below
        :meth:`basic_total` for many releases; what it gives is a valid (ε, δ) on its own. A
        Gaussian's ``stated`` (ε, δ) is not used: its noise is.

        Parameters
        ----------
        delta : float in [0, 1], optional
            Default: the accountant's ``delta``, else the basic δ total.
        relation : str, optional
            Default :meth:`target_relation`.

        Returns
        -------
        RdpTotal
            ε = inf when ``delta`` is below the δ of the (ε, δ) releases (a relative 1e-12 of
            rounding is forgiven), or when it equals it and a Gaussian is among the events.
        """
        from .rdp import RDP_ORDERS, event_rdp, rdp_to_dp
        target = relation if relation is not None else self.target_relation()
        if delta is None:
            delta = self.delta if self.delta is not None else self.basic_total(target)[1]
        delta = _nonneg(delta, "delta", 1.0)
        key = (target, delta)
        if key in self._rdp_cache:
            return self._rdp_cache[key]
        events = self.events(target)
        curves, pures, approx_eps, approx_delta = [], [], [], []
        for e in events:
            rdp, pure, (a_eps, a_delta) = event_rdp(e, RDP_ORDERS)
            curves.append(rdp)
            pures.append(pure)
            approx_eps.append(a_eps)
            approx_delta.append(a_delta)
        eps_basic, delta_basic = math.fsum(approx_eps), math.fsum(approx_delta)
        rest = math.fsum((delta, -delta_basic))
        if rest < 0.0 and rest >= -1e-12 * delta:
            rest = 0.0
        curve = [math.fsum(c[i] for c in curves) for i in range(len(RDP_ORDERS))] if curves else \
            [0.0] * len(RDP_ORDERS)
        pure = math.fsum(pures) if all(math.isfinite(p) for p in pures) else math.inf
        if rest < 0.0:
            eps, order = math.inf, None
        elif not any(curve):
            eps, order = 0.0, None
        else:
            eps, order = rdp_to_dp(RDP_ORDERS, curve, rest) if rest > 0.0 else (math.inf, None)
            if pure <= eps:
                eps, order = pure, math.inf
        out = RdpTotal(eps + eps_basic if math.isfinite(eps) else math.inf, delta, target, order)
        self._rdp_cache[key] = out
        return out

    def rdp_epsilon(self, delta=None, relation=None):
        """``rdp_total(delta, relation).epsilon``: an upper bound on ε at δ (see :meth:`rdp_total`)."""
        return self.rdp_total(delta, relation).epsilon

    # ------------------------------------------------------------------ budget
    def remaining(self, relation=None):
        """(ε, δ) left of the budget by basic composition (inf where there is no budget).

        Returns
        -------
        (float, float)
        """
        eps, dlt = self.basic_total(relation)
        return (math.inf if self.budget_epsilon is None else self.budget_epsilon - eps,
                math.inf if self.budget_delta is None else self.budget_delta - dlt)

    def check(self, epsilon, delta=0.0, relation="replace_one", *, events=()):
        """Refuse a planned spend that would exceed the budget (basic composition), before any
        release.

        Parameters
        ----------
        epsilon : float ≥ 0
            Planned ε (for ``relation``).
        delta : float in [0, 1], default 0
        relation : str, default "replace_one"
        events : iterable of PrivacyEvent, optional
            Further planned releases (each with a relation).

        Raises
        ------
        ValueError
            If the planned spend, converted to the totals' relation, would take the total past
            the budget (by more than a relative 1e-9); the message gives both numbers.
        """
        epsilon, delta, events = _nonneg(epsilon, "epsilon"), _nonneg(delta, "delta", 1.0), list(events)
        plan = [PrivacyEvent.approx_dp(epsilon, delta, relation=_check_relation(relation))] \
            if epsilon or delta or not events else []
        plan += [e.with_relation(relation) for e in events]
        target = self.target_relation([e.relation for e in plan])
        spent = self.basic_total(target)
        planned = _fsum_pairs(convert_event(e, target).basic() for e in plan)
        words = RELATIONS[target]
        for i, (name, budget) in enumerate((("epsilon", self.budget_epsilon), ("delta", self.budget_delta))):
            if budget is None:
                continue
            total = spent[i] + planned[i]
            if total > budget * (1 + 1e-9) + (1e-300 if i else 0.0):
                raise ValueError(f"privacy budget exceeded: this run would spend {name} {planned[i]:.4g} and "
                                 f"{spent[i]:.4g} is spent already ({total:.4g} in all, for {words}) — more "
                                 f"than the budget {budget:.4g}; nothing was released")

    # ------------------------------------------------------------------ context
    def __enter__(self):
        self._parents.append(_ACTIVE.get())
        self._tokens.append(_ACTIVE.set(self))
        return self

    def __exit__(self, *exc):
        _ACTIVE.reset(self._tokens.pop())
        self._parents.pop()
        return False

    def make_default(self):
        """Make this the process-wide default accountant: every fit in every thread of this
        process is checked against it and recorded in it (worker processes are not reached).
        Returns self."""
        global _DEFAULT
        _DEFAULT = self
        return self

    @staticmethod
    def clear_default():
        """Remove the process-wide default accountant."""
        global _DEFAULT
        _DEFAULT = None

    def __repr__(self):
        return (f"PrivacyAccountant({len(self.runs)} private run(s), {self.n_releases} release(s), "
                f"{len(self.nonprivate_runs)} not private)")


def _fsum_pairs(pairs):
    pairs = list(pairs)
    return math.fsum(p[0] for p in pairs), min(1.0, math.fsum(p[1] for p in pairs))


def _tight(events, delta, target):
    """ε at δ of ``events`` (all in ``target``): privacy-loss distributions, except releases too
    large for a PLD grid (per-release ε above :data:`_PLD_MAX_EPSILON`, Gaussians of μ above
    :data:`_PLD_MAX_MU` with a stated (ε, δ)), which are added by basic composition."""
    gauss = [e for e in events if e.kind == "gaussian"]
    mu = math.sqrt(math.fsum(e.count / float(e.noise_multiplier) ** 2 for e in gauss)) if gauss else 0.0
    if mu > _PLD_MAX_MU and all(e.stated is not None for e in gauss):
        large = list(gauss)
        gauss, mu = [], 0.0
    else:
        large = []
    other = []
    for e in events:
        if e.kind != "gaussian":
            (large if _per_release_epsilon(e) > _PLD_MAX_EPSILON else other).append(e)
    eps_large, delta_large = _fsum_pairs(e.basic() for e in large) if large else (0.0, 0.0)
    span = math.fsum(_support_epsilon(e) for e in other) + (mu * mu / 2 + 10 * mu if gauss else 0.0)
    vdi = max(VALUE_DISCRETIZATION_INTERVAL, span / _MAX_PLD_POINTS)
    if not gauss and not other:
        return TightTotal(eps_large if delta >= delta_large else math.inf, delta, target, vdi)
    if delta < delta_large:
        return TightTotal(math.inf, delta, target, vdi)
    groups = {}
    for e in other:        # identical releases are one self-composition
        key = replace(e, count=1, stated=None)
        groups[key] = groups.get(key, 0) + e.count
    plds = [replace(k, count=c).pld(vdi) for k, c in groups.items()]
    if gauss:              # Gaussians compose exactly into one Gaussian of multiplier 1/μ
        plds.append(PrivacyEvent.gaussian(1.0 / mu).pld(vdi))
        plds += [replace(e, kind="approx_dp", noise_multiplier=None, epsilon=e.slack[0], delta=e.slack[1],
                         slack=(0.0, 0.0), stated=None).pld(vdi) for e in gauss if any(e.slack)]
    pld = plds[0]
    for p in plds[1:]:
        pld = pld.compose(p)
    eps = float(pld.get_epsilon_for_delta(delta - delta_large))
    return TightTotal(eps + eps_large, delta, target, vdi)


def _per_release_epsilon(e):
    if e.kind == "laplace":
        return 1.0 / float(e.noise_multiplier)
    if e.kind == "discrete_laplace":
        return float(Fraction(e.sensitivity) / Fraction(e.scale))
    return float(e.epsilon)


def _support_epsilon(e):
    """The width (in privacy loss) of a non-Gaussian event's PLD: what its grid must cover."""
    if e.kind == "joint":
        return e.count * (math.fsum(_part_support(p) for p in e.parts) + e.slack[0])
    return e.count * (_per_release_epsilon(e) + e.slack[0])


def _part_support(p):
    if p.kind == "gaussian":
        mu = math.sqrt(p.count) / float(p.noise_multiplier)
        return mu * mu / 2 + 10 * mu
    return _support_epsilon(p)


_JOINT_CHECKED = {}


def _check_joint(event):
    """Refuse a joint event whose (ε, δ) its parts do not give: the parts' *optimistic* PLD (a
    lower bound on their true ε at δ, dp-accounting's ``pessimistic_estimate=False``) above ε by
    more than a relative :data:`STATED_RTOL`. A statement from a pessimistic PLD calibration (an
    upper bound) always passes; one that no calibration could give is refused."""
    key = (tuple(replace(p, relation=None) for p in event.parts), float(event.epsilon), float(event.delta))
    if key not in _JOINT_CHECKED:
        span = math.fsum(_part_support(p) for p in event.parts)
        vdi = max(VALUE_DISCRETIZATION_INTERVAL, span / _MAX_PLD_POINTS)
        one = event.parts[0].pld(vdi, pessimistic=False)
        for p in event.parts[1:]:
            one = one.compose(p.pld(vdi, pessimistic=False))
        low = float(one.get_epsilon_for_delta(float(event.delta)))
        _JOINT_CHECKED[key] = low
        if len(_JOINT_CHECKED) > 4096:
            _JOINT_CHECKED.pop(next(iter(_JOINT_CHECKED)))
    low = _JOINT_CHECKED[key]
    if low > float(event.epsilon) * (1 + STATED_RTOL):
        raise ValueError(f"the joint statement (epsilon {event.epsilon:.10g}, delta {event.delta:.3g}) understates its "
                         f"parts ({', '.join(p.kind for p in event.parts)}): composed, they are at least epsilon = "
                         f"{low:.10g} at delta = {event.delta:.3g}")
