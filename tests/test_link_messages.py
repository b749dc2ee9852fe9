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
