"""AppTest runs of the Co-clustering page (pages/5_coclustering.py)."""
from apptest_helpers import by_key, open_page, press


def page():
    return open_page("5_coclustering.py")


def matrix_box(at):
    return by_key(at, "cc_matrix")


def run(at):
    return press(at, "cocluster_form")


def simulate_fig1(at, runs):
    """Fig. 1's simulation with ``runs`` runs on each matrix."""
    by_key(at, "cc_fig1_runs").set_value(runs)
    return press(at, "fig1_form")


def metrics(at):
    return {m.label: m.value for m in at.metric}


def meter_runs(at):
    return at.session_state["session_meter"].runs


def headline(at):
    meter = at.session_state["session_meter"].meter
    (name,) = meter.datasets()
    return meter.headline(name)


def box(at):
    """(Private line, Not private line) of the page's privacy box ("" when it has none)."""
    text = next(i.value for i in at.info if "**Not private:**" in i.value)
    lines = text.split("\n\n")
    private = [s for s in lines if s.startswith("**Private")]
    return (private[0] if private else ""), next(s for s in lines if s.startswith("**Not private:**"))


def test_page_runs_on_blocks_and_shows_results_ledger_and_statement():
    at = page()
    assert matrix_box(at).value == "blocks"  # the default dataset is not a count matrix
    assert any("Not private" in i.value for i in at.info)
    by_key(at, "cc_repro").check()
    at.run()
    by_key(at, "cc_peers").set_value(["DP-KMeans"])
    run(at)
    assert not at.error
    m = metrics(at)
    nmi = {label[:-len(" row NMI")]: value for label, value in m.items() if label.endswith(" row NMI")}
    assert set(nmi) == {"Fast-τCC", "DP-KMeans"}                                 # one per peer run
    # DP-τCC's headline is its release; the paper's non-private evaluation step comes second, named so
    labels = list(m)
    private, evaluated = "DP-τCC: NMI of the private row partition", "Row NMI after the paper's evaluation step (not private)"
    assert labels.index(private) < labels.index(evaluated)
    assert float(m[private]) == float(m[evaluated]) == 1.0  # strong 3×3 blocks at ε = 1 (reproducible run, seed 0)
    assert "3 × 3" in m.values()                                                 # the released table's size
    assert sum(label.startswith("τ") for label in m) == 2                        # τ in both directions
    # the ledger table: 4𝓘 = 16 releases summing to ε = 1, and the session meter got them
    # (ledgers are static tables, ε shown at 4 significant digits: 1/16 = 0.0625 exactly)
    ledgers = [t.value for t in at.table if "mechanism" in t.value.columns]
    assert len(ledgers[0]) == 16 and abs(sum(float(e) for e in ledgers[0]["ε"]) - 1.0) < 1e-12
    assert len(ledgers[1]) == 1 and float(ledgers[1]["ε"].iloc[0]) == 1.0  # the DP-KMeans run
    text = " ".join(i.value for i in at.info)
    assert "final row assignment used for NMI" in text and "ONE cell" in text


def test_bad_input_shows_error_once_and_keeps_previous_result():
    at = page()
    run(at)
    before = metrics(at)
    by_key(at, "cc_rows").set_value(50)             # a smaller block matrix ...
    at.run()
    by_key(at, "cc_K0").set_value(60)               # ... with more row clusters than rows
    run(at)
    errors = [e.value for e in at.error]
    # dpcore's refusal, once: the parameter, the limit and the value
    assert len(errors) == 1 and "n_row_clusters" in errors[0] and "(50)" in errors[0] and "K0=60" in errors[0], errors
    assert metrics(at) == before                    # the previous result is still shown


def test_a_second_run_redraws_without_duplicate_elements():
    """The previous result is drawn before a run (so that Stop leaves it visible) and the new
    one after it in the same script run: a reproducible run repeated gives identical charts,
    which must not collide."""
    at = page()
    by_key(at, "cc_repro").check()
    at.run()
    for _ in range(2):
        run(at)
        assert not at.error
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
    assert by_key(at, "cc_K0").value == 4           # defaults to the number of classes
    by_key(at, "cc_ninit").set_value(1)
    run(at)
    assert not at.error
    assert "cstr" in at.subheader[0].value
    simulate_fig1(at, 20)
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
    peers = by_key(at, "cc_peers")
    assert list(peers.options) == ["DPHD", "DP-KMeans", "DPNMF (NNDSVD start, not private)", "DPNMF (private start)"]
    peers.set_value(["DPHD", "DP-KMeans", "DPNMF (NNDSVD start, not private)", "DPNMF (private start)"])
    run(at)
    assert not at.error
    m = metrics(at)
    for lab in ("DPHD", "DP-KMeans", "DPNMF (NNDSVD start, not private)", "DPNMF (private start)"):
        assert 0.0 <= float(m[f"{lab} row NMI"]) <= 1.0
    ledgers = [t.value for t in at.table if "mechanism" in t.value.columns]
    assert len(ledgers) == 5                                   # DP-τCC and the four peers
    private_line, not_private = box(at)
    # DPNMF from NNDSVD: not private, with the library's reason; the private start's basis is private
    assert "the basis of DPNMF from the NNDSVD start — the initial factors come from a truncated SVD of the raw " \
           "documents" in not_private
    assert "NNDSVD" not in private_line and "the basis of DPNMF (private start)" in private_line
    text = " ".join(i.value for i in at.info)
    assert "DPHD: one document replaced" in text and "DP-KMeans: one document added/removed" in text
    # the meter: DPNMF from the NNDSVD start is listed as not private, the others as private, and the box agrees
    runs = meter_runs(at)
    private = {name: [r["private"] for r in runs if r["label"].startswith(name)]
               for name in ("DPNMF (NNDSVD start", "DPNMF (private start)", "DPHD", "DP-KMeans", "DP-τCC")}
    assert private == {"DPNMF (NNDSVD start": [False], "DPNMF (private start)": [True], "DPHD": [True],
                       "DP-KMeans": [True], "DP-τCC": [True]}, private
    assert all(r.reason in not_private for r in runs if not r["private"])
    assert headline(at).unbounded                       # a run that is not private touched the data: ε = ∞


def test_peers_from_a_link_and_a_bad_one_is_refused():
    at = open_page("5_coclustering.py", query={"cc_peers": ["DPHD", "nope"]})
    assert not at.exception
    assert any("cc_peers" in w.value for w in at.warning)


# ----------------------------------------------------------------------------- the class budget and the odds
DPNMF_PAPER = "DPNMF (NNDSVD start, not private)"


def test_the_dpnmf_of_the_paper_is_refused_under_a_class_budget():
    at = open_page("5_coclustering.py", state={"class_budget": 50.0})
    by_key(at, "cc_peers").set_value([DPNMF_PAPER])
    run(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and DPNMF_PAPER in errors[0], errors
    assert "truncated SVD of the raw documents" in errors[0] and "nothing was run" in errors[0]   # the meter's words
    assert meter_runs(at) == [] and "cocluster_result" not in at.session_state          # DP-τCC did not run either
    by_key(at, "cc_peers").set_value(["DPNMF (private start)"])                          # the private start: runs
    run(at)
    assert not at.error and [r["private"] for r in meter_runs(at)] == [True, True]
    assert headline(at).epsilon == 2.0


def test_a_public_seed_run_is_refused_under_a_class_budget():
    at = open_page("5_coclustering.py", state={"class_budget": 50.0})
    by_key(at, "cc_repro").check()
    at.run()
    assert "public seed" in box(at)[1] and box(at)[0] == ""          # before any run: the plan says so
    run(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "public seed" in errors[0], errors
    assert meter_runs(at) == []


def test_a_public_seed_run_without_a_budget_is_listed_not_private():
    at = page()
    by_key(at, "cc_repro").check()
    at.run()
    run(at)
    assert not at.error and [r["private"] for r in meter_runs(at)] == [False]
    private_line, not_private = box(at)
    assert private_line == "" and "public seed" in not_private
    assert headline(at).unbounded


def test_an_odds_sentence_under_the_epsilon_input():
    at = page()
    odds = [c.value for c in at.caption if "% sure" in c.value]
    # DP-τCC's ε is stated for one cell ±1: the question is that of one count (the run's ε, then the
    # Figure 1 simulation's)
    assert len(odds) == 2 and all(o.startswith(":material/casino: ε = 1:") and "one count" in o for o in odds), odds
    by_key(at, "cc_eps").set_value(4.0)
    at.run()
    assert [c.value.split(":")[2].strip() for c in at.caption if "% sure" in c.value] == ["ε = 4", "ε = 1"]


def test_dp_taucc_and_three_private_peers_add_up_to_five_in_one_cell():
    """DP-τCC + DPHD + DP-KMeans + DPNMF (private start) at ε = 1: the only relation all four share
    is one cell ±1, where DP-KMeans (one document added or removed) costs 2ε."""
    at = page()
    by_key(at, "cc_peers").set_value(["DPHD", "DP-KMeans", "DPNMF (private start)"])
    run(at)
    assert not at.error, [e.value for e in at.error]
    runs = meter_runs(at)
    assert [r["relation"] for r in runs] == ["cell_pm1", "replace_one", "add_remove", "replace_one"]
    assert all(r["private"] for r in runs) and all(r["epsilon"] == 1.0 for r in runs)
    h = headline(at)
    assert h.relation == "cell_pm1" and abs(h.epsilon - 5.0) < 1e-9


def test_past_the_class_budget_nothing_runs():
    at = open_page("5_coclustering.py", state={"class_budget": 4.0})
    by_key(at, "cc_peers").set_value(["DPHD", "DP-KMeans", "DPNMF (private start)"])
    run(at)                                                  # 5 in one cell ±1 > 4
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "ε 5 " in errors[0], errors
    assert meter_runs(at) == [] and "cocluster_result" not in at.session_state
