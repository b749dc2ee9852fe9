"""A running fit stops at its cancel token (issue 33: Stop did nothing while the compiled
sweeps ran). Asserted on state: the sweep at which the fit stopped, never on time."""
import threading

import numpy as np
import pytest

from dpcore.data import make_union_of_subspaces
from dpcore.runtime import CancelToken, FitCancelled, cancel_all, cancellable, check_cancelled, current_token
from dpcore.subspace import gibbs as gibbs_mod
from dpcore.subspace import gibbs_kernels
from dpcore.subspace.gibbs import GibbsSubspaceClustering

ENGINES = ["numpy"] + (["numba"] if gibbs_kernels.AVAILABLE else [])


@pytest.fixture(scope="module")
def ds():
    return make_union_of_subspaces(150, 5, 2, 2, 0.1, random_state=0)


def model(engine, n_iter=300, **kw):
    return GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, epsilon=2.0, n_iter=n_iter, n_chains=2, engine=engine,
                                   random_state=5, **kw)


@pytest.mark.parametrize("engine", ENGINES)
def test_cancelled_during_the_run_stops_at_the_next_sweep(ds, engine):
    token = CancelToken()
    seen = []

    def progress(i, n):
        seen.append(i)
        if i >= 60:
            token.cancel()

    with pytest.raises(FitCancelled) as info:
        model(engine).fit(ds.X, callback=progress, cancel=token)
    # the progress report of sweep seen[-1] cancelled it: no sweep after it was run
    assert seen[-1] >= 60 and info.value.done == seen[-1]


@pytest.mark.parametrize("engine", ENGINES)
def test_cancel_from_another_thread_ends_the_fit(ds, engine):
    token, started, out = CancelToken(), threading.Event(), {}

    def fit():
        try:
            model(engine, n_iter=10_000).fit(ds.X, callback=lambda i, n: started.set(), cancel=token)
            out["result"] = "finished"
        except FitCancelled as exc:
            out["result"], out["done"] = "cancelled", exc.done

    th = threading.Thread(target=fit)
    th.start()
    assert started.wait(120)
    token.cancel()
    th.join(120)                      # a guard against a hang, not a timing assertion
    assert not th.is_alive() and out["result"] == "cancelled" and out["done"] < 10_000


@pytest.mark.parametrize("engine", ENGINES)
def test_the_draws_do_not_depend_on_the_token(ds, engine, monkeypatch):
    plain = model(engine, n_iter=130).fit(ds.X)
    monkeypatch.setattr(gibbs_mod, "POLL_SECONDS", 0.0)     # one sweep per kernel call, a check after each
    polls = []
    cut = model(engine, n_iter=130).fit(ds.X, cancel=CancelToken(poll=lambda: polls.append(1)))
    assert polls                                            # the heartbeat ran
    assert np.array_equal(plain.chain_labels_, cut.chain_labels_)
    assert np.array_equal(plain.chain_subspaces_, cut.chain_subspaces_)
    for name in plain.traces_:
        np.testing.assert_array_equal(plain.traces_[name], cut.traces_[name])


def test_the_current_token_of_the_thread_is_polled(ds):
    class Stop(Exception):
        pass

    def poll():
        raise Stop          # what Streamlit's Stop does through the page's heartbeat

    assert current_token() is None
    with cancellable(CancelToken(poll=poll)) as token:
        assert current_token() is token
        with pytest.raises(Stop):
            model(ENGINES[-1]).fit(ds.X)
    with cancellable(CancelToken(poll=poll)):
        with pytest.raises(Stop):
            check_cancelled()
    assert current_token() is None
    check_cancelled()       # no token: nothing happens


def test_bad_tokens_are_refused(ds):
    with pytest.raises(ValueError, match="cancel must be a dpcore.runtime.CancelToken"):
        model("numpy").fit(ds.X, cancel="stop")
    with pytest.raises(ValueError, match="poll must be callable"):
        CancelToken(poll=3)
    with pytest.raises(ValueError, match="token must be a CancelToken"):
        with cancellable(None):
            pass


def test_cancel_all_cancels_every_live_token():
    a, b = CancelToken(), CancelToken()
    cancel_all()
    assert a.cancelled and b.cancelled
