"""The ε ladders (dpcore.lab.ladders): their specs, building, files, loading, the shipped files,
and the server's store of them (ui.ladder.LadderStore: loaded once, or built in the background).

No wall clock is asserted: the seconds a ladder records are checked to be there, not how many."""
from __future__ import annotations

import json
import math
import threading
from dataclasses import replace

import numpy as np
import pytest

from dpcore.data import PAPER_SPECS, load_dataset
from dpcore.lab import ladders as L
from dpcore.lab.methods import METHODS

#: a ladder small enough to build in a test: SuLQ k-plane on 60 points of two lines in R², 3 rungs
TINY = L.LadderSpec("test-tiny", "cluster", "(test)", "sulq_kplane",
                    {"kind": "subspaces", "n": 60, "d": 2, "k": 2, "q": 1, "sigma": 0.01, "random_state": 3},
                    {"n_clusters": 2, "subspace_dim": 1, "n_iter": 3, "composition": "advanced"},
                    (0.5, 5.0, 50.0), reference="kplane")


@pytest.fixture(scope="module")
def tiny():
    return L.build_ladder(TINY)


# ----------------------------------------------------------------------------- specs
def test_the_ladders_are_the_pages_ladders():
    import ui.cluster as uc
    import ui.kmeans as uk
    assert list(L.CLUSTER_EPSILONS) == uc.EPSILON_GRID                  # the Cluster page's ε grid, 0.01 … 1000
    assert list(L.KMEANS_EPSILONS) == list(uk.EPS_LADDER)               # the values offered side by side
    assert L.GIBBS_EPSILONS[0] == 0.1 and L.GIBBS_EPSILONS[-1] == 1000.0
    assert {0.1, 1.0, 10.0, 100.0} <= set(L.GIBBS_EPSILONS)             # Fig. 3's ε
    for eps in (L.CLUSTER_EPSILONS, L.KMEANS_EPSILONS, L.GIBBS_EPSILONS):
        ratios = np.diff(np.log10(eps))
        assert np.all(ratios > 0) and np.all(ratios < 0.5)             # increasing, 1-2-5 steps


def test_every_ladder_names_a_catalogue_method_and_a_private_one():
    for spec in L.LADDERS.values():
        method = METHODS[spec.method]
        assert method.private, spec.name
        assert spec.seed == L.LADDER_SEED
        if spec.page == "cluster":
            assert spec.reference in METHODS and not METHODS[spec.reference].private


def test_kmeans_ladder_presets_are_the_pages_presets():
    """The k-means ladders' settings are their presets' (the page's presets live in ui.kmeans)."""
    import ui.kmeans as uk
    for spec in (s for s in L.LADDERS.values() if s.page == "kmeans"):
        values = uk.PRESETS[spec.preset].values
        assert values["km_eps_method"] == spec.method and not values["km_leak"]
        assert (values["km_k"], values["km_radius"], values["km_delta"]) == (
            spec.params["n_clusters"], spec.params["radius"], spec.params["delta"])


def test_a_spec_refuses_a_bad_ladder():
    with pytest.raises(ValueError, match="increasing"):
        replace(TINY, epsilons=(1.0, 0.5))
    with pytest.raises(ValueError, match="increasing"):
        replace(TINY, epsilons=(0.0, 1.0))
    with pytest.raises(ValueError, match="page"):
        replace(TINY, page="audit")
    with pytest.raises(ValueError, match="ladder must be one of"):
        L.build_ladder("no-such-ladder")


def test_find_ladder_compares_the_settings_with_numbers_as_numbers():
    spec = L.LADDERS["cluster-fig2-sulq10"]
    params = {"n_clusters": 3.0, "subspace_dim": 3, "n_iter": 10, "composition": "advanced"}
    assert L.find_ladder("cluster", "sulq_kplane", dict(PAPER_SPECS["fig2_middle"]), params) is spec
    assert L.find_ladder("cluster", "sulq_kplane", dict(PAPER_SPECS["fig2_middle"]), {**params, "n_iter": 50}) is None
    assert L.find_ladder("cluster", "sulq_kplane", dict(PAPER_SPECS["lines_r3"]), params) is None
    assert L.find_ladder("gibbs", "sulq_kplane", dict(PAPER_SPECS["fig2_middle"]), params) is None
    assert L.find_ladder("cluster", "sulq_kplane", dict(PAPER_SPECS["fig2_middle"]), {**params, "delta": 1e-3}) is None


# ----------------------------------------------------------------------------- building
def test_a_built_ladder_holds_every_rung_and_the_record_of_its_build(tiny):
    R = len(TINY.epsilons)
    assert tiny.arrays["labels"].shape == (R, 60) and tiny.arrays["labels"].dtype == np.int8
    assert tiny.arrays["subspaces"].shape == (R, 2, 2, 1) and tiny.arrays["subspaces"].dtype == np.float32
    assert tiny.arrays["metrics"].shape == (R, len(L.SUBSPACE_METRICS))
    meta = tiny.meta
    assert meta["seed"] == L.LADDER_SEED and "run_seed" in meta["seed_recipe"]
    assert meta["versions"]["dpcore"] and meta["versions"]["numpy"]
    assert len(meta["seconds"]) == R and all(s >= 0 for s in meta["seconds"])
    assert meta["reference_seconds"] >= 0
    assert [e for e, _ in meta["ledger"]] == pytest.approx(list(TINY.epsilons))    # what a live run would spend
    assert meta["fingerprint"] == L.dataset_fingerprint(load_dataset(**TINY.dataset).X)
    r = tiny.rung(5.0)
    assert r["epsilon"] == 5.0 and r["labels"].shape == (60,) and r["ref_labels"].shape == (60,)
    assert r["seconds"] == meta["seconds"][1] and r["ledger"][0] == pytest.approx(5.0)
    assert tiny.live_seconds(5.0) == pytest.approx(meta["seconds"][1] + meta["reference_seconds"])
    with pytest.raises(ValueError, match="ladder's values"):
        tiny.rung(7.0)


def test_a_rung_is_the_catalogue_run_with_its_public_seed(tiny):
    """Anyone can recompute a rung: the catalogue's method, the rung's seed from the recipe."""
    from dpcore.lab.methods import build_estimator, run_seed
    ds = load_dataset(**TINY.dataset)
    est = build_estimator("sulq_kplane", None, TINY.params, epsilon=5.0,
                          random_state=np.random.default_rng(run_seed(L.LADDER_SEED, TINY.name, 5.0, 0)))
    est.fit(ds.X)
    np.testing.assert_array_equal(est.labels_, tiny.rung(5.0)["labels"])
    np.testing.assert_allclose(est.subspaces_, tiny.rung(5.0)["subspaces"], atol=1e-6)


def test_save_and_load_round_trip(tiny, tmp_path):
    path = L.save_ladder(tiny, tmp_path)
    assert path == tmp_path / "test-tiny.npz" and path.is_file()
    back = L.load_ladder(TINY, tmp_path)
    assert back.meta == json.loads(json.dumps(tiny.meta))
    for k, v in tiny.arrays.items():
        np.testing.assert_array_equal(back.arrays[k], v)
        assert back.arrays[k].dtype == v.dtype


def test_load_refuses_a_missing_a_stale_or_a_foreign_file(tiny, tmp_path):
    with pytest.raises(FileNotFoundError):
        L.load_ladder(TINY, tmp_path)
    L.save_ladder(tiny, tmp_path)
    with pytest.raises(ValueError, match="other settings"):          # the code's spec changed since the build
        L.load_ladder(replace(TINY, params={**TINY.params, "n_iter": 4}), tmp_path)
    # the generator gives other points now than when the file was built
    L.save_ladder(L.Ladder(TINY, {**tiny.meta, "fingerprint": "0" * 16}, tiny.arrays), tmp_path)
    with pytest.raises(ValueError, match="other data"):
        L.load_ladder(TINY, tmp_path)
    assert L.load_ladder(TINY, tmp_path, verify=False).spec is TINY
    stale = L.Ladder(TINY, {**tiny.meta, "format": L.FORMAT + 1}, tiny.arrays)
    L.save_ladder(stale, tmp_path)
    with pytest.raises(ValueError, match="format"):
        L.load_ladder(TINY, tmp_path)


def test_the_build_command_writes_the_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(L.LADDERS, TINY.name, TINY)
    assert L.main(["build", "--preset", TINY.name, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{TINY.name}: wrote" in out and "seconds per rung" in out
    assert L.load_ladder(TINY, tmp_path).meta["spec"]["name"] == TINY.name
    assert L.main(["list"]) == 0
    assert TINY.name in capsys.readouterr().out


def test_no_streamlit_in_the_library():
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(L))
    names = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not any("streamlit" in x for x in names | mods)


# ----------------------------------------------------------------------------- the shipped files
def test_every_ladder_is_shipped_current_and_small():
    total = 0
    for spec in L.LADDERS.values():
        path = L.ladder_path(spec)
        assert path.is_file(), f"{path.name} is missing: python -m dpcore.lab.ladders build --preset {spec.name}"
        total += path.stat().st_size
        try:
            lad = L.load_ladder(spec)          # the spec and the dataset's fingerprint are the code's
        except ValueError as exc:
            pytest.fail(f"{exc}: python -m dpcore.lab.ladders build --preset {spec.name}")
        assert len(lad.meta["seconds"]) == len(spec.epsilons)
        assert lad.meta["seed"] == L.LADDER_SEED and lad.meta["versions"]["dpcore"]
        assert all(len(lad.arrays[k]) == len(spec.epsilons) for k in lad.meta["per_rung"])
    assert total < 2_000_000, f"the shipped ladders take {total:,} bytes"


def test_a_shipped_ladder_is_what_the_code_builds_now():
    """A cheap ladder rebuilt gives the shipped rungs (same seed): the shipped demonstration is
    what the methods do now. If this fails after a change to a method, rebuild the ladders:
    python -m dpcore.lab.ladders build."""
    spec = L.LADDERS["cluster-planes-sulq"]
    shipped, now = L.load_ladder(spec), L.build_ladder(spec)
    np.testing.assert_array_equal(now.arrays["labels"], shipped.arrays["labels"])
    np.testing.assert_allclose(now.arrays["subspaces"], shipped.arrays["subspaces"], atol=1e-5)
    np.testing.assert_array_equal(now.arrays["ref_labels"], shipped.arrays["ref_labels"])


def test_gibbs_ladders_keep_thinned_traces_and_a_verdict_per_rung():
    lad = L.load_ladder("gibbs-fig3-random", verify=False)
    R, n_iter = len(lad.epsilons), lad.meta["n_iter"]
    sweeps = lad.arrays["sweeps"]
    assert sweeps[0] == 1 and sweeps[-1] == n_iter and len(sweeps) <= lad.spec.max_points + 1
    for name in L.GIBBS_TRACES:
        assert lad.arrays[f"trace_{name}"].shape == (R, 8, len(sweeps))
    assert len(lad.meta["verdicts"]) == R and all({"mixed", "frozen", "text", "rule"} <= set(v)
                                                  for v in lad.meta["verdicts"])
    r = lad.rung(10.0)
    assert 0 <= r["released"] < 8 and 0 < r["burn_in"] < n_iter and isinstance(r["verdict"]["mixed"], bool)


# ----------------------------------------------------------------------------- the server's store
def test_the_store_loads_a_shipped_ladder_once():
    from ui.ladder import LadderStore
    store = LadderStore()
    spec = L.LADDERS["cluster-fig2-sulq10"]
    first, status = store.get(spec)
    assert status is None and first.spec is spec
    assert store.get(spec)[0] is first


def test_the_store_builds_a_missing_ladder_in_the_background_once(tmp_path):
    from ui.ladder import LadderStore
    go, calls = threading.Event(), []

    def build(spec, progress):
        calls.append(spec.name)
        progress(1, 4, "ε = 5")
        assert go.wait(60)
        return L.build_ladder(spec)

    store = LadderStore(directory=tmp_path, build=build)
    ladder, status = store.get(TINY)
    assert ladder is None and status.startswith("being prepared")
    ladder, status = store.get(TINY)                  # a second session: the same build, not another one
    assert ladder is None and status.startswith("being prepared")
    go.set()
    assert store.wait(TINY.name, timeout=120)
    ladder, status = store.get(TINY)
    assert status is None and ladder.epsilons == TINY.epsilons
    assert calls == [TINY.name]


def test_a_stale_file_is_rebuilt_and_a_failed_build_says_why(tiny, tmp_path):
    from ui.ladder import LadderStore
    L.save_ladder(L.Ladder(TINY, {**tiny.meta, "format": L.FORMAT + 1}, tiny.arrays), tmp_path)

    def fail(spec, progress):
        raise ValueError("no such data")

    store = LadderStore(directory=tmp_path, build=fail)
    ladder, status = store.get(TINY)
    assert ladder is None and "out of date" in status
    store.wait(TINY.name, timeout=60)
    ladder, status = store.get(TINY)
    assert ladder is None and status == "failed: no such data"


def test_the_store_keeps_what_it_made_and_prebuilds_once():
    from ui.ladder import LadderStore
    store, made = LadderStore(), []
    assert store.kept(("a", 1.0), lambda: made.append(1) or "x") == "x"
    assert store.kept(("a", 1.0), lambda: made.append(2) or "y") == "x" and made == [1]
    thread = store.prebuild([(("a", e), (lambda e=e: made.append(e) or e)) for e in (1.0, 2.0, 3.0)], "a")
    thread.join(60)
    assert store.prebuild([], "a") is None                        # once per ladder
    assert sorted(made) == [1, 2.0, 3.0] and store.kept(("a", 3.0), lambda: None) == 3.0


def test_the_light_figure_sends_float32():
    import plotly.graph_objects as go
    from ui.ladder import light
    fig = light(go.Figure(go.Scatter(x=np.arange(3.0), y=np.array([0.1, math.nan, 0.3]))))
    assert fig.data[0].x.dtype == np.float32 and np.isnan(fig.data[0].y[1])
