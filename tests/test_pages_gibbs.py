"""AppTest runs of the Gibbs diagnostics page (pages/4_gibbs.py)."""
import pytest

from apptest_helpers import by_key, limits, open_page, press, submit
from dpcore.subspace.diagnostics import MIN_ESS, RHAT_THRESHOLD
from dpcore.subspace.gibbs import MAX_CHAINS
from ui.gibbs import MAX_PAGE_ITER

SMALL = {"kind": "subspaces", "n": 300, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}


def page(query=None, spec=None):
    return open_page("4_gibbs.py", query=query, spec=spec)


def small_run(at, eps="1, 10", n_iter=20, chains=2):
    by_key(at, "g_eps").set_value(eps)
    by_key(at, "g_iter").set_value(n_iter)
    by_key(at, "g_chains").set_value(chains)
    return press(at, "gibbs_form")


def test_page_runs_chains_and_shows_traces_table_verdicts_and_ledger():
    at = page()
    assert "gibbs_result" not in at.session_state and not at.get("plotly_chart")   # nothing run yet ...
    assert any(submit(at, "gibbs_form").label in i.value for i in at.info)          # ... and the page says how
    small_run(at)
    assert not at.error
    res = at.session_state["gibbs_result"]
    assert list(res["runs"]) == [1.0, 10.0]
    assert res["runs"][10.0]["cost"].shape == (2, 20)       # several chains traced
    assert len(at.get("plotly_chart")) == 1                 # the trace grid
    verdicts = [m.value for m in list(at.success) + list(at.warning)]
    assert sum("ε = 1:" in v for v in verdicts) == 1 and sum("ε = 10:" in v for v in verdicts) == 1
    assert any(f"{RHAT_THRESHOLD}" in c.value and f"{MIN_ESS}" in c.value for c in at.caption)   # the rule's numbers
    assert len(at.dataframe) >= 2                           # R̂/ESS table and released samples
    # the meter: one run per ε, counted only when the page called its chains mixed; a chain "not yet mixed"
    # is listed as not private, with the page's reason
    meter = at.session_state["session_meter"]
    mixed = {e: v["mixed"] for e, v in res["verdicts"].items()}
    runs = meter.runs
    assert [r["private"] for r in runs] == [mixed[1.0], mixed[10.0]]
    assert all("not yet mixed" in r["reason"] for r in runs if not r["private"])
    assert meter.private_total(runs[0]["dataset"])[0] == pytest.approx(sum(e for e, m in mixed.items() if m))
    assert any("asymptotically" in i.value for i in at.info)  # the privacy statement
    assert not any("_," in i.value or "_ " in i.value for i in at.info)   # words, not attribute names


def test_tables_show_numbers_at_four_significant_digits():
    at = small_run(page(spec=SMALL), eps="1", n_iter=20, chains=2)
    for frame in at.dataframe:
        for column in frame.value.columns:
            for value in frame.value[column]:
                if column == "ESS":                                     # a count of draws: a whole number
                    assert value == "–" or value.isdigit(), value
                elif isinstance(value, float):
                    assert value == float(f"{value:.4g}"), value
                elif isinstance(value, str) and value.replace(".", "", 1).isdigit():
                    assert len(value.replace(".", "").lstrip("0")) <= 4, value


@pytest.mark.parametrize("value,message", [
    ("1, 0", "epsilon must be > 0"),
    ("-2", "epsilon must be > 0"),
    ("ten", "epsilon must be a number > 0"),
])
def test_bad_epsilon_is_shown_once_and_the_previous_result_is_kept(value, message):
    at = small_run(page(spec=SMALL), eps="2", n_iter=10, chains=1)
    before = at.session_state["gibbs_result"]["runs"][2.0]["cost"].copy()
    by_key(at, "g_eps").set_value(value)
    press(at, "gibbs_form")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and message in errors[0], errors           # one box, dpcore's words
    assert "previous run" in errors[0]                                  # ... and it is true: it is kept
    after = at.session_state["gibbs_result"]["runs"]
    assert list(after) == [2.0] and (after[2.0]["cost"] == before).all()
    assert len(at.get("plotly_chart")) == 1                             # and still drawn


def test_bad_epsilon_without_a_previous_result_does_not_claim_one():
    at = page(spec=SMALL)
    by_key(at, "g_eps").set_value("0")
    press(at, "gibbs_form")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "epsilon must be > 0" in errors[0] and "previous" not in errors[0], errors


def test_widget_limits_are_the_estimators_and_the_pages():
    at = page()
    assert limits(at, "g_chains") == (1, MAX_CHAINS)
    assert limits(at, "g_iter") == (1, MAX_PAGE_ITER)


@pytest.mark.parametrize("key,value", [("g_chains", "99999"), ("g_chains", "0"), ("g_iter", "20000"),
                                       ("g_k", "1000000"), ("g_q", "10"),
                                       ("g_eps", "1, inf"),
                                       ("g_init", "magic")])
def test_link_values_beyond_the_limits_are_refused_with_a_warning(key, value):
    at = page(query={key: value})
    warnings = [w.value for w in at.warning]
    assert any("Ignored link parameters" in w and key in w for w in warnings), warnings
    assert not at.error
    defaults = {"g_chains": 8, "g_iter": 1000, "g_k": 3, "g_q": 3, "g_eps": "0.1, 1, 10, 100", "g_init": "random"}
    assert at.session_state[key] == defaults[key]                      # the form keeps its own value


def test_link_values_within_the_limits_are_applied():
    at = page(query={"g_chains": str(MAX_CHAINS), "g_iter": "300", "g_eps": "2, 5", "g_init": "k-plane (NOT private)"})
    assert not at.warning, [w.value for w in at.warning]
    assert by_key(at, "g_chains").value == MAX_CHAINS
    assert by_key(at, "g_iter").value == 300
    assert by_key(at, "g_eps").value == "2, 5"
    assert by_key(at, "g_init").value == "kplane"


def test_nonprivate_start_is_flagged():
    at = page()
    by_key(at, "g_init").set_value("kplane")
    small_run(at, eps="5", n_iter=10, chains=2)
    flags = [e.value for e in at.error]
    assert len(flags) == 1 and "Not private" in flags[0] and "non-private start" in flags[0], flags
    verdict = at.session_state["gibbs_result"]["privacy_verdicts"][5.0]     # the library's verdict, stored
    assert verdict.private is False and "non-private start" in verdict.reason


def test_a_private_start_with_secret_noise_raises_no_flag():
    at = small_run(page(spec=SMALL), eps="1", n_iter=20, chains=2)
    assert not any("Not private" in e.value for e in at.error)


def test_one_sweep_run_is_reported_as_not_mixed():
    at = small_run(page(), eps="1", n_iter=1, chains=1)
    assert not at.error
    assert at.session_state["gibbs_result"]["verdicts"][1.0]["mixed"] is False
    assert any("not yet mixed" in w.value for w in at.warning)                 # the verdict, said


def test_one_chain_verdict_says_that_rhat_needs_two_chains():
    at = small_run(page(spec=SMALL), eps="1", n_iter=60, chains=1)
    verdicts = [m.value for m in list(at.success) + list(at.warning) if "ε = 1:" in m.value]
    assert len(verdicts) == 1
    assert "2 chains" in verdicts[0], verdicts                          # R̂ needs two chains: said
    at = small_run(at, eps="1", n_iter=60, chains=2)                    # two chains: no such note
    assert not any("2 chains" in m.value for m in list(at.success) + list(at.warning))


def test_long_presets_say_how_long_and_point_to_the_paper_figures_page():
    # a preset of more than ten million point-sweeps (Fig. 3's: 1000 points × 1000 sweeps × 8 chains × 4 ε) takes
    # more than 10 s on a busy class laptop: its text says how long, why, and where the precomputed run is
    at = page()
    presets = [o for o in by_key(at, "gibbs_preset").options if o != "(custom)"]
    long_ones = 0
    for name in presets:
        by_key(at, "gibbs_preset").set_value(name)
        at.run()
        about = " ".join(c.value for c in at.caption)
        state = at.session_state
        work = 1000 * state["g_iter"] * state["g_chains"] * len(state["g_eps"].split(","))
        if work > 10_000_000:
            long_ones += 1
            assert "Time:" in about and "idle 2-core" in about and "busy" in about, name
            assert "Paper figures page" in about and "drawn as they come" in about, name
    assert long_ones == 2                                   # both Fig. 3 presets


# ------------------------------------------------------------------------- the privacy box follows the run on screen
def box(at):
    """(Private line or None, Not private line) of the page's privacy box."""
    text = next(i.value for i in at.info if "**Not private:**" in i.value)
    lines = text.split("\n\n")
    private = [s for s in lines if s.startswith("**Private")]
    return (private[0] if private else None), next(s for s in lines if s.startswith("**Not private:**"))


def meter_runs(at):
    return at.session_state["session_meter"].runs


@pytest.mark.parametrize("setup,reason", [
    (lambda at: None, "not yet mixed"),                                        # one sweep: never mixed
    (lambda at: by_key(at, "g_init").set_value("kplane"), "non-private start: the chains start from the kplane"),
    (lambda at: by_key(at, "g_repro").set_value(True), "public seed"),
], ids=["unmixed", "kplane", "public-seed"])
def test_box_claims_no_private_release_when_the_meter_counts_none(setup, reason):
    at = page(spec=SMALL)
    setup(at)                                  # applied with the form's submission
    small_run(at, eps="1, 10", n_iter=1, chains=2)
    assert all("**Not private.**" in e.value for e in at.error), [e.value for e in at.error]   # the k-plane's flag
    private, not_private = box(at)
    assert private is None, private                                    # no "Private" claim at all
    assert "ε = 1, 10 runs — " in not_private and reason in not_private, not_private
    runs = meter_runs(at)
    assert [r["private"] for r in runs] == [False, False]
    assert all(reason in r["reason"] and r["reason"] in not_private for r in runs)   # the meter's very reason


def test_box_lists_only_the_mixed_eps_as_private(monkeypatch):
    import ui.gibbs

    real = ui.gibbs.summarise

    def one_mixed(ds, models, seconds):                   # the verdicts of a run where ε = 1 mixed and ε = 10 did not
        table, summary, verdicts, extra = real(ds, models, seconds)
        verdicts[1.0]["mixed"], verdicts[10.0]["mixed"] = True, False
        return table, summary, verdicts, extra

    monkeypatch.setattr(ui.gibbs, "summarise", one_mixed)
    at = small_run(page(spec=SMALL), eps="1, 10", n_iter=20, chains=2)
    private, not_private = box(at)
    assert private is not None and "of the ε = 1 run — " in private and "10" not in private.split(" — ")[0]
    assert "not yet mixed" not in private and "not private" not in private, private   # nothing taken back
    assert "of the ε = 10 run — the chain has not mixed (the page's verdict: not yet mixed)" in not_private
    runs = meter_runs(at)
    assert [r["private"] for r in runs] == [True, False] and runs[1]["reason"] in not_private


def test_a_q_read_off_the_data_makes_no_run_private():
    from collections import OrderedDict

    from dpcore.data import make_union_of_subspaces
    from dpcore.upload import load_upload, upload_key, with_subspace_dim

    truth = make_union_of_subspaces(n=240, d=10, k=3, q=1, sigma=0.02, random_state=3)
    text = "\n".join(",".join(f"{v:.6g}" for v in row) + f",{c}" for row, c in zip(truth.X, truth.labels))
    ds = with_subspace_dim(load_upload("lines.csv", text.encode(), labels="last_column"), 1)
    at = open_page("4_gibbs.py", spec=dict(ds.params),
                   state={"uploaded_datasets": OrderedDict({upload_key(ds.params): ds})})
    assert by_key(at, "g_q").value == 1                                 # the accepted q is the page's
    small_run(at, eps="1", n_iter=20, chains=2)
    flags = [e.value for e in at.error]                                 # no failure: the Not private flag only
    assert len(flags) == 1 and "Not private" in flags[0] and "q = 1 was read off the data" in flags[0], flags
    private, not_private = box(at)
    assert private is None, private
    assert "q = 1 was read off the data" in not_private, not_private
    assert [(r["private"], "q = 1 was read off the data" in r["reason"]) for r in meter_runs(at)] == [(False, True)]


def test_a_result_of_another_dataset_is_flagged():
    at = small_run(page(spec=SMALL), eps="1", n_iter=5, chains=1)
    assert not any("another dataset" in w.value for w in at.warning)
    at.session_state["dataset"] = {"spec": {**SMALL, "random_state": 1}}
    at.run()
    flags = [w.value for w in at.warning if "another dataset" in w.value]
    assert len(flags) == 1 and f"({at.session_state['gibbs_result']['dataset']}, other settings" in flags[0], flags
    assert at.session_state["gibbs_result"]["spec"] == SMALL                   # the result is still A's, flagged
    at.session_state["dataset"] = {"spec": SMALL}                              # back on A: no flag
    at.run()
    assert not any("another dataset" in w.value for w in at.warning)


# ------------------------------------------------------------------------- the class budget and the odds
def budget_page(budget):
    """The page on SMALL with a class budget set in the sidebar's field (solo use)."""
    return open_page("4_gibbs.py", spec=SMALL, state={"class_budget": budget})


def headline(at):
    meter = at.session_state["session_meter"].meter
    (name,) = meter.datasets()
    return meter.headline(name)


@pytest.mark.parametrize("setup,reason", [
    (lambda at: by_key(at, "g_repro").set_value(True), "public seed"),
    (lambda at: by_key(at, "g_init").set_value("kplane"), "non-private start"),
    (lambda at: by_key(at, "g_select").set_value("best"), "non-private choice of chain"),
], ids=["public-seed", "kplane", "best-chain"])
def test_a_run_that_would_not_be_private_is_refused_under_a_class_budget(setup, reason):
    at = budget_page(100.0)
    setup(at)
    small_run(at, eps="1", n_iter=10, chains=2)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and reason in errors[0], errors   # the meter's words
    assert "nothing was run" in errors[0]
    assert "gibbs_result" not in at.session_state and meter_runs(at) == []          # no chain ran, nothing charged


def test_a_private_plan_past_the_class_budget_is_refused_and_one_within_runs():
    at = budget_page(5.0)
    small_run(at, eps="1, 10", n_iter=10, chains=2)                       # 1 + 10 > 5: refused whole
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "11" in errors[0], errors
    assert "gibbs_result" not in at.session_state and meter_runs(at) == []
    small_run(at, eps="1, 2", n_iter=10, chains=2)                        # 3 ≤ 5: it runs and is charged
    assert not any("class budget" in e.value for e in at.error)
    assert [r.label for r in meter_runs(at)] == ["Gibbs (ε = 1)", "Gibbs (ε = 2)"]


def test_under_a_class_budget_run_says_an_unmixed_run_counts_as_infinity_and_it_does():
    at = budget_page(50.0)
    beside_run = [c.value for c in at.caption if "counted as ∞ if its chains do not mix" in c.value]
    assert len(beside_run) == 1
    assert not any("counted as ∞" in c.value for c in page(spec=SMALL).caption)     # no budget: not said
    small_run(at, eps="1", n_iter=1, chains=2)                            # one sweep: never mixed
    assert not at.error, [e.value for e in at.error]
    (run,) = meter_runs(at)
    assert run["private"] is False and "not yet mixed" in run.reason
    h = headline(at)
    assert h.unbounded and h.epsilon == float("inf")                      # the sidebar's ε = ∞


def test_a_mixed_private_run_keeps_the_headline_finite(monkeypatch):
    import ui.gibbs

    real = ui.gibbs.summarise

    def mixed(ds, models, seconds):
        table, summary, verdicts, extra = real(ds, models, seconds)
        for v in verdicts.values():
            v["mixed"], v["frozen"] = True, False
        return table, summary, verdicts, extra

    monkeypatch.setattr(ui.gibbs, "summarise", mixed)
    at = small_run(budget_page(50.0), eps="1, 2", n_iter=10, chains=2)
    assert [r["private"] for r in meter_runs(at)] == [True, True]
    assert headline(at).epsilon == pytest.approx(3.0)


def odds(at):
    return [c.value for c in at.caption if "% sure" in c.value]


def test_an_odds_sentence_under_the_epsilon_list():
    at = page(spec=SMALL)                                  # the default list 0.1, 1, 10, 100: smallest and largest
    sentences = odds(at)
    assert len(sentences) == 2 and sentences[0].startswith(":material/casino: ε = 0.1:") and "ε = 100:" in sentences[1]
    assert all("which of two possible records" in s for s in sentences)    # the sampler's relation: replace-one
    small_run(at, eps="2, 5", n_iter=5, chains=1)          # the form's values count once it is submitted
    assert [s.split(":")[2].strip() for s in odds(at)] == ["ε = 2", "ε = 5"]   # two values: one each
    small_run(at, eps="ten", n_iter=5, chains=1)
    assert odds(at) == []                                    # not a list of ε: no sentence
