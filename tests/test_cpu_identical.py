"""The Gibbs sampler's draws for one public seed are the same bits on every x86-64 CPU.

Each run is a child process fitting :class:`GibbsSubspaceClustering` (``engine="numba"``, the
real path: random start, blocks of sweeps, the re-orthonormalisation at sweep 256) on data
written by this process, under one "CPU": numba's target (``NUMBA_CPU_NAME`` with that CPU's own
features, each target in its own empty ``NUMBA_CACHE_DIR`` so that nothing compiled for another
is reused), and, for ``generic``, also numpy's SIMD dispatch narrowed to its baseline
(``NPY_DISABLE_CPU_FEATURES``), OpenBLAS's kernels to Prescott (``OPENBLAS_CORETYPE``) and glibc's
libm to its variants without AVX2/FMA (``GLIBC_TUNABLES``). The labels, subspaces and cost and
statistic traces of every chain must be equal as float64 bits. Why they are:
``dpcore/subspace/gibbs_kernels.py`` ("arithmetic that is the same on every CPU") and
docs/known_gaps.md.

The quick test keeps numba's code for this CPU (its cache, as every other test) and narrows
only the libraries; the slow one compiles the kernels three or four times (≈ 30 s each).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore.data import make_union_of_subspaces
from dpcore.subspace import gibbs_kernels as gk

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not gk.AVAILABLE, reason="numba is not installed")

# (name, n, d, q, epsilon, data seed): d = 6 takes the packed scatter updates, d = 20 the
# row-wise ones (d > 16); at these ε one ulp of difference grows to different labels within a
# few hundred sweeps (tests/test_cpu_identical.py's history: with the kernels' former fast-math
# flags, generic and haswell gave different labels in both).
CASES = [("d6", 300, 6, 2, 300.0, 0), ("d20", 160, 20, 4, 150.0, 1)]
N_ITER = 300            # past the QR clean-up at sweep 256
N_CHAINS = 3

CHILD = r"""
import hashlib, json, math, sys
import numpy as np
from dpcore.subspace.gibbs import GibbsSubspaceClustering
from dpcore.subspace import gibbs_kernels as gk
folder, cases, n_iter, n_chains = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
out = {}
for name, n, d, q, eps, seed in cases:
    X = np.load(f"{folder}/{name}.npy")
    g = GibbsSubspaceClustering(n_clusters=3, subspace_dim=q, epsilon=eps, n_iter=n_iter, n_chains=n_chains,
                                engine="numba", random_state=seed + 11).fit(X)
    assert g.engine_ == "numba"
    out[name + "/labels"] = g.chain_labels_
    out[name + "/subspaces"] = g.chain_subspaces_
    out[name + "/cost"] = g.traces_["cost"]
    out[name + "/statistic"] = g.traces_["statistic"]
np.savez(f"{folder}/{sys.argv[5]}.npz", **out)
# canaries: library calls whose results depend on the CPU (they show that the narrowing took effect)
rng = np.random.default_rng(3)
x = rng.uniform(-30.0, 3.0, 20000)
h = lambda a: hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()[:12]
canary = {"numpy exp": h(np.exp(x)), "libm exp": h(np.array([math.exp(v) for v in x])),
          "LAPACK qr": h(np.linalg.qr(rng.standard_normal((200, 10, 4)))[0]),
          "numba target": __import__("numba").config.CPU_NAME or "host"}
print(json.dumps(canary))
"""


def _host_features():
    from llvmlite import binding as llvm
    return set(f[1:] for f in llvm.get_host_cpu_features().flatten().split(",") if f.startswith("+"))


def _narrowed_libraries():
    """Environment for numpy, OpenBLAS and glibc's libm on their least SIMD code paths."""
    from numpy._core import _multiarray_umath as mu
    dispatched = [f for f in getattr(mu, "__cpu_dispatch__", []) if mu.__cpu_features__.get(f)]
    env = {"OPENBLAS_CORETYPE": "Prescott",
           "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4,-AVX512F,-AVX,-AVX2_Usable,-FMA_Usable"}
    if dispatched:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(dispatched)
    return env


def target_cache(label):
    """The numba cache of one CPU target, shared by the tests that compile for it (they run in one
    worker: ``xdist_group("cpu_targets")``) and named by the kernels' source, so a changed kernel is
    compiled again. numba keys its cache by the target's CPU name and features too, so nothing
    compiled for one target is loaded for another."""
    import hashlib
    import tempfile
    src = hashlib.sha1(Path(gk.__file__).read_bytes()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / "dpcore-numba-targets" / f"{label}-{src}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def target_env(extra_env, cache=None):
    """This environment without CPU overrides, plus ``extra_env`` and the checkout on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CPU", "NPY_DISABLE_CPU", "OPENBLAS_CORE"))}
    env.pop("GLIBC_TUNABLES", None)
    env.update(extra_env)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    return env


def _run(tmp_path, label, extra_env, own_cache):
    env = target_env(extra_env, target_cache(label) if own_cache else None)
    res = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), json.dumps(CASES), str(N_ITER), str(N_CHAINS),
                          label], env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=1500)
    assert res.returncode == 0, (label, res.stderr[-3000:])
    return dict(np.load(tmp_path / f"{label}.npz")), json.loads(res.stdout.strip().splitlines()[-1])


def _write_data(tmp_path):
    for name, n, d, q, _, seed in CASES:
        np.save(tmp_path / f"{name}.npy", make_union_of_subspaces(n, d, 3, q, 0.1, random_state=seed).X)


def _assert_identical(runs):
    (ref_label, (ref, _)), *others = runs.items()
    for label, (out, _) in others:
        assert out.keys() == ref.keys()
        for key in ref:
            a, b = ref[key], out[key]
            assert a.shape == b.shape and a.dtype == b.dtype, (label, key)
            same = np.array_equal(a.view(np.uint8), b.view(np.uint8))           # the float64 bits
            assert same, (f"{key}: {label} differs from {ref_label}", np.flatnonzero((a != b).ravel())[:5],
                          a.ravel()[(a != b).ravel()][:3], b.ravel()[(a != b).ravel()][:3])


def _assert_narrowing_took_effect(host_canary, narrow_canary):
    """The comparison is not vacuous: on a CPU with FMA at least one of numpy's exp, libm's exp
    and LAPACK's QR gives other bits under the narrowed environment."""
    if "fma" in _host_features():
        assert any(host_canary[k] != narrow_canary[k] for k in ("numpy exp", "libm exp", "LAPACK qr")), \
            (host_canary, narrow_canary)


def test_gibbs_draws_do_not_depend_on_the_cpu_paths_of_numpy_openblas_and_libm(tmp_path):
    """Quick: the kernels as compiled for this CPU (numba's usual cache), once with the libraries
    as they are and once narrowed to their baseline code (see the module docstring)."""
    _write_data(tmp_path)
    runs = {"host": _run(tmp_path, "host", {}, own_cache=False),
            "host, narrowed libraries": _run(tmp_path, "narrow", _narrowed_libraries(), own_cache=False)}
    _assert_narrowing_took_effect(runs["host"][1], runs["host, narrowed libraries"][1])
    _assert_identical(runs)
    assert runs["host"][0]["d6/labels"].shape == (N_CHAINS, 300)


@pytest.mark.slow
@pytest.mark.xdist_group("cpu_targets")
def test_gibbs_draws_are_bit_identical_compiled_for_generic_haswell_and_this_cpu(tmp_path):
    """Slow: the kernels compiled for x86-64 ``generic`` (SSE2, with the narrowed libraries),
    ``haswell`` (AVX2 + FMA), ``skylake-avx512`` (when this CPU can run it) and this CPU, each in
    its own numba cache (:func:`target_cache`)."""
    _write_data(tmp_path)
    feats = _host_features()
    targets = {"generic": {"NUMBA_CPU_NAME": "generic", **_narrowed_libraries()}}
    if {"avx2", "fma"} <= feats:
        targets["haswell"] = {"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": ""}   # haswell's own features
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= feats:
        targets["skylake-avx512"] = {"NUMBA_CPU_NAME": "skylake-avx512", "NUMBA_CPU_FEATURES": ""}
    targets["host"] = {}
    runs = {label: _run(tmp_path, label, env, own_cache=True) for label, env in targets.items()}
    assert runs["generic"][1]["numba target"] == "generic" and runs["host"][1]["numba target"] == "host"
    _assert_narrowing_took_effect(runs["host"][1], runs["generic"][1])
    _assert_identical(runs)


DATA_CHILD = r"""
import hashlib, json
from dpcore.data import PAPER_SPECS, load_dataset
out = {}
for name in ("fig2_middle", "lines_r3", "planes_r3"):
    ds = load_dataset(**PAPER_SPECS[name])
    out[name] = [hashlib.sha1(ds.X.tobytes()).hexdigest(), hashlib.sha1(ds.subspaces.tobytes()).hexdigest()]
print(json.dumps(out))
"""


def test_generated_subspaces_and_points_do_not_depend_on_the_cpu_paths_of_numpy_openblas_and_libm():
    """The planted subspaces came from LAPACK's QR, whose bits follow the BLAS kernel OpenBLAS picks
    for the CPU (this machine's environment pins OPENBLAS_CORETYPE; without it the shipped Gibbs runs
    recomputed to other numbers): the data generators' arithmetic is now the same on every CPU."""
    runs = {}
    for label, extra in (("as configured", None), ("OpenBLAS autodetected", {}),
                         ("narrowed libraries", _narrowed_libraries())):
        env = None if extra is None else target_env(extra)
        res = subprocess.run([sys.executable, "-c", DATA_CHILD], env=env, cwd=str(ROOT), capture_output=True,
                             text=True, timeout=600)
        assert res.returncode == 0, (label, res.stderr[-2000:])
        runs[label] = json.loads(res.stdout.strip().splitlines()[-1])
    first = next(iter(runs.values()))
    assert all(r == first for r in runs.values()), runs
