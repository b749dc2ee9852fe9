"""AppTest runs of the Paper figures page (pages/9_paper_figures.py, ui/gallery.py): drawn from a
shipped folder (a tiny reproduction made here, and the app's own sample_data/paper_figures when
it is there), nothing shipped, a broken folder, links, Fig. 3 one panel at a time, and the live
rerun (at the tiny level, one worker)."""
import json
import shutil

import pandas as pd
import pytest

import ui.gallery as gallery
from apptest_helpers import by_key, open_page, submit
from dpcore.lab.gallery import GALLERY_DIR, ship
from dpcore.lab.reproduce import FIGURES, run_figure

SHIPPED = ("cocluster-fig3", "highdim-fig2")     # the cheap figures (< 2 s at the tiny level)
MANIFEST = {"command": "python -m dpcore.reproduce cocluster-fig3 highdim-fig2 --tiny", "commit": "0123456789abcdef",
            "dirty": False, "created": "2030-01-02 03:04 UTC", "level": "tiny", "jobs": 1, "total_seconds": 4000,
            "peak_memory": {"main_mb": 300.0, "largest_worker_mb": 250.0}}


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """A folder shipped as ``--ship`` does: tiny runs of SHIPPED, with a manifest."""
    root = tmp_path_factory.mktemp("gallery")
    runs = []
    for figure in SHIPPED:
        path, checks, seconds = run_figure(figure, "tiny", out=root / "out", jobs=1, log=lambda m: None)
        runs.append({"figure": figure, "level": "tiny", "jobs": 1, "seconds": round(seconds, 1),
                     "n_runs": json.loads((path / "panels.json").read_text())["n_runs"],
                     "checks_ok": sum(c["ok"] for c in checks), "checks": len(checks)})
    return ship(root / "out", root / "ship", SHIPPED, {**MANIFEST, "figures": runs})


def page(monkeypatch, folder, query=None, state=None):
    monkeypatch.setenv(gallery.GALLERY_ENV, str(folder))
    return open_page("9_paper_figures.py", query=query, state=state)


def n_panels(folder, figure):
    return len(json.loads((folder / figure / "panels.json").read_text())["panels"])


def texts(elements):
    return " ".join(str(e.value) for e in elements)


def charts(at):
    return at.get("plotly_chart")


def figure_box(at):
    return by_key(at, gallery.FIGURE_KEY)


def rerun_button(at):
    """The live rerun's submit button (its form is the figure's)."""
    return submit(at, f"pf_rerun_{figure_box(at).value}")


def checks_table(at):
    return next(t.value for t in at.table if list(t.value.columns)[:2] == ["holds", "our check"])


def assert_checks_shown(at, folder, figure):
    """The page's checks table is checks.csv: the verdicts, our checks, the paper's words beside
    them (or, for results without them, a line saying how to write them again) and the details."""
    csv = pd.read_csv(folder / figure / "checks.csv")
    table = checks_table(at)
    assert list(table["our check"]) == list(csv["check"])
    assert list(table["holds"]) == ["✅ yes" if ok else "❌ no" for ok in csv["ok"]]
    assert list(table["detail"]) == list(csv["detail"].fillna(""))
    words = csv["paper"].fillna("").astype(str).str.strip() if "paper" in csv else pd.Series([""] * len(csv))
    if (words != "").any():
        assert list(table["the paper says"]) == [w or "–" for w in words]
    else:
        assert "the paper says" not in table and "written before each check carried the paper" in texts(at.caption)
    return csv


def test_nothing_shipped_says_which_command(monkeypatch, tmp_path):
    at = page(monkeypatch, tmp_path / "absent")
    assert not at.error
    assert gallery.SHIP_COMMAND in texts(at.info)                          # says which command ships results
    assert figure_box(at).options == [gallery.INFO[f].label for f in FIGURES]
    assert not charts(at)
    assert rerun_button(at)                                                # the live rerun is still offered


def test_shipped_figures_with_their_checks_and_provenance(monkeypatch, shipped):
    at = page(monkeypatch, shipped)
    assert not at.error and not at.warning[1:], texts(at.error)
    assert figure_box(at).value == "cocluster-fig3"                        # the first shipped one
    cap = texts(at.caption)
    assert MANIFEST["command"] in cap and "`0123456`" in cap and "uncommitted changes: no" in cap
    assert "2030-01-02 03:04 UTC" in cap and "1 h 06 min" in cap and "300 MB" in cap
    assert "tiny" in texts(at.warning)                                     # not the papers' settings
    assert len(charts(at)) == n_panels(shipped, "cocluster-fig3")         # one chart per panel
    csv = assert_checks_shown(at, shipped, "cocluster-fig3")
    assert f"{int(csv['ok'].sum())} of {len(csv)}" in texts(at.markdown)  # how many checks hold
    figure_box(at).set_value("highdim-fig2").run()
    assert not at.exception and not at.error
    assert len(charts(at)) == n_panels(shipped, "highdim-fig2") >= 2     # vs-k, vs-eps, …
    figure_box(at).set_value("subspace-fig2").run()                        # not shipped: says how
    assert not charts(at) and "python -m dpcore.reproduce subspace-fig2" in texts(at.info)


def test_fig1_with_the_papers_words_beside_each_check(monkeypatch, tmp_path):
    """Subspace Fig. 1 (cheap at every level): its three panels, and every check beside the paper's
    words; results written before the ``paper`` column show the checks with a line instead."""
    out = tmp_path / "out"
    path, checks, seconds = run_figure("subspace-fig1", "tiny", out=out, jobs=1, log=lambda m: None)
    folder = ship(out, tmp_path / "ship", ["subspace-fig1"],
                  {**MANIFEST, "figures": [{"figure": "subspace-fig1", "level": "tiny", "seconds": seconds}]})
    at = page(monkeypatch, folder)
    assert figure_box(at).value == "subspace-fig1" and not at.error
    assert len(charts(at)) == n_panels(folder, "subspace-fig1") == 3
    assert "evenly spaced points on the unit circle" in texts(at.markdown).lower()
    csv = assert_checks_shown(at, folder, "subspace-fig1")
    assert csv["paper"].str.contains("§3").all()
    old = tmp_path / "old"                                                 # shipped before the paper column
    shutil.copytree(folder, old)
    csv.drop(columns=["paper"]).to_csv(old / "subspace-fig1" / "checks.csv", index=False)
    at = page(monkeypatch, old)
    assert not at.error and "the paper says" not in checks_table(at)
    assert_checks_shown(at, old, "subspace-fig1")


def test_nothing_is_recorded_in_the_privacy_meter(monkeypatch, shipped):
    at = page(monkeypatch, shipped)
    assert "not private releases" in texts(at.info) and "privacy meter" in texts(at.info)
    meter = at.session_state["session_meter"] if "session_meter" in at.session_state else None
    assert meter is None or not meter.runs


def test_a_link_opens_its_figure(monkeypatch, shipped):
    at = page(monkeypatch, shipped, query={gallery.FIGURE_KEY: gallery.INFO["highdim-fig2"].label})
    assert figure_box(at).value == "highdim-fig2" and len(charts(at)) == n_panels(shipped, "highdim-fig2")
    bad = page(monkeypatch, shipped, query={gallery.FIGURE_KEY: "Fig. 99"})
    assert "Ignored link parameters" in texts(bad.warning) and gallery.FIGURE_KEY in texts(bad.warning)
    assert figure_box(bad).value == "cocluster-fig3"


def test_a_broken_folder_is_an_error_not_a_traceback(monkeypatch, shipped, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(shipped, broken)
    (broken / "manifest.json").write_text("{not json")
    at = page(monkeypatch, broken)
    assert "cannot be read" in texts(at.error) and gallery.SHIP_COMMAND in texts(at.error)
    assert figure_box(at).options and rerun_button(at)                    # the page goes on: reruns still offered
    (broken / "manifest.json").write_text("{}")
    (broken / "highdim-fig2" / "checks.csv").unlink()
    assert "cannot be read" in texts(page(monkeypatch, broken).error)
    gone = tmp_path / "gone"                                               # a panel's CSV lost its columns
    shutil.copytree(shipped, gone)
    pd.DataFrame({"x": [1]}).to_csv(gone / "cocluster-fig3" / "cstr.csv", index=False)
    at = page(monkeypatch, gone)
    assert "'cstr'" in texts(at.error) and not charts(at)                 # the error names the panel


def test_live_rerun_keeps_its_result_and_survives_a_failure(monkeypatch, shipped):
    monkeypatch.setattr(gallery, "RERUN_LEVEL", "tiny")
    monkeypatch.setattr(gallery, "RERUN_JOBS", 1)
    at = page(monkeypatch, shipped)
    button = rerun_button(at)
    assert "tiny" in button.label and f"{gallery.INFO['cocluster-fig3'].quick_seconds} s" in button.label  # level, time
    button.click().run()
    assert not at.exception and not at.error, texts(at.error)
    res = at.session_state[gallery.QUICK_KEY]["cocluster-fig3"]
    assert res["level"] == "tiny" and res["fig"].name == "cocluster-fig3"
    heads = [s.value for s in at.subheader]                                # shipped, then the rerun, both tiny
    assert len(heads) == 2 and all("tiny" in h for h in heads) and heads[0] != heads[1], heads
    assert len(charts(at)) == 2 * n_panels(shipped, "cocluster-fig3")     # shipped + rerun
    # the same seeds: the rerun reproduces the shipped numbers (8 significant digits shipped)
    shipped_df = pd.read_csv(shipped / "cocluster-fig3" / "cstr.csv")
    rerun_df = res["fig"].panels[0].df
    assert list(shipped_df["seed"]) == list(rerun_df["seed"])
    assert shipped_df["tau_rc"].to_numpy() == pytest.approx(rerun_df["tau_rc"].to_numpy(), rel=1e-7)

    def broken(*args, **kwargs):
        raise RuntimeError("a worker died")
    monkeypatch.setattr(gallery, "run_figure", broken)
    rerun_button(at).click().run()
    assert "a worker died" in texts(at.error)                              # the failure, said once
    assert len(at.error) == 1
    assert len(charts(at)) == 2 * n_panels(shipped, "cocluster-fig3") and at.session_state[gallery.QUICK_KEY]["cocluster-fig3"] is res


def test_progress_follows_the_log_lines():
    class Bar:
        def __init__(self):
            self.calls = []

        def progress(self, value, text=""):
            self.calls.append((value, text))
    bar = Bar()
    log = gallery.Progress(bar, "cocluster-fig3", "quick", 9)             # one sweep per dataset
    n = len(gallery.SETTINGS["cocluster-fig3"]["quick"]["datasets"])
    for line in ("  [cocluster-fig3/classic3] 30/30 runs, 3 s", "  [cocluster-fig3/cstr] 10/30 runs, 10 s",
                 "  [cocluster-fig3/cstr] 30/30 runs, 12 s"):
        log(line)
    assert [round(v, 4) for v, _ in bar.calls] == [round(1 / n, 4), round((1 + 10 / 30) / n, 4), round(2 / n, 4)]
    assert "panel cstr: 10/30 runs" in bar.calls[1][1]
    log("  [subspace-fig3] 8 runs of 8 chains × 500 sweeps")               # no counts: time-based, below 1
    assert 0 <= bar.calls[-1][0] <= 0.95 and "8 runs of 8 chains" in bar.calls[-1][1]
    # subspace Fig. 2: its three panels and the d-only comparison's sweeps (one per d)
    S = gallery.SETTINGS["subspace-fig2"]["quick"]
    assert gallery.sweep_panels("subspace-fig2", "quick") == len(S["panels"]) + len(S["d_scaling"]["ds"]) == 6


def test_provenance_prefers_the_figures_own_entry():
    from dpcore.lab.gallery import ShippedFigure
    fig = ShippedFigure("highdim-fig2", "full", 125.0, 150)
    manifest = {**MANIFEST, "figures": [{"figure": "highdim-fig2", "command": "python -m dpcore.reproduce highdim-fig2",
                                         "commit": "fedcba9876", "dirty": True}]}
    text = gallery.provenance(manifest, fig)
    assert "`python -m dpcore.reproduce highdim-fig2`" in text and "`fedcba9`" in text
    assert "uncommitted changes: yes" in text and "2 min 05 s" in text and "level **full**" in text
    assert "unknown" in gallery.provenance({}, fig)
    assert [gallery.duration(s) for s in (42, 200, 3725)] == ["42 s", "3 min 20 s", "1 h 02 min"]


@pytest.mark.slow
def test_fig3_one_panel_at_a_time(monkeypatch, tmp_path):
    # the reproduction's own output folder (load_gallery reads it as it reads a shipped one)
    run_figure("subspace-fig3", "tiny", out=tmp_path, jobs=1, log=lambda m: None)    # random start only
    at = page(monkeypatch, tmp_path, query={gallery.PANEL_KEY: "random-init"})
    assert figure_box(at).value == "subspace-fig3"
    assert by_key(at, gallery.PANEL_KEY).value == "random-init" and len(charts(at)) == 1
    diag = at.dataframe[0].value
    assert set(diag["init"]) == {"random"} and "split_rhat" in diag
    by_key(at, gallery.PANEL_KEY).set_value("kplane-init").run()
    assert not charts(at) and "'kplane-init'" in texts(at.info)          # says that panel is not in the results


@pytest.mark.skipif(not (GALLERY_DIR / "manifest.json").exists(), reason="no results shipped in sample_data yet")
@pytest.mark.slow
def test_the_shipped_gallery_of_the_app(monkeypatch):
    at = page(monkeypatch, GALLERY_DIR)
    box = figure_box(at)
    for figure in FIGURES:
        box.set_value(figure).run()
        assert not at.exception and not at.error, (figure, texts(at.error))
        if (GALLERY_DIR / figure / "panels.json").exists():
            assert charts(at), figure
            assert "made by `python -m dpcore.reproduce" in texts(at.caption)
