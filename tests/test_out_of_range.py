"""An out-of-range number says why next to the button, and the run does not start.

Streamlit's own bounds (``min_value``/``max_value`` handed to the browser) kept such an entry out
of the form without a word: Run re-ran the last accepted value and the reason showed only while
the field had the focus. The pages now check the range themselves (``ui.common.number_input``) and
the run button refuses (``ui.common.run_button``)."""
from apptest_helpers import by_key, open_page, press
from ui.cluster import LIMITS, RESULT_KEY

SMALL = {"kind": "subspaces", "n": 60, "d": 3, "k": 2, "q": 1, "sigma": 0.01, "random_state": 0}


def _runs(at):
    return len(at.session_state["session_meter"].runs) if "session_meter" in at.session_state else 0


def _errors(at):
    return [e.value for e in at.error]


def test_cluster_k_zero_refused_beside_run_and_no_result():
    at = open_page("3_cluster.py", spec=SMALL)
    by_key(at, "cl_k").set_value(0)
    press(at, "cluster_form")
    lo, hi = LIMITS["cl_k"]
    said = [e for e in _errors(at) if "clusters k must be between" in e]
    # one under the field, one beside the button: "not run" and what to do
    assert any(f"between {lo:,} and {hi:,}, not 0" in e for e in said), _errors(at)
    assert any("not run" in e for e in said), _errors(at)
    assert RESULT_KEY not in at.session_state or at.session_state[RESULT_KEY] is None
    # corrected: the run goes through and the messages are gone
    by_key(at, "cl_k").set_value(2)
    press(at, "cluster_form")
    assert not [e for e in _errors(at) if "must be between" in e]
    assert at.session_state[RESULT_KEY] is not None


def test_audit_runs_per_side_below_minimum_refused():
    at = open_page("8_audit.py", spec=SMALL)
    by_key(at, "audit_trials").set_value(1)
    before = _runs(at)
    go = [b for b in at.button if b.label == "Run audit"]
    assert go, [b.label for b in at.button]
    go[0].click()
    at.run()
    assert not at.exception, at.exception
    assert any("runs per side must be" in e and "not run" in e for e in _errors(at)), _errors(at)
    assert _runs(at) == before            # nothing ran, nothing charged
