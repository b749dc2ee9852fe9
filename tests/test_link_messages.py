"""A link's refusal cannot contradict itself (a classroom report: "'sulq' is not one of [… 'sulq']",
"'10' is not one of [… 10.0 …]"): values are compared as the widget shows them, and by value."""
import pytest

from ui.share import list_of, one_of

LABELS = {"sulq": "SuLQ k-plane (private)", "ssc": "SSC (not private)"}


def test_an_option_is_found_by_its_label_its_value_or_its_number():
    parse = one_of(LABELS, LABELS.get)
    assert parse("SuLQ k-plane (private)") == "sulq"
    assert parse("sulq") == "sulq"
    nums = one_of([0.1, 1.0, 10.0])
    assert nums("10") == 10.0 and nums("1e1") == 10.0 and nums("0.1") == 0.1
    assert list_of([1.0, 10.0])(["10", "1"]) == [10.0, 1.0]


@pytest.mark.parametrize("options, fmt, text", [(LABELS, LABELS.get, "lrr"), ([0.1, 1.0, 10.0], str, "100"),
                                                 ([True, False], str, "1")])
def test_a_refusal_lists_labels_and_never_the_text_it_refuses(options, fmt, text):
    with pytest.raises(ValueError) as e:
        one_of(options, fmt)(text)
    msg = str(e.value)
    listed = msg.split("choices:", 1)[1]
    assert all(repr(fmt(o)) in listed for o in options)
    assert repr(text) not in listed


# ----------------------------------------------------------------------------- messages in the words of the fields
def test_library_parameter_names_become_the_labels_of_their_fields():
    from ui.common import in_user_words
    assert in_user_words("n_clusters must be an integer in [1, 2]; got 3") == \
        "clusters k must be an integer in [1, 2]; got 3"
    assert in_user_words("subspace_dim must be < d") == "subspace dimension q must be < d"
    # a page's own labels win; whole words only, one pass (the label "clusters k" is not rewritten again)
    blocks = {"k": "row clusters", "n_rows": "rows", "n_cols": "columns"}
    assert in_user_words("n_rows × n_cols must be at most 10; k must be ≤ n_rows", blocks) == \
        "rows × columns must be at most 10; row clusters must be ≤ rows"
    assert in_user_words("k-plane's 'epsilon' option, n_clusters_ and epsilon(x)", {"k": "K"}) == \
        "k-plane's 'epsilon' option, n_clusters_ and epsilon(x)"


@pytest.mark.parametrize("key, value, words", [
    ("cl_q", 8, "subspace dimension q must be an integer in [1, 5]; got 8"),
    ("cl_k", 400, "clusters k must be an integer in [1, 300]; got 400"),
])
def test_the_cluster_page_names_the_field_not_the_estimators_parameter(key, value, words):
    """The Cluster page said "subspace_dim must be …" and "n_clusters must be …" (ui.common.run_guarded)."""
    from apptest_helpers import by_key, open_page, press
    small = {"kind": "subspaces", "n": 300, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}
    at = open_page("3_cluster.py", spec=small)
    by_key(at, key).set_value(value)
    press(at, "cluster_form")
    errors = [e.value for e in at.error]
    assert any(words in e for e in errors), errors
    assert not any("subspace_dim" in e or "n_clusters" in e for e in errors)


def test_the_data_page_names_its_fields():
    from apptest_helpers import by_key, open_page, press
    at = open_page("2_data.py")
    by_key(at, "data_kind").set_value("blocks")
    at.run()
    by_key(at, "data_blocks_n_rows").set_value(3)
    by_key(at, "data_blocks_k").set_value(5)
    press(at, "dataset_form")
    assert [e.value for e in at.error] == ["row clusters must be an integer in [1, 3]; got 5"]
