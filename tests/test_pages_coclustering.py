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
    next(w for w in at.multiselect if w.label.startswith("also run the paper's peers")).set_value(["DP-KMeans"])
    button(at, "Run").click()
    at.run()
    assert not at.exception and not at.error
    m = metrics(at)
    assert "DP-KMeans row NMI" in m
    assert float(m["DP-τCC row NMI"]) == 1.0  # strong 3×3 blocks at ε = 1 (reproducible run, seed 0)
    assert "Fast-τCC row NMI" in m and m["released T size"] == "3 × 3"
    assert "τ (columns → rows) of released T" in m and "τ (rows → columns) of released T" in m
    # the ledger table: 4𝓘 = 16 releases summing to ε = 1, and the session meter got them
    # (ledgers are static tables, ε shown at 4 significant digits: 1/16 = 0.0625 exactly)
    ledgers = [t.value for t in at.table if "mechanism" in t.value.columns]
    assert len(ledgers[0]) == 16 and abs(sum(float(e) for e in ledgers[0]["ε"]) - 1.0) < 1e-12
    assert len(ledgers[1]) == 1 and float(ledgers[1]["ε"].iloc[0]) == 1.0  # the DP-KMeans run
    text = " ".join(i.value for i in at.info)
    assert "final row assignment used for NMI" in text and "ONE cell" in text


def test_bad_input_shows_error_once_and_keeps_previous_result():
    at = page()
    button(at, "Run").click()
    at.run()
    before = metrics(at)
    number(at, "rows").set_value(50)                # a smaller block matrix ...
    at.run()
    number(at, "row clusters K0").set_value(60)     # ... with more row clusters than rows
    button(at, "Run").click()
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors == ["n_row_clusters (K0) must be <= the number of rows (50) and n_col_clusters (L0) <= the number "
                      "of columns (150); got K0=60, L0=3"]
    assert metrics(at) == before                    # the previous result is still shown


def test_a_second_run_redraws_without_duplicate_elements():
    """The previous result is drawn before a run (so that Stop leaves it visible) and the new
    one after it in the same script run: a reproducible run repeated gives identical charts,
    which must not collide."""
    at = page()
    next(c for c in at.checkbox if c.label == "reproducible (noise public)").check()
    at.run()
    for _ in range(2):
        button(at, "Run").click()
        at.run()
        assert not at.exception and not at.error
    # the previous result's charts were replaced by the new ones: matrix, tables, τ per step (+ Fig. 1's matrices)
    assert [c.key for c in at.get("plotly_chart")] == ["cc_chart_matrix", "cc_chart_tables", "cc_chart_tau", None]
    assert [s.value for s in at.subheader].count(at.subheader[0].value) == 1


def test_fast_taucc_starts_one_by_one_equal_n_init():
    """run_cocluster runs Fast-τCC's starts one at a time (a progress step each); it must give
    what FastTauCC(n_init=…) gives from the same seed."""
    import numpy as np
    from dpcore.cocluster.taucc import FastTauCC
    from dpcore.data import PAPER_SPECS, load_dataset
    from ui.cocluster import run_cocluster

    class Bar:
        def progress(self, *a, **k):
            pass

    ds = load_dataset(**PAPER_SPECS["blocks"])
    for seed in (0, 3):
        p = dict(epsilon=1.0, I=1, K0=3, L0=3, seed=seed, n_init=5, fast=True, km=False)
        res = run_cocluster(ds, dict(PAPER_SPECS["blocks"]), p, Bar())
        ref = FastTauCC(n_row_clusters=3, n_col_clusters=3, n_init=5, random_state=seed).fit(ds.X)
        assert np.array_equal(res["fast"].row_labels_, ref.row_labels_)
        assert np.array_equal(res["fast"].column_labels_, ref.column_labels_)


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
    assert 1 <= len(table) <= 11                    # the 10 most frequent and "all other …"
    # frequencies out of 20 runs per matrix, and they add up to 1 with the "all other" row
    for col in ("frequency on A", "frequency on A′"):
        assert ((table[col] * 20).round(9) % 1 == 0).all() and table[col].between(0, 1).all()
        assert abs(table[col].sum() - 1) < 1e-9
    fig = at.session_state["cocluster_fig1"]
    assert fig["runs"] == 20 and fig["eps"] == 1.0
    names = [t["name"] for t in _chart_specs(at)[-1]["data"]]
    assert names[1:] == ["frequency on A", "frequency on A′"] and names[0].startswith("allowed on A′")


def _chart_specs(at):
    import json
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_the_papers_peers_run_beside_dp_taucc_and_the_box_says_what_is_not_private():
    at = page()                        # secret noise: the meter counts the private runs
    peers = next(w for w in at.multiselect if w.label.startswith("also run the paper's peers"))
    assert list(peers.options) == ["DPHD", "DP-KMeans", "DPNMF (NNDSVD start, not private)", "DPNMF (private start)"]
    peers.set_value(["DPHD", "DP-KMeans", "DPNMF (NNDSVD start, not private)", "DPNMF (private start)"])
    button(at, "Run").click()
    at.run()
    assert not at.exception and not at.error
    m = metrics(at)
    for lab in ("DPHD", "DP-KMeans", "DPNMF (NNDSVD start, not private)", "DPNMF (private start)"):
        assert 0.0 <= float(m[f"{lab} row NMI"]) <= 1.0
    ledgers = [t.value for t in at.table if "mechanism" in t.value.columns]
    assert len(ledgers) == 5                                   # DP-τCC and the four peers
    text = " ".join(i.value for i in at.info)
    assert "NNDSVD start is an SVD of the raw documents" in text and "NOT private" in text
    assert "DPHD: one document replaced" in text and "DP-KMeans: one document added/removed" in text
    # the session meter: DPNMF from the NNDSVD start is listed as not private, the others as private
    from ui.common import SESSION_METER_KEY
    runs = {r["label"]: r["private"] for r in at.session_state[SESSION_METER_KEY].runs}
    assert runs["DPNMF (NNDSVD start, not private) (one document replaced, but its NNDSVD start is NOT private)"] is False
    assert runs["DPHD (one document replaced)"] and runs["DPNMF (private start) (one document replaced)"]
    assert runs["DP-KMeans (one document added/removed)"] and runs["DP-τCC (one cell ±1)"]


def test_peers_from_a_link_and_a_bad_one_is_refused():
    at = open_page("5_coclustering.py", query={"cc_peers": ["DPHD", "nope"]})
    assert not at.exception
    assert any("cc_peers" in w.value for w in at.warning)
