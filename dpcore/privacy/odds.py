"""What an ε means, in odds: how sure an attacker can become (pure Python, no Streamlit).

An ε-DP release multiplies anyone's odds on a yes/no question about one person by at most e^ε
(Bayes: posterior odds = likelihood ratio × prior odds, and ε-DP bounds every likelihood ratio of
two neighbours by e^ε). So someone who starts p sure can end at most

    e^ε·p / (e^ε·p + 1 − p)

sure (:func:`posterior_bound`; ε = 1 from 50 % gives 73.1 %). Nanayakkara et al. (USENIX
Security 2023) found that explanations in these terms — odds, a prior and a posterior — were the
ones people understood best; :func:`odds_sentence` writes one such sentence for a guarantee.

The question is the neighbouring relation's: add/remove — whether a person is in the data;
replace-one — which of two possible records is a person's (n is public, so presence is not the
question); one cell ±1 — whether one count in the table is one higher.

With δ > 0 the bound holds "except with probability δ", in this precise sense: an (ε, δ)-DP
release reveals no more than one that, with probability δ, may reveal everything and otherwise is
ε-DP (every (ε, δ)-DP pair of output distributions is a post-processing of that mechanism:
Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016). It is not a bound on the
probability that the observed odds move by more than e^ε (for a Gaussian that probability can be
a few times δ).
"""
from __future__ import annotations

import math
from numbers import Real

__all__ = ["posterior_bound", "odds_sentence", "RELATION_QUESTIONS"]

#: the yes/no question a guarantee protects, per neighbouring relation (None: add/remove's words)
RELATION_QUESTIONS = {
    "add_remove": "whether a person is in the data",
    "replace_one": "which of two possible records is a person's",
    "cell_pm1": "whether one count in the table is one higher",
    None: "whether a person is in the data",
}
#: finest percentage shown: a bound closer than half of this to the prior or to 100 % is said in words
_MAX_DECIMALS = 4


def _check_prior(prior):
    if isinstance(prior, bool) or not isinstance(prior, Real) or not (0.0 <= float(prior) <= 1.0):
        raise ValueError(f"prior must be a number in [0, 1]; got {prior!r}")
    return float(prior)


def _check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, Real) or not (0.0 <= float(delta) <= 1.0):
        raise ValueError(f"delta must be a number in [0, 1]; got {delta!r}")
    return float(delta)


def _check_epsilon(epsilon):
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real):
        raise ValueError(f"epsilon must be a number >= 0 (inf and nan allowed: no bound); got {epsilon!r}")
    e = float(epsilon)
    if e < 0.0:
        raise ValueError(f"epsilon must be >= 0; got {epsilon!r}")
    return e


def posterior_bound(epsilon, prior=0.5, delta=0.0):
    """The largest posterior an attacker starting at ``prior`` can reach from an ε-DP release:
    e^ε·p / (e^ε·p + 1 − p).

    Parameters
    ----------
    epsilon : float ≥ 0
        inf or nan: no bound (1, or 0 for a prior of 0: Bayes cannot move a certainty).
    prior : float in [0, 1], default 0.5
        The attacker's belief before the release.
    delta : float in [0, 1], default 0
        The guarantee's δ: the bound is the same and holds except with probability δ (in the
        sense of the module's docstring); only checked here.

    Returns
    -------
    float
        In [prior, 1], non-decreasing in ε; exactly ``prior`` at ε = 0.

    Raises
    ------
    ValueError
        If ``epsilon`` is negative or not a number type, or ``prior`` / ``delta`` is not in [0, 1].

    Examples
    --------
    >>> round(posterior_bound(1.0), 4)
    0.7311
    >>> posterior_bound(0.0, prior=0.2)
    0.2
    """
    e = _check_epsilon(epsilon)
    p = _check_prior(prior)
    _check_delta(delta)
    if p in (0.0, 1.0) or e == 0.0:
        return p
    if not math.isfinite(e):         # inf, or nan (no guarantee): no bound
        return 1.0
    z = e + (math.log(p) - math.log1p(-p))          # log posterior odds
    b = 1.0 / (1.0 + math.exp(-z)) if z >= 0.0 else math.exp(z) / (1.0 + math.exp(z))
    return min(1.0, max(p, b))


def _trim(x, decimals):
    s = f"{x:.{decimals}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def _prior_words(p):
    pct = 100.0 * p
    for d in range(0, _MAX_DECIMALS + 1):
        if abs(round(pct, d) - pct) < 1e-9 * max(1.0, pct):
            return _trim(pct, d) + " %"
    return _trim(pct, _MAX_DECIMALS) + " %"


def _bound_words(b, p):
    """How sure, in words: "at most 73 %", "more than 99.9 %", "100 %", "less than 50.0001 %"."""
    b_pct, p_pct = 100.0 * b, 100.0 * p
    if b >= 1.0 or 100.0 - b_pct < 0.5 * 10.0 ** -_MAX_DECIMALS:     # a finite ε never makes anyone certain
        return f"more than {_trim(100.0 - 10.0 ** -_MAX_DECIMALS, _MAX_DECIMALS)} % sure: no real protection"
    if 100.0 - b_pct < 0.05:
        return "more than 99.9 % sure: almost no protection"
    # two significant digits of both the gain over the prior and the doubt left (73 %, 99.33 %, 52.5 %)
    first = min(max(_two_digits(b_pct - p_pct), _two_digits(100.0 - b_pct)), _MAX_DECIMALS)
    for d in range(first, _MAX_DECIMALS + 1):
        v = round(b_pct, d)
        if v > round(p_pct, d) and v < 100.0:
            return f"at most {_trim(v, d)} % sure"
    return f"less than {_trim(p_pct + 10.0 ** -_MAX_DECIMALS, _MAX_DECIMALS)} % sure"


def _two_digits(x):
    """Decimals that show two significant digits of x > 0 (0 for x ≥ 10)."""
    return max(0, 1 - math.floor(math.log10(x))) if x > 0.0 else _MAX_DECIMALS


def _num(x):
    return f"{x:.3g}"


def odds_sentence(epsilon, delta=0.0, relation=None, *, prior=0.5):
    """One sentence saying what a guarantee means in odds (Nanayakkara et al., USENIX Security
    2023: odds-based explanations were understood best).

    E.g. ``odds_sentence(1)``: "ε = 1: someone 50 % sure whether a person is in the data can
    become at most 73 % sure."

    Parameters
    ----------
    epsilon : float ≥ 0
        inf or nan: a sentence saying there is no bound.
    delta : float in [0, 1], default 0
        > 0: "…, except with probability δ" (the module docstring says in what sense); 1: no bound.
    relation : {"add_remove", "replace_one", "cell_pm1"} or None, default None
        The question protected (:data:`RELATION_QUESTIONS`; None: add/remove's).
    prior : float in [0, 1], keyword, default 0.5

    Returns
    -------
    str
        Percentages are rounded to the nearest with as many decimals (up to 4) as it takes to
        differ from the prior; a bound that would round to 100 % at one decimal is "more than
        99.9 %" and one within 0.00005 % of 100 % (or exactly 1 in floating point) is "more
        than 99.9999 %" (a finite ε never makes anyone certain); one within 0.00005 % of the
        prior is "less than p + 0.0001 %".

    Raises
    ------
    ValueError
        If ``epsilon`` is negative, ``delta`` or ``prior`` is not in [0, 1], or ``relation`` is
        unknown.

    Examples
    --------
    >>> odds_sentence(1.0)
    'ε = 1: someone 50 % sure whether a person is in the data can become at most 73 % sure.'
    """
    e = _check_epsilon(epsilon)
    d = _check_delta(delta)
    p = _check_prior(prior)
    if relation not in RELATION_QUESTIONS:
        raise ValueError(f"relation must be one of {', '.join(k for k in RELATION_QUESTIONS if k)} or None; "
                         f"got {relation!r}")
    who = f"someone {_prior_words(p)} sure {RELATION_QUESTIONS[relation]}"
    eps_words = "ε = ∞" if e == math.inf else ("ε is not a number" if math.isnan(e) else f"ε = {_num(e)}")
    if d > 0.0:
        eps_words += f", δ = {_num(d)}"
    if not math.isfinite(e) or d >= 1.0:
        return f"{eps_words}: no bound — {who} may become certain."
    if p in (0.0, 1.0):
        return f"{eps_words}: {who} stays at {_prior_words(p)}: no release moves a certainty."
    tail = ", except with probability δ" if d > 0.0 else ""
    if e == 0.0:
        return f"{eps_words}: {who} cannot become any more sure{tail}."
    b = posterior_bound(e, p)
    return f"{eps_words}: {who} can become {_bound_words(b, p)}{tail}."
