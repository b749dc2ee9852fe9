"""Odds words (dpcore.privacy.odds): the posterior bound e^ε·p/(e^ε·p + 1 − p) and the sentence that
says it, fuzzed with hypothesis (monotone in ε, in [prior, 1], never raising for any ε ≥ 0)."""
import math
import re

from hypothesis import given, settings, strategies as st
import pytest

from dpcore.privacy import odds_sentence, posterior_bound
from dpcore.privacy.odds import RELATION_QUESTIONS

EPS = st.floats(min_value=0.0, allow_nan=False)                 # includes inf and subnormals
PRIORS = st.floats(min_value=0.0, max_value=1.0)
DELTAS = st.floats(min_value=0.0, max_value=1.0)


# ----------------------------------------------------------------------------- the bound
def test_the_bound_is_bayes_with_odds_times_e_to_the_epsilon():
    assert posterior_bound(1.0) == pytest.approx(math.e / (1 + math.e), rel=1e-15)
    for eps in (0.01, 0.5, 2.0, 10.0):
        for p in (0.01, 0.2, 0.5, 0.9):
            b = posterior_bound(eps, p)
            odds = math.exp(eps) * p / (1 - p)                      # prior odds × e^ε
            assert b == pytest.approx(odds / (1 + odds), rel=1e-14)
            assert b / (1 - b) == pytest.approx(odds, rel=1e-14 / (1 - b))        # 1 − b loses digits near 1


def test_edges():
    assert posterior_bound(0.0, 0.3) == 0.3
    assert posterior_bound(math.inf) == 1.0 and posterior_bound(math.nan) == 1.0
    assert posterior_bound(5.0, prior=0.0) == 0.0 and posterior_bound(math.inf, prior=0.0) == 0.0
    assert posterior_bound(5.0, prior=1.0) == 1.0
    assert posterior_bound(1.0, delta=1e-6) == posterior_bound(1.0)        # δ: same bound, fails w.p. δ


@pytest.mark.parametrize("bad", [dict(epsilon=-0.1), dict(epsilon=1.0, prior=1.5), dict(epsilon=1.0, prior=-0.1),
                                 dict(epsilon=1.0, delta=2.0), dict(epsilon="1"), dict(epsilon=True),
                                 dict(epsilon=1.0, prior=math.nan), dict(epsilon=1.0, delta=math.nan)])
def test_bad_inputs_are_refused(bad):
    with pytest.raises(ValueError):
        posterior_bound(**bad)
    with pytest.raises(ValueError):
        odds_sentence(bad.pop("epsilon"), **({"delta": bad["delta"]} if "delta" in bad else {}),
                      **({"prior": bad["prior"]} if "prior" in bad else {}))


def test_an_unknown_relation_is_refused():
    with pytest.raises(ValueError, match="relation"):
        odds_sentence(1.0, relation="one row")


@settings(max_examples=500, deadline=None)
@given(EPS, EPS, PRIORS)
def test_the_bound_is_monotone_in_epsilon_and_between_prior_and_one(e1, e2, prior):
    lo, hi = sorted((e1, e2))
    b_lo, b_hi = posterior_bound(lo, prior), posterior_bound(hi, prior)
    assert prior <= b_lo <= b_hi <= 1.0


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0.0, max_value=30.0), st.floats(min_value=1e-6, max_value=1 - 1e-6))
def test_the_bound_matches_the_formula(eps, prior):
    expected = math.exp(eps) * prior / (math.exp(eps) * prior + 1 - prior)
    assert posterior_bound(eps, prior) == pytest.approx(expected, rel=1e-12)


# ----------------------------------------------------------------------------- the sentence
def test_the_issues_example():
    assert odds_sentence(1) == ("ε = 1: someone 50 % sure whether a person is in the data can become at most "
                                "73 % sure.")


def test_relation_words():
    assert "whether a person is in the data" in odds_sentence(1, relation="add_remove")
    assert "which of two possible records is a person's" in odds_sentence(1, relation="replace_one")
    assert "whether one count in the table is one higher" in odds_sentence(1, relation="cell_pm1")
    assert set(RELATION_QUESTIONS) == {"add_remove", "replace_one", "cell_pm1", None}


def test_delta_is_an_exception_with_probability_delta():
    s = odds_sentence(1.0, 1e-6)
    assert s.startswith("ε = 1, δ = 1e-06:") and s.endswith("at most 73 % sure, except with probability δ.")
    assert "no bound" in odds_sentence(1.0, 1.0)


@pytest.mark.parametrize("eps", [math.inf, math.nan])
def test_no_bound_is_said_in_words(eps):
    s = odds_sentence(eps)
    assert "no bound" in s and "nan" not in s and "%" in s and "at most" not in s


def test_tiny_and_huge_epsilons():
    assert "at most 50.025 %" in odds_sentence(1e-3)
    assert "at most 50.0025 %" in odds_sentence(1e-4)
    assert "less than 50.0001 %" in odds_sentence(1e-9)
    assert "cannot become any more sure" in odds_sentence(0.0)
    assert "at most 99.33 %" in odds_sentence(5.0)          # the doubt left (0.67 %) keeps two digits
    assert "more than 99.9 % sure" in odds_sentence(8.0)     # 99.966 %: not "100 %"
    assert "more than 99.9 % sure" in odds_sentence(14.0)    # 99.99992 %: still not "100 %"
    # 99.99997 %: past what the words can tell apart, and still never "certain" for a finite ε
    assert "more than 99.9999 % sure" in odds_sentence(15.0) and "no real protection" in odds_sentence(15.0)
    assert "more than 99.9999 % sure" in odds_sentence(1e300) and "certain" not in odds_sentence(1e300)


def test_other_priors():
    assert odds_sentence(1, prior=0.1) == ("ε = 1: someone 10 % sure whether a person is in the data can become "
                                           "at most 23 % sure.")
    assert "stays at 0 %" in odds_sentence(3.0, prior=0.0)


PCT = re.compile(r"(at most|less than) ([0-9.]+) % sure")


@settings(max_examples=500, deadline=None)
@given(EPS | st.just(math.nan), DELTAS, st.sampled_from(sorted(RELATION_QUESTIONS, key=str)),
       st.floats(min_value=1e-3, max_value=0.999))
def test_the_sentence_never_raises_and_never_says_100_for_less(eps, delta, relation, prior):
    s = odds_sentence(eps, delta, relation, prior=prior)
    assert isinstance(s, str) and s.endswith(".") and "nan" not in s
    assert RELATION_QUESTIONS[relation] in s
    if math.isfinite(eps) and delta < 1.0:
        b = posterior_bound(eps, prior)
        if "100 %" in s:
            assert 1 - b < 5e-7                       # only when it rounds to 100.0000 %
        m = PCT.search(s)
        if m and m.group(1) == "at most":
            shown = float(m.group(2))
            decimals = len(m.group(2).split(".")[1]) if "." in m.group(2) else 0
            assert abs(shown - 100 * b) <= 0.5 * 10 ** -decimals + 1e-9     # rounded to the nearest
            assert 100 * prior < shown < 100
        if m and m.group(1) == "less than":
            assert 100 * b < float(m.group(2))
        if "more than 99.9 %" in s:
            assert b > 0.999
