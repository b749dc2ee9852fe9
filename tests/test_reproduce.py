"""The reproduce CLI (dpcore.lab.reproduce): files and columns on the tiny setting, offline HTML
and static images, workers and memory (process pool, Dask), resume, argument errors, and the
trend check it applies to the paper's statements."""
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from dpcore.lab import reproduce as rp

RUN_COLUMNS = {"figure", "panel", "algorithm", "name", "private", "epsilon", "trial", "seed", "seconds", "warnings",
               "dataset"}


@pytest.fixture(scope="module")
def tiny_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    assert rp.main(["subspace-fig1", "subspace-fig2", "subspace-fig3", "cocluster-fig3", "--tiny", "--out", str(out)]) == 0
    return out


def _panels(folder):
    return [p["name"] for p in json.loads((folder / "panels.json").read_text())["panels"]]


@pytest.mark.slow
def test_subspace_fig2_writes_one_csv_and_html_per_panel(tiny_out):
    d = tiny_out / "subspace-fig2"
    S = rp.SETTINGS["subspace-fig2"]["tiny"]
    for panel in ("left", "middle", "yaleb"):
        df = pd.read_csv(d / f"{panel}.csv")
        dw = "d_W_class" if panel == "yaleb" else "d_W"
        assert RUN_COLUMNS | {"cost", dw} <= set(df.columns)
        assert (df["panel"] == panel).all() and json.loads(df["dataset"].iloc[0])["kind"] in ("subspaces", "yaleb")
        assert df[dw].notna().all() and df["cost"].notna().all()   # every run, references included, is evaluated
        priv = df[df["private"]]
        # every private method ran at every ε, every trial; references once per trial with ε = NaN
        counts = priv.groupby("algorithm")["epsilon"].agg(lambda e: sorted(e.unique()))
        assert all(list(v) == S["epsilons"] for v in counts)
        assert (priv.groupby("algorithm").size() == len(S["epsilons"]) * S["trials"]).all()
        assert df.loc[~df["private"], "epsilon"].isna().all() and (~df["private"]).any()
        assert ("s.a. TSC" in set(df["algorithm"])) == (panel != "yaleb")   # Alg. 1 cannot split n = 320
        html = (d / f"{panel}.html").read_text()
        assert "Gibbs" in html
    checks = pd.read_csv(d / "checks.csv")
    assert list(checks.columns) == ["check", "paper", "ok", "detail"] and len(checks) > 0
    summary = (d / "summary.md").read_text()
    assert "## Checks of the paper's statements" in summary and "  - The paper: §5" in summary
    # the d-only comparison: SuLQ-10 and Gibbs at every d, one ε, the left panel's n, k, q, σ
    D = S["d_scaling"]
    ds = pd.read_csv(d / "d-scaling.csv")
    assert set(ds["algorithm"]) == {"SuLQ-10", "Gibbs", "random subspaces (median)"}
    runs = ds[ds["private"]]                          # the reference line has one row per d, no run
    assert sorted(runs["d"].unique()) == sorted(ds.loc[~ds["private"], "d"]) == D["ds"]
    assert {json.loads(s)["n"] for s in runs["dataset"]} == {D["dataset"]["n"]}
    assert (runs["epsilon"] == D["epsilon"]).all()


@pytest.mark.slow
def test_html_loads_plotly_js_from_its_own_folder_not_a_cdn(tiny_out):
    for fig in ("subspace-fig2", "subspace-fig3", "cocluster-fig3"):
        d = tiny_out / fig
        assert (d / "plotly.min.js").stat().st_size > 1_000_000         # the library itself, once per figure
        for name in _panels(d):
            html = (d / f"{name}.html").read_text()
            assert '<script charset="utf-8" src="plotly.min.js"></script>' in html
            assert "cdn.plot.ly" not in html and not re.search(r'<script[^>]*src="(https?:)?//', html)
            assert f"]({name}.html)" in (d / "summary.md").read_text()


def test_an_image_per_panel_when_kaleido_and_a_browser_are_here(tiny_out):
    reason = rp.image_backend()
    if reason is not None:
        pytest.skip(f"no image backend: {reason}")
    for fig in ("subspace-fig1", "subspace-fig2", "subspace-fig3", "cocluster-fig3"):
        for name in _panels(tiny_out / fig):
            png = (tiny_out / fig / f"{name}.png").read_bytes()
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000, (fig, name)


def test_without_an_image_backend_the_rest_is_written_and_the_reason_said(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(rp, "image_backend", lambda: "Kaleido is not installed (test)")
    assert rp.main(["cocluster-fig3", "--tiny", "--out", str(tmp_path)]) == 0
    d = tmp_path / "cocluster-fig3"
    assert (d / "cstr.csv").exists() and (d / "cstr.html").exists() and not (d / "cstr.png").exists()
    err = capsys.readouterr().err
    assert "no PNG images written (the CSV and HTML files are): Kaleido is not installed (test)" in err
    with pytest.raises(rp.ImageBackendError, match="not installed"):
        rp.write_panel_images([d])


def test_the_shipped_copy_has_no_html_plotly_js_or_image(tiny_out, tmp_path):
    """The app draws every panel from its CSV: shipping the HTML, plotly.js (4.8 MB a figure) or
    the images would only bloat sample_data/paper_figures."""
    from dpcore.lab import gallery
    figures = ["subspace-fig2", "subspace-fig3", "cocluster-fig3"]
    gallery.ship(tiny_out, tmp_path, figures, {"figures": []})
    for fig in figures:
        assert {f.suffix for f in (tmp_path / fig).iterdir()} == {".csv", ".json"}, fig


def test_image_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="image format must be one of png, svg, pdf"):
        rp.write_panel_images([tmp_path], "gif")
    with pytest.raises(ValueError, match="images must be one of"):
        rp.run_figure("cocluster-fig3", "tiny", tmp_path, images="jpeg")
    with pytest.raises(ValueError, match="shared runner"):
        rp.run_figure("cocluster-fig3", "tiny", tmp_path, images="png", runner=rp.Runner())


def test_one_process_reports_no_workers(tmp_path):
    R = rp.Runner(jobs=1)
    assert R.workers()["kind"] == "main process"
    R.close()
    assert R.memory["workers"]["n"] == 1 and R.memory["main_mb"] > 0
    assert math.isnan(R.memory["largest_worker_mb"]) and "main process" in R.memory["workers_how"]


def test_a_process_pool_reports_its_workers_and_their_peak_memory():
    R = rp.Runner(jobs=2)
    assert R.map(rp._peak_rss_mb, [{}, {}])[0] > 0         # the pool's processes ran something
    with pytest.raises(RuntimeError, match="shut down"):
        R.peak_memory()
    R.close()
    assert R.memory["workers"] == {"kind": "process pool", "n": 2, "threads": 2, "text": "2 worker processes"}
    assert R.memory["largest_worker_mb"] > 0 and "RUSAGE_CHILDREN" in R.memory["workers_how"]
    R.close()                                               # a second close does nothing


def test_subspace_fig3_traces_and_diagnostics(tiny_out):
    d = tiny_out / "subspace-fig3"
    S = rp.SETTINGS["subspace-fig3"]["tiny"]
    df = pd.read_csv(d / "random-init.csv")
    assert {"init", "epsilon", "chain", "sweep", "cost", "dw", "statistic", "accuracy"} <= set(df.columns)
    # one row per chain, ε and sweep (the tiny run is short enough not to be thinned)
    assert len(df) == len(S["epsilons"]) * S["n_chains"] * S["n_iter"]
    assert df["sweep"].min() == 1 and df["sweep"].max() == S["n_iter"]
    assert (df["cost"] >= 0).all() and (df["dw"] >= 0).all()
    diag = pd.read_csv(d / "diagnostics.csv")
    assert {"init", "epsilon", "trace", "split_rhat", "ess", "mixed"} <= set(diag.columns)
    assert (d / "random-init.html").exists()


def test_cocluster_fig3_has_iterations_and_tau(tiny_out):
    df = pd.read_csv(tiny_out / "cocluster-fig3" / "cstr.csv")
    S = rp.SETTINGS["cocluster-fig3"]["tiny"]
    assert RUN_COLUMNS | {"n_iter", "tau_rc", "nmi"} <= set(df.columns)
    assert sorted(df["n_iter"].unique()) == S["iterations"]
    assert df["tau_rc"].between(0, 1).all()   # τ̂ of a non-negative table is a proportion of reduction


def test_resume_reuses_finished_runs(tmp_path):
    args = ["cocluster-fig3", "--tiny", "--out", str(tmp_path), "--resume", "--images", "none"]
    assert rp.main(args) == 0
    first = pd.read_csv(tmp_path / "cocluster-fig3" / "cstr.csv")
    assert any((tmp_path / "cocluster-fig3" / "runs").rglob("*.json"))
    assert rp.main(args) == 0
    # identical including the measured seconds, which a re-run would not reproduce
    pd.testing.assert_frame_equal(first, pd.read_csv(tmp_path / "cocluster-fig3" / "cstr.csv"))


@pytest.mark.parametrize("argv, message", [
    (["subspace-fig9"], "invalid choice"),
    (["all", "--jobs", "0"], "--jobs"),
    (["all", "--quick", "--tiny"], "not allowed with"),
])
def test_bad_arguments_exit_with_code_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        rp.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_run_figure_names_the_bad_parameter(tmp_path):
    with pytest.raises(ValueError, match="figure must be one of"):
        rp.run_figure("fig2", "tiny", tmp_path)
    with pytest.raises(ValueError, match="level must be one of"):
        rp.run_figure("subspace-fig2", "huge", tmp_path)


def _runs(values_by_eps):
    return pd.DataFrame([{"algorithm": "m", "epsilon": e, "d_W": v} for e, vs in values_by_eps.items() for v in vs])


def test_trend_check_accepts_a_noisy_plateau_then_a_fall_and_rejects_a_flat_curve():
    # plateau at small ε in a random order of medians, then a clear fall: a real trend
    fall = _runs({0.1: [3.4, 3.3, 3.5], 1: [3.5, 3.45, 3.4], 10: [3.3, 3.4, 3.35], 100: [1.0, 1.2, 0.9],
                  1000: [0.2, 0.1, 0.15]})
    c = rp._trend_check(fall, "m", "d_W", "test")
    assert c["ok"] and "strictly monotone: no" in c["detail"]
    flat = _runs({0.1: [3.4, 3.3, 3.5], 1: [3.5, 3.3, 3.4], 10: [3.3, 3.4, 3.5]})
    assert not rp._trend_check(flat, "m", "d_W", "test")["ok"]
    # the same fall is not an increase
    assert not rp._trend_check(fall, "m", "d_W", "test", decreasing=False)["ok"]


def test_settings_cover_every_figure_and_level():
    assert set(rp.SETTINGS) == set(rp.FIGURES) == set(rp.RUNNERS)
    for fig in rp.FIGURES:
        assert set(rp.SETTINGS[fig]) == set(rp.LEVELS)
    # the full level is the paper's: 10,000 Gibbs sweeps, 8 chains in Fig. 3, n = 100,000 in §7
    assert rp.SETTINGS["subspace-fig3"]["full"]["n_chains"] == 8
    assert rp.SETTINGS["subspace-fig3"]["full"]["n_iter"] == 10_000
    assert rp.SETTINGS["highdim-fig2"]["full"]["dataset"]["n"] == 100_000
    assert np.allclose(rp.SETTINGS["subspace-fig2"]["full"]["epsilons"][::2], [0.1, 1, 10, 100, 1000])


def _frames(folder):
    """Every panel CSV of a reproduction folder, without the timing column (wall time varies)."""
    return {str(p.relative_to(folder)): pd.read_csv(p).drop(columns=["seconds"], errors="ignore")
            for p in sorted(folder.glob("*/*.csv")) if p.name not in ("diagnostics.csv",)}


@pytest.mark.slow
def test_a_dask_scheduler_address_gives_identical_results(tmp_path):
    """The same command given a Dask scheduler address runs on an existing cluster with
    identical results. A LocalCluster with two worker processes stands for the cluster; both
    sweep panels (run_sweep) and Fig. 3's chains (Runner.map) go through it."""
    distributed = pytest.importorskip("distributed")
    figures = ["cocluster-fig3", "subspace-fig3"]
    local, remote = tmp_path / "local", tmp_path / "dask"
    assert rp.main([*figures, "--tiny", "--out", str(local), "--images", "none"]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert rp.main([*figures, "--tiny", "--out", str(remote), "--images", "none",
                        "--scheduler", cluster.scheduler_address]) == 0
    a, b = _frames(local), _frames(remote)
    assert set(a) == set(b) and {"cocluster-fig3/cstr.csv", "subspace-fig3/random-init.csv"} <= set(a)
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], check_exact=True)
    diag = [pd.read_csv(f / "subspace-fig3" / "diagnostics.csv").drop(columns=["seconds_per_sweep"]) for f in (local, remote)]
    pd.testing.assert_frame_equal(*diag, check_exact=True)


def test_a_bad_scheduler_address_is_an_error_not_a_traceback(tmp_path, capsys):
    pytest.importorskip("distributed")
    import dask
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):     # nothing listens on port 9
        assert rp.main(["cocluster-fig3", "--tiny", "--out", str(tmp_path), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "--scheduler tcp://127.0.0.1:9" in capsys.readouterr().err


def test_shipped_results_redraw_and_recompute(tmp_path):
    """--ship writes what the Paper figures page reads: compact CSVs, panels.json with the sweep of
    every panel, a manifest naming the command and commit; a shipped row reruns to the same
    numbers (seeds are per run), and a changed number is caught."""
    from dpcore.lab import gallery
    out, dest = tmp_path / "out", tmp_path / "ship"
    assert rp.main(["cocluster-fig3", "--tiny", "--out", str(out), "--images", "none", "--ship", str(dest)]) == 0
    manifest, figures = gallery.load_gallery(dest)
    assert manifest["command"].startswith("python -m dpcore.reproduce cocluster-fig3 --tiny")
    assert manifest["level"] == "tiny" and [f["figure"] for f in manifest["figures"]] == ["cocluster-fig3"]
    assert "commit" in manifest and manifest["peak_memory"]["main_mb"] > 0
    assert manifest["workers"] == {"kind": "main process", "n": 1, "threads": 1}
    (fig,) = figures
    assert fig.name == "cocluster-fig3" and len(fig.checks) >= 1
    panel = fig.panels[0]
    assert len(panel.figure().data) > 0
    row = panel.df.iloc[0]
    assert gallery.compare_row(panel, row) == []
    tampered = row.copy()
    tampered["tau_rc"] = row["tau_rc"] * 1.001
    assert any(d.startswith("tau_rc") for d in gallery.compare_row(panel, tampered))


@pytest.mark.slow
def test_the_command_line_runs_fig3_chains_in_worker_processes(tmp_path):
    """`python -m dpcore.reproduce` runs as __main__, and its workers do not re-run __main__
    (sweeps.worker_context): Runner.map must hand them gibbs_traces by its module's name
    (a full run once died here with "Can't get attribute 'gibbs_traces' on <module '__main__'>")."""
    import subprocess
    import sys
    res = subprocess.run([sys.executable, "-m", "dpcore.lab.reproduce", "subspace-fig3", "--tiny", "--jobs", "2",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert (tmp_path / "subspace-fig3" / "random-init.csv").exists()


@pytest.mark.slow
def test_a_dask_cluster_reports_its_own_workers_and_their_memory(tmp_path, capsys):
    """Under --scheduler the workers are the cluster's (two here, not --jobs' one) and the worker
    memory is what the Dask worker processes report, not this process's children."""
    distributed = pytest.importorskip("distributed")
    out, dest = tmp_path / "out", tmp_path / "ship"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert rp.main(["cocluster-fig3", "--tiny", "--out", str(out), "--images", "none", "--ship", str(dest),
                        "--scheduler", cluster.scheduler_address]) == 0
        with distributed.Client(cluster) as client:
            now = max(client.run(rp._peak_rss_mb).values())
    captured = capsys.readouterr()
    assert "cocluster-fig3 (tiny, 2 Dask workers, 2 threads)" in captured.err
    assert "2 Dask workers, 2 threads; peak memory" in captured.out
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["workers"] == {"kind": "dask", "n": 2, "threads": 2}
    assert manifest["figures"][0]["workers"] == 2 and manifest["figures"][0]["worker_kind"] == "dask"
    worker_mb = manifest["peak_memory"]["largest_worker_mb"]
    assert 50 < worker_mb <= now       # a worker process that imported dpcore; a peak only grows
    assert "Dask workers" in manifest["peak_memory"]["workers_how"]
    assert pd.read_csv(out / "timings_tiny.csv")["workers"].tolist() == [2]
