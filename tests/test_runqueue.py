"""The server's run queue (issue 33): at most C runs at once, first come first served, one place
per session, places given back by runs that were stopped; a page's Run waits its turn."""
import threading

import pytest
from hypothesis import given, settings, strategies as st

from apptest_helpers import open_page, submit
from ui import runqueue
from ui.runqueue import RunQueue, slots, wait_words


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def parked_thread():
    """A live thread standing for another session's script run (ended by setting the event)."""
    ev = threading.Event()
    th = threading.Thread(target=ev.wait, daemon=True)
    th.start()
    return th, ev


@settings(max_examples=60, deadline=None)
@given(capacity=st.integers(1, 4), sessions=st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=12))
def test_at_most_capacity_run_and_the_others_wait_in_order(capacity, sessions):
    q = RunQueue(capacity)
    threads, owner = [], {}
    tickets = []
    for s in sessions:
        if s not in owner:                                       # one script thread per session
            owner[s], ev = parked_thread()
            threads.append(ev)
        t = q.ask(s, thread=owner[s])
        if t not in tickets:
            tickets.append(t)
    distinct = list(dict.fromkeys(sessions))
    assert len(tickets) == len(distinct)                         # one place per session
    running = [t for t in tickets if q.granted(t)]
    assert running == tickets[:capacity]                         # first come, first served
    assert [q.position(t) for t in tickets[capacity:]] == list(range(len(tickets) - capacity))
    # releasing the first running one lets the first waiting one in
    if len(tickets) > capacity:
        q.release(tickets[0], thread=tickets[0].thread)
        assert q.granted(tickets[capacity]) and not any(q.granted(t) for t in tickets[capacity + 1:])
    for ev in threads:
        ev.set()


def test_a_stopped_run_gives_its_place_back():
    q = RunQueue(1)
    th, ev = parked_thread()
    holder = q.ask("a", thread=th)
    assert q.granted(holder)
    mine = q.ask("b")
    assert not q.granted(mine) and q.counts() == (1, 1)
    ev.set()
    th.join()                           # the holder's script thread ended without releasing (Stop)
    assert q.granted(mine) and q.counts() == (1, 0)


def test_waiting_shows_the_position_and_leaving_gives_the_place_back():
    clock = Clock()
    q = RunQueue(1, clock=clock)
    th, ev = parked_thread()
    first = q.ask("a", thread=th)
    clock.t = 10.0
    q.release(first, thread=th)         # one run of 10 s: the expected wait is measured from it
    th2, ev2 = parked_thread()
    holder = q.ask("b", thread=th2)
    mine = q.ask("c")
    shown = []

    class Stop(Exception):
        pass

    def show(position, wait):
        shown.append((position, wait))
        raise Stop                       # the user pressed Stop while waiting

    with pytest.raises(Stop):
        q.wait(mine, show, sleep=lambda s: None)
    assert shown == [(0, 10.0)]          # next in line; the holder has just started a 10 s run
    assert q.counts() == (1, 0)          # it left the queue
    ev.set(), ev2.set()
    assert "yours is next" in wait_words(0, 10.0, 1) and "about 10 s" in wait_words(0, 10.0, 1)
    assert "3 runs ahead of yours" in wait_words(3, None, 2)


def test_the_same_session_keeps_its_place():
    q = RunQueue(1)
    th, ev = parked_thread()
    q.ask("a", thread=th)
    old_th, old_ev = parked_thread()
    waiting = q.ask("b", thread=old_th)
    again = q.ask("b")                   # the session pressed again from a new script run
    assert again is waiting and q.position(again) == 0 and q.counts() == (1, 1)
    ev.set(), old_ev.set()


def test_how_many_runs_at_once():
    assert slots(["app.py", "--max-runs", "3"], {}) == 3
    assert slots(["app.py", "--max-runs=5"], {}) == 5
    assert slots(["app.py"], {"DPCLUST_MAX_RUNS": "2"}) == 2
    assert slots(["app.py"], {}) >= 1
    for bad in ("0", "two", "-1"):
        with pytest.raises(ValueError, match="must be a whole number ≥ 1"):
            slots(["app.py", "--max-runs", bad], {})
    with pytest.raises(ValueError, match="capacity"):
        RunQueue(0)


def test_a_page_run_waits_for_its_turn(monkeypatch):
    """The Cluster page's Run waits while the server's only place is taken, then runs."""
    q = RunQueue(1)
    monkeypatch.setitem(runqueue._server, "queue", q)
    th, ev = parked_thread()
    q.ask("another student", thread=th)
    seen = {}

    def free_when_waiting():
        for _ in range(2400):            # until the page's session waits (a guard, not a timing)
            if q.counts() == (1, 1):
                seen["waiting"] = True
                break
            threading.Event().wait(0.05)
        ev.set()

    at = open_page("3_cluster.py", spec={"kind": "subspaces", "n": 150, "d": 6, "k": 2, "q": 2, "sigma": 0.01,
                                         "random_state": 0})
    helper = threading.Thread(target=free_when_waiting)
    helper.start()
    submit(at, "cluster_form").click()
    at.run()
    helper.join()
    assert seen.get("waiting") and not at.exception
    assert "cluster_result" in at.session_state                 # it ran once the place was free
    assert q.counts() == (0, 0)                                  # and gave its place back


def run_in_thread(fn):
    """Call ``fn`` in a thread of its own (another script thread of the session) and wait for it."""
    out = {}
    th = threading.Thread(target=lambda: out.setdefault("value", fn()))
    th.start()
    th.join()
    return out.get("value")


def test_pressing_again_while_waiting_keeps_the_place():
    """Streamlit's fast reruns: a second press starts a new script thread while the old one, stopped,
    still gives its ticket back; the new run must keep the place (it waited for ever before)."""
    q = RunQueue(1)
    th, ev = parked_thread()
    holder = q.ask("a", thread=th)
    old_th, old_ev = parked_thread()
    first = q.ask("b", thread=old_th)
    again = q.ask("b")                                     # the new script thread of session b
    assert again is first
    q.release(first, thread=old_th)                        # the stopped thread leaves: not the owner any more
    assert q.counts() == (1, 1) and q.position(again) == 0
    q.release(holder, thread=th)
    assert q.granted(again)
    ev.set(), old_ev.set()


def test_pressing_again_while_running_waits_for_the_first_run():
    q = RunQueue(1)
    old_th, old_ev = parked_thread()
    first = q.ask("b", thread=old_th)
    assert q.granted(first)
    other_th, other_ev = parked_thread()
    other = q.ask("c", thread=other_th)
    again = q.ask("b")                                     # pressed again while the first run still runs
    assert again is first and not q.granted(again) and not q.granted(other)
    q.release(first, thread=old_th)                        # the first run ends: the second may run, c still waits
    assert q.granted(again) and not q.granted(other)
    q.release(again)
    assert q.granted(other)
    old_ev.set(), other_ev.set()


def test_stopping_the_second_run_while_the_first_still_runs_keeps_one_run_on_the_place():
    q = RunQueue(1)
    old_th, old_ev = parked_thread()
    first = q.ask("b", thread=old_th)
    again = q.ask("b")
    other_th, other_ev = parked_thread()
    other = q.ask("c", thread=other_th)
    q.release(again)                                       # the new run was stopped before it ran
    assert not q.granted(other) and q.counts() == (1, 1)   # the first run still holds the place
    q.release(first, thread=old_th)
    assert q.granted(other)
    old_ev.set(), other_ev.set()
