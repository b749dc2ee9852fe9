"""AppTest runs of the Gibbs diagnostics page (pages/4_gibbs.py)."""
import pytest

from apptest_helpers import open_page, widget


def page():
    return open_page("4_gibbs.py")


def small_run(at, eps="1, 10", n_iter=20, chains=2):
    widget(at, "text_input", "ε values (comma-separated)").set_value(eps)
    widget(at, "number_input", "sweeps per chain (n_iter)").set_value(n_iter)
    widget(at, "number_input", "chains").set_value(chains)
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    return at


def test_page_runs_chains_and_shows_traces_table_verdicts_and_ledger():
    at = page()
    assert any("Run chains" in i.value for i in at.info)  # nothing run yet
    small_run(at)
    assert not at.error
    res = at.session_state["gibbs_result"]
    assert list(res["runs"]) == [1.0, 10.0]
    assert res["runs"][10.0]["cost"].shape == (2, 20)       # several chains traced
    assert len(at.get("plotly_chart")) == 1                 # the trace grid
    verdicts = [m.value for m in list(at.success) + list(at.warning)]
    assert sum("ε = 1:" in v for v in verdicts) == 1 and sum("ε = 10:" in v for v in verdicts) == 1
    assert any("Rule:" in c.value for c in at.caption)
    assert len(at.dataframe) >= 2                           # R̂/ESS table and released samples
    meter = at.session_state["session_meter"]
    assert meter.private_total(meter.runs[0]["dataset"])[0] == pytest.approx(11.0)  # two releases, ε = 1 and 10
    assert any("asymptotically" in i.value for i in at.info)  # the privacy statement


@pytest.mark.parametrize("field,value,message", [
    ("sweeps per chain (n_iter)", 0, "n_iter (sweeps per chain) must be an integer in [1, 10000]"),
    ("chains", 40, "n_chains must be an integer in [1, 32]"),
    ("ε values (comma-separated)", "1, 0", "epsilon must be > 0"),
    ("ε values (comma-separated)", "-2", "epsilon must be > 0"),
    ("ε values (comma-separated)", "ten", "epsilon must be a number > 0"),
])
def test_bad_parameters_show_error_and_keep_previous_result(field, value, message):
    at = small_run(page(), eps="2", n_iter=10, chains=1)
    before = at.session_state["gibbs_result"]["runs"][2.0]["cost"].copy()
    kind = "text_input" if field.startswith("ε") else "number_input"
    widget(at, kind, field).set_value(value)
    at.button[0].click()
    at.run()
    assert not at.exception
    assert any(message in e.value for e in at.error)
    after = at.session_state["gibbs_result"]["runs"]
    assert list(after) == [2.0] and (after[2.0]["cost"] == before).all()


def test_nonprivate_start_is_flagged():
    at = page()
    widget(at, "selectbox", "start (init)").set_value("kplane")
    small_run(at, eps="5", n_iter=10, chains=2)
    assert any("Not private" in e.value for e in at.error)
    assert at.session_state["gibbs_result"]["is_private"] is False


def test_one_sweep_run_is_reported_as_not_mixed():
    at = small_run(page(), eps="1", n_iter=1, chains=1)
    assert not at.error
    assert any("not yet mixed" in w.value and "too few sweeps" in w.value for w in at.warning)
