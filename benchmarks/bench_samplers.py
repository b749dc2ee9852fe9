"""Benchmark of the exact integer samplers (:mod:`dpcore.privacy.exact_samplers`).

    python benchmarks/bench_samplers.py [--repeats 5]

Prints draws per second, single thread, after warm-up, best of ``--repeats`` timings
(time.perf_counter; each timing of a small size loops over enough calls to last >= 20 ms,
so the per-call overhead is included):

- ours: discrete Gaussian σ² = 2^40·w (w = 2^40 and 2^42 - 1, i.e. σ = 2^40 and ≈ 2^41),
  discrete Laplace and geometric with t = 2^40, at sizes 165, 2,500 and 100,000;
- OpenDP (optional; skipped if not importable): the float Gaussian
  ``make_gaussian(vector_domain(atom_domain(T=float, nan=False)), l2_distance(T=float))``
  and, for reference, its integer (exact discrete) Gaussian and Laplace on ``i64`` vectors,
  each on a vector of zeros of the same size (list conversion included: that is how it is
  called); the ratio ours / OpenDP float Gaussian;
- numpy ``Generator.standard_normal`` (inexact floats) for scale.

Also prints the first-use compile time (a fresh numba cache directory, in a subprocess)
and the warm-up time with the on-disk cache. No assertions: numbers on a shared machine
are indicative.
"""
from __future__ import annotations

import argparse
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpcore.privacy import exact_samplers as es  # noqa: E402

SIZES = (165, 2_500, 100_000)


def rate(fn, n, repeats):
    """Best draws/s of fn() (which makes n draws), each timing lasting >= ~20 ms."""
    fn()
    t0 = time.perf_counter()
    fn()
    calls = max(1, math.ceil(0.02 / max(time.perf_counter() - t0, 1e-7)))
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return n / best


def compile_times():
    code = "import time; from dpcore.privacy import exact_samplers as es; print(es.warm_up())"
    env = dict(os.environ)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        env["NUMBA_CACHE_DIR"] = tmp
        for label in ("first use (empty numba cache)", "next process (cached)"):
            res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
            out[label] = float(res.stdout.strip().splitlines()[-1]) if res.returncode == 0 else float("nan")
    return out


def opendp_samplers():
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    sigma = 2.0 ** 40
    gauss_float = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                                     scale=sigma)
    gauss_int = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T="i64")), dp.l2_distance(T="i64"), scale=sigma)
    lap_int = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=sigma)
    return {
        "OpenDP float Gaussian, σ = 2^40": lambda n: (lambda x=[0.0] * n: gauss_float(x)),
        "OpenDP i64 discrete Gaussian, σ = 2^40": lambda n: (lambda x=[0] * n: gauss_int(x)),
        "OpenDP i64 discrete Laplace, scale 2^40": lambda n: (lambda x=[0] * n: lap_int(x)),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-compile", action="store_true", help="do not time the compilation in subprocesses")
    args = ap.parse_args(argv)

    if not args.skip_compile:
        for label, sec in compile_times().items():
            print(f"compile, {label}: {sec:.2f} s")
    print(f"warm_up() in this process: {es.warm_up():.2f} s")

    rng = np.random.default_rng(0)
    ours = {
        "ours discrete Gaussian m=40, w=2^40": lambda n: (lambda: es.discrete_gaussian_noise(40, 2 ** 40, size=n, random_state=rng)),
        "ours discrete Gaussian m=40, w=2^42-1": lambda n: (lambda: es.discrete_gaussian_noise(40, 2 ** 42 - 1, size=n, random_state=rng)),
        "ours discrete Laplace t=2^40": lambda n: (lambda: es.discrete_laplace_int_noise(2 ** 40, size=n, random_state=rng)),
        "ours geometric t=2^40": lambda n: (lambda: es.geometric_noise(2 ** 40, size=n, random_state=rng)),
    }
    others = {"numpy standard_normal (float, inexact)": lambda n: (lambda: rng.standard_normal(n))}
    odp = opendp_samplers()
    if odp is None:
        print("OpenDP is not importable: its rows are skipped")
    else:
        others = {**odp, **others}

    results = {}
    width = max(map(len, list(ours) + list(others)))
    print(f"\n{'draws per second':{width}s} " + " ".join(f"{'n=' + format(n, ','):>14s}" for n in SIZES))
    for name, make in {**ours, **others}.items():
        row = []
        for n in SIZES:
            repeats = args.repeats if not name.startswith("OpenDP") or n < 100_000 else max(1, args.repeats // 2)
            row.append(rate(make(n), n, repeats))
        results[name] = row
        print(f"{name:{width}s} " + " ".join(f"{r:14,.0f}" for r in row), flush=True)

    if odp is not None:
        print()
        ref = "OpenDP float Gaussian, σ = 2^40"
        for name in ours:
            if "Gaussian" in name:
                print(f"ratio {name} / {ref}: " + ", ".join(f"{a / b:.0f}x" for a, b in zip(results[name], results[ref])))
        ref = "OpenDP i64 discrete Gaussian, σ = 2^40"
        name = "ours discrete Gaussian m=40, w=2^40"
        print(f"ratio {name} / {ref}: " + ", ".join(f"{a / b:.0f}x" for a, b in zip(results[name], results[ref])))
        ref = "OpenDP i64 discrete Laplace, scale 2^40"
        name = "ours discrete Laplace t=2^40"
        print(f"ratio {name} / {ref}: " + ", ".join(f"{a / b:.0f}x" for a, b in zip(results[name], results[ref])))


if __name__ == "__main__":
    main()
