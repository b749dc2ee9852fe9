"""The Home page's "A lesson in eight steps", walked in order in one browser session as a
lecturer would: each step's page, its named preset, its main action(s).

On every screen (after each page switch, preset and action): no exception box or st.error (a
page's own "Not private." warning aside), every chart drawn, and no privacy contradiction
(:func:`stdriver.privacy_contradictions`: a box that lists a release as private while another
block says nothing on the page is private, or one box that lists a release both as private and
as not private). After some runs the privacy box must list what the run made private (or not),
so that the checker is known to read the page's boxes. Presets are found by a part of their
name, buttons by their text, so that the pages' wording may change around them.

The walk runs the presets' actions as the lesson says, except the Gibbs *k-plane start* (the
paper's Fig. 3: 4 ε × 8 chains × 1,000 sweeps), which it runs at 100 sweeps: the privacy box
does not depend on the number of sweeps. The longest action left is step 8's Fig. 2 sweep (up to
a minute on 2 idle cores). The seconds of each screen are printed (``-s``), for information.

Run alone: ``python -m pytest -q -p no:cacheprovider -n 0 tests/browser/test_lesson_path.py``.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable

import pytest

import stdriver as sd

pytestmark = pytest.mark.browser


# ----------------------------------------------------------------------------- the checker, on made-up texts
BOX_PRIVATE = ("Private (differentially private releases): the centres released by each of the 4 runs of Candidate "
               "set, one release per ε; the candidate set and the chosen candidates in the projected space\n\n"
               "memory Exact as executed: every Gaussian release is rounded to a public grid.\n\n"
               "Not private: the points drawn and their colours (the raw data and its true classes, shown to teach); "
               "k-means++ and its centres (the non-private reference)")
BOX_LEAK = ("Not private: the centres released by each private method (Candidate set, SuLQ k-means) and the candidate "
            "set — Λ was read off the data; the objectives and ratios (computed from the raw data)\n\n"
            "⚠️ Λ = max ‖x‖ was read off the data: NOTHING on this page is private for this run, "
            "whatever ε says")


@pytest.mark.parametrize("texts", [
    [BOX_PRIVATE],
    [BOX_LEAK],
    [BOX_PRIVATE, "Λ was computed from the data (max ‖x‖): none of these runs is differentially private."],
    ["Private (differentially private releases): nothing (see the ledger)\n\nNot private: the labels",
     "Nothing was kept: press the button again."],
    ["**Private (differentially private releases):** the released subspaces of each ε panel (one release per panel, "
     "4 in all)\n\n**Not private:** the colours: raw points assigned to each panel's subspaces; the last panel: the "
     "non-private solver on the raw data"],
    ["Not private: anything this page would show: Λ is read off the data and NOTHING a run releases is private, "
     "whatever ε says\n\n⚠️ press Run to cluster"],
    ["Private ε spent on this dataset: 3", "The sample is private only once the chain has mixed."],
    [BOX_PRIVATE, "Not private: everything this run shows: the non-private reference solvers on the raw data"],
], ids=["private-box", "leak-box", "scoped-warning", "private-nothing", "markdown-box", "idle-leak", "no-box",
        "scoped-everything"])
def test_checker_passes_consistent_screens(texts):
    assert sd.privacy_contradictions(texts) == []


@pytest.mark.parametrize("texts, words", [
    ([BOX_PRIVATE, BOX_LEAK], "NOTHING on this page is private"),          # the k-means page after lesson step 7
    ([BOX_PRIVATE + "\n\n⚠️ Nothing on this page is private: the radius was read off the data."],
     "Nothing on this"),
    ([BOX_PRIVATE, "Careful: nothing shown here is differentially private."], "nothing shown here"),
    ([BOX_PRIVATE, "Not private: anything this page would show: NOTHING a run releases is private"], "a run releases"),
    (["Private (differentially private releases): the released subspaces (3 of them)\n\nNot private: the released "
      "subspaces — their noise came from a public seed; the colours"], "as not private"),
    (["**Private:** the centres released by each private method (candidate)\n\n**Not private:** the centres "
      "released by each private method (candidate) and the candidate set — Λ was read off the data"],
     "as not private"),
    (BOX_PRIVATE + "\n" + BOX_LEAK, "NOTHING on this page"),                 # one flat page text
    (["Not private: everything on this page: these are the non-private reference solvers; the labels",
      "Private (differentially private releases): the released subspaces of each ε panel (2 in all)"],
     "everything on this page"),                                           # the Cluster page: k-plane over Compare ε
    (["Private (differentially private releases): the released sample of each ε run; the meter counts only the "
      "mixed runs: ε = 10, 100 listed there as not private\n\nNot private: the traces"], "under Private"),
], ids=["step-7", "same-box", "here", "idle-box-beside", "both-lists", "both-lists-extended", "flat-text",
        "everything-on-this-page", "taken-back"])
def test_checker_flags_contradictions(texts, words):
    found = sd.privacy_contradictions(texts)
    assert found and any(words in f for f in found), found


def test_checker_parts():
    private, not_private = sd.privacy_boxes(BOX_PRIVATE)
    assert len(private) == 2 and private[0].startswith("the centres released by each of the 4 runs")
    assert len(not_private) == 2 and not_private[1].startswith("k-means++ and its centres")
    assert sd.nothing_private_statements(BOX_LEAK) == [
        "⚠️ Λ = max ‖x‖ was read off the data: NOTHING on this page is private for this run, whatever ε says"]
    assert sd.nothing_private_statements("none of them is private; nothing was spent.") == []


# ----------------------------------------------------------------------------- the lesson
@dataclass
class Step:
    """One screen-changing thing a lecturer does: go to ``nav`` (a sidebar title), or choose the
    preset matching ``preset``, or press ``button`` (text or compiled pattern), then ``after``."""
    what: str
    nav: str | None = None
    preset: str | None = None
    button: str | re.Pattern | None = None
    after: Callable | None = None
    timeout: int = sd.ACTION_TIMEOUT
    expect: str | None = None       # "private" / "not private": a privacy box must list such a release
    seconds: float = field(default=0.0, init=False)


def _loaded(page):
    """The Data page ends a load with st.rerun(); its success message says the load is done."""
    page.locator(f"{sd.MAIN} [data-testid='stAlertContentSuccess']").first.wait_for(
        state="visible", timeout=sd.ACTION_TIMEOUT)


def _fewer_sweeps(page):
    """The Fig. 3 preset's 1,000 sweeps made 100 (the privacy box does not depend on them)."""
    if sd.widget(page, "stNumberInput", "sweeps per chain (n_iter)").count():
        sd.set_number(page, "sweeps per chain (n_iter)", 100)     # inside the form: no run
        page.wait_for_timeout(300)


def _button(text):
    return re.compile(text)


LESSON = [
    # 1. Home: opened first (the fixture's URL)
    Step("2 Data", nav="Data"),
    Step("2 Data: Three lines in R³", preset=r"Three lines in R"),
    Step("2 Data: load", button="Generate / load", after=_loaded),
    Step("3 Cluster", nav="Cluster"),
    Step("3 Cluster: k-plane on the lines", preset=r"Three lines.*k-plane"),
    Step("3 Cluster: Run (not private)", button="Run", expect="not private"),
    Step("3 Cluster: a private method", preset=r"Three lines.*\(private\)"),
    Step("3 Cluster: Run (private)", button="Run", expect="private"),
    Step("3 Cluster: Compare ε", button=_button(r"^\s*Compare ε\s*$")),
    Step("4 Gibbs", nav="Gibbs"),
    Step("4 Gibbs: Quick look", preset=r"Quick look"),
    Step("4 Gibbs: Run chains", button="Run chains"),
    Step("4 Gibbs: from the k-plane start", preset=r"k-plane start", after=_fewer_sweeps),
    Step("4 Gibbs: Run chains (k-plane start, 100 sweeps)", button="Run chains"),
    Step("5 Audit", nav="Audit"),
    Step("5 Audit: Gibbs start leak", preset=r"^Gibbs start leak(?! fades)"),
    Step("5 Audit: Run audit", button="Run audit"),
    Step("6 Co-clustering", nav="Co-clustering"),
    Step("6 Co-clustering: Figure 1 example", button=_button(r"^\s*Simulate DP")),
    Step("6 Co-clustering: Synthetic blocks", preset=r"Synthetic blocks"),
    Step("6 Co-clustering: Run", button="Run"),
    Step("7 k-means", nav="k-means"),
    Step("7 k-means: The leaking radius", preset=r"leaking radius"),
    Step("7 k-means: Run", button="Run", expect="not private"),
    Step("7 k-means: ε side by side", preset=r"^ε side by side"),
    Step("7 k-means: Compare ε values side by side", button=_button(r"^\s*Compare ε.*side by side\s*$"),
         expect="private"),
    Step("8 Privacy–utility", nav="Privacy–utility"),
    Step("8 Privacy–utility: Paper Fig. 2 middle", preset=r"Fig\. 2 middle"),
    Step("8 Privacy–utility: Run sweep", button="Run sweep", timeout=2 * sd.ACTION_TIMEOUT),
]


def screen_failures(page, where) -> list[str]:
    """Everything wrong on the screen now: exceptions and st.error boxes (except a page's own
    "Not private." warning, :data:`stdriver.INTENDED_ERRORS`), charts not drawn, privacy
    contradictions; each prefixed with ``where``."""
    out = [f"{where}: {p}" for p in sd.screen_problems(page)]
    n, missing = sd.charts_status(page)
    if missing:
        out.append(f"{where}: plotly chart(s) {missing} of {n} not drawn")
    out += [f"{where}: privacy contradiction: {c}" for c in sd.privacy_contradictions(sd.screen_texts(page))]
    return out


def test_lesson_in_eight_steps(app_url, page):
    """Walk the lesson; every screen is checked and every failure is reported at the end (the
    walk goes on after a failed check, so one run shows them all)."""
    sd.open_page(page, app_url + "/")
    assert "lesson in eight steps" in page.locator(sd.MAIN).inner_text().lower()
    failures = screen_failures(page, "1 Home")
    for step in LESSON:
        if step.nav:
            step.seconds = sd.navigate(page, step.nav)
        elif step.preset:
            t = time.perf_counter()
            chosen = sd.choose_preset(page, step.preset, timeout=step.timeout)
            step.seconds = time.perf_counter() - t
            assert re.search(step.preset, sd.selectbox_value(page, "Preset"), re.I), chosen
        else:
            step.seconds = sd.press_timed(page, step.button, timeout=step.timeout)
        if step.after:
            step.after(page)
        failures += screen_failures(page, step.what)
        if step.expect:     # the checker reads the page's boxes (else it would pass whatever they say)
            listed = [sd.privacy_boxes(t)[step.expect == "not private"] for t in sd.screen_texts(page)]
            if not any(listed):
                failures.append(f"{step.what}: no privacy box lists a release as {step.expect}")
    print("\nlesson path, seconds per screen (click until drawn):")
    for step in LESSON:
        print(f"  {step.what:55s} {step.seconds:7.1f}")
    assert not failures, "\n".join(failures)
