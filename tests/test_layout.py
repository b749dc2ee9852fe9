"""Layout rules of dpcore (issue 15): no import cycle between its modules (counting imports
inside functions too), and no module outside a package imports one of its underscore modules."""
from __future__ import annotations

import ast
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
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in known)
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


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]


def test_no_underscore_module_imported_outside_its_package():
    mods = _modules()
    bad = []
    for folder in ("dpcore", "tests", "benchmarks"):
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
