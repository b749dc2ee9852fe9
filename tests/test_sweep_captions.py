"""The Privacy–utility page's texts come from the result (ui/sweep.py): a caption cannot
claim what the figure beside it does not show, nor call private what the runs' verdicts
(dpcore.lab.verdicts, what the meter charges) do not."""
import math

import numpy as np
import pandas as pd
import pytest

from dpcore.lab.verdicts import RunContext, judge_row, mixing_unchecked
from ui.sweep import fmt, look_for, not_private_methods

GIBBS = mixing_unchecked("a sweep")


def frame(medians, metric="d_W"):
    """A sweep result with one run per (method, ε): ``medians`` maps a method to {ε: value}
    (ε None: a non-private method)."""
    rows = []
    for alg, by_eps in medians.items():
        for eps, v in by_eps.items():
            rows.append({"algorithm": alg, "private": eps is not None, "epsilon": math.nan if eps is None else eps,
                         metric: v})
    return pd.DataFrame(rows)


def test_sample_aggregate_behind_gibbs_is_counted_per_epsilon():
    df = frame({"s.a. TSC": {0.1: 3.3, 10: 3.2, 1000: 1.9}, "Gibbs": {0.1: 3.4, 10: 0.6, 1000: 0.12},
                "k-plane": {None: 0.1}})
    text = look_for(df, ["d_W"], {"Gibbs": GIBBS})
    assert "s.a. TSC is behind the best of Gibbs at 2 of the 3 ε values (all but 0.1), as in the subspace paper." \
        in text
    # Gibbs's fits in a sweep are not counted as private (mixing not checked): ranked, never called private
    assert "among the methods run with an ε, private or not, the best median at ε = 1000 is Gibbs (0.12); at " \
           "ε = 0.1, s.a. TSC (3.3)." in text
    assert "best private median" not in text and "private method" not in text
    assert "Not private in this sweep, though run with an ε: Gibbs (its guarantee holds only once the chain has " \
           "mixed" in text
    assert "Dashed: k-plane without privacy" in text and "does better than the non-private" not in text


def test_the_best_private_median_names_only_methods_the_meter_counts():
    df = frame({"s.a. TSC": {0.1: 3.3, 1000: 1.9}, "SuLQ-10": {0.1: 3.0, 1000: 0.5}, "k-plane": {None: 0.1}})
    text = look_for(df, ["d_W"])
    assert "the best private median at ε = 1000 is SuLQ-10 (0.5); at ε = 0.1, SuLQ-10 (3)." in text
    assert "Not private in this sweep" not in text
    seed = "public seed 7 (reproducible mode)"
    seeded = look_for(df, ["d_W"], {"s.a. TSC": seed, "SuLQ-10": seed})     # a public seed: no fit is private
    assert "best private median" not in seeded and f"s.a. TSC, SuLQ-10 ({seed})" in seeded
    read = "q = 1 was read off the data (the Data page's suggestion, accepted)"
    text = look_for(df, ["d_W"], {"s.a. TSC": read, "SuLQ-10": read})        # the subspace methods' fits
    assert "best private median" not in text and f"s.a. TSC, SuLQ-10 ({read})" in text


def _upload_with_read_q():
    from dpcore.upload import load_upload
    rows = [",".join(f"{v:.6f}" for v in np.random.default_rng(i).normal(size=4)) for i in range(40)]
    ds = load_upload("x.csv", "\n".join(rows).encode())
    return type(ds)(**{**ds.__dict__, "params": {**ds.params, "subspace_dim": 1}})


def _row(name, label, q=1.0, released=True):
    return {"name": name, "algorithm": label, "epsilon": 1.0, "trial": 0, "private": True,
            "released_private": released, "events": "", "not_private": "", "epsilon_spent": 1.0, "delta": 0.0,
            "q": q}


def test_a_sweep_names_a_q_read_off_the_data_as_the_reason_once():
    ds = _upload_with_read_q()
    read = "q = 1 was read off the data (the Data page's suggestion, accepted)"
    ctx = RunContext(dataset=ds, where="a sweep")
    assert judge_row(_row("sulq_kplane", "SuLQ-10", q=2.0), context=ctx).private     # the public default q = 2
    assert judge_row(_row("sulq_kplane", "SuLQ-10"), context=ctx).reasons == (read,)
    gibbs = judge_row(_row("gibbs", "Gibbs"), context=ctx)                              # both reasons, each once
    assert not gibbs.private and gibbs.reason.count(read) == 1 and "mixed" in gibbs.reason
    assert judge_row(_row("sulq_kmeans", "SuLQ k-means", q=math.nan), context=ctx).private    # no q in k-means
    seeded = judge_row(_row("sulq_kplane", "SuLQ-10"), context=RunContext(seed=3, dataset=ds, where="a sweep"))
    assert seeded.reasons[0].startswith("public seed 3")
    apart = not_private_methods([judge_row(_row("sulq_kplane", "SuLQ-10"), context=ctx, label="sweep: SuLQ-10, ε = 1, "
                                                                                               "trial 0"),
                                 gibbs])
    assert apart["SuLQ-10"] == read


def test_a_private_method_above_the_non_private_line_is_said_so():
    # co-clustering on classic3: DP-τCC's NMI above Fast-τCC's at ε ≥ 3.16 (as measured once)
    df = frame({"DP-τCC": {0.1: 0.01, 1: 0.67, 3.16: 0.9, 10: 0.75}, "Fast-τCC": {None: 0.7}}, metric="nmi")
    text = look_for(df, ["nmi"])
    assert "DP-τCC does better than the non-private Fast-τCC at ε = 3.16, 10" in text
    assert "best private median" not in text            # one private method: nothing to rank
    assert "sample-aggregate" not in text and "subspace paper" not in text


def test_without_a_non_private_method_the_caption_says_there_is_no_dashed_line():
    text = look_for(frame({"candidate set": {1: 5.0, 10: 1.2}}, metric="objective_ratio"), ["objective_ratio"])
    assert "there is no dashed reference line (add k-means++ to the methods" in text
    assert "the ratio falls towards 1" in text


@pytest.mark.parametrize("v, text", [(1000.0, "1000"), (0.46415888, "0.464"), (2.1544, "2.15"), (1e-3, "0.001"),
                                     (1.0000000000000002, "1")])
def test_numbers_at_three_significant_digits(v, text):
    assert fmt(v) == text


def _rows(means, trials=5, spread=0.01, seed=0):
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"algorithm": "DP-τCC", "epsilon": e, "trial": t, "nmi": mu + spread * rng.standard_normal(),
                          "private": True, "released_private": True}
                         for e, mu in means for t in range(trials)])


def test_a_fall_at_large_eps_the_runs_agree_on_is_not_called_wobble():
    """A classroom report: on classic3 the caption blamed the fall at ε = 10 on wobble."""
    from ui.sweep import look_for
    text = look_for(_rows([(0.1, 0.1), (1, 0.6), (3, 0.65), (10, 0.45)]), ["nmi"])
    assert "worse at ε = 10" in text and "not the medians' wobble" in text
    # a fall within the runs' spread, or with too few runs to tell, is not called the method's
    assert "worse at" not in look_for(_rows([(0.1, 0.1), (1, 0.6), (3, 0.65), (10, 0.64)], spread=0.05), ["nmi"])
    assert "worse at" not in look_for(_rows([(0.1, 0.1), (1, 0.6), (3, 0.65), (10, 0.45)], trials=2), ["nmi"])
