"""The documentation: docs/layout.md matches the tree, the README stays short and its links and
Python example work, the getting-started code runs, the CHANGELOG names the version, and the
Sphinx build passes with warnings as errors and documents every estimator."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dpcore

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README_MAX_BYTES = 15_000
ESTIMATOR_PACKAGES = ("kmeans", "subspace", "cocluster")


def _layout_block():
    text = (DOCS / "layout.md").read_text(encoding="utf-8")
    return text.split("```", 2)[1]


def _named_paths(block):
    """Paths the layout tree names: top-level entries, dpcore/<entry> (two spaces of indent) and
    the modules of a dpcore subpackage (four spaces, ``.py``)."""
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
    return named


def test_layout_page_matches_the_tree():
    """docs/layout.md lists every dpcore module and subpackage and every ui/ module, the
    top-level files and folders a reader needs, and every path it names exists."""
    named = _named_paths(_layout_block())
    missing = sorted(p for p in named if not (ROOT / p.rstrip("/")).exists())
    assert missing == [], f"docs/layout.md names paths that do not exist: {missing}"
    expected = {p.name + ("/" if p.is_dir() else "") for p in (ROOT / "dpcore").iterdir()
                if not p.name.startswith("__") and (p.is_dir() or p.suffix == ".py")}
    listed = {p.split("/", 1)[1] for p in named if p.startswith("dpcore/") and p.count("/") <= 2 and p != "dpcore/"}
    listed = {p if p.endswith("/") or "/" not in p else p.split("/")[0] + "/" for p in listed}
    assert expected - listed == set(), f"dpcore entries missing from docs/layout.md: {sorted(expected - listed)}"
    ui = {f"ui/{p.name}" for p in (ROOT / "ui").glob("*.py") if not p.name.startswith("__")}
    assert ui - named == set(), f"ui modules missing from docs/layout.md: {sorted(ui - named)}"
    for top in ("app.py", "pages/", "dpcore/", "sample_data/", "scripts/", "benchmarks/", "tests/", "docs/",
                "examples/", "pyproject.toml", "README.md", "CHANGELOG.md"):
        assert top in named, top


def test_layout_parser_sees_a_missing_module():
    block = "dpcore/\n  privacy/          x\n    mechanisms.py   y\n                    continued text.py\n"
    assert _named_paths(block) == {"dpcore/", "dpcore/privacy/", "dpcore/privacy/mechanisms.py"}


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


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_front_page_python_example_runs(page, tmp_path, monkeypatch):
    """The one short example of the README and of the docs' front page runs from any folder."""
    blocks = _python_blocks(ROOT / page)
    assert len(blocks) == 1, f"{page} has one short Python example"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], page, "exec"), {"__name__": "front_page_example"})


def test_getting_started_code_runs(tmp_path, monkeypatch, capsys):
    """The page's blocks run in order, in one namespace, as a reader would paste them; the
    accountant refuses the fourth fit and the totals are the ones the page shows."""
    blocks = _python_blocks(DOCS / "getting_started.md")
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "getting_started"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"getting_started.md[{i}]", "exec"), ns)
    assert "budget" in capsys.readouterr().out            # the refusal was printed
    assert len(ns["acc"].runs) == 3                        # and the fourth fit not recorded
    assert ns["acc"].basic_total() == pytest.approx((3.0, 3e-6))
    assert ns["km"].epsilon_spent_ == pytest.approx(1.0)


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


@pytest.mark.slow
def test_docs_build_with_warnings_as_errors_and_name_every_estimator(tmp_path):
    for module in ("sphinx", "numpydoc", "myst_parser"):
        pytest.importorskip(module, reason=f"the docs build needs {module} (pip install -r requirements-test.txt)")
    out = tmp_path / "html"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-j", "1", "-E", "-q", "-b", "html",
           "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stderr[-6000:]}"
    html = "\n".join(p.read_text(encoding="utf-8") for p in (out / "api").glob("*.html"))
    missing = [f"dpcore.{pkg}.{name}" for pkg, name in _estimators() if f'id="dpcore.{pkg}.{name}"' not in html]
    assert missing == [], f"estimators without an entry in the API pages: {missing}"
    for page in ("getting_started", "own_method", "dask", "layout", "benchmarks", "sample_aggregate",
                 "privacy_as_executed", "reproduce", "audit", "changelog"):
        assert (out / f"{page}.html").exists(), page
