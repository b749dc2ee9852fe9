"""The subspace clustering paper's figures (Wang, Wang & Singh 2015): Fig. 1 (why k-means subspace
solutions are unstable: points on a circle), Fig. 2 (privacy–utility on synthetic subspaces and
Yale B) and Fig. 3 (the Gibbs sampler's mixing).

Every check carries the paper's words (``paper=``, with the section) beside ours; the markdown of
the paper has no page numbers, so locations are sections, figures and equations."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ...data import PAPER_SPECS, load_dataset
from ...subspace.common import single_threaded
from ..methods import get_method, preset, run_seed
from ..sweeps import Sweep
from .common import Panel, _check, _median_at, _medians, _trend_check, half_decades, load_dataset_name

#: Fig. 1: the paper's evenly spaced points on the unit circle (24: one every 15°), and for contrast two
#: well-separated lines of R² (data seed 6: lines 83° apart; σ = 0.005 so that they meet Def. 3.2)
_CIRCLE = {**PAPER_SPECS["circle"], "n": 24}
_LINES2 = {**PAPER_SPECS["lines_r2"], "n": 24}
_SUB_LEFT = {"kind": "subspaces", "n": 5000, "d": 5, "k": 3, "q": 3, "sigma": 0.01, "random_state": 0}
_SUB_MIDDLE = PAPER_SPECS["fig2_middle"]
_YALEB = PAPER_SPECS["yaleb_5"]

#: every number each figure uses, per level (the table of docs/reproduce.md)
SETTINGS = {
    "subspace-fig1": {
        "full": dict(circle=_CIRCLE, lines=_LINES2, shown=[5.0, 20.0, 35.0], sizes=[24, 96], step=0.25, n_sub=1000,
                     trials=20),
        "quick": dict(circle=_CIRCLE, lines=_LINES2, shown=[5.0, 20.0, 35.0], sizes=[24, 96], step=1.0, n_sub=1000,
                      trials=5),
        "tiny": dict(circle=_CIRCLE, lines=_LINES2, shown=[5.0, 35.0], sizes=[24, 96], step=15.0, n_sub=200, trials=1),
    },
    "subspace-fig2": {
        "full": dict(epsilons=half_decades(-1, 3), trials=5, random_draws=200,
                     d_scaling=dict(dataset=_SUB_LEFT, ds=[5, 10, 20], epsilon=10.0, trials=5, gibbs_iter=10_000,
                                    random_draws=200),
                     panels={"left": dict(dataset=_SUB_LEFT, gibbs_iter=10_000, ssc=True),
                             "middle": dict(dataset=_SUB_MIDDLE, gibbs_iter=10_000, ssc=True),
                             "yaleb": dict(dataset=_YALEB, gibbs_iter=10_000, ssc=True)}),
        "quick": dict(epsilons=[0.1, 1.0, 10.0, 100.0, 1000.0], trials=3, random_draws=200,
                      d_scaling=dict(dataset=_SUB_LEFT, ds=[5, 10, 20], epsilon=10.0, trials=3, gibbs_iter=200,
                                     random_draws=200),
                      panels={"left": dict(dataset=_SUB_LEFT, gibbs_iter=200, ssc=False),
                              "middle": dict(dataset=_SUB_MIDDLE, gibbs_iter=200, ssc=True),
                              "yaleb": dict(dataset=_YALEB, gibbs_iter=100, ssc=True, gibbs_kplane=False)}),
        "tiny": dict(epsilons=[1.0, 1000.0], trials=1, random_draws=20,
                     d_scaling=dict(dataset={**_SUB_LEFT, "n": 400}, ds=[5, 10], epsilon=10.0, trials=1, gibbs_iter=10,
                                    random_draws=20),
                     panels={"left": dict(dataset={**_SUB_LEFT, "n": 400}, gibbs_iter=10, ssc=False),
                             "middle": dict(dataset={**_SUB_MIDDLE, "n": 300}, gibbs_iter=10, ssc=False),
                             "yaleb": dict(dataset={**_YALEB, "n_per_subject": 12}, gibbs_iter=5, ssc=False)}),
    },
    "subspace-fig3": {
        "full": dict(dataset=_SUB_MIDDLE, epsilons=[0.1, 1.0, 10.0, 100.0], n_iter=10_000, n_chains=8,
                     inits=["random", "kplane"]),
        "quick": dict(dataset=_SUB_MIDDLE, epsilons=[0.1, 1.0, 10.0, 100.0], n_iter=500, n_chains=8,
                      inits=["random", "kplane"]),
        "tiny": dict(dataset={**_SUB_MIDDLE, "n": 200}, epsilons=[1.0, 100.0], n_iter=20, n_chains=2,
                     inits=["random"]),
    },
}


# ============================================================================ subspace Fig. 1
def best_two_lines(X):
    """The optimal k-means subspace clustering of points in R² with k = 2 lines (q = 1), exactly.

    Two lines through 0 split the directions (angles mod 180°) into two arcs, so an optimal
    clustering is a pair of arcs of the points sorted by angle: all O(n²) of them are tried, each
    cluster fitted by its top eigenvector (the red lines of Fig. 1, "optimal solutions").

    Parameters
    ----------
    X : array_like of shape (n, 2)
        The points (n ≥ 1).

    Returns
    -------
    U : ndarray of shape (2, 2, 1)
        Orthonormal bases of the two lines.
    cost : float
        Their eq. (3) cost, (1/n) Σᵢ minⱼ d²(xᵢ, Sⱼ).

    Raises
    ------
    ValueError
        If X is not a finite (n, 2) array with n ≥ 1.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2 or len(X) < 1 or not np.isfinite(X).all():
        raise ValueError(f"X must be a finite (n, 2) array with n >= 1; got shape {X.shape}")
    n = len(X)
    order = np.argsort(np.mod(np.arctan2(X[:, 1], X[:, 0]), np.pi), kind="stable")
    Xs = X[order]
    moments = np.vstack([np.zeros(3), np.cumsum(np.column_stack([Xs[:, 0] ** 2, Xs[:, 0] * Xs[:, 1], Xs[:, 1] ** 2]),
                                                axis=0)])
    i, j = np.triu_indices(n + 1, 1)               # one cluster = sorted points i..j-1, the other the rest
    A = moments[j] - moments[i]
    B = moments[-1] - A

    def smallest_eig(M):                           # of [[a, b], [b, c]]: the squared distances to the best line
        a, b, c = M[:, 0], M[:, 1], M[:, 2]
        return (a + c) / 2 - np.sqrt(((a - c) / 2) ** 2 + b ** 2)
    cost = smallest_eig(A) + smallest_eig(B)
    best = int(np.argmin(cost))
    inside = np.zeros(n, dtype=bool)
    inside[order[i[best]:j[best]]] = True
    U = np.zeros((2, 2, 1))
    for ell, part in enumerate((inside, ~inside)):
        if part.any():
            U[ell, :, 0] = np.linalg.eigh(X[part].T @ X[part])[1][:, -1]
        else:                                      # every point on one line: the other is free (any line)
            U[ell, :, 0] = [-U[0, 1, 0], U[0, 0, 0]] if ell else [1.0, 0.0]
    return U, float(max(cost[best], 0.0) / n)


def line_angles(U):
    """The directions of lines in R² as angles in degrees in [0, 180): shape (..., k)."""
    U = np.asarray(U)
    return np.degrees(np.mod(np.arctan2(U[..., 1, 0], U[..., 0, 0]), np.pi))


def two_line_dw(a, b):
    """d_W (eq. 2) between pairs of lines of R² given by their angles in degrees.

    For two lines at angles α and β, d = ‖UUᵀ − VVᵀ‖_F = √2 |sin(α − β)|; the pairs are
    matched both ways and the better matching kept.

    Parameters
    ----------
    a, b : array_like of shape (..., 2)
        Angles (degrees) of the two lines of each set; broadcast against each other.

    Returns
    -------
    ndarray of shape (...)
    """
    a, b = np.radians(np.asarray(a, dtype=float)), np.radians(np.asarray(b, dtype=float))
    s2 = lambda x, y: 2.0 * np.sin(x - y) ** 2          # noqa: E731
    same = s2(a[..., 0], b[..., 0]) + s2(a[..., 1], b[..., 1])
    swap = s2(a[..., 0], b[..., 1]) + s2(a[..., 1], b[..., 0])
    return np.sqrt(np.minimum(same, swap))


def _with_point(X, angle):
    t = np.radians(angle)
    return np.vstack([X, [np.cos(t), np.sin(t)]])


def well_separation_phi2(X):
    """φ² of Def. 3.2's first condition for k = 2 lines: Δ₂²(X) / Δ₁²(X), the optimal cost with two
    lines over that with one (Lemma 3.3 needs φ² < 1/1602)."""
    X = np.asarray(X, dtype=float)
    one = float(np.linalg.eigvalsh(X.T @ X)[0]) / len(X)
    return best_two_lines(X)[1] / one


def r_three_quarters(angles):
    """The smallest r of eq. (5) among the subsets' own solutions: min over solutions c of the
    distance d_W within which ≥ 3/4 of all solutions (c included) lie.

    Parameters
    ----------
    angles : array_like of shape (m, 2)
        The two lines' angles (degrees) of each subset's solution.

    Returns
    -------
    float
    """
    a = np.asarray(angles, dtype=float)
    D = two_line_dw(a[:, None, :], a[None, :, :])
    need = math.ceil(0.75 * len(a))
    return float(np.sort(D, axis=1)[:, need - 1].min())


def _rows_2d(data, case, X, U, added=None, **extra):
    rows = [{"data": data, "case": case, "role": "point", "x": x, "y": y, **extra} for x, y in X]
    if added is not None:
        rows.append({"data": data, "case": case, "role": "added", "x": added[0], "y": added[1], **extra})
    rows += [{"data": data, "case": case, "role": "line", "x": u[0, 0], "y": u[1, 0], **extra} for u in U]
    return rows


#: the column of Fig. 1's sensitivity panel
_MOVED = "d_W to the optimum with the point at 0°"
_FIG1_CAPTION = ('§3.1, Fig. 1 caption: "Illustration of instability of k-means subspace clustering solutions '
                 '(d = 2, k = 2, q = 1). Blue dots represent evenly spaced data points on the unit circle; blue '
                 'crosses indicate an additional data point. Red lines are optimal solutions."')


def _subspace_fig1(level, R):
    from ...defaults import default_n_subsets
    from ...privacy.sample_aggregate import draw_subsets
    S = SETTINGS["subspace-fig1"][level]
    names = {"circle": "points on a circle", "lines": "two well-separated lines"}
    base = {key: load_dataset(**S[key]).X for key in names}
    n_solved = 0
    # -- panel 1, the paper's picture: one added point at a few places, the optimal lines each time
    rows = []
    for key, X in base.items():
        for a in S["shown"]:
            Xa = _with_point(X, a)
            U, cost = best_two_lines(Xa)
            n_solved += 1
            rows += _rows_2d(f"{names[key]} (n = {len(X)})", f"one more point at {a:g}°", X, U, Xa[-1], added_angle=a,
                            cost=cost)
    pic = pd.DataFrame(rows)
    lines = pic[pic["role"] == "line"]
    table = lines.assign(angle=line_angles(lines[["x", "y"]].to_numpy()[:, :, None]).round(1)).groupby(
        ["data", "case"], sort=False)["angle"].agg(lambda v: ", ".join(f"{x:g}°" for x in sorted(v))).unstack("case")
    title = "Fig. 1: the optimal two lines (red) with one more point (×) here or there"
    panels = [Panel("neighbours", pic, {"kind": "lines2d", "row": "data", "col": "case", "title": title}, table, title,
                    caption="Directions of the optimal lines (degrees):")]
    # -- panel 2, the sensitivity: where the one added point goes against how far the optimum moves, at two n
    grid = np.arange(0.0, 180.0, S["step"])
    sens, worst = [], {}
    for key in names:
        for n in S["sizes"]:
            X = load_dataset(**{**S[key], "n": n}).X
            ang = np.array([line_angles(best_two_lines(_with_point(X, a))[0]) for a in grid])
            n_solved += len(grid)
            worst[key, n] = float(two_line_dw(ang[:, None, :], ang[None, :, :]).max())
            sens += [{"data": f"{names[key]}, n = {n}", "added_angle": a, _MOVED: v}
                     for a, v in zip(grid, two_line_dw(ang, ang[0]))]
    sens = pd.DataFrame(sens)
    title = "Fig. 1, measured: how far the optimal lines move when the one added point moves"
    panels.append(Panel("sensitivity", sens, {"kind": "curves", "x": "added_angle", "metrics": [_MOVED],
                                              "group": "data", "title": title, "log_y": False,
                                              "x_title": "angle of the added point (degrees)"},
                        sens.groupby("data", sort=False)[_MOVED].describe()[["min", "50%", "max"]], title,
                        caption="d_W to the optimum with the point at 0°, over the added point's angles:"))
    # -- panel 3, sample-aggregate's subsets (Alg. 1 step 3): the optimum on each subset
    big = {"circle": {**S["circle"], "n": S["n_sub"]}, "lines": {**S["lines"], "n": S["n_sub"]}}
    m = default_n_subsets(S["n_sub"], 2, 1)
    sub_rows, stab = [], []
    for key, spec in big.items():
        X = load_dataset(**spec).X
        phi2 = well_separation_phi2(X)
        n_solved += 1
        for t in range(S["trials"]):
            rng = np.random.default_rng(run_seed(R.seed, f"fig1 subsets {key}", math.nan, t))
            subsets, _ = draw_subsets(len(X), m, rng)
            sols = [best_two_lines(X[idx])[0] for idx in subsets]
            n_solved += len(sols)
            ang = line_angles(np.stack(sols))
            pair = two_line_dw(ang[:, None, :], ang[None, :, :])
            stab.append({"data": names[key], "trial": t, "n": len(X), "m": m, "subset_size": subsets.shape[1],
                         "r_3_4": r_three_quarters(ang), "phi2": phi2,
                         "median_pairwise_d_W": float(np.median(pair[np.triu_indices(m, 1)]))})
            if t == 0:
                sub_rows += _rows_2d(names[key], names[key], X, np.concatenate(sols))
    sub = pd.DataFrame(sub_rows)
    stab = pd.DataFrame(stab)
    title = (f"Sample-aggregate on {S['n_sub']} points: the optimal lines of each of m = {m} random subsets of "
             f"{S['n_sub'] // m} points")
    panels.append(Panel("subsets", sub, {"kind": "lines2d", "col": "data", "title": title, "line_opacity": 0.35}, 
                        stab.groupby("data", sort=False)[["r_3_4", "median_pairwise_d_W", "phi2"]].median(), title,
                        caption="Medians over the draws of subsets: r of eq. (5) (¾ of the subsets' solutions within "
                                "d_W ≤ r of one of them), the median d_W between two subsets' solutions, and φ²:"))
    R.n_runs += n_solved
    # -- checks
    circ, lin = names["circle"], names["lines"]
    r = stab.groupby("data")["r_3_4"].median()
    phi = stab.groupby("data")["phi2"].first()
    checks = [
        _check(f"Global sensitivity O(1): with one more point moved around the circle, the optimal two lines of n "
               f"evenly spaced circle points move by d_W ≥ 1 at worst (our threshold: half the largest d_W two pairs "
               f"of lines can have, 2) at every n = {', '.join(map(str, S['sizes']))}; those of two well-separated "
               f"lines move less and less as n grows (at n = {max(S['sizes'])}: ≤ 0.1, ours)",
               all(worst["circle", n] >= 1.0 for n in S["sizes"]) and worst["lines", max(S["sizes"])] <= 0.1
               and worst["lines", max(S["sizes"])] < worst["lines", min(S["sizes"])],
               "largest d_W between the optima of two neighbouring datasets (the added point at two of "
               f"{len(grid)} angles, every {S['step']:g}°): " + "; ".join(
                   f"{names[key]}: " + ", ".join(f"{worst[key, n]:.3g} (n = {n})" for n in S["sizes"])
                   for key in names),
               paper='§3.1: "Figure 1 shows that the global sensitivity of k-means subspace clustering could be as '
                     'high as O(1), which ruins the algorithm utility." ' + _FIG1_CAPTION),
        _check(f"Unstable on subsets: on {S['n_sub']} circle points the optimal lines of m = {m} random subsets "
               "disagree (eq. (5)'s r, ¾ of the subsets' solutions within d_W ≤ r of one of them, ≥ 0.5: our "
               "threshold), on two well-separated lines they agree (r ≤ 0.1, ours)", r[circ] >= 0.5 and r[lin] <= 0.1,
               f"median r over {S['trials']} draws of subsets: circle {r[circ]:.3f}, two lines {r[lin]:.4f} "
               f"(×{r[circ] / max(r[lin], 1e-12):.0f}); Thm 3.1's noise is O(r/ε)",
               paper='§3.2: "The example given in Figure 1 also suggests that identifiability issue arises when the '
                     'input data X itself cannot be well clustered. For example, no two straight lines could well '
                     'approximate data uniformly distributed on a circle." Thm 3.1 (§3.1): the noise is O(r/ε) when '
                     'eq. (5) Pr[d_M(f(X_S), c) ≤ r] ≥ 3/4 holds.'),
        _check("The first condition of well-separation (Def. 3.2, φ² < 1/1602 of Lemma 3.3; ψ > η is not tested) "
               "fails on the circle and holds on the two lines: φ² = Δ₂²/Δ₁² (the optimal cost with two lines over "
               "one line) ≥ 1/1602 on the circle, < 1/1602 on the lines",
               phi[circ] >= 1 / 1602 and phi[lin] < 1 / 1602,
               f"φ²: circle {phi[circ]:.3f}, two lines {phi[lin]:.2e}; 1/1602 = {1 / 1602:.2e} (n = {S['n_sub']})",
               paper='§3.2, after Fig. 1: "To circumvent the above-mentioned difficulty, we impose the following '
                     'well-separation condition"; Lemma 3.3: "Assume X is (φ, η, ψ)-well separated with φ² < 1/1602, '
                     'ψ > η".'),
    ]
    return panels, checks, {"stability.csv": stab}


# ============================================================================ subspace Fig. 2
#: the paper's words on Fig. 2 (§5)
_FIG2_SA = ('§5: "As shown in the plots, sample-aggregation algorithms have poor utility unless the privacy parameter '
            'ε is truly large (which means very little privacy protection)."')
_FIG2_GOOD = ('§5: "On the other hand, both Gibbs sampling and SuLQ subspace clustering give reasonably good '
              'performance."')
_FIG2_NO_CLAIM = ('Fig. 2 caption (§5): "Utility under fixed privacy budget ε" — the figure plots d_W against ε; the '
                  'text makes no claim about this method on this panel (ours: read off the figure)')
_FIG2_YALEB = ('§5, on the right two plots of Fig. 2 (Yale B): "The plots show that Gibbs sampling significantly '
               'outperforms the other algorithms."')
_FIG2_D = ('§5: "Figure 2 also shows that SuLQ scales poorly with the ambient dimension d. This is because SuLQ '
           'subspace clustering requires calibrating noise to a d × d sample covariance matrix, which induces much '
           'error when d is large. Gibbs sampling seems to be robust to various d settings."')
#: a median at most this share of random subspaces' median d_W is "better than random" (our threshold)
RANDOM_MARGIN = 0.9
#: one-sided Mann–Whitney comparisons hold at p ≤ this (ours; 0.05 is the smallest p with 3 runs a side)
ALPHA = 0.05


def random_reference(dataset, metric, k, q, n_draws, seed):
    """The ``metric`` and the cost of random subspaces on ``dataset``: the level a method that
    releases noise only reaches (a reference line of Fig. 2).

    Each draw is k subspaces uniform on the Grassmannian (:func:`dpcore.data.random_subspaces`),
    scored by the sweeps' own metric functions (:data:`dpcore.lab.sweeps.METRICS`).

    Parameters
    ----------
    dataset : dict
        Dataset spec.
    metric : {"d_W", "d_W_class"}
        The panel's distance to the truth.
    k, q : int
        Subspaces and their dimension.
    n_draws : int
        Number of random draws (≥ 1).
    seed : int
        Master seed (the draws' seed is derived from it).

    Returns
    -------
    dict
        ``metric`` (ndarray of the n_draws distances) and ``cost`` (ndarray of their costs).
    """
    from types import SimpleNamespace
    from ...data import random_subspaces
    from ..sweeps import METRICS
    ds = load_dataset(**dataset)
    rng = np.random.default_rng(run_seed(seed, "random subspaces", math.nan, 0))
    draws = [SimpleNamespace(subspaces_=random_subspaces(k, ds.d, q, rng)) for _ in range(int(n_draws))]
    return {metric: np.array([METRICS[metric][0](ds, e) for e in draws]),
            "cost": np.array([METRICS["cost"][0](ds, e) for e in draws])}


def _beyond_random_check(df, alg, metric, pname, random_median, paper):
    """The trend check of ``alg`` plus: at the largest ε its median is at most RANDOM_MARGIN × the
    median of random subspaces (a fall that ends at the random level is no improvement)."""
    c = _trend_check(df, alg, metric, pname)
    eps_max = float(df.loc[df["algorithm"] == alg, "epsilon"].max())
    last = _median_at(df, alg, eps_max, metric)
    beyond = last <= RANDOM_MARGIN * random_median
    return _check(f"{pname}: the {metric} of {alg} falls with ε (Kendall τ < 0 with one-sided p < 0.05, last median "
                  f"below the first) to at most {RANDOM_MARGIN:g} × random subspaces' median at the largest ε (our "
                  "thresholds)", c["ok"] and beyond,
                  c["detail"] + f"; random subspaces' median {random_median:.3g}, at ε = {eps_max:g} "
                                f"{last / random_median:.0%} of it", paper)


def _mann_whitney_below(df, alg, others, eps, metric):
    """Largest one-sided Mann–Whitney p of ``alg`` below each of ``others`` at ``eps``."""
    at = df[np.isclose(df["epsilon"], eps)]
    mine = at[at["algorithm"] == alg][metric]
    return max(stats.mannwhitneyu(mine, at[at["algorithm"] == a][metric], alternative="less").pvalue for a in others)


def _fig2_algorithms(P, ds_kind):
    algs = [preset("SuLQ-10"), preset("SuLQ-50")]
    if ds_kind == "subspaces":  # Yale B: n = 320 allows ≤ 6 subsets of k(q + 1) = 50 points: Alg. 1's
        # rule "no point in more than √m subsets" is never met
        algs += [preset("s.a. TSC"), preset("s.a. SSC")]
    algs.append({"name": "gibbs", "label": "Gibbs", "params": {"n_iter": P["gibbs_iter"], "init": "random"}})
    if P.get("gibbs_kplane", True):
        algs.append({"name": "gibbs", "label": "Gibbs, k-plane start (not private)",
                     "params": {"n_iter": P["gibbs_iter"], "init": "kplane"}})
    algs.append(preset("k-plane"))
    if P["ssc"]:
        algs.append(preset("SSC"))
    return algs


def _subspace_fig2(level, R):
    S = SETTINGS["subspace-fig2"][level]
    panels, checks = [], []
    for pname, P in S["panels"].items():
        ds_kind = P["dataset"]["kind"]
        dw = "d_W" if ds_kind == "subspaces" else "d_W_class"
        algs = _fig2_algorithms(P, ds_kind)
        sweep = Sweep(dataset=P["dataset"], algorithms=algs, epsilons=S["epsilons"], trials=S["trials"],
                      metrics=["cost", dw], seed=R.seed)
        df = R.sweep("subspace-fig2", pname, sweep)
        spec = load_dataset(**P["dataset"])
        k, q = int(spec.n_classes), int(spec.subspaces.shape[2]) if spec.subspaces is not None else 9
        ref = random_reference(P["dataset"], dw, k, q, S["random_draws"], R.seed)
        rand = float(np.median(ref[dw]))
        title = f"Subspace clustering, Fig. 2 ({pname}): {load_dataset_name(P['dataset'])}"
        reference = {dw: {"y": rand, "name": "random subspaces (median)"},
                     "cost": {"y": float(np.median(ref["cost"])), "name": "random subspaces (median)"}}
        table = _medians(df, dw)
        table.loc["random subspaces"] = [rand] * table.shape[1]
        panels.append(Panel(pname, df, {"kind": "privacy_utility", "metrics": ["cost", dw], "title": title,
                                        "reference": reference}, table, title,
                            caption=f"Medians (last row: the median {dw} of {S['random_draws']} draws of random "
                                    "subspaces, the level of a release that is noise only):"))
        private = [a["label"] for a in algs if get_method(a["name"]).private]
        for alg in private:
            paper = (_FIG2_SA if alg.startswith("s.a.") else _FIG2_GOOD) if ds_kind == "subspaces" else _FIG2_NO_CLAIM
            checks.append(_beyond_random_check(df, alg, dw, pname, rand, paper))
        if ds_kind == "subspaces":
            for alg in ("s.a. TSC", "s.a. SSC"):
                small = [e for e in S["epsilons"] if e <= 10]
                med = {e: _median_at(df, alg, e, dw) for e in small}
                checks.append(_check(
                    f"{pname}: {alg} is poor unless ε is large: at every ε ≤ 10 (our reading of 'not truly large') its "
                    f"median {dw} is above {RANDOM_MARGIN:g} × random subspaces' median (ours)",
                    all(v > RANDOM_MARGIN * rand for v in med.values()),
                    ", ".join(f"ε = {e:g}: {v / rand:.0%}" for e, v in med.items())
                    + f" of random subspaces' {rand:.3g}",
                    _FIG2_SA))
        if ds_kind == "subspaces" and 10.0 in S["epsilons"]:
            at10 = df[np.isclose(df["epsilon"], 10.0)]
            sa = {a: _median_at(df, a, 10.0, dw) for a in ("s.a. TSC", "s.a. SSC")}
            sa_min = at10[at10["algorithm"].isin(list(sa))][dw].min()
            for alg in ("Gibbs", "Gibbs, k-plane start (not private)", "SuLQ-10", "SuLQ-50"):
                v = _median_at(df, alg, 10.0, dw)
                sep = bool((at10[at10["algorithm"] == alg][dw] < sa_min).all())
                # below each sample-aggregate method: a one-sided Mann–Whitney test (medians alone call a
                # difference between methods that all sit at the level of random subspaces a win)
                p = _mann_whitney_below(df, alg, list(sa), 10.0, dw)
                checks.append(_check(f"{pname}: at ε = 10 the {dw} of {alg} is below sample-aggregate's (TSC and SSC; "
                                     f"one-sided Mann–Whitney, p ≤ {ALPHA:g}: our threshold)",
                                     v < min(sa.values()) and p <= ALPHA,
                                     f"medians {alg} {v:.3f} vs s.a. TSC {sa['s.a. TSC']:.3f}, s.a. SSC "
                                     f"{sa['s.a. SSC']:.3f}; p = {p:.2g}; every run below every s.a. run: "
                                     f"{'yes' if sep else 'no'}", _FIG2_SA + " " + _FIG2_GOOD))
        if ds_kind == "yaleb":
            checks.append(_yaleb_gibbs_check(df, dw, S["epsilons"], rand))
    panel, check = _d_scaling(S["d_scaling"], R)
    panels.append(panel)
    checks += check
    return panels, checks, []


def _yaleb_gibbs_check(df, dw, epsilons, rand, min_eps=1.0):
    """Yale B: Gibbs below each other private method (SuLQ-10, SuLQ-50) in d_W and in cost at every
    ε ≥ ``min_eps`` (one-sided Mann–Whitney)."""
    others = ["SuLQ-10", "SuLQ-50"]
    grid = [e for e in epsilons if e >= min_eps]
    p = {(e, m): _mann_whitney_below(df, "Gibbs", others, e, m) for e in grid for m in (dw, "cost")}
    worst = max(p, key=p.get)
    lowest = {e: _median_at(df, "Gibbs", e, dw) for e in grid}
    return _check(f"yaleb: Gibbs significantly outperforms the others (SuLQ-10, SuLQ-50; s.a. cannot split n = 320): "
                  f"its {dw} and its cost are below each of theirs at every ε ≥ {min_eps:g} (one-sided Mann–Whitney, "
                  f"p ≤ {ALPHA:g} each: our threshold; below ε = {min_eps:g} every method sits at the level of random "
                  "subspaces)", all(v <= ALPHA for v in p.values()),
                  f"largest p = {p[worst]:.2g} (ε = {worst[0]:g}, {worst[1]}) over {len(p)} ε × metric cells; Gibbs' "
                  f"median {dw}: " + ", ".join(f"{v:.3g} (ε = {e:g})" for e, v in lowest.items())
                  + f"; random subspaces {rand:.3g}", _FIG2_YALEB)


def _d_scaling(D, R):
    """The d-only comparison: SuLQ-10 and Gibbs at one ε on the left panel's data with only d changed."""
    frames, rand = [], {}
    algs = [preset("SuLQ-10"), {"name": "gibbs", "label": "Gibbs", "params": {"n_iter": D["gibbs_iter"],
                                                                              "init": "random"}}]
    for d in D["ds"]:
        spec = {**D["dataset"], "d": d}
        sweep = Sweep(dataset=spec, algorithms=algs, epsilons=[D["epsilon"]], trials=D["trials"],
                      metrics=["cost", "d_W"], seed=R.seed)
        frames.append(R.sweep("subspace-fig2", f"d{d}", sweep).assign(d=d))
        ref = random_reference(spec, "d_W", spec["k"], spec["q"], D["random_draws"], R.seed)
        rand[d] = float(np.median(ref["d_W"]))
    df = pd.concat(frames, ignore_index=True)
    med = df.groupby(["d", "algorithm"])["d_W"].median().unstack("algorithm")
    # the level of random subspaces at each d, drawn as a dashed (non-private) line of its own
    df = pd.concat([df, pd.DataFrame({"algorithm": "random subspaces (median)", "private": False, "d": list(rand),
                                      "d_W": list(rand.values())})], ignore_index=True)
    med["random subspaces"] = pd.Series(rand)
    ratio = med["SuLQ-10"] / med["Gibbs"]
    lo, hi = min(D["ds"]), max(D["ds"])
    base = {k: v for k, v in D["dataset"].items() if k not in ("kind", "d", "random_state")}
    same = ", ".join(f"{ {'sigma': 'σ'}.get(k, k)} = {v:g}" for k, v in base.items())
    title = f"SuLQ and Gibbs against d alone (Fig. 2, left panel's data: {same}; ε = {D['epsilon']:g})"
    panel = Panel("d-scaling", df, {"kind": "curves", "x": "d", "metrics": ["d_W"], "group": "algorithm",
                                    "title": title, "x_title": "ambient dimension d"},
                  med.assign(**{"SuLQ-10 ÷ Gibbs": ratio}), title,
                  caption="Median d_W by d (random subspaces: the level of a noise-only release):")
    per_d = "; ".join(f"d = {d}: SuLQ-10 {med.loc[d, 'SuLQ-10']:.3g}, Gibbs {med.loc[d, 'Gibbs']:.3g} "
                      f"(×{ratio[d]:.2f}), random {rand[d]:.3g}" for d in D["ds"])
    checks = [
        _check(f"SuLQ scales poorly with d, only d changing ({same}, ε = {D['epsilon']:g}, {D['trials']} runs each): "
               f"SuLQ-10's median d_W ÷ Gibbs' at d = {hi} is at least 2 × that at d = {lo} (our threshold)",
               ratio[hi] >= 2 * ratio[lo], per_d, _FIG2_D),
        _check(f"Gibbs is robust to d (same runs): its median d_W at every d is at most 2 × that at d = {lo} and at "
               f"most {RANDOM_MARGIN:g} × the random level (our thresholds)",
               bool((med["Gibbs"] <= 2 * med.loc[lo, "Gibbs"]).all())
               and all(med.loc[d, "Gibbs"] <= RANDOM_MARGIN * rand[d] for d in D["ds"]), per_d, _FIG2_D),
    ]
    return panel, checks


# ============================================================================ subspace Fig. 3
def gibbs_traces(dataset, epsilon, init, n_iter, n_chains, seed):
    """One Fig. 3 run: ``n_chains`` Gibbs chains at ``epsilon``.

    Returns the traces (dict name -> (n_chains, n_iter)), the burn-in and the seconds per
    sweep. Top-level so workers can run it.

    Parameters
    ----------
    dataset : dict
        Dataset spec for :func:`dpcore.data.load_dataset` (must have true subspaces).
    epsilon : float
        Privacy parameter of the Gibbs sampler.
    init : str
        The sampler's ``init``.
    n_iter : int
        Sweeps per chain.
    n_chains : int
        Number of chains.
    seed : int
        Master seed (the run's seed is derived from it, ``init`` and ``epsilon``).

    Returns
    -------
    dict
        ``traces`` (dict name -> array (n_chains, n_iter)), ``burn_in`` (int) and
        ``seconds_per_sweep`` (float).
    """
    ds = load_dataset(**dataset)
    rng = np.random.default_rng(run_seed(seed, f"fig3 {init}", epsilon, 0))
    est = get_method("gibbs").build(ds, params={"n_clusters": int(ds.n_classes), "subspace_dim": int(ds.subspaces.shape[2]),
                                                "n_iter": n_iter, "n_chains": n_chains, "init": init},
                                    epsilon=epsilon, random_state=rng)
    with single_threaded():                         # as every sweep run (dpcore.lab.sweeps.run_task)
        est.fit(ds.X, y=ds.labels, true_subspaces=ds.subspaces)
    return {"traces": est.traces_, "burn_in": est.burn_in_, "seconds_per_sweep": est.seconds_per_sweep_}


def _thin_index(T, max_points):
    step = max(1, math.ceil(T / max_points))
    idx = np.arange(0, T, step)
    return idx if idx[-1] == T - 1 else np.append(idx, T - 1)


#: the starts of Fig. 3's chains in words
_INIT_WORDS = {"random": "random start (private)", "kplane": "k-plane start (not private)"}


#: the paper's words on Fig. 3 (§5)
_FIG3_PAPER = ('§5: "Figure 3 shows that under various privacy parameter settings, the proposed Gibbs sampler mixes '
               'quite well after 10000 iterations." (Fig. 3: "8 trials of the Gibbs sampler"; §5: "we use non-private '
               'SSC and LRR solutions as initialization for the Gibbs sampler" — a common start)')
#: what the starts of each check are, in words
_START_WORDS = {
    "random": "independent uniformly random subspaces, one draw per chain (dispersed; private)",
    "pooled": ("the random-start chains pooled with the k-plane-start chains (k-plane run with a different seed for "
               "each chain: starts near good optima) — dispersed starts that include the optima"),
}


def pooled_mixing(traces, burn_in):
    """The mixing verdict of several runs' chains pooled (the same sweeps and burn-in): split-R̂
    over chains from different kinds of start can see a chain that stays where it started.

    Parameters
    ----------
    traces : sequence of dict of str to ndarray (n_chains, n_iter)
        The runs' traces (same names and n_iter).
    burn_in : int
        Sweeps discarded.

    Returns
    -------
    tuple
        ``(pooled traces, verdict)`` of :func:`dpcore.subspace.diagnostics.mixing_verdict`.
    """
    from ...subspace.diagnostics import mixing_verdict
    names = [n for n in traces[0] if all(n in t for t in traces)]
    pooled = {n: np.concatenate([np.asarray(t[n]) for t in traces], axis=0) for n in names}
    return pooled, mixing_verdict(pooled, burn_in=burn_in)


def _mixing_check(what, eps, C, burn, verdict, dw):
    rhat = {r["trace"]: r["split_rhat"] for r in verdict["rows"]}
    ess = {r["trace"]: r["ess"] for r in verdict["rows"]}
    return _check(f"Starts: {what}. ε = {eps:g}: the {C} chains mixed (split-R̂ < 1.1 and ESS ≥ 100 on cost and d_W "
                  f"after {burn} burn-in sweeps: our thresholds)", verdict["mixed"],
                  ", ".join(f"R̂({k}) = {v:.3g}, ESS({k}) = {ess[k]:.0f}" for k, v in rhat.items())
                  + f"; final median d_W {np.median(dw[:, -1]):.3f}", _FIG3_PAPER)


def _subspace_fig3(level, R, max_points=2000):
    from ...subspace.diagnostics import diagnostics_table, mixing_verdict
    S = SETTINGS["subspace-fig3"][level]
    jobs = [dict(dataset=S["dataset"], epsilon=e, init=i, n_iter=S["n_iter"], n_chains=S["n_chains"], seed=R.seed)
            for i in S["inits"] for e in S["epsilons"]]
    R.log(f"  [subspace-fig3] {len(jobs)} runs of {S['n_chains']} chains × {S['n_iter']} sweeps")
    results = R.map(gibbs_traces, jobs)
    by = {(job["init"], job["epsilon"]): res for job, res in zip(jobs, results)}
    panels, checks, diag_rows = [], [], []

    def diagnose(init, eps, tr, res, verdict):
        C, T = tr["cost"].shape
        for r in diagnostics_table(tr, burn_in=res["burn_in"]):
            diag_rows.append({"init": init, "epsilon": eps, "n_iter": T, "n_chains": C, "burn_in": res["burn_in"],
                              "seconds_per_sweep": res["seconds_per_sweep"], "mixed": verdict["mixed"], **r})

    for init in S["inits"]:
        burn, rows = {}, []
        for eps in S["epsilons"]:
            res = by[init, eps]
            tr = res["traces"]
            burn[eps] = res["burn_in"]
            C, T = tr["cost"].shape
            idx = _thin_index(T, max_points)            # the CSV keeps ≤ max_points sweeps per chain
            for ch in range(C):
                rows.append(pd.DataFrame({"init": init, "epsilon": eps, "chain": ch, "sweep": idx + 1,
                                          **{name: tr[name][ch, idx] for name in tr}}))
            verdict = mixing_verdict(tr, burn_in=res["burn_in"])
            diagnose(init, eps, tr, res, verdict)
            # the k-plane starts alone sit near one optimum, where R̂ cannot see a chain that does not mix:
            # they are checked pooled with the random starts below, not on their own
            if init == "random":
                checks.append(_mixing_check(_START_WORDS["random"], eps, C, res["burn_in"], verdict, tr["dw"]))
        df = pd.concat(rows, ignore_index=True)
        df.insert(0, "figure", "subspace-fig3")
        title = (f"Gibbs sampler mixing (Fig. 3), {_INIT_WORDS[init]}: {S['n_chains']} chains, "
                 f"{load_dataset_name(S['dataset'])}")
        plot = {"kind": "traces", "metrics": ["statistic", "cost", "dw"], "title": title,
                "burn_in": {str(e): int(b) for e, b in burn.items()}}
        table = df.groupby(["epsilon", "chain"])["dw"].last().unstack("chain")
        panels.append(Panel(f"{init}-init", df, plot, table.round(4), title,
                            caption="d_W to the truth of the last sample of each chain (columns: chains):"))
    if {"random", "kplane"} <= set(S["inits"]):
        for eps in S["epsilons"]:
            a, b = by["random", eps], by["kplane", eps]
            tr, verdict = pooled_mixing([a["traces"], b["traces"]], a["burn_in"])
            diagnose("random+kplane", eps, tr, a, verdict)
            checks.append(_mixing_check(_START_WORDS["pooled"], eps, len(tr["cost"]), a["burn_in"], verdict, tr["dw"]))
    extra = {"diagnostics.csv": pd.DataFrame(diag_rows)}
    return panels, checks, extra


RUNNERS = {"subspace-fig1": _subspace_fig1, "subspace-fig2": _subspace_fig2, "subspace-fig3": _subspace_fig3}
