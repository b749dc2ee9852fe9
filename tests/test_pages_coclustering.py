"""AppTest runs of the Co-clustering page (pages/5_coclustering.py)."""
from apptest_helpers import open_page


def page():
    return open_page("5_coclustering.py")


def matrix_box(at):
    return next(s for s in at.selectbox if s.label == "Count matrix")


def number(at, label):
    return next(w for w in at.number_input if w.label == label)


def button(at, label):
    return next(b for b in at.button if b.label == label)


def metrics(at):
    return {m.label: m.value for m in at.metric}


def test_page_runs_on_blocks_and_shows_results_ledger_and_statement():
    at = page()
    assert matrix_box(at).value == "blocks"  # the default dataset is not a count matrix
    assert any("Not private" in i.value for i in at.info)
    next(c for c in at.checkbox if c.label == "reproducible (noise public)").check()
    at.run()
    next(c for c in at.checkbox if c.label.startswith("also run DP k-means")).check()
    button(at, "Run").click()
    at.run()
    assert not at.exception and not at.error
    m = metrics(at)
    assert "DP k-means row NMI" in m
    assert float(m["DP-τCC row NMI"]) == 1.0  # strong 3×3 blocks at ε = 1 (reproducible run, seed 0)
    assert "Fast-τCC row NMI" in m and m["released T size"] == "3 × 3"
    # the ledger table: 4𝓘 = 16 releases summing to ε = 1, and the session meter got them
    ledgers = [d.value for d in at.dataframe if "mechanism" in d.value.columns]
    assert len(ledgers[0]) == 16 and abs(ledgers[0]["epsilon"].sum() - 1.0) < 1e-12
    assert len(ledgers[1]) == 1 and ledgers[1]["epsilon"].iloc[0] == 1.0  # the DP k-means run
    text = " ".join(i.value for i in at.info)
    assert "final row assignment used for NMI" in text and "ONE cell" in text


def test_bad_input_shows_error_and_keeps_previous_result():
    at = page()
    button(at, "Run").click()
    at.run()
    before = metrics(at)
    number(at, "privacy budget ε").set_value(0.0)
    button(at, "Run").click()
    at.run()
    assert not at.exception
    assert any("epsilon must be > 0" in e.value for e in at.error)
    assert metrics(at) == before
    number(at, "privacy budget ε").set_value(1.0)
    number(at, "row clusters K0").set_value(1)
    button(at, "Run").click()
    at.run()
    assert any("n_row_clusters (K0) must be an integer >= 2" in e.value for e in at.error)
    assert metrics(at) == before


def test_cluto_dataset_and_figure1_simulation():
    at = page()
    matrix_box(at).set_value("cstr")
    at.run()
    assert not at.exception
    assert number(at, "row clusters K0").value == 4  # defaults to the number of classes
    number(at, "Fast-τCC restarts").set_value(1)
    button(at, "Run").click()
    at.run()
    assert not at.exception and not at.error
    assert "cstr" in at.subheader[0].value
    number(at, "runs on each matrix").set_value(20)
    button(at, "Simulate DP-τCC on A and A′").click()
    at.run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "frequency on A" in d.value.columns)
    assert 1 <= len(table) <= 10
    # frequencies out of 20 runs per matrix
    for col in ("frequency on A", "frequency on A′"):
        assert ((table[col] * 20).round(9) % 1 == 0).all() and table[col].between(0, 1).all()
