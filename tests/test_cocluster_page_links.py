"""The Co-clustering page's link limits (issue 16, item 7) and its words for students (item 9)."""
import json
import re

import pytest
from google.protobuf.json_format import MessageToDict

from apptest_helpers import by_key, limits, open_page, press
from ui.cocluster import EPS_MAX, EPS_MIN, MAX_CLUSTERS, MAX_ITER, MAX_RESTARTS
from ui.pickers import BLOCK_LIMITS

PAGE = "5_coclustering.py"


def number(at, key):
    return by_key(at, key)


def link_warnings(at):
    return [w.value for w in at.warning if w.value.startswith("Ignored link parameters")]


def test_huge_k0_from_a_link_is_refused_with_a_warning():
    at = open_page(PAGE, query={"cc_K0": "1e9"})
    warnings = link_warnings(at)
    assert len(warnings) == 1 and "cc_K0" in warnings[0]
    assert number(at, "cc_K0").value == 3           # the default (number of classes), not 10⁹
    assert "cc_K0" not in at.query_params


# every bound number input of the page: (key, largest value, smallest value, a step beyond)
LIMITS = [("cc_eps", EPS_MAX, EPS_MIN, 0.5), ("cc_iter", MAX_ITER, 1, 1), ("cc_K0", MAX_CLUSTERS, 2, 1),
          ("cc_L0", MAX_CLUSTERS, 2, 1), ("cc_ninit", MAX_RESTARTS, 1, 1)]


def test_the_limits_listed_here_are_the_widgets_limits():
    at = open_page(PAGE)
    bound = {getattr(w.proto, "query_param_key", ""): w for w in at.number_input}
    for key, hi, lo, _ in LIMITS:
        w = bound[key]                              # bound to the URL (bind="query-params")
        assert limits(at, key) == (lo, hi), key
    # and no other bound number input escaped this list (the seed is ui.seeds' widget and the block matrix's
    # inputs are ui.pickers', each with its own limits)
    others = {"cc_seed"} | {f"cc_{name}" for name in BLOCK_LIMITS}
    assert {k for k in bound if k} - {k for k, *_ in LIMITS} <= others


#: the quick loop checks a float and an int input (6 page runs each); the others run in the full suite
QUICK_LIMITS = ("cc_eps", "cc_K0")


@pytest.mark.parametrize("key,hi,lo,step", [l if l[0] in QUICK_LIMITS else pytest.param(*l, marks=pytest.mark.slow)
                                            for l in LIMITS])
def test_link_accepts_the_widgets_range_and_refuses_beyond(key, hi, lo, step):
    """The link parser and the widget use the same numbers: the largest and the smallest
    value the widget takes come through a link; one step beyond either is refused, named in
    a warning, and the widget keeps its default."""
    for good in (hi, lo):
        at = open_page(PAGE, query={key: str(good)})
        assert link_warnings(at) == [] and number(at, key).value == good
    for bad in (hi + step, lo - step, "nan", "-1e9"):
        at = open_page(PAGE, query={key: str(bad)})
        warnings = link_warnings(at)
        assert len(warnings) == 1 and key in warnings[0], (key, bad)
        assert lo <= number(at, key).value <= hi


INT_KEYS = [key for key, hi, *_ in LIMITS if isinstance(hi, int)]


@pytest.mark.parametrize("key", ["cc_eps"] + INT_KEYS)   # Streamlit alone would seed int(inf): OverflowError
def test_infinity_in_a_link_is_refused_without_a_traceback(key):
    at = open_page(PAGE, query={key: "inf"})        # open_page fails on an exception box
    warnings = link_warnings(at)
    assert len(warnings) == 1 and key in warnings[0]


def test_a_link_chooses_the_matrix_by_its_label():
    """The matrix selectbox is bound: the link carries its label, as Streamlit writes it."""
    at = open_page(PAGE, query={"cc_matrix": "CLUTO cstr"})
    assert link_warnings(at) == [] and by_key(at, "cc_matrix").value == "cstr"
    assert number(at, "cc_K0").value == 4           # the number of classes of cstr
    at = open_page(PAGE, query={"cc_matrix": "CLUTO nosuchset"})
    assert "cc_matrix" in link_warnings(at)[0]


# raw LaTeX a student should not read: τ̂, subscripts/superscripts in braces, backslash commands, $…$
RAW_LATEX = re.compile(r"τ̂|_\{|\^\{|\\[A-Za-z]+|\$")


def _leaves(node, out):
    children = getattr(node, "children", None)
    if children:
        for c in children.values():
            _leaves(c, out)
    else:
        out.append(node)
    return out


def _strings(value, out, skip=("hovertemplate", "texttemplate", "spec", "config", "id")):
    """Every string in a nested dict/list, leaving out template and id fields."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in skip:
                _strings(v, out, skip)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out, skip)
    elif isinstance(value, str):
        out.append(value)
    return out


def test_no_raw_latex_in_the_pages_texts_and_charts():
    at = open_page(PAGE, query={"cc_repro": "true", "cc_km": "true"})
    press(at, "cocluster_form")
    by_key(at, "cc_fig1_runs").set_value(20)
    press(at, "fig1_form")
    assert not at.error
    texts = []
    for leaf in _leaves(at._tree, []):
        proto = getattr(leaf, "proto", None)
        if proto is None:
            continue
        d = MessageToDict(proto)
        _strings(d, texts)
        if "spec" in d:                             # a plotly chart: its titles, axis titles, legend names
            _strings(json.loads(d["spec"]), texts)
    texts += [str(c) for d in at.dataframe for c in d.value.columns]
    assert len(texts) > 100                         # the walk did see the page
    assert any("τ (columns → rows)" in t for t in texts)
    bad = sorted({t for t in texts if RAW_LATEX.search(t)})
    assert bad == []


def test_the_largest_k0_a_link_may_carry_runs():
    """K0 = L0 = MAX_CLUSTERS must be something the machine can do: the blind start's block
    pattern once listed all 2^min(K0, L0) subsets (MemoryError from K0 = L0 = 30)."""
    import itertools

    from dpcore.cocluster.dptaucc import DPTauCC
    from dpcore.cocluster.taucc import _block_pattern
    from dpcore.data import PAPER_SPECS, load_dataset

    ds = load_dataset(**PAPER_SPECS["blocks"])
    dp = DPTauCC(n_row_clusters=MAX_CLUSTERS, n_col_clusters=MAX_CLUSTERS, n_iter=1, random_state=0).fit(ds.X)
    assert dp.T_.shape[0] <= MAX_CLUSTERS and dp.ledger_.total()[0] == pytest.approx(1.0)
    # the pattern is the one of the full list, taken lazily
    for K0, L0 in [(3, 7), (7, 3), (4, 4), (2, 9), (5, 40)]:
        small, large = min(K0, L0), max(K0, L0)
        extra = [v for w in range(2, small + 1) for v in itertools.combinations(range(small), w)]
        rows = [tuple(int(i == j) for j in range(small)) for i in range(small)]
        rows += [tuple(int(j in extra[e % len(extra)]) for j in range(small)) for e in range(large - small)]
        expected = rows if K0 >= L0 else [list(c) for c in zip(*rows)]
        assert _block_pattern(K0, L0).tolist() == [list(r) for r in expected]
