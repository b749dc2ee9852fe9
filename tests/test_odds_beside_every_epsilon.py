"""Every ε on screen gets one odds sentence (Nanayakkara et al., USENIX Security 2023): every
widget whose label names ε, on every page, has an odds caption ("someone 50 % sure … can
become …") beside it, and so does the meter's total."""
from __future__ import annotations

import re

import pytest

from apptest_helpers import WIDGET_GROUPS, by_key, open_page

SMALL = {"kind": "subspaces", "n": 150, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}
ODDS = re.compile(r"someone \d+ % sure .* (can|may) become")


def epsilon_inputs(at):
    """The ε inputs on the page (a label naming ε as the quantity typed or chosen)."""
    out = []
    for group in WIDGET_GROUPS:
        for w in getattr(at, group):
            label = w.label or ""
            if re.search(r"(^|[^A-Za-z])ε([^A-Za-z]|$)", label) and not label.startswith("δ"):
                out.append(label)
    return out


def odds_captions(at):
    return [c.value for c in at.caption if ODDS.search(c.value)]


CASES = [
    ("3_cluster.py", {"cl_method": "sulq_kplane"}),
    ("3_cluster.py", {"cl_method": "sample_aggregate"}),
    ("4_gibbs.py", {}),
    ("5_coclustering.py", {}),
    ("6_kmeans.py", {}),
    ("7_privacy_utility.py", {}),
    ("8_audit.py", {}),
]


@pytest.mark.parametrize("page, state", CASES, ids=[f"{p}-{s.get('cl_method', '')}" for p, s in CASES])
def test_every_epsilon_input_has_an_odds_sentence(page, state):
    at = open_page(page, spec=SMALL, state=state, timeout=300)
    inputs = epsilon_inputs(at)
    assert inputs, f"{page}: no ε input found (the test's label rule needs updating)"
    assert len(odds_captions(at)) >= len(inputs), (page, inputs, odds_captions(at))
