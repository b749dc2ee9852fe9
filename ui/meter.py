"""The privacy meter of the app: one :class:`dpcore.privacy.meter.PrivacyMeter` per server,
shown in the sidebar, and the calls through which the pages plan and charge their runs.

Nothing here decides whether a run is private or what it spends: :mod:`dpcore.lab.verdicts`
does (``plan_run``, ``judge_run``, ``judge_row``); the meter charges what it is given. The
pages only ask and show.

One meter per server. Privacy composes over everything released about a dataset, whoever
released it: the meter is shared by every tab and session of this server (it is held by the
server process, not in Streamlit's caches, which any client may clear), so a reload or a new
tab keeps what was spent, and a class on one server spends one budget per dataset. Each tab also sees its own runs (its "count"),
which it may start afresh; what was spent on a dataset, and what remains of a budget, never
change back.

The class budget (ε per dataset) is set once for the server:

- at launch, ``streamlit run app.py -- --class-budget 3`` (or the environment variable
  ``DPCLUST_CLASS_BUDGET=3``): fixed for the server's life;
- by the lecturer on the Lecturer page, behind a passphrase given at launch
  (``--lecturer-passphrase WORDS`` or ``DPCLUST_LECTURER_PASSPHRASE``);
- with neither (one person on a laptop), in the sidebar's field, by whoever uses the app.

Under a budget a run that would not be private (a public seed, a non-private start, a radius
read off the data, float noise) is refused beside its button: its loss would be unbounded.
"""
from __future__ import annotations

import math
import os
import threading
import uuid

import streamlit as st

from dpcore.privacy import RELATIONS
from ui import launch_option
from dpcore.lab.verdicts import dataset_key
from dpcore.privacy.meter import PrivacyMeter, Verdict
from dpcore.privacy.odds import odds_sentence

__all__ = ["class_meter", "session_view", "dataset_key", "reserve", "charge", "charge_all", "format_epsilon",
           "relation_words", "epsilon_odds", "sidebar", "sidebar_controls", "budget_settings", "FIT_WORDS",
           "CHARGE_RULE", "METER_HELP", "CLASS_BUDGET_KEY", "SESSION_METER_KEY"]

CLASS_BUDGET_KEY = "class_budget"        # the sidebar's budget field (solo use: no lecturer, no launch budget)
SESSION_METER_KEY = "session_meter"      # this tab's view of the server's meter
SESSION_ID_KEY = "_meter_session_id"
DELTA_KEY = "meter_delta"                # the δ of the tight and RDP totals, picked in the sidebar
ENV_BUDGET, ENV_PASSPHRASE = "DPCLUST_CLASS_BUDGET", "DPCLUST_LECTURER_PASSPHRASE"
#: the first δ choice: the fits' own δ, their basic δ total (a string, not None: a selectbox whose value is
#: None shows "Choose an option" while a run is going on)
OWN_DELTA = "own"
#: the δ choices of the sidebar's totals
DELTAS = (OWN_DELTA, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3)


def delta_words(d):
    """A δ choice in words."""
    return "the fits' own δ" if d is None or d == OWN_DELTA else f"{d:g}"


def as_delta(d):
    """A δ choice as the meter takes it: None for the fits' own δ, else the number."""
    return None if d is None or d == OWN_DELTA else float(d)


# ----------------------------------------------------------------------------- launch settings
def budget_settings():
    """(budget, passphrase, problem) given at launch: ``--class-budget`` / ``DPCLUST_CLASS_BUDGET``
    and ``--lecturer-passphrase`` / ``DPCLUST_LECTURER_PASSPHRASE``. A budget that is not a
    finite ε > 0 is ignored and ``problem`` says why (shown on the Lecturer page and in the
    sidebar)."""
    raw = launch_option("--class-budget") or os.environ.get(ENV_BUDGET) or None
    passphrase = launch_option("--lecturer-passphrase") or os.environ.get(ENV_PASSPHRASE) or None
    budget, problem = None, ""
    if raw is not None:
        try:
            budget = float(raw)
            if not (0 < budget < math.inf):
                raise ValueError
        except ValueError:
            budget, problem = None, (f"the class budget given at launch ({raw!r}) is not a number ε > 0: no budget "
                                     "is set")
    return budget, passphrase, problem


_SERVER = {"meter": None}
_SERVER_LOCK = threading.Lock()


def class_meter() -> PrivacyMeter:
    """The server's one meter (shared by every session), with the launch budget if one was given.

    Held by the server process itself, not in Streamlit's ``st.cache_resource``: any browser can
    ask Streamlit to clear its caches ("Clear cache" in the app menu), which would reset what the
    class has spent."""
    with _SERVER_LOCK:
        if _SERVER["meter"] is None:
            budget, _, _ = budget_settings()
            _SERVER["meter"] = PrivacyMeter(budget, budget_source="at launch" if budget is not None else "")
        return _SERVER["meter"]


def _forget_class_meter():
    """A fresh meter at the next call (the tests' fresh server; a real server keeps its meter for life)."""
    with _SERVER_LOCK:
        _SERVER["meter"] = None


class_meter.clear = _forget_class_meter


def lecturer_controls() -> bool:
    """Whether a lecturer passphrase was given at launch (the budget is then the lecturer's)."""
    return budget_settings()[1] is not None


def budget_fixed() -> bool:
    """Whether the budget is fixed for the tabs: given at launch, or in the lecturer's hands."""
    return budget_settings()[0] is not None or lecturer_controls()


def passphrase_ok(text) -> bool:
    """Whether ``text`` is the lecturer's passphrase given at launch (compared in constant time)."""
    import hmac
    passphrase = budget_settings()[1]
    return passphrase is not None and isinstance(text, str) and hmac.compare_digest(text.encode(), passphrase.encode())


def set_class_budget(epsilon):
    """The lecturer sets (or, with None, clears) the server's class budget."""
    class_meter().set_budget(epsilon, "by the lecturer" if epsilon is not None else "")


def budget_is_set() -> bool:
    """Whether a class budget holds for this tab's runs (given at launch, by the lecturer, or in the
    sidebar's field in solo use)."""
    return class_meter().budget_epsilon is not None or (
        not budget_fixed() and st.session_state.get(CLASS_BUDGET_KEY) is not None)


BUDGET_SEEN_KEY = "_class_budget_seen"     # the server's budget this tab last showed or set
MIN_BUDGET = 0.01                           # the smallest class budget the sidebar takes
_MISSING = object()


def _sync_sidebar_budget(before_widget=False):
    """Solo use (no launch budget, no lecturer): the sidebar field sets the server's budget, but
    only when it was changed in this tab (a tab opened earlier does not write its old value
    back); a tab whose field was not changed follows the server's budget (``before_widget``: the
    field is not drawn yet in this run, so it can be updated)."""
    if budget_fixed():
        return
    meter = class_meter()
    server = meter.budget_epsilon
    if CLASS_BUDGET_KEY not in st.session_state:
        st.session_state[BUDGET_SEEN_KEY] = server
        return
    value = st.session_state.get(CLASS_BUDGET_KEY)
    value = None if value is None else float(value)
    seen = st.session_state.get(BUDGET_SEEN_KEY, _MISSING)
    if seen is _MISSING:
        seen = server          # the field got its value before this tab synced (a link, a test): it is this tab's
        changed = value != server
    else:
        changed = value != seen
    if changed and value is not None and not MIN_BUDGET <= value < math.inf:
        return                # refused under the field (sidebar_controls): the budget stays as it was
    if changed:
        meter.set_budget(value, "in the sidebar" if value is not None else "")
    elif before_widget and server != value:
        st.session_state[CLASS_BUDGET_KEY] = server       # another tab changed it: show the server's
    st.session_state[BUDGET_SEEN_KEY] = meter.budget_epsilon


# ----------------------------------------------------------------------------- the session's view
def session_id():
    """This session's id (for the meter's per-tab view and the run queue's one place per session)."""
    return _session_id()


def _session_id():
    if SESSION_ID_KEY not in st.session_state:
        st.session_state[SESSION_ID_KEY] = uuid.uuid4().hex
    if not isinstance(st.session_state.get(SESSION_METER_KEY), SessionView):   # this tab's view exists once it plans
        st.session_state[SESSION_METER_KEY] = SessionView(st.session_state[SESSION_ID_KEY])
    return st.session_state[SESSION_ID_KEY]


class SessionView:
    """This tab's view of the server's meter: its own runs (since its last new count) and the
    datasets' totals, which are the server's."""

    def __init__(self, session, mark=0):
        self.session, self.mark = session, mark

    @property
    def meter(self):
        return class_meter()

    @property
    def runs(self):
        """This tab's entries since its last new count, in order (:class:`dpcore.privacy.meter.MeterRow`)."""
        return self.meter.rows(session=self.session, since=self.mark)

    def private_total(self, dataset):
        """(ε, δ) of the private runs on ``dataset`` on this server (basic composition)."""
        h = self.meter.headline(dataset_key(dataset))
        return h.private_epsilon, h.private_delta

    def relation(self, dataset):
        return self.meter.relation(dataset_key(dataset))

    def n_fits(self, dataset, private=True):
        h = self.meter.headline(dataset_key(dataset))
        return h.private_fits if private else h.nonprivate_fits

    def nonprivate_runs(self, dataset):
        return [r for r in self.meter.rows(dataset_key(dataset)) if not r.private]

    def datasets(self):
        return self.meter.datasets()

    def new_count(self):
        """Start this tab's count again (the totals and the budget do not change)."""
        self.mark = self.meter.since()


def session_view() -> SessionView:
    _session_id()                              # creates the view (none yet, or one of an older version)
    return st.session_state[SESSION_METER_KEY]


def _current():
    from ui.common import current_dataset
    return current_dataset()


# ----------------------------------------------------------------------------- planning and charging
def reserve(verdicts, dataset=None):
    """Reserve the planned ``verdicts`` (made by :mod:`dpcore.lab.verdicts`) on ``dataset``
    (default: the current one) against the class budget, before the run; a ValueError in the
    budget's words when it does not allow them (the page shows it beside its button). Use the
    returned reservation as a context manager around the run (a stopped run gives it back)."""
    _sync_sidebar_budget()
    return class_meter().reserve(dataset_key(dataset if dataset is not None else _current()), list(verdicts),
                                 session=_session_id())


def charge(verdict: Verdict, dataset=None, *, label=None, entry=None):
    """Charge one run's verdict (made by :mod:`dpcore.lab.verdicts`) to the server's meter, under
    ``dataset`` (default: the current one), as this tab's. Call it after the run, before the page
    draws its results (:data:`CHARGE_RULE`): the sidebar is drawn after the page (``app.py``)."""
    return class_meter().charge(dataset_key(dataset if dataset is not None else _current()), verdict, label=label,
                                entry=entry, session=_session_id())


def charge_all(verdicts, dataset=None, **kwargs):
    """:func:`charge` each of ``verdicts``."""
    return [charge(v, dataset, **kwargs) for v in verdicts]


# ----------------------------------------------------------------------------- words
def format_epsilon(eps: float) -> str:
    """ε as a student reads it: 4 significant digits, no exponent below a billion
    (25 490 → "25,490", 0.5 → "0.5"), "∞" for an unbounded loss."""
    if math.isinf(eps):
        return "∞"
    if eps == 0 or 1e-3 <= abs(eps) < 1e4:
        return f"{eps:.4g}"
    if 1e4 <= abs(eps) < 1e9:
        return f"{eps:,.0f}"
    return f"{eps:.3e}"


def relation_words(relation) -> str:
    """A relation in the meter's words (the library's :data:`dpcore.privacy.RELATIONS`)."""
    return RELATIONS.get(relation, "no private run yet")


def epsilon_odds(where, epsilon, delta=0.0, relation=None):
    """The odds sentence of an ε (:func:`dpcore.privacy.odds.odds_sentence`) as a caption under
    the ε input ``where`` belongs to (``where``: ``st`` or a column)."""
    try:
        text = odds_sentence(float(epsilon), float(delta or 0.0), relation)
    except (TypeError, ValueError):
        return None
    return where.caption(":material/casino: " + text)


#: what the meter counts, in its help: one fit is one release
FIT_WORDS = ("A fit is one run of one method on the data, whatever the number of noisy steps inside it: one Cluster "
             "or k-means run, one ε of a Gibbs run, one method of a Co-clustering run, one ε × trial of a sweep, one "
             "run of an audit on D or on D′. Each fit is one release (a SuLQ k-means fit adds noise at each of its "
             "iterations: its ledger lists them, and its ε covers them all).")
#: when a run is charged (the metric's help; the pages follow it)
CHARGE_RULE = ("A run is charged when its result is released (shown): a stopped run or sweep that shows nothing has "
               "released nothing and is not charged. An audit of your data charges its runs as they finish (piece by "
               "piece, as its progress bar moves): a stopped audit has paid for the runs it finished; so has a "
               "stopped Compare ε on the Cluster page (each ε's fit is charged as it finishes) and a stopped sweep "
               "(each cell, one method at one ε, is charged when it is first drawn).")
METER_HELP = ("Every fit of a private method on this dataset on this server (every tab and session: privacy composes "
              "over everything released), added up (basic composition). " + FIT_WORDS + " Running a method again "
              "on the same data is a new fit and spends again; fits on other datasets are counted separately. "
              + CHARGE_RULE + " Each fit is counted in the weakest neighbouring relation common to this dataset's "
              "fits: a fit whose ε is stated for 'one record added or removed' costs 2ε for 'one record replaced' or "
              "'one cell ±1' (group privacy). Once a fit that is not private (a public seed, a non-private start, a "
              "radius read off the data, float noise) used the data, nothing bounds what was learnt: the meter shows "
              "ε = ∞, with the private fits' total beside it. The tight (privacy-loss distributions, Google's "
              "dp-accounting) and RDP totals compose the same fits noise step by noise step: upper bounds on ε at "
              "the δ you pick, smaller when there are many fits. The raw data and the non-private reference solvers "
              "are shown to teach and are not counted.")
#: what a reload does (a classroom report: the old meter reset without saying so)
RELOAD_NOTE = ("This meter counts every run on this server, in every tab: a reload or a new tab keeps it. Spent "
               "privacy cannot be given back; 'New count' starts only this tab's own list again.")


# ----------------------------------------------------------------------------- the sidebar
def fits_words(n: int, private: bool = True) -> str:
    return f"{n:,} {'private' if private else 'non-private'} fit(s)" + (" (each a release)" if private else "")


def _new_count():
    session_view().new_count()


def sidebar_controls():
    """The controls drawn once before the page runs: this tab's new count, the δ of the totals,
    and the class budget (a field in solo use, the budget's words otherwise)."""
    st.sidebar.button("New count for this tab", key="_reset_budget", on_click=_new_count,
                      help="Starts this tab's own list of runs again. It does not give privacy back: what was spent "
                           "on a dataset stays spent, and what remains of a class budget does not rise.")
    st.sidebar.selectbox("δ of the tight and RDP totals", DELTAS, index=0, key=DELTA_KEY, format_func=delta_words,
                         help="The tight (privacy-loss distributions) and RDP totals are ε at this δ; by default the "
                              "δ the fits spent together (basic composition). Below it, they are ∞: the fits' own "
                              "δ already exceeds it.")
    budget, passphrase, problem = budget_settings()
    meter = class_meter()
    if problem:
        st.sidebar.error(problem)
    if budget_fixed():
        who = "given at launch" if budget is not None else "set by the lecturer (Lecturer page)"
        st.sidebar.caption(f"Class budget: {'ε ≤ ' + format_epsilon(meter.budget_epsilon) + ' per dataset' if meter.budget_epsilon is not None else 'none'} "
                           f"({who}; it holds for every tab and session of this server).")
        return
    _sync_sidebar_budget(before_widget=True)
    default = {} if CLASS_BUDGET_KEY in st.session_state else {"value": meter.budget_epsilon}
    value = st.sidebar.number_input(        # the range is checked here, not by the browser (which would say nothing)
        "Class budget: ε per dataset", step=1.0, format="%.4g", key=CLASS_BUDGET_KEY,
        placeholder="no limit", help="Optional. A run that would take a dataset's total (basic composition, in the "
                                     "weakest relation common to its runs) past this ε is refused before it runs, and "
                                     "so is any run that would not be private. It holds for every tab of this "
                                     "server. Empty: no limit.", **default)
    if value is not None and not MIN_BUDGET <= value < math.inf:
        st.sidebar.error(f"Class budget: ε per dataset must be at least {MIN_BUDGET:g} (or empty: no limit), not "
                         f"{value:g}. The budget was not changed"
                         + (f": it stays ε ≤ {format_epsilon(meter.budget_epsilon)}." if meter.budget_epsilon is not None
                            else ": there is none."))
        return
    if value is not None:
        epsilon_odds(st.sidebar, value)
    _sync_sidebar_budget()


def _delta():
    return as_delta(st.session_state.get(DELTA_KEY))


def _show_dataset_meter(name: str, label: str, help_text: str):
    """The metric of one dataset: its ε (∞ after a run that was not private), the private runs'
    totals side by side, fits, the odds sentence and the budget."""
    meter = class_meter()
    h = meter.headline(name, _delta())
    st.metric(label, format_epsilon(h.epsilon), help=help_text)
    if h.unbounded:
        last = next((r for r in reversed(meter.rows(name)) if not r.private), None)
        st.caption(f"**ε = ∞: a fit that was not private used these data** ({fits_words(h.nonprivate_fits, False)}; "
                   f"last: {last.label if last else ''}: {last.reason if last else ''}). Nothing bounds what it "
                   f"revealed. The private fits add up to ε = {format_epsilon(h.private_epsilon)}"
                   + (f" for {relation_words(h.relation)}." if h.relation else "."))
    if h.private_fits:
        below = h.delta < h.private_delta * (1 - 1e-9) and any(t is not None and math.isinf(t.epsilon)
                                                               for t in (h.tight, h.rdp))
        others = [(w, t.epsilon) for w, t in (("tight (privacy-loss distributions)", h.tight), ("RDP (Rényi)", h.rdp))
                  if t is not None]
        st.caption(f"for **{relation_words(h.relation)}** (the weakest relation common to the fits) · "
                   + fits_words(h.private_fits) + f" · private fits: basic (adding up) ε = "
                   f"{format_epsilon(h.private_epsilon)} at δ = {h.private_delta:.3g}; at δ = {h.delta:.3g}: "
                   + "; ".join(f"{w} ε = {format_epsilon(e)}" for w, e in others)
                   + (" (∞: this δ is below what fits stated only as (ε, δ) spent; no ε holds at it)"
                      if below else ""))
    if not h.unbounded and h.epsilon > 0:
        st.caption(odds_sentence(h.epsilon, h.private_delta, h.relation))
    if h.budget is not None:
        st.caption(f"Class budget: ε ≤ {format_epsilon(h.budget)} per dataset · "
                   + (f"{format_epsilon(h.remaining)} left here" if h.remaining > 0 else
                      "used up here: private runs are refused"))
    return h


def sidebar(container=None):
    """The shared sidebar: current dataset and the server's privacy meter for it, this tab's
    latest runs. ``app.py`` draws it before the page and again after the page has run, so it shows
    the state after the page's run. When the tab's last fit was on another dataset (a page that
    chose its own data), a second metric shows that one."""
    from ui.common import DATASET_KEY, DEFAULT_DATASET, current_dataset
    with (st.sidebar.container() if container is None else container):
        try:
            ds = current_dataset()
        except ValueError as exc:  # a stale spec: fall back to the default
            st.error(str(exc))
            st.session_state[DATASET_KEY] = {"spec": DEFAULT_DATASET}
            ds = current_dataset()
        st.markdown(f"**Dataset:** {ds.name}")
        st.caption(ds.description)
        view, meter = session_view(), class_meter()
        name = dataset_key(ds)
        _show_dataset_meter(name, "Privacy spent on this dataset (ε)", METER_HELP)
        st.caption(RELOAD_NOTE)
        mine = view.runs
        if mine and mine[-1].dataset != name:     # a page that chose its own data
            other = mine[-1].dataset
            _show_dataset_meter(other, f"Privacy spent on {other} (ε)", (
                "The dataset of this tab's last fit, which is not the Data page's (Co-clustering and k-means choose "
                "their own data): every fit on it on this server, added up, in the weakest relation common to its "
                "fits. " + FIT_WORDS + " " + CHARGE_RULE))
            latest = []
            for r in reversed(mine):          # the last page run's entries on that dataset
                if r.dataset != other:
                    break
                latest.append(r)
            shown = [(_entry_words(r) if r.private else f"{_entry_words(r)}, not private: {r.reason}")
                     for r in reversed(latest[:4])]
            st.caption(f"Latest on **{other}**: " + "; ".join(shown)
                       + (f" (and {len(latest) - 4:,} earlier entries)" if len(latest) > 4 else ""))
        here = [r for r in mine if r.dataset == name]
        if here:
            with st.expander(f"This tab's fits on this dataset ({sum(r.fits for r in here):,})"):
                for r in here[-20:]:
                    st.caption(_entry_words(r) + ("" if r.private else f" — not private: {r.reason}"))
        others = [d for d in meter.datasets() if d not in (name,)]
        if others:
            with st.expander("Other datasets on this server"):
                for d in others:
                    h = meter.headline(d, _delta())
                    st.caption(f"{d}: ε {format_epsilon(h.epsilon)}"
                               + (f" (private fits: {format_epsilon(h.private_epsilon)})" if h.unbounded else "")
                               + (f" for {relation_words(h.relation)}" if h.relation else "")
                               + f", {fits_words(h.private_fits)}"
                               + (f", {fits_words(h.nonprivate_fits, False)}" if h.nonprivate_fits else ""))


def _entry_words(r) -> str:
    return r.label + (f" ({r.fits:,} fits)" if r.fits > 1 else "")


def sidebar_slot():
    """Start the shared sidebar before the page runs: an area for :func:`sidebar`, then the
    controls (:func:`sidebar_controls`). The area is filled at once with the state before the
    page; the page may end with Streamlit's Stop, after which nothing more is drawn, so that is
    what stays."""
    from ui.common import ResultSlot
    slot = ResultSlot(st.sidebar)
    sidebar_controls()
    sidebar(slot.previous())
    return slot
