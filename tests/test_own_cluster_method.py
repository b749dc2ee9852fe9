"""docs/own_method.md: a new private method on the Cluster page from one catalogue entry plus
its widgets (examples/own_cluster_method.py). Its privacy box, plan, charge and class-budget
refusal all come from the library: the page has no code of its own for it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from apptest_helpers import by_key, open_page, press

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"kind": "subspaces", "n": 150, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}


@pytest.fixture
def own_method():
    sys.path.insert(0, str(ROOT / "examples"))
    import own_cluster_method
    entry = own_cluster_method.register()
    yield entry
    from dpcore.lab.methods import unregister_method
    from ui.cluster import METHODS
    METHODS.pop(own_cluster_method.NAME, None)
    unregister_method(own_cluster_method.NAME)
    sys.path.remove(str(ROOT / "examples"))


def _page(state=None):
    at = open_page("3_cluster.py", spec=SMALL, state=state)
    by_key(at, "cl_method").set_value("noisy_scatter")
    at.run()
    by_key(at, "noisy_scatter_eps").set_value(10.0)
    by_key(at, "noisy_scatter_radius").set_value(1.0)
    return at


def test_an_own_private_method_runs_on_the_cluster_page_from_its_catalogue_entry(own_method):
    at = _page()
    assert any("someone 50 % sure" in c.value for c in at.caption)          # the odds sentence under its ε
    press(at, "cluster_form")
    assert not at.error, [e.value for e in at.error]
    box = next(i.value for i in at.info if "**Private" in i.value)
    assert "the released subspaces" in box and "raw points assigned" in box
    (row,) = at.session_state["session_meter"].runs
    assert row.private and row.method == "noisy_scatter" and row.epsilon == pytest.approx(10.0)
    consts = {r[0] for r in at.session_state["cluster_result"]["details"]}
    assert {"ε", "δ", "relation", "Λ", "sensitivity"} <= consts                # its public constants, from itself


def test_an_own_method_is_refused_by_the_class_budget_before_it_runs(own_method):
    at = _page(state={"class_budget": 5.0})
    press(at, "cluster_form")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "10" in errors[0], errors
    assert at.session_state["session_meter"].runs == [] and "cluster_result" not in at.session_state
