"""One verdict per run, decided here: whether it is private, why not, and what it spends.

Every page, sweep and audit asks this module, never decides itself. A verdict
(:class:`~dpcore.privacy.meter.Verdict`) combines three things:

1. **the estimator** — its plan before the fit (:meth:`planned_privacy
   <dpcore.privacy.accounting.PrivateEstimatorMixin.planned_privacy>`: ε, δ, relation, typed
   events, and whether its parameters allow a private release: not from a non-private start,
   not with a radius read off the data, not with float noise) and its record after it (the
   ledger's typed events, ``released_private_``, leaks noticed during the fit);
2. **the catalogue entry** — the method's own exceptions, as fields of
   :class:`~dpcore.lab.methods.Method`: ``needs_mixing`` (a Gibbs sample is private only once
   its chain has mixed, which only a caller that checks mixing can say) and
   ``data_hyperparameters`` (parameters that make a run not private when their value was read
   off the data, e.g. a subspace dimension q suggested from the data);
3. **the run's context** (:class:`RunContext`) — a public seed, the dataset (what was read off
   it), where the run happens (a page, a sweep, an audit) and the caller's mixing verdict.

:func:`plan_run` gives the verdict before a run (what a budget checks and reserves; a run past the
work or memory cap of :mod:`dpcore.work` is refused there, before it starts),
:func:`judge_run` after it (what a meter charges), :func:`judge_row` for a sweep's row (a run
that may have happened in another process: its events travel in the row).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..defaults import public_upload_subspace_dim
from ..privacy.accountant import PrivacyEvent
from ..privacy.meter import Verdict, events_from_json
from ..work import check_work
from .methods import get_method

__all__ = ["RunContext", "plan_run", "judge_run", "judge_row", "dataset_key", "estimator_reasons", "context_reasons",
           "data_read_reason", "mixing_unchecked", "NOT_MIXED_REASON", "FROZEN_REASON", "NO_CLAIM_REASON"]

#: why a chain that the caller judged not mixed gives no ε
NOT_MIXED_REASON = ("the chain has not mixed (the page's verdict: not yet mixed): its sample is not the exponential "
                    "mechanism's exact draw, so no ε holds for it")
#: why chains that did not move give no ε
FROZEN_REASON = ("the chains did not move (the page's verdict: not judged): its sample is not the exponential "
                 "mechanism's exact draw, so no ε holds for it")
#: a method without a privacy claim
NO_CLAIM_REASON = "the method makes no privacy claim: its runs protect nobody"


def mixing_unchecked(where: str) -> str:
    """Why a run of a method whose guarantee needs a mixed chain is not private ``where`` (e.g.
    "a sweep", "an audit") mixing is not checked."""
    return f"its guarantee holds only once the chain has mixed, which {where} does not check (the Gibbs page does)"


@dataclass(frozen=True)
class RunContext:
    """What a run's verdict depends on besides the estimator and its catalogue entry.

    Attributes
    ----------
    seed : int or None, default None
        A public seed the noise came from (the run is then not private: anyone can redraw it);
        None: secret noise.
    dataset : dpcore.data.Dataset or None, default None
        The data (its parameters say what was read off them, e.g. an accepted data-read q).
    where : str, default "the page"
        Where the run happens, in words ("the page", "a sweep", "an audit").
    checks_mixing : bool, default False
        Whether the caller judges the chains' mixing (the Gibbs page does; sweeps and audits
        do not).
    mixing : bool or None, default None
        The caller's mixing verdict after the run (None: not yet judged: a plan).
    frozen : bool, default False
        The caller found the chains did not move.
    """
    seed: int | None = None
    dataset: object = None
    where: str = "the page"
    checks_mixing: bool = False
    mixing: bool | None = None
    frozen: bool = False


def data_read_reason(dataset, param, value):
    """Why running with ``param = value`` on ``dataset`` is not private because the value was
    read off the data, or None.

    An upload's public default subspace dimension q comes from its shape
    (:func:`dpcore.defaults.public_upload_subspace_dim`); the Data page can also suggest a q read
    off the data, which, once accepted, lives in the dataset's parameters (``subspace_dim``). A
    run with that q used the data to choose a hyperparameter: its guarantee does not cover the
    choice. A q equal to the public default is the public choice, whatever suggested it.

    Parameters
    ----------
    dataset : dpcore.data.Dataset or None
    param : str
        E.g. "subspace_dim".
    value : object

    Returns
    -------
    str or None
    """
    params = getattr(dataset, "params", None) or {}
    if param != "subspace_dim" or params.get("kind") != "upload":
        return None
    accepted = params.get("subspace_dim")
    if accepted is None or value is None or int(value) != int(accepted) or \
            int(value) == public_upload_subspace_dim(dataset.d):
        return None
    return f"q = {int(value)} was read off the data (the Data page's suggestion, accepted)"


def estimator_reasons(estimator, fitted=False):
    """Why the estimator's run is (or, before the fit, would be) not private, from the estimator
    alone: its plan's reasons; after the fit, the leaks it noticed (``privacy_leaks_``) and a
    release that came out not private.

    Parameters
    ----------
    estimator : private estimator of dpcore
    fitted : bool, default False

    Returns
    -------
    list of str
    """
    why = list(estimator._plan_reasons()) if hasattr(estimator, "_plan_reasons") else []
    if not fitted:
        return why
    if not why:      # a leak the plan could not foresee (e.g. input scaled by its own statistics)
        why += [t for t in dict.fromkeys(str(x).strip() for x in getattr(estimator, "privacy_leaks_", ()) or ()) if t]
    if not getattr(estimator, "released_private_", False) and not why:
        why.append("the fit released nothing private")
    return why


def context_reasons(method, params, context):
    """Why a run of ``method`` with ``params`` is not private in ``context``, beyond the
    estimator itself: a public seed, an unchecked or unmixed chain (``needs_mixing``), a
    hyperparameter read off the data (``data_hyperparameters``).

    Parameters
    ----------
    method : str or Method
    params : dict
        The estimator's parameters (``get_params()``).
    context : RunContext

    Returns
    -------
    list of str
    """
    m = get_method(method)
    why = []
    if context.seed is not None:
        why.append(f"public seed {context.seed} (reproducible mode)")
    if m.needs_mixing:
        if not context.checks_mixing:
            why.append(mixing_unchecked(context.where))
        elif context.mixing is False:
            why.append(FROZEN_REASON if context.frozen else NOT_MIXED_REASON)
    for p in m.data_hyperparameters:
        r = data_read_reason(context.dataset, p, params.get(p))
        if r:
            why.append(r)
    return why


def _is_shape(X):
    return isinstance(X, tuple) and len(X) == 2 and all(isinstance(v, int) for v in X)


def dataset_key(ds):
    """The name a meter counts a dataset under: the records it is about. Every subset and
    preprocessing of the same records is one dataset (privacy composes over everything
    released about the same people): Extended Yale B's faces whatever the subjects or the
    dimension, a CLUTO matrix whatever its weighting, an uploaded file whatever the options it
    is read with (named by its SHA-256, not by its file name, which a shared meter would show
    to others). A generated dataset is named by its parameters (another draw is other records).

    Parameters
    ----------
    ds : dpcore.data.Dataset or str
        A dataset, or a name (returned as is).

    Returns
    -------
    str
    """
    if isinstance(ds, str):
        return ds
    params = getattr(ds, "params", None) or {}
    kind = params.get("kind")
    if kind == "upload" and params.get("sha256"):
        return f"an uploaded file ({params['sha256'][:8]})"
    if kind == "yaleb":
        return "Extended Yale B (all its subjects and preprocessings)"
    if kind == "cluto" and params.get("name"):
        return f"CLUTO {params['name']} (all its preprocessings)"
    if kind == "digits":
        return "handwritten digits (UCI optdigits)"
    return ds.name


def _label(method, estimator, label):
    return label or get_method(method).label


def plan_run(method, estimator, X=None, context=RunContext(), *, label=""):
    """The verdict of a run before it runs: what it will spend (the estimator's plan) and
    whether it will be private (the estimator's parameters, the catalogue entry, the context).
    A run whose mixing the caller will judge is planned as private (its cost is reserved).

    Parameters
    ----------
    method : str or Method
        The catalogue entry of ``estimator``.
    estimator : estimator
        Built by the catalogue, not fitted.
    X : array_like or tuple (n, d), optional
        The data or its shape. The plan reads only the shape; given the data, the checks the fit
        itself makes on the values (:meth:`data_leaks`, e.g. input scaled by its own statistics)
        are run too, so that a budget can refuse a run that would come out not private.
    context : RunContext, optional
    label : str, optional

    Returns
    -------
    Verdict
        ``planned=True``; no events and ``claim=False`` for a method without a privacy claim.

    Raises
    ------
    ValueError
        If the estimator's plan refuses its parameters or the shape of X, or the run's estimated
        work or memory is past its cap (:func:`dpcore.work.check_work`: the message names the
        parameter to lower and the largest value that fits), before anything runs.
    """
    m = get_method(method)
    label = _label(m, estimator, label)
    if X is not None:
        check_work(estimator, X)          # past the work or memory cap: refused before the run, in words
    if not m.private:
        return Verdict(label, None, (), False, (NO_CLAIM_REASON,), claim=False, planned=True, method=m.name)
    plan = estimator.planned_privacy(X)
    why = list(plan.reasons) + context_reasons(m, estimator.get_params(), context)
    if X is not None and not _is_shape(X) and hasattr(estimator, "data_leaks"):
        why += estimator.data_leaks(X)    # the checks the fit makes on the values (e.g. input scaled by itself)
    return Verdict(label, plan.relation, plan.events, not why, tuple(dict.fromkeys(why)), planned=True,
                   method=m.name)


def judge_run(method, estimator, context=RunContext(), *, label=""):
    """The verdict of a fitted run: what its ledger spent (typed events) and whether it is
    private (the fit's own record, the catalogue entry, the context).

    Parameters
    ----------
    method : str or Method
    estimator : fitted estimator
    context : RunContext, optional
        With the caller's mixing verdict for a method that needs one.
    label : str, optional

    Returns
    -------
    Verdict
    """
    m = get_method(method)
    label = _label(m, estimator, label)
    if not m.private:
        return Verdict(label, None, (), False, (NO_CLAIM_REASON,), claim=False, method=m.name)
    why = estimator_reasons(estimator, fitted=True) + context_reasons(m, estimator.get_params(), context)
    return Verdict(label, estimator.claimed_relation, tuple(estimator.ledger_.events()), not why,
                   tuple(dict.fromkeys(why)), method=m.name)


def judge_row(row, method=None, context=RunContext(), *, params=None, label=""):
    """The verdict of one run of a sweep from its row (:func:`dpcore.lab.sweeps.run_task`):
    its ledger's events travel in the row (``events``, JSON), with the estimator's own reasons
    (``not_private``), so a run made in another process is judged as one made here.

    Parameters
    ----------
    row : mapping
        A row of :func:`dpcore.lab.sweeps.run_sweep`.
    method : str or Method, optional
        Default: the row's ``name``.
    context : RunContext, optional
    params : dict, optional
        The run's estimator parameters (for ``data_hyperparameters``); default: the row's ``q``
        as ``subspace_dim``.
    label : str, optional

    Returns
    -------
    Verdict
    """
    m = get_method(method if method is not None else row["name"])
    label = label or f"{row['algorithm']}, ε = {row['epsilon']:g}, trial {row['trial']}"
    if not m.private:
        return Verdict(label, None, (), False, (NO_CLAIM_REASON,), claim=False, method=m.name)
    events = events_from_json(row.get("events"))
    if not events and row.get("epsilon_spent") == row.get("epsilon_spent"):   # an older row: its totals
        events = [PrivacyEvent.approx_dp(float(row["epsilon_spent"]), float(row.get("delta") or 0.0))]
    own = [r for r in str(row.get("not_private") or "").split(" | ") if r]
    if not row.get("released_private", True) and not own:
        own = ["the fit released nothing private"]
    if params is None:
        q = row.get("q")
        params = {} if q is None or q != q else {"subspace_dim": int(q)}
    why = own + context_reasons(m, params, context)
    return Verdict(label, m.relation, tuple(events), not why, tuple(dict.fromkeys(why)), method=m.name)
