"""AppTest runs of the app shell, the Home page and the Data page.

The Data page's inputs are found by key: ``data_kind`` (the dataset type) and
``data_<kind>_<parameter>`` (e.g. ``data_gaussians_n``)."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apptest_helpers import by_key, limits, open_page, press

ROOT = Path(__file__).resolve().parents[1]


def page(name):
    return open_page(name)


def summary(at):
    return dict(zip(at.table[0].value.index, at.table[0].value["value"]))


def kind_box(at):
    """The Data page's "Dataset type" selectbox."""
    return by_key(at, "data_kind")


def load(at):
    return press(at, "dataset_form")


def test_app_shell_runs_with_navigation_and_sidebar():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    assert not at.exception
    assert [m.value for m in at.sidebar.metric] == ["0"]               # the privacy meter, nothing spent yet
    assert any("dpclust-explorer" in t.value for t in at.title)  # Home is the default page


def test_home_page_runs():
    at = page("1_home.py")
    assert "differential" in " ".join(m.value for m in at.markdown).lower()


def test_data_page_default_summary_and_parameter_change():
    at = page("2_data.py")
    assert summary(at)["rows (n)"] == "1,000"
    by_key(at, "data_subspaces_n").set_value(400)
    load(at)
    assert not at.error
    assert summary(at)["rows (n)"] == "400"


@pytest.mark.parametrize("key,value,message", [
    ("data_subspaces_k", 50, "n must be >= k"),
    ("data_subspaces_q", 10, "q must be < d"),
])
def test_data_page_bad_input_shows_error_and_keeps_dataset(key, value, message):
    at = page("2_data.py")
    before = summary(at)
    if key == "data_subspaces_k":
        by_key(at, "data_subspaces_n").set_value(20)
    by_key(at, key).set_value(value)
    load(at)
    assert [e.value for e in at.error if message in e.value] == [e.value for e in at.error] and len(at.error) == 1
    assert summary(at) == before


@pytest.mark.parametrize("kind,sizes", [("subspaces", {"n": 1_000_000, "d": 11}),
                                        ("gaussians", {"n": 10_001, "d": 1000}),
                                        ("blocks", {"n_rows": 5000, "n_cols": 2001})])
def test_data_page_refuses_a_dataset_above_the_cell_cap_once_and_keeps_the_dataset(kind, sizes):
    """Each size is inside its input's limits, their product above MAX_GENERATED_CELLS (10M)."""
    from dpcore.data import MAX_GENERATED_CELLS
    at = page("2_data.py")
    before, spec_before = summary(at), dict(at.session_state["dataset"]["spec"])
    kind_box(at).set_value(kind)
    at.run()
    for name, value in sizes.items():
        w = by_key(at, f"data_{kind}_{name}")
        lo, hi = limits(at, f"data_{kind}_{name}")
        assert lo <= value <= hi                  # the form itself lets each number through
        w.set_value(value)
    load(at)
    assert len(at.error) == 1 and f"{MAX_GENERATED_CELLS:,} cells" in at.error[0].value     # the refusal, with the cap
    assert summary(at) == before and at.session_state["dataset"]["spec"] == spec_before


def test_data_page_inputs_show_the_cell_cap_and_use_dpcore_limits():
    from dpcore.data import GENERATOR_LIMITS, MAX_GENERATED_CELLS
    at = page("2_data.py")
    n = by_key(at, "data_subspaces_n")
    assert limits(at, "data_subspaces_n") == GENERATOR_LIMITS["subspaces"]["n"]
    assert f"{MAX_GENERATED_CELLS:,}" in n.help                          # the cap, in the input's help
    sigma = by_key(at, "data_subspaces_sigma")
    assert limits(at, "data_subspaces_sigma") == GENERATOR_LIMITS["subspaces"]["sigma"]


@pytest.mark.parametrize("preset,d,q,k", [("Three lines in R³ (see the subspaces)", 3, 1, 3),
                                          ("Two planes in R³ (see the subspaces)", 3, 2, 2)])
def test_data_page_r3_presets_load_and_draw_the_raw_coordinates(preset, d, q, k):
    import json
    at = page("2_data.py")
    by_key(at, "data_preset").set_value(preset)
    at.run()
    assert not at.exception and not at.error
    facts = summary(at)
    assert (facts["columns (d)"], facts["subspace dim (q)"], facts["classes"]) == (str(d), str(q), str(k))
    fig = json.loads(at.get("plotly_chart")[-1].proto.spec)
    assert fig["layout"]["scene"]["xaxis"]["title"]["text"] == "x1"          # raw coordinates, nothing projected


def test_data_page_inputs_follow_a_new_dataset_and_keep_the_users_choice_otherwise():
    """Keyed inputs keep their value when their default changes (Streamlit); the page sets them
    to a new dataset's values (ui.pickers.follow_default), as it did when they had no keys."""
    at = page("2_data.py")
    by_key(at, "data_preset").set_value("Three lines in R³ (see the subspaces)")     # same kind, new values
    at.run()
    assert (by_key(at, "data_subspaces_n").value, by_key(at, "data_subspaces_d").value) == (300, 3)
    by_key(at, "data_preset").set_value("64 Gaussians in R^100")                     # another kind
    at.run()
    assert kind_box(at).value == "gaussians" and by_key(at, "data_gaussians_k").value == 64
    kind_box(at).set_value("subspaces")
    at.run()
    at.run()
    assert kind_box(at).value == "subspaces"                      # the user's choice stays while the data do
    assert by_key(at, "data_subspaces_n").value == 1000           # inputs of another kind: their defaults
    by_key(at, "data_subspaces_n").set_value(400)
    load(at)
    assert at.session_state["dataset"]["spec"]["n"] == 400 and by_key(at, "data_subspaces_n").value == 400


def test_data_page_says_when_the_dataset_came_from_a_kind_it_does_not_offer():
    """The k-means page's digits are not a Data page kind: the page says so instead of showing
    another kind's inputs as if they described the dataset."""
    at = open_page("2_data.py", query={"data": '{"kind": "digits"}'})
    assert not at.exception and not at.error
    assert any("digits" in i.value and "another page" in i.value for i in at.info)
    assert by_key(at, "data_kind").value == "subspaces"          # the first kind offered, to choose from


def test_data_page_high_dimensional_caption_says_what_a_projection_hides():
    at = page("2_data.py")                      # the default: Fig. 2, R^10
    text = " ".join(c.value for c in at.caption)
    from dpcore.data import PAPER_SPECS, load_dataset
    clipped = load_dataset(**PAPER_SPECS["fig2_middle"]).extras["n_clipped"]    # 654 on this generator's data
    assert 600 < clipped < 700                                   # most points of σ = 0.1 noise lie outside the ball
    assert f"{clipped} of 1,000" in text and f"{clipped / 10:.1f} %" in text     # the caption says how many
    assert "no ε" in text                                        # ... computed from the data, not a release


def test_data_page_count_matrix_has_a_colour_bar_and_axis_titles():
    import json
    at = open_page("2_data.py", spec={"kind": "cluto", "name": "classic3"})
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert fig["data"][0]["marker"]["colorbar"]["title"]["text"] == "count"
    assert all(fig["layout"][a]["title"]["text"] for a in ("xaxis", "yaxis", "xaxis2", "yaxis2", "xaxis3", "yaxis3"))


@pytest.mark.parametrize("kind,expect", [("gaussians", "Gaussian mixture"), ("yaleb", "Extended Yale B"),
                                         ("cluto", "CLUTO classic3"), ("blocks", "block matrix")])
def test_data_page_loads_every_kind(kind, expect):
    at = page("2_data.py")
    kind_box(at).set_value(kind)
    at.run()
    load(at)
    assert not at.error
    assert expect in summary(at)["name"]


def test_warmup_imports_the_pages_modules_once_in_the_background():
    import sys

    from ui import warmup
    first = warmup.start()
    assert warmup.start() is first and first.daemon                 # one thread per server
    first.join(timeout=900)                  # compiles the Gibbs kernels after a clone: slow on a loaded machine
    assert not first.is_alive()
    assert all(name in sys.modules for name in warmup.MODULES)       # every listed module really exists
