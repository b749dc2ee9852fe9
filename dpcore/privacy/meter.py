"""The privacy meter: what a program (a session, a sweep, an audit, an app's whole server)
released per dataset, charged through one path, with a budget that refuses a run before it runs.

A :class:`Verdict` is the one decision about a run — private or not, why not, and what it
spends as typed :class:`~dpcore.privacy.accountant.PrivacyEvent` s in its neighbouring
relation. :mod:`dpcore.lab.verdicts` makes it from an estimator and its catalogue entry; a
meter only charges it. :class:`PrivacyMeter` keeps one
:class:`~dpcore.privacy.accountant.PrivacyAccountant` per dataset (privacy composes per
dataset), so the same runs give the same totals wherever they ran (in this process, in worker
processes or on a Dask cluster: worker rows carry their events, :func:`events_to_json`).

Composition, as the meter teaches it:

- the private runs on a dataset add up (basic composition), in the weakest neighbouring
  relation common to them; the tight total (privacy-loss distributions, dp-accounting) and the
  RDP total are upper bounds on the same composition at a δ of the caller's choice;
- once a run that is *not* private (a public seed, a non-private start, a radius read off the
  data, float noise) touched a dataset, nothing bounds what was learnt about it: its headline
  is ε = ∞, with the private runs' total beside it;
- what was spent stays spent: nothing here lowers a total or raises what remains of a budget.
  :meth:`PrivacyMeter.since` lets a viewer count afresh from a point on (a "new count").

A budget (ε per dataset) refuses, before anything runs, a plan that would pass it and any run
that would not be private (its loss would be unbounded). Plans are *reserved*
(:meth:`PrivacyMeter.reserve`): concurrent users of one meter (a class on one server) cannot
both pass the check and then both spend.

The meter is thread-safe and imports nothing of the app.
"""
from __future__ import annotations

import itertools
import json
import math
import threading
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction

from .accountant import RELATIONS, PrivacyAccountant, PrivacyEvent, TightTotal, convert_event

__all__ = ["Verdict", "MeterRow", "Headline", "PrivacyMeter", "Reservation", "events_to_json", "events_from_json",
           "event_to_dict", "event_from_dict"]


# --------------------------------------------------------------------------- events as data
def _num(x):
    if isinstance(x, Fraction):
        return {"fraction": [x.numerator, x.denominator]}
    return x


def _unnum(x):
    if isinstance(x, dict) and "fraction" in x:
        return Fraction(*x["fraction"])
    return x


def event_to_dict(event):
    """A :class:`~dpcore.privacy.accountant.PrivacyEvent` as plain data (JSON-safe, exact:
    floats round-trip through JSON's repr, a Fraction scale is kept as its two integers).

    Parameters
    ----------
    event : PrivacyEvent

    Returns
    -------
    dict
    """
    return {"kind": event.kind, "count": int(event.count), "relation": event.relation,
            "noise_multiplier": None if event.noise_multiplier is None else float(event.noise_multiplier),
            "scale": _num(event.scale if isinstance(event.scale, Fraction) or event.scale is None
                          else float(event.scale)),
            "sensitivity": int(event.sensitivity), "epsilon": float(event.epsilon), "delta": float(event.delta),
            "stated": None if event.stated is None else [float(v) for v in event.stated],
            "slack": [float(v) for v in event.slack], "parts": [event_to_dict(p) for p in event.parts]}


def event_from_dict(data):
    """The event of :func:`event_to_dict` (equal to the original).

    Parameters
    ----------
    data : dict

    Returns
    -------
    PrivacyEvent
    """
    d = dict(data)
    d["scale"] = _unnum(d.get("scale"))
    d["stated"] = None if d.get("stated") is None else tuple(d["stated"])
    d["slack"] = tuple(d.get("slack", (0.0, 0.0)))
    d["parts"] = tuple(event_from_dict(p) for p in d.get("parts", ()))
    return PrivacyEvent(**d)


def events_to_json(events):
    """Events as a JSON string (a sweep row's ``events`` column)."""
    return json.dumps([event_to_dict(e) for e in events])


def events_from_json(text):
    """The events of :func:`events_to_json` ("" or None: none)."""
    if not text:
        return []
    return [event_from_dict(d) for d in json.loads(text)]


def _basic(events):
    if not events:
        return 0.0, 0.0
    pairs = [e.basic() for e in events]
    return math.fsum(p[0] for p in pairs), min(1.0, math.fsum(p[1] for p in pairs))


# --------------------------------------------------------------------------- the verdict
@dataclass(frozen=True)
class Verdict:
    """Whether a run (or a plan of runs) is private and what it spends: the one decision a
    meter charges. Made by :mod:`dpcore.lab.verdicts` (``plan_run``, ``judge_run``,
    ``judge_row``); a meter never changes it.

    Attributes
    ----------
    label : str
        What ran, in words (a meter row's label).
    relation : str or None
        The neighbouring relation of ``events``; None for a method that makes no privacy claim.
    events : tuple of PrivacyEvent
        What the run spends (its ledger's typed releases), each with ``relation``.
    private : bool
        Whether it released anything private.
    reasons : tuple of str
        Why not (empty when private).
    claim : bool, default True
        Whether the method makes a privacy claim at all. A run without one (a non-private
        reference solver) is not charged: the meter counts what private methods released.
    fits : int, default 1
        How many fits (releases, in the meter's words) it stands for.
    planned : bool, default False
        A plan (before the run), not a record.
    method : str, default ""
        Catalogue name of the method.
    """
    label: str
    relation: str | None
    events: tuple = ()
    private: bool = True
    reasons: tuple = ()
    claim: bool = True
    fits: int = 1
    planned: bool = False
    method: str = ""

    def __post_init__(self):
        if self.relation is not None and self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {', '.join(RELATIONS)}; got {self.relation!r}")
        object.__setattr__(self, "events", tuple(e.with_relation(self.relation) if self.relation else e
                                                 for e in self.events))
        object.__setattr__(self, "reasons", tuple(self.reasons))
        if self.private and self.reasons:
            raise ValueError("a private verdict has no reasons against it")
        if int(self.fits) < 1:
            raise ValueError(f"fits must be >= 1; got {self.fits!r}")

    @property
    def reason(self):
        """The reasons in one sentence ("" when private)."""
        return "; ".join(self.reasons)

    @property
    def epsilon(self):
        """ε of the events by basic composition, in their relation (nominal when not private)."""
        return _basic(self.events)[0]

    @property
    def delta(self):
        """δ of the events by basic composition."""
        return _basic(self.events)[1]

    @property
    def n_releases(self):
        """Noise events (an event of count 20 is 20)."""
        return sum(e.count for e in self.events)

    def times(self, n):
        """``n`` fits like this one (e.g. an audit's 2 × runs per side): every event's count × n
        (a stated (ε, δ) × n, basic composition).

        Parameters
        ----------
        n : int ≥ 1

        Returns
        -------
        Verdict
        """
        n = int(n)
        if n < 1:
            raise ValueError(f"n must be >= 1; got {n}")
        if n == 1:
            return self
        events = tuple(replace(e, count=e.count * n,
                               stated=None if e.stated is None else (e.stated[0] * n, min(1.0, e.stated[1] * n)))
                       for e in self.events)
        return replace(self, events=events, fits=self.fits * n)

    def as_plan(self):
        """This verdict as a plan (``planned=True``)."""
        return replace(self, planned=True)


# --------------------------------------------------------------------------- rows and headlines
@dataclass
class MeterRow:
    """One entry of a meter: one charged verdict (or several, under one ``entry`` id).

    Attributes
    ----------
    dataset, label : str
    epsilon, delta : float
        Basic totals of the entry, in its own relation (nominal when not private).
    private : bool
    reason : str
    fits : int
    events : int
        Noise events.
    relation : str or None
    entry : str or None
    session : str or None
        Who charged it (an app's session id; None for a library user).
    seq : int
        Order of charging (a meter-wide counter).
    time : float
        When (``time.time()``).
    method : str
    """
    dataset: str
    label: str
    epsilon: float
    delta: float
    private: bool
    reason: str
    fits: int
    events: int
    relation: str | None
    entry: str | None = None
    session: str | None = None
    seq: int = 0
    time: float = 0.0
    method: str = ""

    def get(self, key, default=None):
        """Dict-style access (older callers read rows as dicts)."""
        return getattr(self, key, default)

    def __getitem__(self, key):
        return getattr(self, key)


@dataclass(frozen=True)
class Headline:
    """What a meter says of one dataset (:meth:`PrivacyMeter.headline`).

    Attributes
    ----------
    dataset : str
    epsilon : float
        The dataset's ε: the private runs' basic total, or inf once a run that is not private
        touched it (nothing bounds what was learnt then).
    private_epsilon, private_delta : float
        Basic composition of the private runs, in ``relation``.
    relation : str or None
        The weakest relation common to the private runs (None: none yet).
    delta : float
        The δ of ``tight`` and ``rdp``.
    tight : TightTotal or None
        ε at ``delta`` by privacy-loss distributions (dp-accounting); None without private runs
        or when it cannot be computed.
    rdp : object or None
        ε at ``delta`` by Rényi DP (``PrivacyAccountant.rdp_total``); None likewise.
    private_fits, nonprivate_fits : int
    budget : float or None
        ε budget per dataset.
    remaining : float
        What is left of the budget (inf without one; never negative; 0 once a run that is not
        private touched the dataset).
    """
    dataset: str
    epsilon: float
    private_epsilon: float
    private_delta: float
    relation: str | None
    delta: float
    tight: TightTotal | None
    rdp: object | None
    private_fits: int
    nonprivate_fits: int
    budget: float | None
    remaining: float

    @property
    def unbounded(self):
        """Whether a run that is not private touched the dataset (ε = ∞)."""
        return math.isinf(self.epsilon)


# --------------------------------------------------------------------------- the meter
class Reservation:
    """A plan held against a meter's budget until it is charged or released
    (:meth:`PrivacyMeter.reserve`). Use it as a context manager: what was not charged when
    the block ends (a stopped or failed run) is released."""

    def __init__(self, meter, dataset, verdicts, rid, session=None):
        self.meter, self.dataset, self.id, self.session = meter, dataset, rid, session
        self.verdicts = tuple(verdicts)
        self.open = True

    def charge(self, verdict, *, label=None, entry=None, session=None):
        """Charge one run of the plan (:meth:`PrivacyMeter.charge`; ``session`` defaults to the
        reservation's); the reservation stays until it is released."""
        return self.meter.charge(self.dataset, verdict, label=label, entry=entry,
                                 session=self.session if session is None else session)

    def release(self):
        """Give back what was reserved (what was charged stays charged)."""
        if self.open:
            self.meter._release(self.id)
            self.open = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False


class PrivacyMeter:
    """What was released per dataset, charged through one path (thread-safe).

    Parameters
    ----------
    budget_epsilon : float > 0 or None, default None
        ε budget per dataset (basic composition, in the weakest relation common to the
        dataset's private runs); None: no limit.
    budget_source : str, default ""
        Who set the budget, in words (shown with it).
    delta : float in (0, 1) or None, default None
        Default δ of the tight and RDP totals (None: the private runs' basic δ total, or
        1e-6 when it is 0).

    Examples
    --------
    >>> from dpcore.privacy.meter import PrivacyMeter, Verdict
    >>> from dpcore.privacy import PrivacyEvent
    >>> meter = PrivacyMeter(budget_epsilon=2.0)
    >>> run = Verdict("Laplace count", "add_remove", (PrivacyEvent.laplace(1.0),))
    >>> with meter.reserve("census", [run]) as r:
    ...     _ = r.charge(run)
    >>> meter.headline("census").epsilon
    1.0
    """

    def __init__(self, budget_epsilon=None, *, budget_source="", delta=None):
        self._lock = threading.RLock()
        self._accountants = {}
        self._rows = []
        self._seq = itertools.count(1)
        self._reserved = {}          # id -> (dataset, verdicts)
        self.budget_epsilon = None
        self.budget_source = ""
        self.delta = None if delta is None else float(delta)
        self.set_budget(budget_epsilon, budget_source)

    # ------------------------------------------------------------------ budget
    def set_budget(self, epsilon, source=""):
        """Set (or clear, with None) the ε budget per dataset.

        Parameters
        ----------
        epsilon : float > 0 or None
        source : str, default ""

        Raises
        ------
        ValueError
            If ``epsilon`` is not None nor a finite number > 0.
        """
        if epsilon is not None:
            if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not (0 < float(epsilon) < math.inf):
                raise ValueError(f"the class budget must be a finite ε > 0; got {epsilon!r}")
            epsilon = float(epsilon)
        with self._lock:
            self.budget_epsilon = epsilon
            self.budget_source = str(source or "")

    # ------------------------------------------------------------------ accountants
    def _acc(self, dataset):
        acc = self._accountants.get(dataset)
        if acc is None:
            acc = self._accountants[dataset] = PrivacyAccountant()
        return acc

    def accountant(self, dataset):
        """The dataset's accountant (its private runs and those listed apart). Read it; charge
        through :meth:`charge`."""
        with self._lock:
            return self._acc(dataset)

    def datasets(self):
        """The datasets charged so far, in order of their first charge."""
        with self._lock:
            return list(dict.fromkeys(r.dataset for r in self._rows))

    def rows(self, dataset=None, session=None, since=0):
        """The entries (:class:`MeterRow`), in order; of ``dataset`` and of ``session`` when
        given; only those charged after ``since`` (a :meth:`since` mark)."""
        with self._lock:
            return [r for r in self._rows if (dataset is None or r.dataset == dataset)
                    and (session is None or r.session == session) and r.seq > since]

    def since(self):
        """A mark: :meth:`rows` with ``since=mark`` lists only what is charged later (a viewer's
        "new count"; totals and the budget are not affected)."""
        with self._lock:
            return max((r.seq for r in self._rows), default=0)

    # ------------------------------------------------------------------ planning
    def _check(self, dataset, verdicts, exclude=None):
        """Refuse ``verdicts`` on ``dataset`` under the budget (with what is reserved)."""
        if self.budget_epsilon is None:
            return
        charged = [v for v in verdicts if v.claim]
        bad = next((v for v in charged if not v.private), None)
        words = f"the class budget (ε ≤ {self.budget_epsilon:g} per dataset{self._source()})"
        if bad is not None:
            raise ValueError(f"Refused by {words} on {dataset}: {bad.label} would not be private ({bad.reason}), "
                             "and a run that is not private leaves no bound on what it reveals. Under a class budget "
                             "only private runs may use the data; nothing was run.")
        acc = self._accountants.get(dataset)
        if charged and acc is not None and acc.nonprivate_runs:
            last = acc.nonprivate_runs[-1]
            raise ValueError(f"Refused by {words} on {dataset}: its ε is already ∞ — a run that was not private used "
                             f"it ({last.label}: {last.reason}), so nothing of the budget is left; nothing was run.")
        events = [e for v in charged for e in v.events]
        for rid, (ds, held) in self._reserved.items():
            if ds == dataset and rid != exclude:
                events += [e for v in held if v.claim and v.private for e in v.events]
        if not events:
            return
        acc = self._acc(dataset)
        target = acc.target_relation([e.relation for e in events])
        spent = acc.basic_total(target)[0]
        planned = _basic([convert_event(e, target) for e in events])[0]
        if spent + planned > self.budget_epsilon * (1 + 1e-9):
            raise ValueError(f"Refused by {words} on {dataset}: this would spend ε {planned:.4g} (with what other runs "
                             f"have reserved) and {spent:.4g} is spent already ({spent + planned:.4g} in all, for "
                             f"{RELATIONS[target]}), more than the budget; nothing was run.")

    def _source(self):
        return f", set {self.budget_source}" if self.budget_source else ""

    def check(self, dataset, verdicts):
        """Refuse (``ValueError``) planned ``verdicts`` on ``dataset`` that the budget does not
        allow: one that would not be private, or a total past the budget (what others have
        reserved counted in). Nothing is recorded or reserved.

        Parameters
        ----------
        dataset : str
        verdicts : iterable of Verdict
        """
        with self._lock:
            self._check(dataset, list(verdicts))

    def reserve(self, dataset, verdicts, session=None):
        """Check ``verdicts`` against the budget (:meth:`check`) and hold them until the
        returned :class:`Reservation` is released: two users cannot both pass the check and
        then both spend.

        Parameters
        ----------
        dataset : str
        verdicts : iterable of Verdict
        session : str, optional
            Who reserves (the rows its charges make carry it).

        Returns
        -------
        Reservation

        Raises
        ------
        ValueError
            As :meth:`check`; nothing is reserved then.
        """
        verdicts = list(verdicts)
        with self._lock:
            self._check(dataset, verdicts)
            rid = next(self._seq)
            self._reserved[rid] = (dataset, [v for v in verdicts if v.claim and v.private])
        return Reservation(self, dataset, verdicts, rid, session)

    def _release(self, rid):
        with self._lock:
            self._reserved.pop(rid, None)

    # ------------------------------------------------------------------ charging
    def charge(self, dataset, verdict, *, label=None, entry=None, session=None):
        """Record one run's verdict on ``dataset`` (it has happened: the budget is not checked
        here; plan with :meth:`reserve` before the run).

        A verdict of a method without a privacy claim is not recorded (None is returned). With
        ``entry``, a row of the same id on the same dataset (the same privacy and relation) is
        added to instead of a new one (an audit charged run by run: one entry).

        Parameters
        ----------
        dataset : str
        verdict : Verdict
        label : str, optional
            Default: the verdict's.
        entry : str, optional
        session : str, optional

        Returns
        -------
        MeterRow or None
        """
        if not isinstance(verdict, Verdict):
            raise ValueError(f"charge takes a Verdict (dpcore.lab.verdicts makes them); got {type(verdict).__name__}")
        if not verdict.claim:
            return None
        if verdict.relation is None:
            raise ValueError("a verdict with a privacy claim states its neighbouring relation")
        label = label or verdict.label
        with self._lock:
            acc = self._acc(dataset)
            run = acc.record(list(verdict.events), verdict.relation, label=label, private=verdict.private,
                             reason=verdict.reason)
            if entry is not None:
                row = next((r for r in reversed(self._rows) if r.entry == entry and r.dataset == dataset), None)
                if row is not None:
                    if row.private != verdict.private or row.relation != verdict.relation:
                        raise ValueError(f"entry {entry!r}: a record must keep the entry's privacy and relation")
                    row.epsilon = math.fsum([row.epsilon, run.epsilon])
                    row.delta = min(1.0, row.delta + run.delta)
                    row.fits += int(verdict.fits)
                    row.events += run.n_releases
                    row.seq = next(self._seq)
                    return row
            row = MeterRow(dataset, label, run.epsilon, run.delta, run.private, run.reason, int(verdict.fits),
                           run.n_releases, verdict.relation, entry, session, next(self._seq), time.time(),
                           verdict.method)
            self._rows.append(row)
            return row

    # ------------------------------------------------------------------ totals
    def headline(self, dataset, delta=None):
        """What the meter says of ``dataset``: ε (∞ once a run that is not private touched it),
        the private runs' basic, tight and RDP totals at ``delta``, fits and the budget.

        Parameters
        ----------
        dataset : str
        delta : float in (0, 1), optional
            δ of the tight and RDP totals (default: the meter's ``delta``, else the basic δ
            total of the private runs, else 1e-6).

        Returns
        -------
        Headline
        """
        with self._lock:
            acc = self._acc(dataset)
            rows = [r for r in self._rows if r.dataset == dataset]
            eps, dlt = acc.basic_total() if acc.runs else (0.0, 0.0)
            relation = acc.target_relation() if acc.runs else None
            if delta is None:
                delta = self.delta if self.delta is not None else (dlt if dlt > 0 else 1e-6)
            delta = float(delta)
            tight = rdp = None
            if acc.runs:
                try:
                    tight = acc.tight_total(delta)
                except Exception:  # noqa: BLE001 - the headline is given by the basic total whatever happens here
                    tight = None
                if hasattr(acc, "rdp_total"):
                    try:
                        rdp = acc.rdp_total(delta)
                    except Exception:  # noqa: BLE001
                        rdp = None
            private_fits = sum(r.fits for r in rows if r.private)
            nonprivate_fits = sum(r.fits for r in rows if not r.private)
            unbounded = nonprivate_fits > 0
            budget = self.budget_epsilon
            remaining = math.inf if budget is None else (0.0 if unbounded else max(0.0, budget - eps))
            return Headline(dataset, math.inf if unbounded else eps, eps, dlt, relation, delta, tight, rdp,
                            private_fits, nonprivate_fits, budget, remaining)

    def summary(self, delta=None):
        """A headline per dataset charged so far (a lecturer's view of the class).

        Returns
        -------
        list of Headline
        """
        with self._lock:
            return [self.headline(d, delta) for d in self.datasets()]

    def relation(self, dataset):
        """The weakest relation common to the private runs on ``dataset`` (None: none yet)."""
        with self._lock:
            acc = self._accountants.get(dataset)
            return acc.target_relation() if acc is not None and acc.runs else None

    def __repr__(self):
        with self._lock:
            return (f"PrivacyMeter({len(self.datasets())} dataset(s), {len(self._rows)} entr(y/ies), budget "
                    f"{'none' if self.budget_epsilon is None else format(self.budget_epsilon, 'g')})")
