"""Extreme and degenerate data get a clear message, not a traceback deep in a solver (a classroom
report: values of 1e308 ended in "Eigenvalues did not converge")."""
import numpy as np
import pytest

from dpcore.lab.methods import METHODS, build_estimator
from dpcore.upload import load_upload
from dpcore.validation import MAX_ABS_VALUE, check_array


def test_huge_values_are_refused_with_what_to_do():
    X = np.ones((20, 3))
    X[4, 2] = 1e308
    with pytest.raises(ValueError, match="overflow floating point. Rescale"):
        check_array(X)
    check_array(X / 1e210)                               # rescaled: accepted
    csv = "a,b,c\n" + "\n".join("1,2,3" for _ in range(5)) + "\n1,2,1e308\n"
    with pytest.raises(ValueError, match=r"row 6, column 3 \(1-based\).*rescale the file"):
        load_upload("big.csv", csv.encode())


@pytest.mark.parametrize("name", ["kplane", "ssc", "gibbs", "sulq_kmeans", "candidate_kmeans", "kmeanspp", "dplloyd"])
def test_estimators_refuse_huge_values_before_any_solver(name):
    if name not in METHODS:
        pytest.skip(f"{name} is not in the catalogue")
    X = np.random.default_rng(0).standard_normal((60, 4)) * (10 * MAX_ABS_VALUE)
    est = build_estimator(name, None, epsilon=1.0, random_state=0)
    with pytest.raises(ValueError, match="Rescale"):
        est.fit(X)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("rows, radius, message", [
    (np.ones((500, 5)), 1.0, "all rows are the same point.*rows differ"),
    (np.zeros((500, 5)), 1.0, "all rows are the same point"),
    (np.zeros((500, 5)), "data", "every point is the zero vector"),
    (np.repeat(np.eye(5)[:2], 250, axis=0), 2.0, r"only 2 distinct points.*k < 2"),
])
def test_the_kmeans_comparison_refuses_data_kmeanspp_fits_exactly(rows, radius, message):
    """500 identical rows or all-zero points ended in ZeroDivisionError (objective ÷ k-means++'s 0)."""
    from dpcore.lab.compare import compare_methods
    with pytest.raises(ValueError, match=message):
        compare_methods(rows, 3, 1.0, radius, random_state=0)
