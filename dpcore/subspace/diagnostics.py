"""MCMC mixing diagnostics for the Gibbs sampler of §4 (and any scalar traces).

Why they matter here: the Gibbs sampler is ε-DP only if its output is an (essentially)
exact draw of eq. (10). A chain that has not mixed releases a sample whose distribution
still depends on where it started and on the data in uncontrolled ways, so "has it mixed?"
is part of the privacy story. No finite diagnostic can *prove* mixing; these flag the
chains that clearly have not.

- :func:`split_rhat` - split-R̂ of Gelman et al. (BDA3, §11.4): each chain is cut in two
  halves and the between/within variances of the 2C half-chains are compared; values near
  1 mean the half-chains look alike. ``method="rank"`` gives the rank-normalised, folded
  version of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021).
- :func:`effective_sample_size` - the multi-chain ESS of Stan / Vehtari et al. (2021):
  autocorrelations by FFT, combined across (split) chains, truncated by Geyer's initial
  monotone positive sequence.
- :func:`section5_statistic_trace` - the §5 statistic (1/√(kq))·(Σ_ℓ ‖(1/T)Σ_t U_ℓ^(t)‖²_F)^(1/2).
  Its mean is 0 under eq. (10) because a basis and its column sign flips are equally
  likely. Caveat worth teaching: both Hoff's coordinate step (random sign s) and the exact
  column draw flip column signs at random every sweep, so the statistic decays like
  ≈ 1/√T even when the subspaces themselves are stuck; it is a necessary check, not a
  sufficient one, which is why the verdict looks at R̂ and ESS of the cost and d_W.
- :func:`mixing_verdict` - a plain-words verdict with the rule it applies.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from ..validation import check_int, check_real

__all__ = ["split_rhat", "effective_sample_size", "section5_statistic_trace", "diagnostics_table",
           "mixing_verdict", "frozen_chains", "RHAT_THRESHOLD", "MIN_ESS", "MONITORED", "FROZEN_RTOL"]

RHAT_THRESHOLD = 1.1   # BDA3's classic threshold (Vehtari et al. 2021 advise 1.01 for final inference)
MIN_ESS = 100          # at least 100 effective draws (Vehtari et al. 2021: 100 per chain for 4 chains is ample)
MONITORED = ("cost", "dw")
#: a chain whose cost trace moves by at most this × its size after burn-in has not moved: the
#: partition is the same at every sweep and only the jitter of the nearly fixed subspaces is left
#: (measured: 3.5e-12 at ε = 10¹², n = 300; it shrinks as 1/ε). One point changing cluster
#: moves the cost by its change of residual ÷ n, far more unless the point sits on an intersection.
FROZEN_RTOL = 1e-9
TRACE_NAMES = {"cost": "k-means cost (eq. 3)", "dw": "d_W to the truth", "statistic": "§5 test statistic",
               "accuracy": "accuracy of z", "moves": "points that changed cluster per sweep"}


def _as_chains(chains, burn_in=0):
    x = np.asarray(chains, dtype=np.float64)
    if x.ndim == 1:
        x = x[None]
    if x.ndim != 2:
        raise ValueError(f"chains must be an array (n_chains, n_draws); got shape {x.shape}")
    burn_in = check_int(burn_in, "burn_in", 0, max(x.shape[1] - 4, 0))
    x = x[:, burn_in:]
    if x.shape[1] < 4:
        raise ValueError(f"need at least 4 draws per chain after burn-in; got {x.shape[1]}")
    if not np.all(np.isfinite(x)):
        raise ValueError("chains must contain only finite values")
    return x


def _split(x):
    n = x.shape[1] // 2
    return np.concatenate([x[:, :n], x[:, x.shape[1] - n:]], axis=0)


def _rhat_basic(x):
    """R̂ of already-split chains x (M, N)."""
    M, N = x.shape
    means = x.mean(axis=1)
    W = x.var(axis=1, ddof=1).mean()
    B = N * means.var(ddof=1)
    if W <= 0:
        return 1.0 if B <= 0 else math.inf
    var_plus = (N - 1) / N * W + B / N
    return float(math.sqrt(var_plus / W))


def _rank_normalise(x):
    r = stats.rankdata(x, method="average").reshape(x.shape)
    return special.ndtri((r - 0.375) / (x.size + 0.25))


def split_rhat(chains, burn_in=0, method="classic"):
    """Split-R̂ of scalar traces ``chains`` (n_chains, n_draws) after dropping ``burn_in``.

    ``method="classic"`` (BDA3) or ``"rank"`` (Vehtari et al. 2021: the max of the
    rank-normalised bulk R̂ and the folded tail R̂). One chain is allowed (its two halves
    are compared). Constant traces give 1.0 (or inf if the chains are constant at
    different values).

    Parameters
    ----------
    chains : array_like, shape (n_chains, n_draws) or (n_draws,)
        Scalar traces (a 1-D array is one chain); must be finite.
    burn_in : int, default=0
        Draws dropped from the start of every chain, 0 ≤ burn_in ≤ max(n_draws − 4, 0);
        at least 4 draws must remain.
    method : {"classic", "rank"}, default="classic"
        Classic split-R̂ (BDA3) or the rank-normalised, folded version.

    Returns
    -------
    float
        Split-R̂ (≥ 1 up to rounding; inf for chains constant at different values).

    Raises
    ------
    ValueError
        If ``chains`` is not 1-D/2-D or not finite, ``burn_in`` is out of range, fewer than
        4 draws remain, or ``method`` is unknown.
    """
    x = _as_chains(chains, burn_in)
    if method == "classic":
        return _rhat_basic(_split(x))
    if method == "rank":
        bulk = _rhat_basic(_split(_rank_normalise(x)))
        folded = np.abs(x - np.median(x))
        tail = _rhat_basic(_split(_rank_normalise(folded)))
        return max(bulk, tail)
    raise ValueError(f"method must be 'classic' or 'rank'; got {method!r}")


def _autocov(x):
    """Autocovariances (biased, lag 0..N-1) of every row of x (M, N), by FFT."""
    M, N = x.shape
    xc = x - x.mean(axis=1, keepdims=True)
    nfft = 1 << (2 * N - 1).bit_length()
    f = np.fft.rfft(xc, n=nfft, axis=1)
    ac = np.fft.irfft(f * np.conj(f), n=nfft, axis=1)[:, :N]
    return ac / N


def effective_sample_size(chains, burn_in=0):
    """Multi-chain effective sample size of scalar traces (n_chains, n_draws).

    Stan's estimator on split chains, Geyer's initial monotone sequence. Returns a float in
    (0, C·N·log10(C·N)]; nan for constant traces.

    Parameters
    ----------
    chains : array_like, shape (n_chains, n_draws) or (n_draws,)
        Scalar traces (a 1-D array is one chain); must be finite.
    burn_in : int, default=0
        Draws dropped from the start of every chain, 0 ≤ burn_in ≤ max(n_draws − 4, 0);
        at least 4 draws must remain.

    Returns
    -------
    float
        The effective sample size, in (0, C·N·log10(C·N)]; nan for constant traces.

    Raises
    ------
    ValueError
        If ``chains`` is not 1-D/2-D or not finite, ``burn_in`` is out of range, or fewer
        than 4 draws remain.
    """
    x = _split(_as_chains(chains, burn_in))
    M, N = x.shape
    acov = _autocov(x)
    chain_var = acov[:, 0] * N / (N - 1.0)
    mean_var = chain_var.mean()
    var_plus = mean_var * (N - 1.0) / N + (x.mean(axis=1).var(ddof=1) if M > 1 else 0.0)
    if var_plus <= 0:
        return math.nan
    rho = 1.0 - (mean_var - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    # Geyer: sums of adjacent pairs P_t = ρ_2t + ρ_2t+1, kept while positive, made monotone
    n_pairs = (N - 1) // 2
    P = rho[0:2 * n_pairs:2] + rho[1:2 * n_pairs + 1:2]
    pos = P > 0
    stop = n_pairs if pos.all() else int(np.argmin(pos))
    P = np.minimum.accumulate(P[:stop]) if stop > 0 else P[:0]
    tau = -1.0 + 2.0 * P.sum()
    tau = max(tau, 1.0 / math.log10(max(M * N, 10)))
    return float(M * N / tau)


def section5_statistic_trace(U_samples):
    """The §5 statistic after every sample of one chain.

    For samples (T, k, d, q) of one chain, entry t is
    (1/√(kq))·(Σ_ℓ ‖(1/t)Σ_{s≤t} U_ℓ^(s)‖²_F)^(1/2). Under exact sampling with random
    column signs it is about 1/√t.

    Parameters
    ----------
    U_samples : array_like, shape (T, k, d, q)
        The T samples of the k orthonormal bases of one chain.

    Returns
    -------
    ndarray of float64, shape (T,)
        The statistic after samples 1, …, T.

    Raises
    ------
    ValueError
        If ``U_samples`` is not 4-D.
    """
    U = np.asarray(U_samples, dtype=np.float64)
    if U.ndim != 4:
        raise ValueError(f"U_samples must have shape (T, k, d, q); got {U.shape}")
    T, k, d, q = U.shape
    S = np.cumsum(U, axis=0)
    return np.sqrt(np.einsum("tkdq,tkdq->t", S, S)) / (np.arange(1, T + 1) * math.sqrt(k * q))


def diagnostics_table(traces, burn_in=0, names=None, method="classic"):
    """One row per trace: name, split-R̂, ESS, post-burn-in mean and sd (list of dicts).

    ``traces`` is a dict name -> (n_chains, n_draws), e.g. ``GibbsSubspaceClustering.traces_``.
    The §5 statistic is a running mean (autocorrelated by construction), so it is listed
    without R̂/ESS and with its value at the end and the 1/√T reference instead.

    Parameters
    ----------
    traces : dict of str to array_like, each of shape (n_chains, n_draws)
        The traces by name (``"cost"``, ``"dw"``, ``"statistic"``, ``"accuracy"`` or any
        other).
    burn_in : int, default=0
        Draws dropped from the start of every chain. A trace with fewer than 4 draws left is
        listed with nan R̂/ESS and a note instead of being diagnosed.
    names : sequence of str, optional
        The traces to list, in this order (names not in ``traces`` are skipped); default all.
    method : {"classic", "rank"}, default="classic"
        Passed to :func:`split_rhat`.

    Returns
    -------
    list of dict
        One dict per trace with keys ``trace``, ``description``, ``split_rhat``, ``ess``,
        ``mean``, ``sd`` and ``note`` (empty unless the row is not diagnosed).

    Raises
    ------
    ValueError
        From :func:`split_rhat` / :func:`effective_sample_size` on non-finite traces or an
        unknown ``method``.
    """
    rows = []
    for name in (names or traces.keys()):
        if name not in traces:
            continue
        x = np.asarray(traces[name], dtype=np.float64)
        if name == "statistic":
            T = x.shape[1]
            rows.append({"trace": name, "description": TRACE_NAMES.get(name, name), "split_rhat": math.nan,
                         "ess": math.nan, "mean": float(x[:, -1].mean()), "sd": float(x[:, -1].std()),
                         "note": f"final value; ≈ 1/√T = {1 / math.sqrt(T):.3g} expected under exact sampling"})
            continue
        post = x[:, burn_in:]
        if name == "moves":            # a count, not a sample of the target: how much the chains move
            rows.append({"trace": name, "description": TRACE_NAMES[name], "split_rhat": math.nan, "ess": math.nan,
                         "mean": float(post.mean()) if post.size else math.nan,
                         "sd": float(post.std()) if post.size else math.nan,
                         "note": "a count of moves, not diagnosed by R̂/ESS"})
            continue
        if post.shape[1] < 4:  # too short to compare halves: reported, never called mixed
            rows.append({"trace": name, "description": TRACE_NAMES.get(name, name), "split_rhat": math.nan,
                         "ess": math.nan, "mean": float(post.mean()) if post.size else math.nan,
                         "sd": float(post.std()) if post.size else math.nan,
                         "note": "too few sweeps after burn-in (need at least 4)"})
            continue
        rows.append({"trace": name, "description": TRACE_NAMES.get(name, name),
                     "split_rhat": split_rhat(x, burn_in, method), "ess": effective_sample_size(x, burn_in),
                     "mean": float(post.mean()), "sd": float(post.std()), "note": ""})
    return rows


def frozen_chains(traces, burn_in=0, rtol=FROZEN_RTOL):
    """Did any chain move after burn-in?

    A chain is *frozen* when no point changed cluster after ``burn_in``: counted by the
    ``"moves"`` trace when present; otherwise (traces without it) when the k-means cost trace is
    constant up to ``rtol`` relative (a heuristic: the cost also jitters with the subspace draws,
    and a point on an intersection of subspaces could change cluster unseen). Frozen chains sit in
    the *same state* when their final costs differ by no more than that jitter. At a very large ε eq. (10) is nearly a point mass and
    the sampler becomes a greedy search; R̂ and ESS then measure only floating-point jitter (an
    ESS above the number of draws is typical), so they cannot judge mixing.

    Parameters
    ----------
    traces : dict of str to array_like, each of shape (n_chains, n_draws)
        The traces by name; needs ``"cost"``, uses ``"moves"`` when present.
    burn_in : int, default=0
        Draws dropped from the start of every chain.
    rtol : float, default=FROZEN_RTOL
        Relative range of the cost below which a chain has not moved.

    Returns
    -------
    dict
        ``frozen`` (bool array, one per chain), ``all_frozen`` (bool) and ``same_state`` (bool:
        every frozen chain sits at the same cost, up to ``rtol``).

    Raises
    ------
    ValueError
        If ``traces`` has no ``"cost"`` trace.
    """
    if "cost" not in traces:
        raise ValueError("traces must contain the k-means cost trace 'cost'")
    x = np.asarray(traces["cost"], dtype=np.float64)[:, burn_in:]
    if x.shape[1] < 2:
        return {"frozen": np.zeros(x.shape[0], bool), "all_frozen": False, "same_state": False}
    scale = np.maximum(np.abs(x).max(axis=1), np.finfo(float).tiny)
    if "moves" in traces:      # counted: a chain is frozen when no point changed cluster
        frozen = ~np.asarray(traces["moves"], dtype=np.float64)[:, burn_in:].any(axis=1)
        # the cost of a frozen chain still jitters with its subspace draws: chains sit in the same
        # partition when their costs differ by no more than that jitter
        tol = max(rtol * float(scale.max()), float(np.ptp(x[frozen], axis=1).max()) if frozen.any() else 0.0)
    else:                      # traces without counts (e.g. shipped ones): the cost did not move
        frozen = np.ptp(x, axis=1) <= rtol * scale
        tol = None
    ends = x[frozen, -1]
    if tol is None:
        tol = rtol * max(float(np.abs(ends).max()), np.finfo(float).tiny) if ends.size else 0.0
    same = bool(frozen.any() and np.ptp(ends) <= tol)
    return {"frozen": frozen, "all_frozen": bool(frozen.all()), "same_state": same}


def mixing_verdict(traces, burn_in=0, rhat_threshold=RHAT_THRESHOLD, min_ess=MIN_ESS, monitored=MONITORED,
                   method="classic"):
    """Plain-words verdict "mixed" / "not yet" on the monitored traces.

    Rule: the chains are called *mixed* when every monitored trace present (default: the
    k-means cost and, when the truth is known, d_W) has split-R̂ < ``rhat_threshold``
    (1.1) AND an effective sample size ≥ ``min_ess`` (100) over the draws after
    ``burn_in``, and at least one chain moved (:func:`frozen_chains`: with a cost trace, a
    chain whose partition never changes after burn-in has not moved; R̂ and ESS of its jitter
    mean nothing). Returns a dict with ``mixed`` (bool), ``frozen`` (bool: no chain moved),
    ``text`` (one sentence per failed check, or a success sentence), ``rule`` (the rule in
    words) and ``rows`` (the table).

    Parameters
    ----------
    traces : dict of str to array_like, each of shape (n_chains, n_draws)
        The traces by name, e.g. ``GibbsSubspaceClustering.traces_``.
    burn_in : int, default=0
        Draws discarded from the start of every chain.
    rhat_threshold : float, default=RHAT_THRESHOLD (1.1)
        Split-R̂ must be below it; must be > 1.
    min_ess : float, default=MIN_ESS (100)
        Minimum effective sample size; must be ≥ 0.
    monitored : sequence of str, default=MONITORED (("cost", "dw"))
        The traces the rule looks at (those present in ``traces``).
    method : {"classic", "rank"}, default="classic"
        Passed to :func:`split_rhat`.

    Returns
    -------
    dict
        ``mixed`` (bool), ``frozen`` (bool), ``text`` (str), ``rule`` (str) and ``rows`` (the
        list of dicts of :func:`diagnostics_table`).

    Raises
    ------
    ValueError
        If ``rhat_threshold`` ≤ 1, ``min_ess`` < 0, no monitored trace is in ``traces``, or
        a trace is not finite.
    """
    rhat_threshold = check_real(rhat_threshold, "rhat_threshold", 1.0, None, low_inclusive=False)
    min_ess = check_real(min_ess, "min_ess", 0.0, None)
    names = [m for m in monitored if m in traces]
    if not names:
        raise ValueError(f"traces must contain at least one of {', '.join(monitored)}")
    rows = diagnostics_table(traces, burn_in, names, method)
    n_chains, n_draws = np.asarray(traces[names[0]]).shape
    rule = (f"Mixed if, after discarding the first {burn_in} of {n_draws} sweeps, every monitored trace "
            f"({', '.join(TRACE_NAMES.get(n, n) for n in names)}) has split-R̂ < {rhat_threshold:g} "
            f"and an effective sample size ≥ {min_ess:g}, and some chain moved (its partition changed).")
    moved = frozen_chains(traces, burn_in) if "cost" in traces else {"all_frozen": False}
    if moved["all_frozen"]:
        same = moved["same_state"]
        who = "The chain" if n_chains == 1 else f"None of the {n_chains} chains"
        text = (f"Not judged: the chains did not move. {who} changed any point's cluster after the first "
                f"{burn_in} sweeps, so R̂ and the effective sample size measure only the jitter of nearly fixed subspaces. At this ε "
                "the posterior is nearly one point and the sampler is a greedy search: "
                + ("every chain stopped at the same partition (it may still be a local optimum)." if same else
                   "the chains stopped at different partitions, so they disagree.")
                + " Lower ε, or start the chains apart, to see the sampler explore.")
        return {"mixed": False, "frozen": True, "text": text, "rule": rule, "rows": rows}
    problems = []
    for r in rows:
        label = TRACE_NAMES.get(r["trace"], r["trace"])
        if r["note"]:
            problems.append(f"{label}: {r['note']}.")
            continue
        if not (r["split_rhat"] < rhat_threshold):
            problems.append(f"{label}: split-R̂ = {r['split_rhat']:.3g} ≥ {rhat_threshold:g} - the chains (or the two "
                            "halves of a chain) disagree, so they are still exploring different regions.")
        if not (r["ess"] >= min_ess):
            problems.append(f"{label}: only {r['ess']:.0f} effective draws (< {min_ess:g}) - the samples are too "
                            "correlated to trust averages.")
    mixed = not problems
    if mixed:
        who = "the two halves of the single chain agree" if n_chains == 1 else f"the {n_chains} chains agree"
        text = (f"Mixed (by this rule): {who} on "
                f"{' and '.join(TRACE_NAMES.get(n, n) for n in names)}. This cannot prove convergence, but "
                "nothing indicates that the released sample is far from eq. (10).")
    else:
        text = "Not yet mixed: " + " ".join(problems) + " Run longer or change the start before trusting the privacy guarantee."
    return {"mixed": mixed, "frozen": False, "text": text, "rule": rule, "rows": rows}
