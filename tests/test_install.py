"""dpcore is installable.

- From the repository (issue 15): after the README's install (``pip install -r
  requirements.txt``, which installs dpcore itself in editable mode), a page's "Reproduce in
  Python" script runs from any folder and prints the page's numbers.
- From a wheel (issue 24): the wheel holds the datasets, the licence and one version; installed
  with ``--no-deps`` into an empty folder and imported from a folder outside the repository
  (that folder on PYTHONPATH, the checkout nowhere on sys.path), CLUTO and Yale B load and
  ``python -m dpcore.reproduce cocluster-fig3 --tiny`` runs; and the library, the Gibbs
  sampler, the exact samplers and the reproduction run with numba, dask and streamlit
  unimportable (the optional extras ``[fast]``, ``[dask]`` and ``[app]``).
"""
import ast
import email.parser
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from apptest_helpers import by_key, open_page, press

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"kind": "subspaces", "n": 300, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}


@pytest.mark.slow
def test_cluster_page_script_runs_outside_the_repository(tmp_path):
    at = open_page("3_cluster.py", spec=SMALL)
    by_key(at, "cl_method").set_value("sulq_kplane")
    at.run()
    by_key(at, "cl_repro").check()
    at.run()
    press(at, "cluster_form")
    assert not at.error
    res = at.session_state["cluster_result"]
    script = tmp_path / "reproduce.py"
    script.write_text(res["code"])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}     # nothing points at the repository
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    if "No module named 'dpcore'" in out.stderr:
        pytest.fail("dpcore is not installed: run `pip install -r requirements.txt` (it installs dpcore with -e .)")
    assert out.returncode == 0, out.stderr
    # and it ran THIS checkout's dpcore (an editable install of another checkout would not count)
    where = subprocess.run([sys.executable, "-c", "import dpcore; print(dpcore.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60).stdout.strip()
    assert Path(where).resolve().is_relative_to(ROOT), f"dpcore imported from {where}, not from {ROOT}"
    printed = dict(line.split(": ", 1) for line in out.stdout.strip().splitlines() if ": " in line)
    # same estimator, parameters and seed: the same numbers, printed to full precision
    assert float(printed["accuracy"]) == pytest.approx(res["metrics"]["accuracy"], rel=1e-12)
    assert float(printed["d_W to truth"]) == pytest.approx(res["metrics"]["d_W to truth"], rel=1e-12)


# ----------------------------------------------------------------------------- the wheel (issue 24)
#: What a build needs from the checkout. The build runs on a copy: setuptools builds in place
#: (build/ and dpcore.egg-info/ in the source folder), and a stale build/lib would leak files
#: that the checkout no longer has into the wheel.
BUILD_INPUTS = ("pyproject.toml", "README.md", "LICENSE", "dpcore")
#: The extras: none of them is a core dependency of the library.
OPTIONAL = ("numba", "dask", "distributed", "streamlit")
#: Upper bound of the wheel's size (the datasets are 7.7 MB of it).
MAX_WHEEL_BYTES = 12_000_000


def _source_version():
    """dpcore.__version__ as written in the checkout (read, not imported)."""
    tree = ast.parse((ROOT / "dpcore" / "__init__.py").read_text(encoding="utf-8"))
    return next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                and any(getattr(t, "id", None) == "__version__" for t in node.targets))


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """dpcore's wheel, built by pip from a copy of the checkout's build inputs."""
    src = tmp_path_factory.mktemp("src")
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    # build isolation: pip brings the setuptools that pyproject.toml asks for
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-input", "-w", str(out), str(src)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=_clean_env())
    assert res.returncode == 0, f"{' '.join(cmd)} failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    wheels = list(out.glob("dpcore-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """An empty folder with only the wheel installed into it (``pip install --no-deps --target``)."""
    target = tmp_path_factory.mktemp("target")
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--target", str(target), str(wheel)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=_clean_env())
    assert res.returncode == 0, res.stderr[-3000:]
    assert sorted(p.name for p in target.iterdir() if p.name != "bin") == \
        ["dpcore", f"dpcore-{_source_version()}.dist-info"]
    return target


def _run_outside(args, target, tmp_path, timeout=600):
    """Run ``python ARGS`` in a fresh folder outside the repository with only ``target`` on PYTHONPATH."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    assert not cwd.resolve().is_relative_to(ROOT)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=_clean_env(PYTHONPATH=str(target)),
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_wheel_holds_the_package_its_data_its_licence_and_one_version(wheel):
    version = _source_version()
    assert wheel.name == f"dpcore-{version}-py3-none-any.whl"
    assert 0 < wheel.stat().st_size <= MAX_WHEEL_BYTES, wheel.stat().st_size
    with zipfile.ZipFile(wheel) as z:
        sizes = {i.filename: i.file_size for i in z.infolist()}
        meta = email.parser.Parser().parsestr(z.read(f"dpcore-{version}.dist-info/METADATA").decode())
        licence = z.read(f"dpcore-{version}.dist-info/licenses/LICENSE").decode()
    # every module of the checkout, and nothing else of it (no caches, tests, app, sample_data)
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "dpcore").rglob("*.py") if "__pycache__" not in p.parts}
    assert sources - set(sizes) == set()
    assert all(n.startswith(("dpcore/", f"dpcore-{version}.dist-info/")) for n in sizes), sorted(sizes)
    assert not [n for n in sizes if "__pycache__" in n or n.endswith(".pyc")]
    # the datasets, byte for byte the checkout's size
    data = {p.relative_to(ROOT).as_posix(): p.stat().st_size for p in (ROOT / "dpcore" / "datasets").rglob("*.npz")}
    assert {"dpcore/datasets/yaleb.npz", "dpcore/datasets/cluto/classic3.npz"} <= set(data)
    assert {n: sizes.get(n) for n in data} == data
    assert licence == (ROOT / "LICENSE").read_text() and "BSD 3-Clause" in licence
    assert meta["Version"] == version
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert {"app", "fast", "dask"} <= set(meta.get_all("Provides-Extra"))
    core = [r for r in meta.get_all("Requires-Dist") if "extra ==" not in r]
    names = {r.split(";")[0].split("[")[0].split(">")[0].split("=")[0].strip().lower() for r in core}
    assert names == {"numpy", "scipy", "pandas", "plotly", "scikit-learn", "diffprivlib", "threadpoolctl",
                     "dp-accounting"}, core


@pytest.mark.slow
def test_installed_wheel_loads_the_data_and_reproduces_outside_the_repository(installed, tmp_path):
    check = textwrap.dedent(f"""
        import sys
        from importlib.metadata import version
        from pathlib import Path
        import dpcore
        from dpcore.data import DATASETS, load_cluto, load_yaleb
        assert Path(dpcore.__file__).resolve().is_relative_to(Path({str(installed)!r}).resolve()), dpcore.__file__
        assert not any(Path(p or ".").resolve().is_relative_to(Path({str(ROOT)!r}).resolve()) for p in sys.path), sys.path
        assert dpcore.__version__ == version("dpcore") == {_source_version()!r}, (dpcore.__version__, version("dpcore"))
        assert Path(str(DATASETS)).resolve().is_relative_to(Path({str(installed)!r}).resolve()), DATASETS
        c = load_cluto("classic3")
        y = load_yaleb()
        print(c.X.shape, c.X.nnz, c.n_classes, y.X.shape, y.n_classes)
    """)
    res = _run_outside(["-c", check], installed, tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["(3891,", "4303)", "176347", "3", "(320,", "50)", "5"]
    out = tmp_path / "out"
    res = _run_outside(["-m", "dpcore.reproduce", "cocluster-fig3", "--tiny", "--out", str(out)], installed, tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "cocluster-fig3:" in res.stdout
    assert list((out / "cocluster-fig3").glob("*.csv")), sorted(p.name for p in out.rglob("*"))


@pytest.mark.slow
def test_installed_library_runs_without_numba_dask_and_streamlit(installed, tmp_path):
    """The extras stay optional: with them unimportable, the Gibbs kernels fall back to the
    numpy engine, the exact samplers to their numpy path, and the reproduction runs."""
    out = tmp_path / "out"
    script = textwrap.dedent(f"""
        import runpy, sys
        for name in {OPTIONAL!r}:
            sys.modules[name] = None          # import NAME now raises ImportError
        import numpy as np
        from dpcore.data import make_union_of_subspaces
        from dpcore.privacy import exact_samplers
        from dpcore.subspace import gibbs_kernels
        from dpcore.subspace.gibbs import GibbsSubspaceClustering
        assert not gibbs_kernels.AVAILABLE
        ds = make_union_of_subspaces(n=120, d=5, k=2, q=2, sigma=0.01, random_state=0)
        g = GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, epsilon=1.0, n_iter=10, engine="auto",
                                    random_state=0).fit(ds.X)
        assert g.engine_ == "numpy" and g.labels_.shape == (120,), g.engine_
        noise = exact_samplers.discrete_gaussian_noise(2, 1, size=1000, random_state=1)
        assert not exact_samplers._kernels() and noise.shape == (1000,) and noise.dtype.kind == "i"
        assert 1.7 < noise.std() < 2.3, noise.std()        # σ² = 2^m·w = 4
        sys.argv = ["dpcore.reproduce", "cocluster-fig3", "--tiny", "--out", {str(out)!r}]
        try:
            runpy.run_module("dpcore.reproduce", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            assert not exc.code, exc.code
        assert not [m for m in sys.modules if m.split(".")[0] in {OPTIONAL!r} and sys.modules[m] is not None]
    """)
    res = _run_outside(["-c", script], installed, tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert list((out / "cocluster-fig3").glob("*.csv"))
