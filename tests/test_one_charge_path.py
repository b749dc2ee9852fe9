"""One charge path: the same sweep gives the same totals wherever its runs ran, and a sweep is
planned against every budget before any run, whatever the executor."""
from __future__ import annotations

import math

import pytest

from dpcore.lab.methods import preset
from dpcore.lab.sweeps import Sweep, run_sweep
from dpcore.privacy import PrivacyAccountant
from dpcore.privacy.meter import PrivacyMeter

DATA = {"kind": "gaussians", "n": 400, "d": 5, "k": 3, "sigma": 0.1, "center_box": 1.0, "random_state": 0}
METHODS = [preset(p) for p in ("SuLQ k-means", "s.a. k-means", "LSH coreset")]
GRID = [0.25, 0.5, 1.0, 2.0, 4.0]


def _sweep(trials=3, grid=GRID):
    return Sweep(dataset=DATA, algorithms=METHODS, epsilons=list(grid), trials=trials, metrics=["objective"],
                 seed=None)


def _totals(acc, delta=1e-4):
    return acc.basic_total(), acc.tight_total(delta).epsilon


def _recorded(n_jobs=1, executor=None):
    acc = PrivacyAccountant()
    with acc:
        df = run_sweep(_sweep(), n_jobs=n_jobs, executor=executor)
    return acc, df


@pytest.fixture(scope="module")
def in_process():
    return _recorded(1)


def test_worker_rows_carry_typed_events(in_process):
    acc, df = in_process
    # 3 methods × 5 ε × 3 trials, every one recorded with the typed events of its ledger (not one (ε, δ) each)
    assert len(acc.runs) == 45
    kinds = {e.kind for r in acc.runs for e in r.events}
    assert kinds - {"approx_dp"}, kinds


def test_same_tight_total_in_process_and_on_workers(in_process):
    acc1, _ = in_process
    acc2, _ = _recorded(2)
    (b1, t1), (b2, t2) = _totals(acc1), _totals(acc2)
    assert b1[0] == pytest.approx(b2[0], rel=1e-12) and b1[1] == pytest.approx(b2[1], rel=1e-12)
    assert math.isfinite(t1) and t1 < b1[0]
    assert t2 == pytest.approx(t1, rel=1e-9)


@pytest.mark.slow
def test_same_tight_total_on_a_dask_cluster(in_process):
    distributed = pytest.importorskip("distributed")
    acc1, _ = in_process
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        acc3, _ = _recorded(executor=client.get_executor())
    assert _totals(acc3)[1] == pytest.approx(_totals(acc1)[1], rel=1e-9)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_sweep_past_the_budget_is_refused_before_any_run(n_jobs):
    acc = PrivacyAccountant(budget_epsilon=5.0)
    with acc, pytest.raises(ValueError, match="budget"):
        run_sweep(_sweep(trials=1), n_jobs=n_jobs)
    assert acc.runs == [] and acc.nonprivate_runs == []


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_meter_plans_the_whole_sweep_and_charges_every_run(n_jobs):
    meter = PrivacyMeter(budget_epsilon=5.0)
    with pytest.raises(ValueError, match="budget"):
        run_sweep(_sweep(trials=1), n_jobs=n_jobs, meter=meter, dataset_key="g")
    assert meter.rows() == []
    meter = PrivacyMeter()
    df = run_sweep(_sweep(trials=1, grid=[1.0]), n_jobs=n_jobs, meter=meter, dataset_key="g")
    rows = meter.rows("g")
    assert len(rows) == len(df) == 3 and all(r.private for r in rows)
    h = meter.headline("g")
    assert h.private_epsilon == pytest.approx(3.0) and not h.unbounded


def test_a_public_sweep_seed_makes_the_runs_not_private_in_the_meter():
    meter = PrivacyMeter()
    sw = Sweep(dataset=DATA, algorithms=[preset("SuLQ k-means")], epsilons=[1.0], trials=2, metrics=["objective"], seed=7)
    run_sweep(sw, meter=meter, dataset_key="g")
    rows = meter.rows("g")
    assert len(rows) == 2 and not any(r.private for r in rows)
    assert "public seed 7" in rows[0].reason
    assert math.isinf(meter.headline("g").epsilon)


def test_a_sweep_that_stops_returns_the_runs_it_charged():
    """A sweep stopped on an exception (here its on_cell raises after the first cell) keeps what it
    charged: the finished runs travel with the exception, one per charged entry."""
    meter = PrivacyMeter()

    def stop(label, eps, rows):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as info:
        run_sweep(_sweep(trials=2, grid=[1.0, 2.0]), meter=meter, dataset_key="g", on_cell=stop)
    partial = info.value.partial
    assert len(partial) == len(meter.rows("g")) >= 2
    assert sorted(zip(partial["algorithm"], partial["trial"])) == sorted(
        (r.label.split(": ", 1)[1].rsplit(", ε", 1)[0], int(r.label.rsplit(" ", 1)[1])) for r in meter.rows("g"))
