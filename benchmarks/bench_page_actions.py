"""Each page's default action, timed, here and at a reference commit (before/after a change).

    python benchmarks/bench_page_actions.py [--ref COMMIT] [--repeat 2] [--only cluster,gibbs]

Every page is opened with Streamlit's AppTest on its defaults (after the app's background
warm-up, ``ui.warmup``) and its main button is pressed; the time is the wall time of that
script run. The first click of each action fills per-process caches (the dataset, first
imports) and is not counted.
With ``--ref`` the same script runs from a temporary ``git worktree`` of COMMIT in a separate
process, alternating with the current tree so that the machine's load hits both alike, and
the table prints both times and their ratio (the issue's budget: no page more than 10 %
slower). Each action is run ``--repeat`` times per tree and the median is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

#: (name, page file, button label): each page's main action on its defaults
ACTIONS = [
    ("cluster", "3_cluster.py", "Run"),
    ("gibbs", "4_gibbs.py", "Run chains"),
    ("co-clustering", "5_coclustering.py", "Run"),
    ("k-means", "6_kmeans.py", "Run"),
    ("privacy-utility sweep", "7_privacy_utility.py", "Run sweep"),
    ("audit", "8_audit.py", "Run audit"),
]


def run_actions(root, names, repeat):
    """{name: [seconds, ...]} for the actions in ``names``, run from the tree at ``root``."""
    sys.path.insert(0, root)
    os.chdir(root)
    from streamlit.testing.v1 import AppTest
    from ui import warmup
    warmup.start().join()        # what the app does in the background once the first page is drawn
    out = {}
    for name, page, label in ACTIONS:
        if names and name not in names:
            continue
        times = []
        for _ in range(repeat + 1):          # the first click (dataset cache, first imports) is not counted
            at = AppTest.from_file(os.path.join(root, "pages", page), default_timeout=900)
            at.run()
            button = next((b for b in at.button if b.label == label), None)
            if button is None:                         # not offered on the page's defaults
                times.append(float("nan"))
                continue
            t0 = time.perf_counter()
            button.click().run()
            times.append(time.perf_counter() - t0)
            if at.exception:
                times[-1] = float("nan")
        out[name] = times[1:]
    return out


def _child(root, names, repeat):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", root, "--repeat", str(repeat)]
    if names:
        cmd += ["--only", ",".join(names)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", help="reference commit (before)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--only", help="comma-separated action names")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    names = [n.strip() for n in args.only.split(",")] if args.only else []
    if args.child:
        print(json.dumps(run_actions(args.child, names, args.repeat)))
        return
    here = os.path.abspath(ROOT)
    print(f"load average: {os.getloadavg()}")
    if not args.ref:
        res = _child(here, names, args.repeat)
        for name, ts in res.items():
            print(f"{name:28s} {statistics.median(ts):7.2f} s")
        return
    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, "ref")
        subprocess.run(["git", "-C", here, "worktree", "add", "--detach", wt, args.ref], check=True,
                       capture_output=True)
        try:
            before, after = {}, {}
            for _ in range(args.repeat):                    # alternate the two trees
                for k, v in _child(wt, names, 1).items():
                    before.setdefault(k, []).extend(v)
                for k, v in _child(here, names, 1).items():
                    after.setdefault(k, []).extend(v)
        finally:
            subprocess.run(["git", "-C", here, "worktree", "remove", "--force", wt], capture_output=True)
    print(f"{'action':28s} {'before':>9s} {'after':>9s} {'ratio':>7s}   (medians of {args.repeat}; before = {args.ref})")
    for name in after:
        b, a = statistics.median(before[name]), statistics.median(after[name])
        print(f"{name:28s} {b:8.2f}s {a:8.2f}s {a / b:7.2f}")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
