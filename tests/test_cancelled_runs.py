"""A run that was cancelled (Stop, or the student left the page mid-run: Streamlit stops the
script) is said to be cancelled, and the result left on screen is marked as the one before it (a
classroom report: the old result stayed on screen as if it were new). The script's stop is
played by the mark it leaves: :func:`ui.common.run_started` without :func:`ui.common.run_ended`."""
import pytest

from apptest_helpers import open_page, press

CANCELLED = "Your last run did not finish"


def _page(script):
    at = open_page(script, timeout=180)
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("script, name, form", [("5_coclustering.py", "coclustering", "cocluster_form"),
                                                ("8_audit.py", "audit", "audit_form")])
def test_a_cancelled_run_is_named_until_a_run_ends(script, name, form):
    at = _page(script)
    assert not any(CANCELLED in w.value for w in at.warning)
    at.session_state["_runs_in_progress"] = {name}           # what a script stopped mid-run leaves
    at.run()
    note = [w.value for w in at.warning if CANCELLED in w.value]
    assert len(note) == 1 and "Nothing was kept" in note[0]          # no earlier result on this page
    press(at, form)                                                  # a run that ends clears it
    assert not any(CANCELLED in w.value for w in at.warning)
    at.session_state["_runs_in_progress"] = {name}
    at.run()
    note = [w.value for w in at.warning if CANCELLED in w.value]
    assert len(note) == 1 and "from the run before it" in note[0]    # the result on screen is the older one
