"""Shareable links, presets and the "reproduce in Python" export, on the Cluster page."""
import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from apptest_helpers import by_key, link_of, open_page, press

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"kind": "subspaces", "n": 300, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}
CLUSTER = str(ROOT / "pages" / "3_cluster.py")


def page(path=CLUSTER, query=None, spec=SMALL):
    return open_page(Path(path).name, spec=spec, query=query)


def reproducible(at, prefix):
    """Tick the page's "reproducible (noise public)" box (``<prefix>_repro``): only then do the
    seed, the link and the script repeat a run."""
    by_key(at, f"{prefix}_repro").check()
    at.run()                        # the box sits outside the form: ticking it shows the seed


def controls(at):
    """The page's view: every input's value by its key (all have one)."""
    out = {}
    for group in (at.number_input, at.selectbox, at.select_slider, at.text_input):
        for w in group:
            assert w.key, f"the input {w.label!r} has no key"
            if not w.key.endswith("_preset"):     # the preset picker is a shortcut, not part of the view
                out[w.key] = w.value
    return out


def test_link_round_trip_restores_the_controls():
    at = page()
    by_key(at, "cl_method").set_value("sulq_kplane")
    at.run()
    by_key(at, "sulq_eps").set_value(10.0)
    reproducible(at, "cl")
    by_key(at, "cl_seed").set_value(7)
    by_key(at, "sulq_T").set_value(20)
    by_key(at, "sulq_comp").set_value("basic")
    press(at, "cluster_form")
    assert not at.error
    link = link_of(at)
    # bound widgets write a selectbox under its label, as the user reads it
    assert json.loads(link["data"]) == SMALL and link["cl_method"].startswith("SuLQ k-plane") and link["sulq_eps"] == "10.0"
    assert link["cl_repro"] == "true" and link["cl_seed"] == "7"
    # a new session opened from the link (no session state, not even the dataset) shows the same view
    again = page(query=link, spec=None)
    assert controls(again) == controls(at)
    assert again.session_state["dataset"]["spec"] == SMALL


@pytest.mark.parametrize("query, name", [
    ({"cl_k": "abc"}, "cl_k"),                     # not a number
    ({"cl_q": "0"}, "cl_q"),                       # outside the widget's range
    ({"cl_method": "magic"}, "cl_method"),         # unknown option
    ({"data": "{not json"}, "data"),               # broken dataset spec
    ({"data": json.dumps({"kind": "subspaces", "n": 5, "k": 10})}, "data"),   # n < k: dpcore's ValueError
    ({"data": json.dumps({"kind": "upload", "name": "x.csv", "sha256": "0" * 64, "labels": "last"})}, "data"),
    ({"data": json.dumps({"kind": "upload", "name": "x.csv", "sha256": "not a hash"})}, "data"),
])
def test_bad_link_parameters_are_ignored_with_a_warning(query, name):
    at = page(query=query)
    assert not at.exception
    assert any(name in w.value and "Ignored link parameters" in w.value for w in at.warning)
    assert at.session_state["dataset"]["spec"] == SMALL          # the dataset stays
    press(at, "cluster_form")                                    # and the page still works
    assert not at.error


def test_preset_sets_all_controls_and_the_dataset():
    at = page()
    by_key(at, "cluster_preset").set_value("Yale B, 5 faces: LRR")
    at.run()
    assert not at.exception
    assert at.session_state["dataset"]["spec"]["kind"] == "yaleb"
    assert by_key(at, "cl_method").value == "lrr"
    assert (by_key(at, "cl_k").value, by_key(at, "cl_q").value) == (5, 9)
    by_key(at, "cluster_preset").set_value("Paper Fig. 2: SuLQ-10 at ε = 10")
    at.run()
    assert by_key(at, "cl_method").value == "sulq_kplane" and by_key(at, "sulq_eps").value == 10.0
    assert at.session_state["dataset"]["spec"]["n"] == 1000


@pytest.mark.parametrize("method", ["kplane", "sample_aggregate"])
def test_reproduce_snippet_runs_and_gives_the_same_numbers(method):
    at = page()
    by_key(at, "cl_method").set_value(method)
    at.run()
    reproducible(at, "cl")
    press(at, "cluster_form")
    res = at.session_state["cluster_result"]
    code = res["code"]
    assert code and any(code.strip() in c.value for c in at.code)      # the page shows it
    out = io.StringIO()
    ns = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "reproduce.py", "exec"), ns)
    # the same estimator, parameters and integer seed: bit-identical subspaces and labels
    assert np.array_equal(ns["model"].subspaces_, res["subspaces"])
    assert np.array_equal(ns["model"].labels_, res["labels"])
    printed = dict(line.split(": ", 1) for line in out.getvalue().strip().splitlines() if ": " in line)
    assert float(printed["d_W to truth"]) == pytest.approx(res["metrics"]["d_W to truth"], rel=1e-12)
    assert float(printed["accuracy"]) == pytest.approx(res["metrics"]["accuracy"], rel=1e-12)
    if method == "sample_aggregate":
        assert "privacy spent (epsilon, delta)" in printed


GIBBS = str(ROOT / "pages" / "4_gibbs.py")


def test_gibbs_link_preset_and_snippet():
    at = page(GIBBS)
    by_key(at, "gibbs_preset").set_value("Quick look: ε = 1 and 10, 200 sweeps")
    at.run()
    assert by_key(at, "g_eps").value == "1, 10" and by_key(at, "g_iter").value == 200
    assert at.session_state["dataset"]["spec"]["n"] == 1000            # the preset's dataset
    at.session_state["dataset"] = {"spec": SMALL}                        # keep the test fast
    by_key(at, "g_iter").set_value(20)
    by_key(at, "g_chains").set_value(2)
    reproducible(at, "g")
    by_key(at, "g_seed").set_value(3)
    press(at, "gibbs_form")
    assert not at.error
    link = link_of(at)
    again = page(GIBBS, query=link, spec=None)
    assert controls(again) == controls(at)
    res = at.session_state["gibbs_result"]
    ns = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(res["code"], "reproduce.py", "exec"), ns)
    first = res["summary"][0]
    assert ns["model"].epsilon == first["ε"] == 1.0
    assert ns["model"].cost_ == pytest.approx(first["cost of released sample"], rel=1e-12)


COCLUSTER = str(ROOT / "pages" / "5_coclustering.py")


def test_cocluster_preset_link_and_snippet():
    at = page(COCLUSTER)
    by_key(at, "cocluster_preset").set_value("Synthetic blocks, 3×3 co-clusters")
    at.run()
    assert by_key(at, "cc_matrix").value == "blocks"
    by_key(at, "cc_eps").set_value(2.0)
    reproducible(at, "cc")
    by_key(at, "cc_seed").set_value(5)
    press(at, "cocluster_form")
    assert not at.error
    link = link_of(at)
    assert link["cc_matrix"] == "synthetic block matrix" and link["cc_eps"] == "2.0" and link["cc_seed"] == "5"
    again = page(COCLUSTER, query=link, spec=None)
    assert controls(again) == controls(at)
    res = at.session_state["cocluster_result"]
    ns = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(res["code"], "reproduce.py", "exec"), ns)
    assert np.array_equal(ns["model"].row_assignment_, res["dp"].row_assignment_)
    assert ns["model"].ledger_.total() == res["dp"].ledger_.total()


KMEANS = str(ROOT / "pages" / "6_kmeans.py")


def test_kmeans_preset_link_and_snippet():
    at = page(KMEANS)
    by_key(at, "kmeans_preset").set_value("The leaking radius (Λ read off the data)")
    at.run()
    assert by_key(at, "km_data").value == "gaussians" and by_key(at, "km_k").value == 8
    by_key(at, "km_n").set_value(800)               # keep the test fast
    reproducible(at, "km")
    by_key(at, "km_seed").set_value(4)
    by_key(at, "km_leak").uncheck()
    by_key(at, "km_run").click()
    at.run()
    assert not at.exception and not at.error
    link = link_of(at)
    assert link["km_methods"] == ["candidate set + local swaps", "SuLQ k-means"] and link["km_n"] == "800" and link["km_leak"] == "false"
    again = page(KMEANS, query=link, spec=None)
    before, after = controls(at), controls(again)
    del before["km_show"]                  # "centres to draw", a result widget: the new session has not run yet
    assert after == before
    assert [m.value for m in again.multiselect] == [m.value for m in at.multiselect]
    res = at.session_state["kmeans_result"]
    ns = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(res["code"], "reproduce.py", "exec"), ns)
    assert ns["result"].ratios() == res["cmp"].ratios()


DATA = str(ROOT / "pages" / "2_data.py")


def test_data_page_presets_and_link():
    at = page(DATA, spec=None)
    for label in ["Yale B, 5 faces", "classic3 co-clustering", "64 Gaussians in R^100", "Paper Fig. 2 (n=1000, d=10)"]:
        by_key(at, "data_preset").set_value(label)
        at.run()
        assert not at.exception and not at.error, label
    by_key(at, "data_preset").set_value("64 Gaussians in R^100")
    at.run()
    link = link_of(at)
    again = page(DATA, query=link, spec=None)
    assert again.session_state["dataset"]["spec"]["k"] == 64
    assert controls(again) == controls(at)
    assert by_key(again, "data_gaussians_k").value == 64 and by_key(again, "data_gaussians_d").value == 100


# ----------------------------------------------------------------------------- a link made on an uploaded file
TWO_PLANES = ROOT / "sample_data" / "uploads" / "two_planes.csv"
UPLOAD_WORDS = "This link used an uploaded file (two_planes.csv). Upload it here"


def upload_link(**settings):
    """A link of a session that used two_planes.csv (with its class labels), plus ``settings``."""
    from dpcore.upload import load_upload
    spec = load_upload("two_planes.csv", TWO_PLANES.read_bytes(), labels="last_column").params
    return spec, {"data": json.dumps(spec, sort_keys=True, separators=(",", ":")), **settings}


def waiting(at):
    return [w.value for w in at.warning if UPLOAD_WORDS in w.value]


def test_upload_link_applies_its_settings_once_the_file_is_uploaded_on_its_page():
    """The link used to say "upload it on the Data page, then open the link again", and opening it
    again started a new session without the file. Now one step: upload it where the link opened."""
    spec, link = upload_link(cl_method="sulq_kplane", sulq_eps="10", cl_q="3")
    at = page(query=link, spec=None)
    assert waiting(at) == ["This link used an uploaded file (two_planes.csv). Upload it here; the link's settings "
                           "(cl_method = sulq_kplane, cl_q = 3, sulq_eps = 10) will then be applied. It is read as the link "
                           "says (points, last column = class label, norm: none). Until then this page shows another "
                           "dataset."]
    assert at.session_state["dataset"]["spec"] != spec and by_key(at, "cl_method").value == "kplane"   # pending
    at.file_uploader[0].set_value(("two_planes.csv", TWO_PLANES.read_bytes(), "text/csv"))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["dataset"]["spec"] == spec
    assert (by_key(at, "cl_method").value, by_key(at, "sulq_eps").value, by_key(at, "cl_q").value) == ("sulq_kplane", 10.0, 3)
    assert by_key(at, "cl_k").value == 2                      # not in the link: follows the upload (2 classes)
    assert [s.value for s in at.success] == ["two_planes.csv is loaded, as the link asks; the link's settings were "
                                             "applied: cl_method = SuLQ k-plane (private, (ε, δ)-DP), "
                                             "cl_q = 3, sulq_eps = 10.0."]
    assert not waiting(at) and not at.file_uploader             # the message and its uploader are gone
    assert json.loads(link_of(at)["data"]) == spec
    at.run()                                                   # and stay gone
    assert not waiting(at) and not at.success and by_key(at, "cl_q").value == 3
    press(at, "cluster_form")
    assert not at.error, [e.value for e in at.error]


def test_upload_link_refuses_another_file_and_can_be_forgotten():
    spec, link = upload_link(cl_q="3")
    at = page(query=link, spec=None)
    other = b"x,y,z\n1,2,3\n4,5,6\n7,8,9\n"
    at.file_uploader[0].set_value(("two_planes.csv", other, "text/csv"))
    at.run()
    assert not at.exception
    assert any("two_planes.csv is not the file of the link: its contents differ" in e.value for e in at.error)
    assert waiting(at) and at.session_state["dataset"]["spec"]["kind"] != "upload"    # still waiting
    by_key(at, "link_upload_forget").click()
    at.run()
    assert not waiting(at) and not at.file_uploader and at.session_state["dataset"]["spec"]["kind"] != "upload"


def test_upload_link_on_the_data_page():
    spec, link = upload_link()
    at = page(ROOT / "pages" / "2_data.py", query=link, spec=None)
    assert any("Upload it here; the link's dataset will then be loaded." in w for w in waiting(at))
    at.file_uploader[0].set_value(("renamed.csv", TWO_PLANES.read_bytes(), "text/csv"))   # the same bytes
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    got = at.session_state["dataset"]["spec"]
    assert {**got, "name": "two_planes.csv"} == spec and got["labels"] == "last_column"
    assert any("renamed.csv is loaded, as the link asks." in s.value for s in at.success)
    assert not waiting(at)


# ----------------------------------------------------------------------------- issue 33: every link parameter answered
DEEP_SHORT = "[" * 2000 + "]" * 2000                       # within the length cap: json raised RecursionError
DEEP_LONG = '{"kind":' * 5000 + '"x"' + "}" * 5000          # 45,000 characters


@pytest.mark.parametrize("text, words", [(DEEP_SHORT, "nested too deeply"),
                                         (DEEP_LONG, "a dataset spec is a short JSON object; this one has 45,003")],
                         ids=["deep", "long"])
@pytest.mark.parametrize("path", [DATA, CLUSTER], ids=["data", "cluster"])
def test_a_deeply_nested_data_spec_is_refused_in_words(path, text, words):
    """Was a RecursionError traceback (ui.share.check_link's json.loads)."""
    at = page(path, query={"data": text})
    assert not at.exception, at.exception
    start = "data (not a dataset spec: the JSON is " if words.startswith("nested") else "data ("
    assert any("Ignored link parameters" in w.value and start in w.value and words in w.value
               for w in at.warning), [w.value for w in at.warning]
    assert at.session_state["dataset"]["spec"] == SMALL and "data" not in at.query_params or \
        json.loads(at.query_params["data"]) == SMALL            # the page's own dataset is published again


def test_unknown_link_parameters_are_named_and_removed():
    """A parameter no field of the page has used to be dropped without a word (Streamlit ignores it)."""
    at = page(CLUSTER, query={"cl_k": "4", "clk": "5", "zzz": "1"})
    assert not at.exception
    assert by_key(at, "cl_k").value == 4                                   # the known one is applied
    warning = " ".join(w.value for w in at.warning)
    assert "clk (no setting of this page has this name)" in warning and "zzz (no setting" in warning
    assert "cl_k" not in warning.replace("clk", "")
    assert "clk" not in at.query_params and "zzz" not in at.query_params
    data = page(DATA, query={"cl_k": "4"})                                 # the Data page binds no widget
    assert any("cl_k (no setting of this page has this name)" in w.value for w in data.warning)
    assert "cl_k" not in data.query_params


def test_unknown_parameters_of_an_upload_link_are_named_while_its_settings_wait():
    spec, link = upload_link(cl_q="3", cl_kk="2")
    at = page(query=link, spec=None)
    assert not at.exception
    assert waiting(at) and any("cl_kk (no setting of this page has this name)" in w.value for w in at.warning)
    assert "(cl_q = 3)" in waiting(at)[0] and "cl_kk" not in waiting(at)[0]


@pytest.mark.parametrize("spec, words", [
    ({"kind": "gaussians", "n": 50, "foo": 1},
     "the dataset kind 'gaussians' has no parameter 'foo'; its parameters are"),
    ({"kind": "gaussians", "n": {"a": 1}}, "the dataset parameter 'n' holds an object"),
    ({"kind": "gaussians", "n": [[1]]}, "the dataset parameter 'n' holds a nested list"),
    ({"n": 50}, "a dataset spec needs its 'kind'"),
    ({"kind": "subspaces", "n": 50, "d": 5, "k": 2, "q": 2, "clip": "no"}, "clip must be True or False; got 'no'"),
    ({"kind": "upload", "name": "x.csv", "sha256": "0" * 64, "extra": 1}, "an uploaded file's spec has no parameter "
                                                                           "'extra'"),
    ({"kind": "upload", "name": "x.csv", "sha256": "0" * 64, "transpose": "no"}, "'transpose' must be true or false"),
    ({"kind": "upload", "name": "x.csv", "sha256": "0" * 64, "subspace_dim": "2"},
     "'subspace_dim' (subspace dimension q) must be a whole number"),
])
def test_a_link_dataset_spec_of_wrong_types_is_refused_in_words(spec, words):
    """Wrong types used to give Python's words ("make_gaussian_mixture() got an unexpected keyword argument
    'foo'"), or pass: clip "no" clipped, an upload spec with an extra key waited for ever."""
    from ui.common import dataset_from_spec
    from ui.share import read_link
    reading = read_link({"data": [json.dumps(spec)]}, {}, load_spec=dataset_from_spec)
    assert reading.spec is None and [k for k, _ in reading.rejected] == ["data"]
    assert words in reading.rejected[0][1], reading.rejected


def test_read_link_accounts_for_every_parameter():
    from ui.cluster import URL_FIELDS
    from ui.share import UNKNOWN_KEY, read_link
    params = {"cl_k": ["4"], "cl_q": ["1e400"], "cl_method": ["kplane"], "kp_init": ["points"], "nope": ["1"],
              "cl_seed": ["3"], "data": [json.dumps(SMALL)]}
    r = read_link(params, URL_FIELDS)
    assert r.spec == SMALL and r.values == {"cl_k": 4, "cl_method": "kplane", "kp_init": "points"}
    assert r.canonical == {"cl_method": "k-plane (non-private)"}          # the label, which the widget reads
    assert dict(r.rejected) == {"cl_q": "'1e400' is not a whole number", "nope": UNKNOWN_KEY,
                                "cl_seed": 'a seed is used only with "reproducible (noise public)" ticked'}
    assert all(key in r.warning() for key in ("cl_q", "nope", "cl_seed"))
    assert read_link({}, URL_FIELDS).warning() is None


LINK_PAGES = ["2_data.py", "3_cluster.py", "4_gibbs.py", "5_coclustering.py", "6_kmeans.py", "7_privacy_utility.py",
              "8_audit.py", "9_paper_figures.py"]


@pytest.mark.parametrize("name", LINK_PAGES)
def test_every_widget_bound_to_the_link_is_a_field_of_its_page(name, monkeypatch):
    """A link parameter no field knows is now refused as unknown: so every widget that writes itself into
    the link must be a field of its page's link check, or the page would refuse its own links."""
    import ui.share
    seen = {}
    original = ui.share.check_link

    def spy(page, fields):
        seen.update(ui.share._with_repro(fields))
        return original(page, fields)
    monkeypatch.setattr(ui.share, "check_link", spy)
    at = open_page(name, spec=SMALL)
    for box in [w for w in at.checkbox if w.key and w.key.endswith("_repro")]:
        box.check()                        # the seed inputs are drawn (and bound) only then
    at.run()
    bound = {w.proto.query_param_key for group in ("number_input", "selectbox", "multiselect", "checkbox", "toggle",
                                                   "text_input", "radio", "slider", "select_slider")
             for w in getattr(at, group) if getattr(w.proto, "query_param_key", "")}
    assert (seen and bound) or name == "2_data.py"
    assert bound <= set(seen), sorted(bound - set(seen))
