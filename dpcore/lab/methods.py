"""The method catalogue: one entry per clustering method, and the one way to build one.

Every page, sweep, comparison, audit and reproduction builds its estimators here
(:func:`build_estimator` or :meth:`Method.build`), so a method run once on a page, in a sweep
or in a worker process is built the same way, and each run's seed comes from one recipe
(:func:`run_seed`).

An entry (:class:`Method`) names its class by import path ("module:Class") and holds the
family (which data and metrics apply), whether it is private, whether it takes δ, the
neighbouring relation it claims its ε for (a key of
:data:`dpcore.privacy.accountant.RELATIONS`), the audit's default test statistic, a label,
a description, fixed parameters, named presets and its dataset-dependent defaults.

Your own method
---------------
:func:`register_method` adds an entry. The class is named by import path, and a task sent to a
worker process (a process pool or a Dask worker) carries the entry's spec (its import paths and
fields, :meth:`Method.spec`), never a registry name, so a worker imports the class itself and
never needs the parent's registry. A class defined in a script run as ``python script.py``
(module ``__main__``) is named by the script's module name (its file name without ``.py``); a
worker imports that module, which runs the script's top level again, so the script must guard
its top level with ``if __name__ == "__main__":``. ``examples/own_method.py`` shows the whole
round trip.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable

import numpy as np

from ..defaults import default_n_clusters, default_subspace_dim
from ..privacy.accountant import RELATIONS
from ..privacy.accounting import PrivateEstimatorMixin

__all__ = ["Method", "METHODS", "FAMILIES", "FAMILY_DEFAULTS", "FAMILY_KINDS", "PRESETS", "DPNMF_PAPER",
           "DPNMF_AS_PUBLISHED", "NOT_PRIVATE_PRESETS",
           "register_method", "unregister_method", "get_method", "build_estimator", "run_seed", "preset",
           "presets_for"]

FAMILIES = ("subspace", "kmeans", "cocluster", "documents")
#: which dataset kinds each family runs on. "documents": the co-clustering paper's peers that
#: cluster only the rows of a count matrix (documents as L2-normalised points, or NMF): they run
#: on count matrices like the co-clustering methods but release centres or a basis, not a
#: contingency table, so the audit looks at them differently.
FAMILY_KINDS = {"subspace": {"points"}, "kmeans": {"points"}, "cocluster": {"counts"}, "documents": {"counts"}}
#: the audit's default test statistic per family (each a function of the private outputs only;
#: the names are those of dpcore.lab.audit's statistics)
_FAMILY_STATISTIC = {"subspace": "likelihood_ratio", "kmeans": "likelihood_ratio", "documents": "likelihood_ratio",
                     "cocluster": "table_cell"}


# ----------------------------------------------------------------------------- dataset defaults
def _subspace_defaults(ds):
    """k and q from the dataset (:mod:`dpcore.defaults`)."""
    return {"n_clusters": default_n_clusters(ds), "subspace_dim": default_subspace_dim(ds)}


def _kmeans_defaults(ds):
    """k from the classes (:func:`dpcore.defaults.default_n_clusters`); the radius Λ is the
    generator's public radius when the dataset has one (Gaussian mixtures), otherwise
    ``"data"`` — which leaks, and the estimator warns so."""
    return {"n_clusters": default_n_clusters(ds), "radius": ds.extras.get("public_radius", "data")}


#: s of the sparse recovery (Alg. 5) unless the data have fewer coordinates
SPARSITY = 100


def sparse_kmeans_defaults(ds):
    """The k-means defaults and s = min(:data:`SPARSITY`, d) for the candidate set's sparse recovery."""
    return {**_kmeans_defaults(ds), "sparsity": min(SPARSITY, int(ds.d))}


def _cocluster_defaults(ds):
    """k row and k column clusters, k from the classes."""
    k = default_n_clusters(ds)
    return {"n_row_clusters": k, "n_col_clusters": k}


def _documents_defaults(ds):
    """k from the classes; every document (row) is mapped onto the unit sphere by the method
    (per record, free), so the public radius is 1, and counts are non-negative by kind
    (public), hence the per-coordinate bounds [0, 1] of DP-Lloyd. Nothing is read off the
    data."""
    return {"n_clusters": default_n_clusters(ds), "radius": 1.0, "nonnegative": True}


FAMILY_DEFAULTS = {"subspace": _subspace_defaults, "kmeans": _kmeans_defaults, "cocluster": _cocluster_defaults,
                   "documents": _documents_defaults}


# ----------------------------------------------------------------------------- import paths
_CLASS_CACHE: dict[str, object] = {}


def _script_module():
    """The importable name of the script run as ``__main__``: its module name under
    ``python -m``, else its file's stem (``python script.py`` puts the script's folder on
    ``sys.path``, which spawned workers inherit); None without a file (an interactive session)."""
    main = sys.modules.get("__main__")
    spec_name = getattr(getattr(main, "__spec__", None), "name", None)
    if spec_name and spec_name != "__main__":
        return spec_name
    path = getattr(main, "__file__", None)
    return Path(path).stem if path else None


def _path_of(obj, what):
    """"module:qualname" of a class or function, a ``__main__`` script named by its file's stem."""
    module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", "")
    if not module or "<" in qual:
        raise ValueError(f"{what} must be defined at the top level of a module (workers import it by name); "
                         f"got {obj!r}")
    if module == "__main__":
        module = _script_module() or "__main__"
    return f"{module}:{qual}"


def _resolve(path, what="method"):
    """The object named by ``path`` ("module:qualname"); ValueError when it cannot be imported."""
    if not isinstance(path, str) or path.count(":") != 1:
        raise ValueError(f"{what} must be given as 'module:Name'; got {path!r}")
    if path in _CLASS_CACHE:
        return _CLASS_CACHE[path]
    module, qual = path.split(":")
    try:
        obj = importlib.import_module(module)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        hint = (" (a class defined in an interactive session cannot be imported by worker processes: "
                "define it in a module or a script)" if module == "__main__" else "")
        raise ValueError(f"{what} {path} cannot be imported ({exc}){hint}") from None
    _CLASS_CACHE[path] = obj
    return obj


# ----------------------------------------------------------------------------- the entry
@dataclass(frozen=True)
class Method:
    """One method of the catalogue.

    Attributes
    ----------
    name : str
        Catalogue key.
    target : str
        "module:Class" of the estimator.
    family : {"subspace", "kmeans", "cocluster", "documents"}
        Which data kinds (:data:`FAMILY_KINDS`), defaults and metrics apply.
    private : bool
        Whether it takes ε (and is a private method).
    takes_delta : bool, default False
        Whether it takes δ.
    relation : str or None, default None
        The neighbouring relation its ε is stated for (a key of
        :data:`dpcore.privacy.accountant.RELATIONS`); None for a non-private method.
    audit_statistic : str or None, default None
        The audit's default test statistic (a name of ``dpcore.lab.audit``'s statistics).
    label : str, default ""
        Short display name (the name when empty).
    description : str, default ""
        One line for the UI.
    params : dict, default {}
        Fixed constructor parameters (over the dataset defaults, under the caller's).
    defaults : callable or None, default None
        ``defaults(ds) -> dict`` of dataset-dependent parameters; None: the family's
        (:data:`FAMILY_DEFAULTS`). Only the parameters the class accepts are passed.
    presets : dict, default {}
        Named variants, label -> parameters (:data:`PRESETS` collects them).
    needs_mixing : bool, default False
        The method's ε holds only for a sample of a chain that has mixed (Gibbs): a run is
        private only where the caller judges the mixing (:mod:`dpcore.lab.verdicts`).
    data_hyperparameters : tuple of str, default ()
        Parameters whose value, when read off the data (e.g. a subspace dimension q suggested
        from the data), makes a run not private (:func:`dpcore.lab.verdicts.data_read_reason`).
    """
    name: str
    target: str
    family: str
    private: bool
    takes_delta: bool = False
    relation: str | None = None
    audit_statistic: str | None = None
    label: str = ""
    description: str = ""
    params: dict = field(default_factory=dict, hash=False)
    defaults: Callable | None = field(default=None, hash=False)
    presets: dict = field(default_factory=dict, hash=False)
    needs_mixing: bool = False
    data_hyperparameters: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "data_hyperparameters", tuple(self.data_hyperparameters))

    @property
    def cls(self):
        """The estimator class, imported from :attr:`target` (ValueError when it cannot be)."""
        return _resolve(self.target)

    def load(self):
        """The estimator class (as :attr:`cls`; the old registry's spelling)."""
        return self.cls

    def dataset_defaults(self, ds):
        """The dataset-dependent parameters the class accepts, for dataset ``ds``.

        Parameters
        ----------
        ds : dpcore.data.Dataset

        Returns
        -------
        dict
        """
        fn = self.defaults if self.defaults is not None else FAMILY_DEFAULTS[self.family]
        accepted = inspect.signature(self.cls.__init__).parameters
        return {k: v for k, v in (fn(ds) or {}).items() if k in accepted}

    def build(self, ds=None, *, params=None, epsilon=None, delta=None, random_state=None):
        """The unfitted estimator: dataset defaults (when ``ds`` is given), then the entry's
        fixed :attr:`params`, then ``params``, then ε (and δ when the method takes one and it
        is given).

        Parameters
        ----------
        ds : dpcore.data.Dataset, optional
            Source of the dataset-dependent defaults (none without it).
        params : dict, optional
            Constructor parameters over the defaults.
        epsilon : float, optional
            ε of a private method (ignored for a non-private one; None: the class default).
        delta : float, optional
            δ (None: the estimator's default; ignored where the method takes none).
        random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional

        Returns
        -------
        estimator
            Not fitted.

        Raises
        ------
        ValueError
            If the class cannot be imported or refuses a parameter.
        """
        cls = self.cls
        kw = self.dataset_defaults(ds) if ds is not None else {}
        kw.update(self.params)
        kw.update(params or {})
        if self.private and epsilon is not None:
            kw["epsilon"] = epsilon
            if self.takes_delta and delta is not None:
                kw["delta"] = delta
        kw["random_state"] = random_state
        try:
            return cls(**kw)
        except TypeError as exc:
            raise ValueError(f"bad parameter for method {self.name!r} ({self.target}): {exc}") from None

    def spec(self) -> dict:
        """Everything that defines the entry, as plain data (import paths, no objects): what a
        task carries to a worker, which rebuilds the entry with :meth:`from_spec`.

        Returns
        -------
        dict
        """
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["params"], out["presets"] = dict(self.params), {k: dict(v) for k, v in self.presets.items()}
        out["data_hyperparameters"] = list(self.data_hyperparameters)
        out["defaults"] = None if self.defaults is None else _path_of(self.defaults, "defaults")
        return out

    @classmethod
    def from_spec(cls, spec):
        """The entry described by ``spec`` (:meth:`spec`); its import paths are resolved lazily.

        Parameters
        ----------
        spec : dict

        Returns
        -------
        Method
        """
        spec = dict(spec)
        if isinstance(spec.get("defaults"), str):
            spec["defaults"] = _resolve(spec["defaults"], "defaults")
        return cls(**spec)

    def __reduce__(self):
        # pickled as its spec: a worker gets import paths, never a reference into __main__
        return (_method_from_spec, (self.spec(),))


def _method_from_spec(spec):
    return Method.from_spec(spec)


# ----------------------------------------------------------------------------- the catalogue
#: the label of DPNMF in the co-clustering paper's setting (its NNDSVD start reads the raw data)
DPNMF_PAPER = "DPNMF (NNDSVD start, not private)"
#: the DPNMF the co-clustering paper ran (its public code, github.com/rupensa/dptaucc, src/dpnmf/dpnmf.py):
#: NNDSVD start of the raw data, basis W stepped by 1e-4, one step per iteration at ε ≥ 0.5 (its W-loop
#: stops after one step), so W never leaves its non-private start
DPNMF_AS_PUBLISHED = "DPNMF as published: basis fixed at the NNDSVD start (not private)"
#: the presets whose runs are not private although their method is (their start reads the raw data)
NOT_PRIVATE_PRESETS = (DPNMF_PAPER, DPNMF_AS_PUBLISHED)


def _m(name, target, family, private, *, takes_delta=False, relation=None, label="", description="", params=None,
       defaults=None, presets=None, needs_mixing=False, data_hyperparameters=None):
    if data_hyperparameters is None:     # a q read off the data: every private subspace method
        data_hyperparameters = ("subspace_dim",) if private and family == "subspace" else ()
    return Method(name, target, family, private, takes_delta, relation if private else None,
                  _FAMILY_STATISTIC[family], label or name, description, dict(params or {}), defaults,
                  dict(presets or {}), needs_mixing, tuple(data_hyperparameters))


_BUILT_IN = [
    # non-private subspace solvers
    _m("kplane", "dpcore.subspace.kplane:KPlane", "subspace", False, label="k-plane",
       description="k-plane (non-private)", presets={"k-plane": {}}),
    _m("tsc", "dpcore.subspace.tsc:TSC", "subspace", False, label="TSC", description="TSC (non-private)",
       presets={"TSC": {}}),
    _m("ssc", "dpcore.subspace.ssc:SSC", "subspace", False, label="SSC", description="SSC (non-private)",
       presets={"SSC": {}}),
    _m("lrr", "dpcore.subspace.lrr:LRR", "subspace", False, label="LRR", description="LRR (non-private)",
       presets={"LRR": {}}),
    # private subspace clustering
    _m("sulq_kplane", "dpcore.subspace.sulq:SuLQKPlane", "subspace", True, takes_delta=True, relation="replace_one",
       label="SuLQ k-plane", description="SuLQ k-plane (App. E)",
       presets={"SuLQ-10": {"n_iter": 10}, "SuLQ-50": {"n_iter": 50}}),
    _m("sample_aggregate", "dpcore.subspace.sample_aggregate:SampleAggregateSubspace", "subspace", True,
       takes_delta=True, relation="replace_one", label="sample-aggregate", description="sample-aggregate (Alg. 1)",
       presets={"s.a. TSC": {"solver": "tsc"}, "s.a. SSC": {"solver": "ssc"}, "s.a. k-plane": {"solver": "kplane"}}),
    _m("gibbs", "dpcore.subspace.gibbs:GibbsSubspaceClustering", "subspace", True, relation="replace_one",
       label="Gibbs", description="Gibbs sampler of the exponential mechanism (§4)", presets={"Gibbs": {}},
       needs_mixing=True),
    # co-clustering
    _m("fast_taucc", "dpcore.cocluster.taucc:FastTauCC", "cocluster", False, label="Fast-τCC",
       description="Fast-τCC (non-private)", presets={"Fast-τCC": {}}),
    _m("dp_taucc", "dpcore.cocluster.dptaucc:DPTauCC", "cocluster", True, relation="cell_pm1", label="DP-τCC",
       description="DP-τCC (Alg. 1)", presets={"DP-τCC": {}}),
    # k-means (high-dimensional paper); the radius comes from the family defaults
    _m("kmeanspp", "dpcore.kmeans.baselines:KMeansPlusPlus", "kmeans", False, label="k-means++",
       description="k-means++ (non-private)", presets={"k-means++": {}}),
    _m("candidate_kmeans", "dpcore.kmeans.candidate:CandidateKMeans", "kmeans", True, takes_delta=True,
       relation="replace_one", label="candidate set + local swaps",
       description="candidate set + local swap + recovery (Alg. 1-4)",
       presets={"candidate set": {}, "candidate set + 8 SuLQ": {"refine_iter": 8}}),
    _m("candidate_sparse", "dpcore.kmeans.candidate:CandidateKMeans", "kmeans", True, takes_delta=True,
       relation="replace_one", label="candidate set, sparse recovery (Alg. 5)",
       description="candidate set + local swap with centres kept s-sparse by Alg. 5 (sparse data)",
       params={"recovery": "sparse"}, defaults=sparse_kmeans_defaults),
    _m("candidate_kmedian", "dpcore.kmeans.candidate:CandidateKMedian", "kmeans", True, takes_delta=True,
       relation="replace_one", label="candidate set, k-median (§6.2)",
       description="candidate set + local search for the k-median loss, private 1-medians"),
    _m("sulq_kmeans", "dpcore.kmeans.sulq:SuLQKMeans", "kmeans", True, takes_delta=True, relation="replace_one",
       label="SuLQ k-means", description="SuLQ k-means (Blum et al. 2005)", presets={"SuLQ k-means": {}}),
    _m("sa_kmeans", "dpcore.kmeans.sample_aggregate:SampleAggregateKMeans", "kmeans", True, takes_delta=True,
       relation="replace_one", label="sample and aggregate",
       description="sample-and-aggregate k-means (Nissim et al. 2007)", presets={"s.a. k-means": {}}),
    _m("dplloyd", "dpcore.kmeans.baselines:DPLloydKMeans", "kmeans", True, relation="add_remove",
       label="DP-Lloyd (diffprivlib)", description="DP-Lloyd (diffprivlib)",
       presets={"DP-Lloyd": {"row_map": "clip"}}),
    # today's practical peer: Google's LSH tree → private coreset → k-means++, under replace-one
    _m("lsh_coreset", "dpcore.kmeans.lsh_coreset:LSHCoresetKMeans", "kmeans", True, takes_delta=True,
       relation="replace_one", label="LSH coreset (Google 2021)",
       description="LSH tree → private coreset → k-means++ (Google's differential-privacy library)",
       presets={"LSH coreset": {}}),
    # the co-clustering paper's peers (its Fig. 2): row clustering of count matrices
    _m("dphd", "dpcore.kmeans.dphd:DPHD", "documents", True, takes_delta=True, relation="replace_one", label="DPHD",
       description="DPHD: candidate-set k-means on L2-normalised documents (Balcan et al. 2017)",
       presets={"DPHD": {}}),
    # DP-KMeans: our sparse DP-Lloyd on every set, not diffprivlib. Decision: one method on all seven
    # CLUTO sets (diffprivlib densifies and refuses reviews); SparseDPLloydKMeans runs diffprivlib's
    # iterations, budget split, start and bounded-domain noise on CSR rows and is checked against
    # diffprivlib on a set both run (tests/test_dplloyd_sparse.py). It releases every cluster.
    _m("dp_kmeans", "dpcore.kmeans.dplloyd:SparseDPLloydKMeans", "documents", True, relation="add_remove",
       label="DP-KMeans",
       description="DP-KMeans: DP-Lloyd (diffprivlib's mechanism) on L2-normalised documents",
       presets={"DP-KMeans": {}}),
    # the paper's setting: δ = 1e-5, 𝓘 = 4, NNDSVD start. That start reads the raw data, so these runs are
    # NOT private: the label says so, and the rows say it (released_private False). "DPNMF (private start)"
    # is the variant whose release is (ε, δ)-DP.
    _m("dpnmf", "dpcore.cocluster.dpnmf:DPNMF", "documents", True, takes_delta=True, relation="replace_one",
       label="DPNMF",
       description="DPNMF (Saha & Imtiaz 2024); private with its default blind start, NOT private from the "
                   "paper's NNDSVD start",
       presets={DPNMF_PAPER: {"init": "nndsvd"}, "DPNMF (private start)": {"init": "random"},
                DPNMF_AS_PUBLISHED: {"init": "nndsvd", "w_step_size": 1e-4, "w_steps": 1}}),
]

#: the catalogue: name -> :class:`Method` (built-in methods, then the registered ones)
METHODS: dict[str, Method] = {m.name: m for m in _BUILT_IN}
#: named variants of the methods (the papers' names): label -> {"name", "params"?} ("params" only
#: when not empty), collected from the entries' presets
PRESETS: dict[str, dict] = {}


#: the order the built-in presets are offered in (the pages' option lists); registered ones follow
_PRESET_ORDER = ("k-plane", "SSC", "LRR", "TSC", "SuLQ-10", "SuLQ-50", "s.a. TSC", "s.a. SSC", "s.a. k-plane", "Gibbs",
                 "Fast-τCC", "DP-τCC", "k-means++", "candidate set", "SuLQ k-means", "s.a. k-means", "DP-Lloyd",
                 "LSH coreset", "candidate set + 8 SuLQ", "DPHD", "DP-KMeans", DPNMF_PAPER, DPNMF_AS_PUBLISHED,
                 "DPNMF (private start)")


def _collect_presets():
    found = {lab: {"name": m.name, **({"params": dict(p)} if p else {})}
             for m in METHODS.values() for lab, p in m.presets.items()}
    rank = {lab: i for i, lab in enumerate(_PRESET_ORDER)}
    PRESETS.clear()
    PRESETS.update(sorted(found.items(), key=lambda kv: rank.get(kv[0], len(rank))))


_collect_presets()


def get_method(name) -> Method:
    """The catalogue entry ``name``.

    Parameters
    ----------
    name : str or Method
        A key of :data:`METHODS` (a Method is returned as is).

    Returns
    -------
    Method

    Raises
    ------
    ValueError
        If ``name`` is not in the catalogue (the message names the known methods).
    """
    if isinstance(name, Method):
        return name
    if name not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {name!r} "
                         "(register your own with dpcore.lab.methods.register_method)")
    return METHODS[name]


def build_estimator(name, ds=None, params=None, epsilon=None, delta=None, random_state=None):
    """The unfitted estimator of method ``name`` for dataset ``ds`` (:meth:`Method.build`).

    Parameters
    ----------
    name : str or Method
        A key of :data:`METHODS`.
    ds : dpcore.data.Dataset, optional
        Source of the dataset-dependent defaults.
    params : dict, optional
        Parameters over the defaults.
    epsilon : float, optional
        ε of a private method (ignored for a non-private one).
    delta : float, optional
        δ (None: the estimator's default).
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional

    Returns
    -------
    estimator
        Not fitted.

    Raises
    ------
    ValueError
        If ``name`` is unknown, its class cannot be imported or refuses a parameter.
    """
    return get_method(name).build(ds, params=params, epsilon=epsilon, delta=delta, random_state=random_state)


def register_method(name, cls_or_target, *, family, private, takes_delta=None, relation=None, audit_statistic=None,
                    label="", description="", params=None, defaults=None, presets=None, needs_mixing=False,
                    data_hyperparameters=None, replace=False) -> Method:
    """Add a method of your own to the catalogue (:data:`METHODS`), so sweeps, pages and
    comparisons can run it — in this process and in worker processes.

    The method is stored by import path: a task sent to a worker (process pool or Dask)
    carries the entry's spec, and the worker imports the class itself. A class defined in a
    script run as ``python script.py`` is named by the script's module name (the file name
    without ``.py``; spawned workers get the parent's ``sys.path``, so they find it). A worker
    imports that module, which runs the script's top level again: **guard the script's top
    level with** ``if __name__ == "__main__":``. Under ``python -m package.script`` the class is
    named by that module name. A class defined interactively (no file) works only with
    ``n_jobs=1``: define it in a module to run it in workers.

    Parameters
    ----------
    name : str
        The catalogue key (a sweep's ``{"name": ...}``).
    cls_or_target : type or str
        The estimator class (scikit-learn style: keyword parameters, ``random_state``,
        ``fit(X)``; private ones take ``epsilon``), or its import path "module:Class".
    family : {"subspace", "kmeans", "cocluster", "documents"}
        Which data kinds and metrics apply (e.g. "kmeans": ``cluster_centers_`` and ``labels_``).
    private : bool
        Whether it takes ε.
    takes_delta : bool, optional
        Whether it takes δ (default: whether its constructor has a ``delta`` parameter).
    relation : str, optional
        Neighbouring relation of its ε (a key of :data:`dpcore.privacy.accountant.RELATIONS`);
        default: the class's ``claimed_relation`` (private methods only).
    audit_statistic : str, optional
        The audit's test statistic (default: the family's).
    label, description : str, optional
        Display name (default ``name``) and one line of description.
    params : dict, optional
        Fixed constructor parameters.
    defaults : callable, optional
        ``defaults(ds) -> dict`` of dataset-dependent parameters, a module-level function
        (default: the family's, :data:`FAMILY_DEFAULTS`).
    presets : dict, optional
        Named variants, label -> parameters (added to :data:`PRESETS`).
    needs_mixing : bool, default False
        Its ε holds only for a mixed chain (see :class:`Method`).
    data_hyperparameters : tuple of str, optional
        Parameters that make a run not private when read off the data (default: ``("subspace_dim",)``
        for a private subspace method, none otherwise).
    replace : bool, default False
        Allow replacing an entry of the same name (never a built-in one).

    Returns
    -------
    Method
        The new entry.

    Raises
    ------
    ValueError
        If the name is taken, the family or relation is unknown, or the class cannot be
        imported by its path, has no ``fit`` or does not take ``random_state`` (nor
        ``epsilon`` when ``private``); if ``private=False`` for a class that takes ε or keeps
        a privacy ledger, or ``relation`` contradicts the class's ``claimed_relation``.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string; got {name!r}")
    if name in METHODS and (not replace or name in _BUILT_IN_NAMES):
        raise ValueError(f"method {name!r} is already in the catalogue"
                         + ("" if name in _BUILT_IN_NAMES else " (pass replace=True to replace it)"))
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}; got {family!r}")
    own_class = False            # a class of the running script: this process keeps the object itself
    if isinstance(cls_or_target, str):
        target, cls = cls_or_target, _resolve(cls_or_target)
    elif inspect.isclass(cls_or_target):
        cls, target = cls_or_target, _path_of(cls_or_target, "the method's class")
        own_class = cls.__module__ == "__main__"
        if not own_class and _resolve(target) is not cls:
            raise ValueError(f"{target} does not name the class {cls!r}")
    else:
        raise ValueError(f"cls_or_target must be a class or 'module:Class'; got {cls_or_target!r}")
    if not callable(getattr(cls, "fit", None)):
        raise ValueError(f"{target} has no fit method")
    accepted = inspect.signature(cls.__init__).parameters
    has_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    for needed in ("random_state",) + (("epsilon",) if private else ()):
        if needed not in accepted and not has_kwargs:
            raise ValueError(f"{target} must take {needed!r} as a constructor parameter")
    if takes_delta is None:
        takes_delta = bool(private and "delta" in accepted)
    claimed = getattr(cls, "claimed_relation", None)
    spends = issubclass(cls, PrivateEstimatorMixin) or "epsilon" in accepted
    if not private and spends:
        # its fit would spend ε (and be charged in this process) while sweeps and meters listed it as free
        raise ValueError(f"{target} takes epsilon or reports a privacy ledger: register it with private=True")
    if private:
        given = relation
        relation = relation if relation is not None else claimed
        if relation not in RELATIONS:
            raise ValueError(f"relation must be one of {', '.join(RELATIONS)} for a private method "
                             f"(or a class attribute claimed_relation); got {relation!r}")
        if given is not None and claimed is not None and given != claimed:
            raise ValueError(f"relation {given!r} contradicts the class's claimed_relation {claimed!r}: its ledger "
                             f"and every accountant record {claimed!r}; leave relation out or fix the class")
    else:
        relation = None
    if defaults is not None:
        if not callable(defaults):
            raise ValueError(f"defaults must be a function of the dataset; got {defaults!r}")
        path = _path_of(defaults, "defaults")   # importable by workers
        if defaults.__module__ == "__main__":
            _CLASS_CACHE[path] = defaults       # this process keeps the script's own function
    if data_hyperparameters is None:
        data_hyperparameters = ("subspace_dim",) if private and family == "subspace" else ()
    entry = Method(name, target, family, bool(private), bool(takes_delta), relation,
                   audit_statistic or _FAMILY_STATISTIC[family], label or name, description,
                   dict(params or {}), defaults, {k: dict(v) for k, v in (presets or {}).items()},
                   bool(needs_mixing), tuple(data_hyperparameters))
    clash = [lab for lab in entry.presets if lab in PRESETS and PRESETS[lab]["name"] != name]
    if clash:
        raise ValueError(f"preset labels already taken by other methods: {', '.join(clash)}")
    if own_class:
        _CLASS_CACHE[target] = cls
    METHODS[name] = entry
    _collect_presets()
    return entry


def unregister_method(name):
    """Remove a method added by :func:`register_method` (built-in methods stay).

    Parameters
    ----------
    name : str

    Raises
    ------
    ValueError
        If ``name`` is built in or not in the catalogue.
    """
    if name in _BUILT_IN_NAMES:
        raise ValueError(f"{name!r} is a built-in method and cannot be removed")
    target = get_method(name).target
    del METHODS[name]
    if all(m.target != target for m in METHODS.values()):
        _CLASS_CACHE.pop(target, None)
    _collect_presets()


_BUILT_IN_NAMES = frozenset(METHODS)


# ----------------------------------------------------------------------------- presets
def preset(label):
    """The algorithm dict of a named method, e.g. ``preset("SuLQ-10")``.

    Parameters
    ----------
    label : str
        A key of :data:`PRESETS`.

    Returns
    -------
    dict
        ``{"name", "label", "params"}`` (``params`` a copy), an item of ``Sweep.algorithms``.

    Raises
    ------
    ValueError
        If ``label`` is not a key of :data:`PRESETS`.
    """
    if label not in PRESETS:
        raise ValueError(f"method must be one of {', '.join(PRESETS)}; got {label!r}")
    p = PRESETS[label]
    return {"name": p["name"], "label": label, "params": dict(p.get("params", {}))}


def presets_for(kind):
    """Names of the presets whose method runs on a dataset of ``kind`` ("points" or "counts").

    Parameters
    ----------
    kind : str

    Returns
    -------
    list of str
        Keys of :data:`PRESETS`, in their order (empty for an unknown kind).
    """
    return [lab for lab, p in PRESETS.items() if kind in FAMILY_KINDS[METHODS[p["name"]].family]]


# ----------------------------------------------------------------------------- the seed recipe
def _stable_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def run_seed(seed, label, epsilon, trial) -> np.random.SeedSequence:
    """The SeedSequence of one run: a function of (seed, label, ε, trial) only — the one seed
    recipe of every run that is one of several (a sweep's runs, a comparison's methods, a
    page's peers, the reproductions), so a run's noise depends on what the run is, never on
    when or where it ran. A page's single run uses its public seed as the estimator's
    ``random_state`` itself, so the "Reproduce in Python" snippet repeats it as written.

    Parameters
    ----------
    seed : int or None
        The root seed (a sweep's, a page's public seed); None: fresh OS entropy.
    label : str
        The run's label (a method's label in a sweep).
    epsilon : float
        ε of the run (NaN for non-private methods).
    trial : int

    Returns
    -------
    numpy.random.SeedSequence
    """
    return np.random.SeedSequence(seed, spawn_key=(_stable_int(label), _stable_int(repr(float(epsilon))), int(trial)))
