"""The documentation: docs/layout.md matches the tree, the README stays short and its links and
Python example work (and print what their comments say), the getting-started, own-method and
Dask code runs, the CHANGELOG names the version, and the Sphinx build passes with warnings as
errors, resolves every cross-reference of our own pages and documents every estimator and every
privacy mechanism."""
from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import io
import pkgutil
import re
import shlex
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

import dpcore

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README_MAX_BYTES = 15_000
ESTIMATOR_PACKAGES = ("kmeans", "subspace", "cocluster")
PRIVACY_MODULES = ("mechanisms", "exact", "exact_samplers", "exact_choice", "accounting", "accountant", "rdp", "odds",
                   "meter", "sample_aggregate")
LAYOUT_TOP_FILES = ("app.py", "pyproject.toml", "README.md", "CHANGELOG.md")
PLACEHOLDER_SCHEDULER = "tcp://10.0.0.5:8786"          # the address docs/dask.md writes for a scheduler


# ------------------------------------------------------------------------------------ layout
def _layout_block():
    text = (DOCS / "layout.md").read_text(encoding="utf-8")
    return text.split("```", 2)[1]


def _named_paths(block):
    """Paths the layout tree names.

    An entry is a line indented by 2·L spaces whose level L is at most one below the folder
    entry above it (``dpcore/`` at 0, ``lab/`` at 2, ``audit/`` at 4, ``bounds.py`` at 6); its
    first word is its path inside that folder. Any other line (odd indent, or deeper than an open
    folder allows: the descriptions' continuations, aligned at column 20) continues the entry above.
    """
    named, folders = set(), []                   # folders: the open folder entries, one per level
    for line in block.splitlines():
        if not line.strip():
            continue
        level, odd = divmod(len(line) - len(line.lstrip(" ")), 2)
        if odd or level > len(folders):
            continue
        token = line.split()[0]
        named.add("".join(folders[:level]) + token)
        folders = folders[:level] + ([token] if token.endswith("/") else [])
    return named


def _dpcore_modules(root):
    """Every module (``.py`` but ``__init__.py``) and subpackage (``name/``) under dpcore/, recursively."""
    out = set()
    for path in (root / "dpcore").rglob("*"):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root).as_posix()
        if path.is_dir() and (path / "__init__.py").exists():
            out.add(rel + "/")
        elif path.suffix == ".py" and path.name != "__init__.py":
            out.add(rel)
    return out


def _top_folders(root):
    """The top-level folders git tracks (hidden ones left out); without git, those on disk."""
    try:
        files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, timeout=60,
                               check=True).stdout.splitlines()
        tops = {f.split("/", 1)[0] for f in files if "/" in f}
    except (OSError, subprocess.SubprocessError):
        tops = {p.name for p in root.iterdir() if p.is_dir() and p.name not in ("__pycache__", "build", "dist")
                and not p.name.endswith(".egg-info")}
    return {t for t in tops if not t.startswith(".")}


def _layout_problems(block, root):
    """What the layout tree gets wrong about the tree at ``root``: one sentence per problem."""
    named = _named_paths(block)
    problems = [f"names {p}, which does not exist" for p in sorted(named) if not (root / p.rstrip("/")).exists()]
    problems += [f"does not name {p}" for p in sorted(_dpcore_modules(root) - named)]
    ui = {f"ui/{p.name}" for p in (root / "ui").glob("*.py") if not p.name.startswith("__")}
    problems += [f"does not name {p}" for p in sorted(ui - named)]
    for top in sorted(_top_folders(root)):
        if not any(p == f"{top}/" or p.startswith(f"{top}/") for p in named):
            problems.append(f"does not name the top-level folder {top}/")
    problems += [f"does not name {f}" for f in LAYOUT_TOP_FILES if f not in named]
    return problems


def test_layout_page_matches_the_tree():
    """docs/layout.md names every dpcore module and subpackage (recursively), every ui/ module,
    every top-level folder git tracks and the main top-level files, and every path it names exists."""
    assert _layout_problems(_layout_block(), ROOT) == []


def test_layout_parser_reads_nested_folders_and_skips_continuations():
    block = ("dpcore/           x\n  privacy/        x\n    mechanisms.py y\n"
             "                  continued text.py\n  lab/            x\n    audit/        x\n"
             "      bounds.py   x\n    sweeps.py     x\n  metrics.py      x\n    not_a_child.py\n"
             "ui/common.py      x\n")
    assert _named_paths(block) == {"dpcore/", "dpcore/privacy/", "dpcore/privacy/mechanisms.py", "dpcore/lab/",
                                   "dpcore/lab/audit/", "dpcore/lab/audit/bounds.py", "dpcore/lab/sweeps.py",
                                   "dpcore/metrics.py", "ui/common.py"}


def _without_line(block, prefix):
    lines = block.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.startswith(prefix)]
    assert len(hits) == 1, f"one line of docs/layout.md starts with {prefix!r}: {len(hits)}"
    return "".join(lines[:hits[0]] + lines[hits[0] + 1:])


@pytest.mark.parametrize("prefix, problem", [
    ("      bounds.py ", "does not name dpcore/lab/audit/bounds.py"),       # a module of a nested package
    ("    audit/ ", "does not name dpcore/lab/audit/"),                     # the nested folder itself
    ("    kplane.py ", "does not name dpcore/subspace/kplane.py"),
    ("    paper.py ", "does not name dpcore/plots/paper.py"),
    ("  reproduce.py ", "does not name dpcore/reproduce.py"),
    ("ui/gibbs.py ", "does not name ui/gibbs.py"),
    ("examples/ ", "does not name the top-level folder examples/"),
    ("benchmarks/ ", "does not name the top-level folder benchmarks/"),
    ("README.md ", "does not name README.md"),
])
def test_layout_check_fails_without_a_line(prefix, problem):
    """Each check can fail: the real page less one line is refused, naming what is missing."""
    assert problem in _layout_problems(_without_line(_layout_block(), prefix), ROOT)


def test_layout_check_fails_on_a_path_that_does_not_exist():
    block = _layout_block().replace("  metrics.py ", "  metrix.py  ", 1)
    problems = _layout_problems(block, ROOT)
    assert "names dpcore/metrix.py, which does not exist" in problems
    assert "does not name dpcore/metrics.py" in problems


def test_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size:,} bytes; at most {README_MAX_BYTES:,} (move the rest to docs/)"


def test_readme_links_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t.split("#", 1)[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert any(t.startswith("docs/") for t in targets), "the README links into docs/"
    missing = sorted({t for t in targets if t and not (ROOT / t).exists()})
    assert missing == [], f"README links to files that do not exist: {missing}"


def _python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


_CLAIM = re.compile(r"#\s*→\s*(.+?)(?::\s|:?$)")


def _claims(code):
    """{line number: claimed output} of the lines whose comment starts with "→" (the claim ends
    at the first ": ", the rest of the comment explains it)."""
    claims = {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT and (m := _CLAIM.match(tok.string)):
            claims[tok.start[0]] = m.group(1).strip()
    return claims


def _run_checking_claims(code, name, ns):
    """Run ``code`` statement by statement in ``ns``, as a reader would paste it, and check every
    claim: a statement with a "# → TEXT" comment must show TEXT (what it prints or, for an
    expression, its value's repr, as Python's prompt shows it; whitespace-insensitive). The
    output is passed on to sys.stdout. Returns {line number: claim} of the checked claims."""
    claims = _claims(code)
    for stmt in ast.parse(code).body:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            if isinstance(stmt, ast.Expr):
                value = eval(compile(ast.Expression(stmt.value), name, "eval"), ns)
                if value is not None:
                    print(repr(value))
            else:
                exec(compile(ast.Module([stmt], type_ignores=[]), name, "exec"), ns)
        sys.stdout.write(out.getvalue())
        for line in range(stmt.lineno, stmt.end_lineno + 1):
            if line in claims:
                shown = " ".join(out.getvalue().split())
                assert shown == " ".join(claims[line].split()), \
                    f"{name}, line {line}: the comment says {claims[line]!r}, the code shows {shown!r}"
    return claims


def test_a_false_claim_fails():
    ns = {}
    assert _run_checking_claims("x = (1.0, 2.0)\nprint(x)  # → (1.0, 2.0): both\nx[0]  # → 1.0\n", "ok", ns) \
        == {2: "(1.0, 2.0)", 3: "1.0"}
    with pytest.raises(AssertionError, match="the comment says '1.0 left'"):
        _run_checking_claims("print((1.0, 2.0), (1.0, float('inf')))  # → 1.0 left\n", "false", {})
    with pytest.raises(AssertionError, match="shows '3'"):
        _run_checking_claims("1 + 2  # → 4\n", "false", {})


# the line of each front page's example whose comment must be a checked claim
FRONT_PAGE_CLAIMS = {"README.md": "acc.remaining()", "docs/index.md": "ledger_.total()"}


@pytest.mark.parametrize("page", sorted(FRONT_PAGE_CLAIMS))
def test_front_page_python_example_runs_and_prints_what_it_says(page, tmp_path, monkeypatch):
    """The one short example of the README and of the docs' front page runs from any folder and
    prints what its "→" comments say (the accountant's or the ledger's totals at least)."""
    blocks = _python_blocks(ROOT / page)
    assert len(blocks) == 1, f"{page} has one short Python example"
    monkeypatch.chdir(tmp_path)
    claims = _run_checking_claims(blocks[0], page, {"__name__": "front_page_example"})
    lines = blocks[0].splitlines()
    assert any(FRONT_PAGE_CLAIMS[page] in lines[n - 1] for n in claims), \
        f"{page}: the {FRONT_PAGE_CLAIMS[page]} line carries a '# → output' comment"


def test_getting_started_code_runs(tmp_path, monkeypatch, capsys):
    """The page's blocks run in order, in one namespace, as a reader would paste them, and print
    what their "→" comments say; the accountant refuses the fourth fit."""
    blocks = _python_blocks(DOCS / "getting_started.md")
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "getting_started"}
    claims = {}
    for i, block in enumerate(blocks):
        claims.update({(i, n): c for n, c in _run_checking_claims(block, f"getting_started.md[{i}]", ns).items()})
    assert len(claims) >= 3                                # the shape, the estimator's spend, the total
    assert "budget" in capsys.readouterr().out            # the refusal was printed
    assert len(ns["acc"].runs) == 3                        # and the fourth fit not recorded
    assert ns["acc"].basic_total() == pytest.approx((3.0, 3e-6))


def _run_script(code, tmp_path, name, timeout=900):
    """``code`` as a script of its own (a fresh interpreter), run from the repository root."""
    script = tmp_path / f"{name}.py"
    script.write_text(code, encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_own_method_page_runs(tmp_path):
    """docs/own_method.md shows examples/own_method.py (literalinclude) and runs it with the
    page's command from the repository root: the method runs in a sweep on 2 worker processes.
    (The page's second example, examples/own_cluster_method.py on the Cluster page, is run by
    tests/test_own_cluster_method.py with AppTest.)"""
    text = (DOCS / "own_method.md").read_text(encoding="utf-8")
    included = re.findall(r"```\{literalinclude\} (\S+)", text)
    assert included == ["../examples/own_method.py", "../examples/own_cluster_method.py"]
    assert all((DOCS / p).exists() for p in included)
    commands = [line for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)
                for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands == ["python examples/own_method.py"], commands
    argv = shlex.split(commands[0])
    proc = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "noisy centroid (ours)" in proc.stdout, proc.stdout


DASK_WRAPPER = """
import sys
from distributed import LocalCluster

if __name__ == "__main__":                     # a 2-worker LocalCluster stands for the page's scheduler
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        code = {code!r}.replace({placeholder!r}, cluster.scheduler_address)
        exec(compile(code, "docs/dask.md", "exec"), {{"__name__": "__main__"}})
"""


@pytest.mark.slow
def test_dask_page_python_blocks_run_on_their_own(tmp_path):
    """Every Python block of docs/dask.md runs on its own, in a fresh interpreter from the
    repository root: the one written for an existing scheduler against a 2-worker LocalCluster's
    address, the own-method block on the LocalCluster it starts. (The shell block with
    ``--scheduler ADDRESS`` needs a cluster and is not run.)"""
    pytest.importorskip("distributed", reason="the Dask examples need distributed (pip install dpcore[dask])")
    blocks = _python_blocks(DOCS / "dask.md")
    assert len(blocks) == 2
    assert PLACEHOLDER_SCHEDULER in blocks[0] and "register_method" in blocks[1] and "LocalCluster" in blocks[1]
    for i, block in enumerate(blocks):
        code = block if PLACEHOLDER_SCHEDULER not in block else \
            DASK_WRAPPER.format(code=block, placeholder=PLACEHOLDER_SCHEDULER)
        proc = _run_script(code, tmp_path, f"dask_block_{i}")
        assert proc.returncode == 0, f"docs/dask.md block {i}:\n{proc.stderr[-3000:]}"
        assert "epsilon" in proc.stdout and "median" in proc.stdout, proc.stdout     # the summary table
    assert "noisy centroid (ours)" in proc.stdout
    assert "9 runs of our method, ε spent = ε asked: True" in proc.stdout, proc.stdout


def test_changelog_has_the_version():
    path = ROOT / "CHANGELOG.md"
    assert path.exists(), "CHANGELOG.md at the top level"
    text = path.read_text(encoding="utf-8")
    version = re.escape(dpcore.__version__)
    assert re.search(rf"(?m)^## \[{version}\] - \d{{4}}-\d{{2}}-\d{{2}}$", text), \
        f"CHANGELOG.md has no '## [{dpcore.__version__}] - YYYY-MM-DD' entry"
    for section in re.split(r"(?m)^## ", text)[1:]:
        assert re.search(r"(?m)^### (Added|Changed|Deprecated|Removed|Fixed|Security)$", section), section[:40]


def _estimators():
    """(package, class name) of every BaseEstimator subclass defined in the estimator packages."""
    from sklearn.base import BaseEstimator
    out = set()
    for pkg_name in ESTIMATOR_PACKAGES:
        pkg = importlib.import_module(f"dpcore.{pkg_name}")
        for info in pkgutil.walk_packages(pkg.__path__, f"{pkg.__name__}."):
            module = importlib.import_module(info.name)
            for name, obj in inspect.getmembers(module, inspect.isclass):
                if obj.__module__ == module.__name__ and issubclass(obj, BaseEstimator) and not name.startswith("_"):
                    out.add((pkg_name, name))
    return sorted(out)


def test_estimator_walk_finds_the_estimators():
    found = _estimators()
    assert ("kmeans", "CandidateKMeans") in found and ("cocluster", "DPTauCC") in found
    assert len(found) >= 15


def _privacy_anchors():
    """{name: the HTML ids any of which documents it} for every privacy mechanism: the names of
    ``dpcore.privacy.__all__`` (documented under the module that defines them or under the
    package), and the ``__all__`` and public functions of each module of dpcore.privacy."""
    import dpcore.privacy as privacy
    modules = [importlib.import_module(f"dpcore.privacy.{m}") for m in PRIVACY_MODULES]
    wanted = {}
    for name in privacy.__all__:
        obj = getattr(privacy, name)
        homes = [m.__name__ for m in modules if name in m.__all__ and getattr(m, name) is obj]
        wanted[f"dpcore.privacy.{name}"] = {f"dpcore.privacy.{name}", *(f"{h}.{name}" for h in homes)}
    for module in modules:
        public = set(module.__all__) | {n for n, f in inspect.getmembers(module, inspect.isfunction)
                                        if f.__module__ == module.__name__ and not n.startswith("_")}
        for name in public:
            wanted.setdefault(f"{module.__name__}.{name}", {f"{module.__name__}.{name}"})
    return wanted


def test_privacy_anchor_list_covers_the_mechanisms():
    wanted = _privacy_anchors()
    for name in ("dpcore.privacy.laplace_mechanism", "dpcore.privacy.RELATIONS", "dpcore.privacy.exact.gaussian_release",
                 "dpcore.privacy.sample_aggregate.exact_smooth_gaussian",
                 "dpcore.privacy.sample_aggregate.smooth_sensitivity_floor",
                 "dpcore.privacy.accountant.active_accountants"):
        assert name in wanted, name
    assert "dpcore.privacy.mechanisms.laplace_mechanism" in wanted["dpcore.privacy.laplace_mechanism"]


# a warning about one of our own pages (not a docstring): "/…/docs/dask.md:36: WARNING: …"
_PAGE_WARNING = re.compile(r"^(?:.*[/\\])?docs[/\\][^:\s]+\.(?:md|rst):\d+: WARNING: .*$", re.M)


def test_page_warning_pattern_tells_pages_from_docstrings():
    log = ("/r/docs/api/kmeans.rst:4: WARNING: py:class reference target not found: dpcore.privacy.X [ref.class]\n"
           "/r/dpcore/metrics.py:docstring of dpcore.metrics.f:3: WARNING: py:class reference target not found: x\n"
           "/r/docs/gibbs_engine.md:88: WARNING: py:func reference target not found: run_block [ref.func]\n")
    assert [w.split(":")[0] for w in _PAGE_WARNING.findall(log)] == ["/r/docs/api/kmeans.rst", "/r/docs/gibbs_engine.md"]


@pytest.mark.slow
def test_docs_build_with_warnings_as_errors_and_name_every_estimator(tmp_path):
    """The build passes with -W; a second pass with -n (nitpicky, every reference resolved; not
    enforced for the docstrings) finds no unresolved reference in docs/*.md or docs/api/*; every
    estimator and every privacy mechanism has an entry in the API pages."""
    for module in ("sphinx", "numpydoc", "myst_parser"):
        pytest.importorskip(module, reason=f"the docs build needs {module} (pip install -r requirements-test.txt)")
    out, doctrees = tmp_path / "html", tmp_path / "doctrees"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-j", "1", "-E", "-q", "-b", "html",
           "-d", str(doctrees), str(DOCS), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stderr[-6000:]}"
    nitpicky = [sys.executable, "-m", "sphinx", "-n", "-a", "-j", "1", "-q", "-b", "html",    # -a: write (and
                "-d", str(doctrees), str(DOCS), str(tmp_path / "html_n")]                    # resolve) every page
    proc = subprocess.run(nitpicky, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert (tmp_path / "html_n" / "gibbs_engine.html").exists()
    ours = _PAGE_WARNING.findall(proc.stderr)
    assert ours == [], "unresolved references in docs/ pages:\n" + "\n".join(ours)

    html = "\n".join(p.read_text(encoding="utf-8") for p in (out / "api").glob("*.html"))
    ids = set(re.findall(r'id="(dpcore\.[^"]+)"', html))
    missing = [f"dpcore.{pkg}.{name}" for pkg, name in _estimators() if f"dpcore.{pkg}.{name}" not in ids]
    assert missing == [], f"estimators without an entry in the API pages: {missing}"
    missing = sorted(name for name, anchors in _privacy_anchors().items() if not anchors & ids)
    assert missing == [], f"privacy names without an entry in the API pages: {missing}"
    assert "dpcore.subspace.gibbs_kernels.run_block" in ids            # docs/gibbs_engine.md links it
    for page in ("getting_started", "own_method", "dask", "layout", "benchmarks", "sample_aggregate",
                 "privacy_as_executed", "reproduce", "audit", "changelog"):
        assert (out / f"{page}.html").exists(), page
