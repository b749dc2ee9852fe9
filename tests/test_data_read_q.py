"""A subspace dimension q read off the data (the Data page's suggestion, accepted) makes a private
method's run not private: its privacy box has no "Private" line and says why, and the meter lists
the run apart. Before, only the q field's tooltip said so."""
from collections import OrderedDict
from pathlib import Path

from apptest_helpers import by_key, open_page, press

from dpcore.defaults import public_upload_subspace_dim
from dpcore.upload import load_upload, upload_key

LINES = "\n".join(f"{t:.3f},{2 * t:.3f},{-t:.3f},{0.5 * t:.3f},a" if i % 2 else f"{-t:.3f},{t:.3f},{t:.3f},{t:.3f},b"
                  for i, t in enumerate([(j % 37) / 37 - 0.5 for j in range(120)]))


def _upload(q):
    ds = load_upload("lines.csv", LINES.encode(), labels="last_column", subspace_dim=q)
    return ds, {"uploaded_datasets": OrderedDict({upload_key(ds.params): ds})}


def _boxes(at):
    return [i.value for i in at.info if "Not private" in i.value or "Private" in i.value]


def test_cluster_run_with_a_data_read_q_is_not_private():
    ds, state = _upload(1)                          # d = 4: the public default is 2
    assert public_upload_subspace_dim(ds.d) == 2
    at = open_page("3_cluster.py", spec=dict(ds.params), state={**state, "cl_method": "sulq_kplane"})
    assert by_key(at, "cl_q").value == 1            # the accepted q is the page's default
    press(at, "cluster_form")
    boxes = _boxes(at)
    assert boxes and not any("Private (differentially private releases)" in b for b in boxes), boxes
    assert any("q = 1 was read off the data" in b for b in boxes), boxes
    run = at.session_state["session_meter"].runs[-1]
    assert not run["private"] and "read off the data" in run["reason"]


def test_the_public_default_q_stays_private():
    ds, state = _upload(2)                          # accepted, but it is the public default
    at = open_page("3_cluster.py", spec=dict(ds.params), state={**state, "cl_method": "sulq_kplane"})
    press(at, "cluster_form")
    assert any("Private (differentially private releases)" in b for b in _boxes(at)), _boxes(at)
    assert at.session_state["session_meter"].runs[-1]["private"]
