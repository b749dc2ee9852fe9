"""The k-means page shows one truth at a time (AppTest): the lesson path's steps "The leaking
radius" + Run, then "ε side by side" + Compare, then another dataset. On every screen no box
says that nothing on the page is private while another box states a private release, the
older result is marked as an earlier one, the box shown before any run is gone once a result
is on screen, and a result computed on another dataset than the one chosen says so."""
import re
import sys
from pathlib import Path

import pytest

from apptest_helpers import by_key, open_page, press

sys.path.insert(0, str(Path(__file__).parent / "browser"))
import stdriver as sd  # noqa: E402  (the browser tests' privacy checker; it imports no browser)
from dpcore.kmeans.common import DataDerivedRadiusWarning
from ui.kmeans import PRESETS

LEAK = "The leaking radius (Λ read off the data)"
SIDE = next(label for label in PRESETS if label.startswith("ε side by side"))
G64 = next(label for label in PRESETS if label.startswith("64 Gaussians"))
FORM = "kmeans_form"
#: the two submit buttons, by their labels (``press`` picks a form's button by label)
RUN, SIDE_BY_SIDE = "Run", "Compare ε values side by side"

#: a statement about the whole page (or screen) rather than about one run
WHOLE_PAGE = re.compile(r"nothing\b[^.;\n]*\b(on|in) this (page|screen)", re.IGNORECASE)
OTHER_DATASET = "computed on another dataset"
IDLE = "press Run to cluster"


def boxes(at):
    """The privacy boxes on screen (ui.common.privacy_statement draws each as one st.info)."""
    return [i.value for i in at.info if "Private" in i.value or "Not private" in i.value]


def private_lines(box):
    """The non-empty "Private" statements of one box."""
    return [line for line in box.split("\n\n") if line.startswith("**Private") and line.split(":**", 1)[-1].strip()]


def screen_text(at):
    return [e.value for group in (at.info, at.warning, at.markdown, at.caption, at.subheader) for e in group]


def assert_one_truth(at, step):
    """No screen both states a private release and says nothing on the page is private."""
    private = [line for box in boxes(at) for line in private_lines(box)]
    whole_page = [t for t in screen_text(at) if WHOLE_PAGE.search(t)]
    assert not (private and whole_page), f"{step}: private {private} beside {whole_page}"
    assert sd.privacy_contradictions(screen_text(at)) == [], step     # the lesson-path test's checker too


def choose_preset(at, label):
    by_key(at, "kmeans_preset").set_value(label)
    at.run()
    assert not at.exception, at.exception


def headings(at):
    return [s.value for s in at.subheader]


def test_leaking_radius_then_side_by_side_then_another_dataset():
    at = open_page("6_kmeans.py")
    assert_one_truth(at, "opened")
    choose_preset(at, LEAK)
    assert_one_truth(at, "leaking preset chosen")
    with pytest.warns(DataDerivedRadiusWarning):
        press(at, FORM, RUN)
    assert_one_truth(at, "leaking radius, Run")
    assert len(boxes(at)) == 1 and not private_lines(boxes(at)[0])
    assert not any(IDLE in b for b in boxes(at))                  # no "before any run" box beside a result

    choose_preset(at, SIDE)
    assert_one_truth(at, "side-by-side preset chosen")
    press(at, FORM, SIDE_BY_SIDE)
    assert_one_truth(at, "side by side, Compare")
    series_box, comparison_box = boxes(at)                         # newest first, each result its own box
    assert private_lines(series_box) and not private_lines(comparison_box)
    assert "read off the data" in comparison_box
    assert not any(IDLE in b for b in boxes(at))
    # the older result is marked as earlier, after the newest, and says what it was and that it was not private
    titles = headings(at)
    earlier = [i for i, t in enumerate(titles) if t.startswith("Earlier result")]
    assert len(earlier) == 1 and earlier[0] > 0, titles
    assert "not private" in titles[earlier[0]] and "side by side" not in titles[earlier[0]], titles
    assert not any(OTHER_DATASET in w.value for w in at.warning)   # both on the dataset now chosen

    # another dataset chosen: both results are flagged, before and after a run on the new data
    choose_preset(at, G64)
    assert_one_truth(at, "64-Gaussians preset chosen")
    assert sum(OTHER_DATASET in w.value for w in at.warning) == 2
    by_key(at, "km_methods").set_value(["candidate_kmeans"])        # one method: the run stays short
    press(at, FORM, RUN)
    assert_one_truth(at, "64 Gaussians, Run")
    flagged = [w.value for w in at.warning if OTHER_DATASET in w.value]
    assert len(flagged) == 1 and "n=5000" in flagged[0], flagged   # the 8-Gaussian side by side, now earlier
    titles = headings(at)
    earlier = [t for t in titles if t.startswith("Earlier result")]
    assert len(earlier) == 1 and "side by side" in earlier[0] and "not private" not in earlier[0], titles
    assert len([b for b in boxes(at) if private_lines(b)]) == 2    # two private results, each its own box


def test_box_before_any_run_speaks_of_a_run_not_of_the_page():
    at = open_page("6_kmeans.py", query={"km_leak": "true"})
    (box,) = boxes(at)
    assert not private_lines(box) and "NOTHING" in box
    assert "this page" not in box and sd.nothing_private_statements(box) == []     # a run's releases, not the page
