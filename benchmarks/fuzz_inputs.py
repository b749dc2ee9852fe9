"""The larger run of the input fuzz suite (issue 33): many more generated inputs, counts printed.

    python benchmarks/fuzz_inputs.py [--scale 1.0] [--seed 0] [--only text_uploads,links]

The same generators and properties as ``tests/test_fuzz_inputs.py`` (uploads of every format,
link query strings, number-field values; in process and through the pages with AppTest), with
``--scale`` × the counts below instead of the CI run's ≈1,070, and a random seed (``--seed``)
instead of the CI run's fixed derandomized one, so that each run explores other inputs. For each
generator it prints how many inputs ran, what became of them (loaded / refused and by which
problem, applied / named, ran / refused by the field) and the seconds they took (for
information: there is no time budget). A failing property is printed with hypothesis' shrunk
input, and the script exits with status 1: a traceback, a hang (the watchdog or the deadline),
a silent drop or a wrong diagnosis.
"""
from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as hs  # noqa: E402

import test_fuzz_inputs as fz  # noqa: E402

#: generator -> (strategy, property, examples at scale 1, per-example deadline in seconds)
RUNS = {
    "text_uploads": (fz.text_uploads(), fz.run_upload, 5000, fz.DEADLINE_S),
    "binary_uploads": (fz.binary_uploads(), fz.run_upload, 3000, fz.DEADLINE_S),
    "links": (fz.links(), fz.run_link, 5000, fz.DEADLINE_S),
    "number_fields": (fz.number_fields(), fz.run_number_field, 300, fz.PAGE_DEADLINE_S),
    "page_uploads": (hs.one_of(fz.text_uploads(), fz.binary_uploads()).filter(fz._fits_the_page), fz.run_page_upload,
                     300, fz.PAGE_DEADLINE_S),
    "page_links": (fz.page_links(), fz.run_page_link, 300, fz.PAGE_DEADLINE_S),
    "data_form": (fz.data_forms(), fz.run_data_form, 200, fz.PAGE_DEADLINE_S),
}


def run(name, strategy, check, examples, deadline, seed_value):
    """Run one generator; returns (outcome counts, seconds, failure text or None)."""
    counts = Counter()

    @seed(seed_value)
    @settings(max_examples=examples, database=None, deadline=timedelta(seconds=deadline), print_blob=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def prop(example):
        counts[check(*example) if isinstance(example, tuple) else check(example)] += 1

    t0 = time.perf_counter()
    try:
        prop()
        failure = None
    except Exception:   # noqa: BLE001 - the property failed: print hypothesis' report
        failure = traceback.format_exc()
    return counts, time.perf_counter() - t0, failure


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every generator's count (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    ap.add_argument("--only", default="", help=f"comma-separated generators, of: {', '.join(RUNS)}")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(RUNS)
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        ap.error(f"unknown generators {unknown}; choose from {', '.join(RUNS)}")
    total, failed = 0, []
    print(f"Input fuzzing (issue 33), seed {args.seed}, scale {args.scale:g}\n")
    for name in names:
        strategy, check, n, deadline = RUNS[name]
        examples = max(1, int(n * args.scale))
        counts, seconds, failure = run(name, strategy, check, examples, deadline, args.seed)
        ran = sum(counts.values())
        total += ran
        print(f"{name}: {ran:,} inputs in {seconds:.1f} s ({examples:,} asked)"
              + (" — FAILED" if failure else " — every input got a result or a clear message"))
        for outcome, count in counts.most_common():
            print(f"    {count:6,}  {outcome}")
        if failure:
            failed.append(name)
            print("\n".join("    | " + line for line in failure.rstrip().splitlines()[-40:]))
        print()
    print(f"{total:,} inputs in all; failing generators: {', '.join(failed) if failed else 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
