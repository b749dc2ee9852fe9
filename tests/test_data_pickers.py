"""ui.pickers: the generator inputs of the Co-clustering and k-means pages stay inside dpcore's
limits, their link parsers use the same numbers, and only the inputs a page lists are bound;
follow_default resets a keyed input when its default changes."""
import pytest
from streamlit.testing.v1 import AppTest

from apptest_helpers import by_key, limits

from dpcore.data import GENERATOR_LIMITS
from ui.pickers import BLOCK_LIMITS, GAUSSIAN_LIMITS, picker_url_fields

# picker input -> dpcore parameter
GAUSSIAN_NAMES = {"n": "n", "d": "d", "comp": "k", "sigma": "sigma"}
BLOCK_NAMES = {"rows": "n_rows", "cols": "n_cols", "bk": "k", "bl": "l", "signal": "signal", "noise": "noise"}


@pytest.mark.parametrize("limits,names,kind", [(GAUSSIAN_LIMITS, GAUSSIAN_NAMES, "gaussians"),
                                               (BLOCK_LIMITS, BLOCK_NAMES, "blocks")])
def test_picker_limits_are_inside_dpcore_limits(limits, names, kind):
    for mine, theirs in names.items():
        lo, hi = limits[mine]
        dlo, dhi = GENERATOR_LIMITS[kind][theirs]
        assert dlo <= lo <= hi <= dhi, mine


def test_picker_url_fields_read_the_labels_streamlit_writes_and_the_input_limits():
    fields = picker_url_fields("km_data", "points", "km")
    assert fields["km_data"]("Gaussian mixture") == "gaussians"
    assert fields["km_data"]("CLUTO classic3 (L2-normalised rows)") == "classic3"
    assert fields["km_data"]("current dataset (from the Data page): union of subspaces (n=1000)") == "current"
    with pytest.raises(ValueError):
        fields["km_data"]("gaussians")                       # the option, not its label: not what the URL holds
    assert fields["km_n"]("200000") == 200_000
    with pytest.raises(ValueError):
        fields["km_n"]("200001")
    with pytest.raises(ValueError):
        fields["km_sigma"]("inf")
    counts = picker_url_fields("cc_matrix", "counts", "cc")
    assert counts["cc_matrix"]("synthetic block matrix") == "blocks"
    assert set(counts) == {"cc_matrix", "cc_rows", "cc_cols", "cc_bk", "cc_bl", "cc_signal", "cc_noise"}


def _picker_app(bound):
    import streamlit as st

    from dpcore.data import PAPER_SPECS
    from ui.pickers import dataset_picker, picker_url_fields
    st.session_state.setdefault("km_data", "gaussians")
    fields = picker_url_fields("km_data", "points", "km") if bound else None
    spec = dataset_picker("km_data", "points", dict(PAPER_SPECS["fig2_middle"]), "help", "km", url_fields=fields)
    st.write(spec)


@pytest.mark.parametrize("bound", [True, False])
def test_only_listed_inputs_are_bound_to_the_url(bound):
    at = AppTest.from_function(_picker_app, args=(bound,), default_timeout=60)
    at.run()
    assert not at.exception
    keys = {w.proto.query_param_key for w in list(at.selectbox) + list(at.number_input)}
    expected = {"km_data", "km_n", "km_d", "km_comp", "km_sigma", "km_dseed"} if bound else {""}
    assert keys == expected
    n = by_key(at, "km_n")
    assert limits(at, "km_n") == GAUSSIAN_LIMITS["n"] and "10,000,000 cells" in n.help


def _follow_app():
    import streamlit as st

    from ui.pickers import follow_default
    if st.checkbox("show", True, key="show"):
        follow_default("x", st.session_state.get("default", 5))
        st.number_input("x", 0, 100, key="x")


def test_follow_default_resets_a_keyed_input_when_its_default_changes_or_it_is_drawn_anew():
    at = AppTest.from_function(_follow_app, default_timeout=60)
    at.run()
    assert by_key(at, "x").value == 5                          # drawn with its default
    by_key(at, "x").set_value(7)
    at.run()
    at.run()
    assert by_key(at, "x").value == 7                          # the user's value stays while the default does
    at.session_state["default"] = 9
    at.run()
    assert not at.exception and by_key(at, "x").value == 9     # a new default replaces it, as without a key
    by_key(at, "x").set_value(7)
    at.run()
    by_key(at, "show").uncheck()
    at.run()
    by_key(at, "show").check()
    at.run()
    assert by_key(at, "x").value == 9                          # drawn anew: its default again


def test_the_q_suggestion_answers_for_every_upload_of_points():
    """The Data page reads a q off every upload of points on every visit: with k-plane's k capped at n, and a
    reason instead of an exception (a 2-row upload used to raise "n_clusters must be … [1, 2]; got 3")."""
    from dpcore.upload import load_upload
    from ui.pickers import suggested_subspace_dim, suggestion_clusters
    for rows in (b"1,2\n3,4\n", b"1,2,3\n4,5,6\n7,8,10\n", b"0,0\n0,0\n1,1\n"):
        ds = load_upload("few.csv", rows)
        assert suggestion_clusters(ds) == min(3, ds.n)
        assert suggested_subspace_dim(ds) == 1
    one_column = load_upload("col.csv", b"1\n2\n3\n")
    assert suggested_subspace_dim(one_column).startswith("no q could be read off these data (X must be a 2-D array")
