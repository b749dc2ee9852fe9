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


def test_readme_layout_matches_the_tree():
    """The README's layout section lists every top-level folder, every ui/ module and every
    dpcore module and subpackage, and every path it names exists."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    named, parent = set(), None
    for line in block.splitlines():
        if not line.strip():
            continue
        token = line.split()[0]
        if line.startswith("    ") and parent is not None and token.endswith(".py"):
            named.add(f"{parent}{token}")                    # a module of a subpackage, e.g. privacy/mechanisms.py
        elif line.startswith("  ") and not line.startswith("    "):
            named.add(f"dpcore/{token}")
            parent = f"dpcore/{token}" if token.endswith("/") else None
        elif not line.startswith(" "):
            named.add(token)
    missing = sorted(p for p in named if not (ROOT / p.rstrip("/")).exists())
    assert missing == [], f"the README's layout names paths that do not exist: {missing}"
    expected = {p.name + ("/" if p.is_dir() else "") for p in (ROOT / "dpcore").iterdir()
                if not p.name.startswith("__") and (p.is_dir() or p.suffix == ".py")}
    listed = {p.split("/", 1)[1] for p in named if p.startswith("dpcore/") and p.count("/") <= 2 and p != "dpcore/"}
    listed = {p if p.endswith("/") or "/" not in p else p.split("/")[0] + "/" for p in listed}
    assert expected - listed == set(), f"dpcore entries missing from the README's layout: {sorted(expected - listed)}"
    ui = {f"ui/{p.name}" for p in (ROOT / "ui").glob("*.py") if not p.name.startswith("__")}
    assert ui - named == set(), f"ui modules missing from the README's layout: {sorted(ui - named)}"
    for top in ("app.py", "pages/", "dpcore/", "sample_data/", "scripts/", "benchmarks/", "tests/", "pyproject.toml"):
        assert top in named, top
