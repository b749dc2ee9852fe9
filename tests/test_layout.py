"""Layout rules of dpcore (issue 15): no import cycle between its modules (counting imports
inside functions too), and no module outside a package imports one of its underscore modules."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "dpcore"


def _module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules():
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _imports(path, name, known):
    """dpcore modules imported anywhere in the file at ``path`` (module ``name``)."""
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            subs = {f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in known}
            out.update(subs)
            if node.module or len(subs) < len(node.names):      # "from . import sub" imports only the submodule
                out.add(mod)
    return {m for m in out if m in known and m != name}


def import_graph():
    mods = _modules()
    return {name: _imports(path, name, mods) for name, path in mods.items()}


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return comps


def test_no_import_cycle_in_dpcore():
    assert _cycles(import_graph()) == []


def test_from_dot_import_a_submodule_is_an_edge_to_the_submodule(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from . import b\nfrom . import c, VALUE\n")
    known = {"p", "p.a", "p.b", "p.c"}
    assert _imports(f, "p.a", known) == {"p.b", "p.c", "p"}       # VALUE is a name of the package itself
    f.write_text("from . import b\n")
    assert _imports(f, "p.a", known) == {"p.b"}


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]


def test_no_underscore_module_imported_outside_its_package():
    mods = _modules()
    bad = []
    for folder in ("dpcore", "tests", "benchmarks", "pages", "ui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = _module_name(path) if folder == "dpcore" else f"{folder}.{path.stem}"
            for m in _imports(path, name, mods):
                parts = m.split(".")
                for i, part in enumerate(parts):
                    if part.startswith("_") and not part.startswith("__"):
                        owner = ".".join(parts[:i])      # the package the underscore module belongs to
                        if not name.startswith(owner + ".") and name != owner:
                            bad.append(f"{path.relative_to(ROOT)} imports {m}")
    assert bad == []


def _library_modules(mods):
    """The library: every dpcore module outside dpcore/lab, dpcore/plots and dpcore/reproduce.py."""
    return {m for m in mods if not m.startswith(("dpcore.lab", "dpcore.plots")) and m != "dpcore.reproduce"}


def _reachable(graph, start):
    seen, todo = set(), [start]
    while todo:
        for d in graph[todo.pop()]:
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def test_the_library_never_imports_the_lab():
    """Directly or through another module (e.g. through dpcore.plots, which sits above the lab),
    counting imports inside functions."""
    graph = import_graph()
    library = _library_modules(graph)
    assert {"dpcore", "dpcore.kmeans.sulq", "dpcore.privacy.accountant"} <= library
    assert "dpcore.lab.sweeps" not in library
    assert "dpcore.lab.methods" in graph["dpcore.lab.sweeps"]           # the graph sees the lab's imports
    assert "dpcore.lab.sweeps" in _reachable(graph, "dpcore.plots.paper")  # and follows chains of them
    bad = sorted(f"{m} reaches {d}" for m in library for d in _reachable(graph, m)
                 if d.startswith(("dpcore.lab", "dpcore.plots")) or d == "dpcore.reproduce")
    assert bad == []


def test_importing_the_library_loads_no_lab_module():
    """At run time too (an import the static graph cannot see, e.g. importlib with a string, at
    import time): a fresh interpreter imports every library module and has no dpcore.lab module."""
    import subprocess
    import sys
    mods = sorted(_library_modules(_modules()))
    code = ("import importlib, sys\n"
            f"for m in {mods!r}: importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('dpcore.lab', 'dpcore.plots', 'streamlit'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_metrics_does_not_import_kmeans():
    """No upward import: dpcore.metrics is below the estimators."""
    graph = import_graph()
    assert sorted(d for d in graph["dpcore.metrics"] if d.startswith("dpcore.kmeans")) == []


def _estimator_classes():
    """Names of every class defined in dpcore that subclasses scikit-learn's BaseEstimator
    (found by importing every dpcore module)."""
    import importlib
    import inspect

    from sklearn.base import BaseEstimator

    names = set()
    for mod in _modules():
        module = importlib.import_module(mod)
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator) and obj.__module__.startswith("dpcore"):
                names.add(obj.__name__)
    # the clustering estimators of scikit-learn and diffprivlib: a page must not run one beside the catalogue
    import sklearn.cluster
    names.update(n for n, obj in vars(sklearn.cluster).items() if inspect.isclass(obj) and issubclass(obj, BaseEstimator))
    try:
        import diffprivlib.models as dpl
        names.update(n for n, obj in vars(dpl).items() if inspect.isclass(obj) and issubclass(obj, BaseEstimator))
    except ImportError:
        pass
    return names


def _estimator_uses(tree, classes):
    """(line, what) of every use of an estimator class in ``tree`` that could build one: a
    reference to the class (a bare name, ``module.Class``, an alias, a dict value, a partial,
    ``cls = Class``) anywhere except as the class argument of ``isinstance``/``issubclass``,
    and a catalogue entry's class called directly (``entry.cls(...)``, ``entry.load()(...)``)
    instead of ``entry.build(...)``. Imports are not uses."""
    alias = {a.asname: a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             for a in node.names if a.asname}
    allowed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass") \
                and len(node.args) == 2:
            allowed.update(id(n) for n in ast.walk(node.args[1]))
    for node in ast.walk(tree):
        if id(node) in allowed:
            continue
        if isinstance(node, ast.Name) and alias.get(node.id, node.id) in classes:
            yield node.lineno, alias.get(node.id, node.id)
        elif isinstance(node, ast.Attribute) and node.attr in classes:
            yield node.lineno, node.attr
        elif isinstance(node, ast.Attribute) and node.attr in ("cls", "__class__"):
            yield node.lineno, f".{node.attr}"                     # an entry's class, however it is called later
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Call) and isinstance(f.func, ast.Attribute) and f.func.attr == "load":
                yield node.lineno, ".load()(...)"
            elif isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "type" and node.keywords:
                yield node.lineno, "type(...)(...)"          # with keywords, as estimators are built (not a cast)


def _front_end_files():
    return [ROOT / "app.py"] + sorted((ROOT / "pages").rglob("*.py")) + sorted((ROOT / "ui").rglob("*.py"))


def test_no_page_or_ui_module_constructs_an_estimator():
    """Pages, ui/ and app.py build estimators through the method catalogue (dpcore.lab.methods),
    never from an estimator class of their own."""
    classes = _estimator_classes()
    assert {"KPlane", "SuLQKPlane", "CandidateKMeans", "DPTauCC", "FastTauCC", "GibbsSubspaceClustering"} <= classes
    bad = []
    for path in _front_end_files():
        for line, what in _estimator_uses(ast.parse(path.read_text(encoding="utf-8")), classes):
            bad.append(f"{path.relative_to(ROOT)}:{line} uses {what}")
    assert bad == []


def test_the_constructor_check_sees_every_way_to_build_one():
    classes = {"KPlane", "SuLQKPlane", "TSC"}
    src = """
from x import KPlane, TSC as T
import functools
if isinstance(est, (KPlane, mod.SuLQKPlane)):
    pass
m = KPlane(n_clusters=3)
n = mod.SuLQKPlane()
T()
cls = KPlane
table = {"k": mod.SuLQKPlane}
p = functools.partial(T)
get_method("kplane").cls(n_clusters=2)
entry.load()(n_clusters=2)
get_method("kplane").build(ds)
make = get_method("kplane").cls
type(model)(n_clusters=3)
model.__class__(n_clusters=3)
KMeans(2)
type(lo)(value)
"""
    found = sorted(_estimator_uses(ast.parse(src), classes | {"KMeans"}))
    assert [line for line, _ in found] == [6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18]
    assert all(line != 4 for line, _ in found)          # isinstance is not a construction




def test_pages_are_thin():
    """A page is widgets, a call into dpcore and a figure: at most 250 lines; the rest lives in ui/."""
    long = {p.name: n for p in sorted((ROOT / "pages").glob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 250}
    assert long == {}


# ----------------------------------------------------------------------------- one privacy authority
#: what only the library may read or build to decide whether a run is private or what it spends
PRIVACY_INTERNALS = {"released_private_", "is_private_", "privacy_leaks_", "claimed_relation", "planned_privacy",
                     "_planned_privacy", "_planned_spend", "_planned_events", "_plan_reasons", "PrivacyEvent",
                     "PrivacyAccountant", "mean_release_epsilon", "needs_mixing", "data_hyperparameters",
                     "context_reasons", "estimator_reasons", "data_read_reason", "run_is_private", "gibbs_unchecked"}
#: function names that (in the old ui/) decided privacy or estimated a spend
DECIDER = re.compile(r"^planned_|_private$|^(run_cost|counted|chain_privacy|record_chains|record_estimator|"
                     r"record_run|check_budget)$")
#: method and parameter values a page used to test to decide privacy
METHOD_LITERALS = {"gibbs", "dpnmf", "nndsvd", "dplloyd", "sulq", "sa"}


def privacy_decisions(source, name="<source>"):
    """(line, what) of every place in ``source`` (a ui/, pages/ or app.py file) that decides
    privacy or estimates a spend instead of asking dpcore.lab.verdicts: a library internal read,
    a function named like a decision, or a comparison with a method's name."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Attribute) and node.attr in PRIVACY_INTERNALS:
            found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Name) and node.id in PRIVACY_INTERNALS:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.alias) and node.name in PRIVACY_INTERNALS:
            found.append((getattr(node, "lineno", 0), f"import {node.name}"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and DECIDER.search(node.name):
            found.append((node.lineno, f"def {node.name}"))
        elif isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                values = [side] if isinstance(side, ast.Constant) else \
                    list(side.elts) if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else []
                for v in values:
                    if isinstance(v, ast.Constant) and v.value in METHOD_LITERALS:
                        found.append((node.lineno, f"compares with {v.value!r}"))
    return found


def test_no_function_in_ui_pages_or_app_decides_privacy_or_estimates_a_spend():
    bad = [f"{path.relative_to(ROOT)}:{line}: {what}" for path in _front_end_files()
           for line, what in privacy_decisions(path.read_text(encoding="utf-8"), str(path))]
    assert bad == []


def test_the_privacy_decision_check_sees_the_old_ways():
    """Each of the old ui/ decisions is caught (so the check above could fail)."""
    old = '''
def planned_runs(eps_list, params):
    return [planned(run_cost(e, params), 0.0, get_method("gibbs").relation) for e in eps_list]

def runs_private(name, ds, params, seed):
    if name == "gibbs":
        return False, "mixing"
    if name == "dpnmf" and params.get("init") == "nndsvd":
        return False, "start"
    return bool(est.released_private_), ""

def show(est):
    return est.ledger_, PrivacyEvent.approx_dp(1.0)
'''
    found = {what for _, what in privacy_decisions(old)}
    assert {"def planned_runs", "def runs_private", "compares with 'gibbs'", "compares with 'dpnmf'",
            "compares with 'nndsvd'", ".released_private_", "PrivacyEvent"} <= found
    assert privacy_decisions("def show(verdict):\n    return verdict.private and verdict.reason\n") == []
