"""AppTest runs of the Cluster page (issue 3)."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"kind": "subspaces", "n": 150, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}


def page(spec=SMALL):
    at = AppTest.from_file(str(ROOT / "pages" / "3_cluster.py"), default_timeout=120)
    if spec is not None:
        at.session_state["dataset"] = {"spec": spec}
    at.run()
    assert not at.exception, at.exception
    return at


def run_button(at):
    return next(b for b in at.button if b.label == "Run")


def metrics(at):
    df = at.dataframe[0].value
    return dict(zip(df.index, df["value"]))


def test_default_page_runs_without_result():
    at = page(spec=None)   # the default Fig. 2 (middle) dataset
    assert not at.error
    assert any("Press **Run**" in i.value or "press **Run**" in i.value for i in at.info)
    k = next(w for w in at.number_input if w.label == "clusters k")
    q = next(w for w in at.number_input if w.label == "subspace dimension q")
    assert (k.value, q.value) == (3, 3)   # defaults from the dataset


@pytest.mark.parametrize("method", ["kplane", "tsc", "ssc", "lrr"])
def test_each_solver_runs_on_small_data(method):
    at = page()
    next(s for s in at.selectbox if s.label == "Method").set_value(method)
    at.run()
    run_button(at).click()
    at.run()
    assert not at.exception and not at.error
    m = metrics(at)
    # σ = 0.01, two 2-D subspaces in R^6, 150 points: every solver separates them
    assert float(m["accuracy"]) == 1.0
    assert float(m["d_W to truth"]) < 0.1
    assert "Not private" in at.info[0].value


def test_bad_input_shows_error_and_keeps_last_result():
    at = page()
    run_button(at).click()
    at.run()
    before = metrics(at)
    next(w for w in at.number_input if w.label == "subspace dimension q").set_value(6)   # q = d
    run_button(at).click()
    at.run()
    assert not at.exception
    assert any("subspace_dim" in e.value for e in at.error)
    assert metrics(at) == before
    next(w for w in at.number_input if w.label == "subspace dimension q").set_value(2)
    next(w for w in at.number_input if w.label == "clusters k").set_value(151)          # k > n
    run_button(at).click()
    at.run()
    assert any("n_clusters" in e.value for e in at.error)
    assert metrics(at) == before


def test_tsc_neighbours_too_large_is_an_error():
    at = page()
    next(s for s in at.selectbox if s.label == "Method").set_value("tsc")
    at.run()
    next(w for w in at.number_input if w.label.startswith("neighbours s")).set_value(150)  # s ≥ n
    run_button(at).click()
    at.run()
    assert not at.exception
    assert any("n_neighbors" in e.value for e in at.error)


def test_count_matrix_dataset_is_explained():
    at = page(spec={"kind": "blocks", "n_rows": 40, "n_cols": 30, "k": 2, "l": 2, "random_state": 0})
    assert any("count matrix" in i.value for i in at.info)
