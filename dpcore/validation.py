"""Input validation shared by every module of :mod:`dpcore`.

Every check raises :class:`ValueError` whose message names the parameter and the
allowed range, so that the app can show the very same words in an ``st.error``.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp


#: Bits drawn from a legacy ``numpy.random.RandomState`` to seed the Generator that replaces it.
RANDOM_STATE_SEED_BITS = 128
#: the largest |value| a data array may hold: every method sums squared distances over up to
#: 10¹² entries (n·d), which overflow float64 (1.8e308) beyond |x| ≈ 1e148; 1e100 leaves room
MAX_ABS_VALUE = 1e100


def check_random_state(random_state) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator`.

    ``None`` -> a fresh unseeded generator; an int or :class:`numpy.random.SeedSequence`
    -> a seeded generator; a Generator is returned as is (shared state, like sklearn); a
    legacy :class:`numpy.random.RandomState` -> a new Generator seeded with
    :data:`RANDOM_STATE_SEED_BITS` = 128 bits drawn from it (``randint``). Drawing them
    advances the RandomState, so a RandomState shared by several fits gives each fit other
    draws, as in scikit-learn, and the same RandomState state always gives the same run.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    ValueError
        For any other type.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        words = random_state.randint(0, 2 ** 32, size=RANDOM_STATE_SEED_BITS // 32, dtype=np.uint32)
        return np.random.default_rng(np.random.SeedSequence([int(w) for w in words]))
    raise ValueError(
        "random_state must be None, an int, a SeedSequence, a numpy.random.Generator or a numpy.random.RandomState; "
        f"got {type(random_state).__name__}"
    )


def check_int(value, name: str, low: int | None = None, high: int | None = None) -> int:
    """An integer in [low, high] (either bound may be None).

    Parameters
    ----------
    value : int
        An integral float (e.g. ``3.0``) is accepted; ``bool`` is not.
    name : str
        Parameter name used in the error message.
    low, high : int, optional
        Inclusive bounds.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``value`` is not an integer or is out of [low, high].
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer{_range_text(low, high, True, True)}; got {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be an integer{_range_text(low, high, True, True)}; got {value}")
    return value


def check_real(value, name: str, low: float | None = None, high: float | None = None,
               low_inclusive: bool = True, high_inclusive: bool = True) -> float:
    """A finite real number in the given (half-)open or closed interval.

    Parameters
    ----------
    value : float
        Any finite real number (``bool`` is refused).
    name : str
        Parameter name used in the error message.
    low, high : float, optional
        Bounds (None: unbounded on that side).
    low_inclusive, high_inclusive : bool, default True
        Whether each bound is allowed.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``value`` is not a finite real number or is out of the interval.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(
            f"{name} must be a finite number{_range_text(low, high, low_inclusive, high_inclusive)}; got {value!r}")
    value = float(value)
    bad_low = low is not None and (value < low or (not low_inclusive and value == low))
    bad_high = high is not None and (value > high or (not high_inclusive and value == high))
    if bad_low or bad_high:
        raise ValueError(
            f"{name} must be{_range_text(low, high, low_inclusive, high_inclusive)}; got {value:g}")
    return value


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """A privacy parameter epsilon > 0.

    Parameters
    ----------
    epsilon : float
    name : str, default "epsilon"
        Parameter name used in the error message.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0.
    """
    return check_real(epsilon, name, 0.0, None, low_inclusive=False)


def check_delta(delta, name: str = "delta", allow_zero: bool = False) -> float:
    """A privacy parameter delta in (0, 1) (or [0, 1) when ``allow_zero``).

    Parameters
    ----------
    delta : float
    name : str, default "delta"
        Parameter name used in the error message.
    allow_zero : bool, default False
        Whether δ = 0 is allowed.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``delta`` is not a finite number in the interval.
    """
    return check_real(delta, name, 0.0, 1.0, low_inclusive=allow_zero, high_inclusive=False)


def _check_magnitude(values, name):
    if values.size and np.abs(values).max() > MAX_ABS_VALUE:
        raise ValueError(f"{name} holds values up to {np.abs(values).max():.3g}: squared distances of values above "
                         f"{MAX_ABS_VALUE:g} overflow floating point. Rescale the data (divide by a power of ten); "
                         "clustering does not change when every value is scaled alike")


def check_array(X, name: str = "X", ensure_2d: bool = True, allow_sparse: bool = False,
                min_rows: int = 1) -> np.ndarray:
    """A finite float array (rows = points). Sparse input only when ``allow_sparse``.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix
    name : str, default "X"
        Parameter name used in error messages.
    ensure_2d : bool, default True
        Require a 2-D array (dense input only).
    allow_sparse : bool, default False
        Accept a scipy.sparse matrix (converted to CSR float64).
    min_rows : int, default 1
        Smallest number of rows.

    Returns
    -------
    ndarray of float64 or scipy.sparse CSR matrix

    Raises
    ------
    ValueError
        If X is sparse without ``allow_sparse``, complex, not numeric, not 2-D (with
        ``ensure_2d``), not finite, has a value above :data:`MAX_ABS_VALUE` in magnitude, or
        has fewer than ``min_rows`` rows.
    """
    if sp.issparse(X):
        if not allow_sparse:
            raise ValueError(f"{name} must be a dense array; got a scipy.sparse matrix (convert with .toarray() if it is small)")
        if np.issubdtype(X.dtype, np.complexfloating):
            raise ValueError(f"Complex data not supported: {name} must hold real numbers")
        X = sp.csr_matrix(X, dtype=np.float64)
        if not np.all(np.isfinite(X.data)):
            raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
        _check_magnitude(X.data, name)
        data_shape = X.shape
    else:
        if np.iscomplexobj(X):
            raise ValueError(f"Complex data not supported: {name} must hold real numbers")
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be numeric: {exc}") from None
        if ensure_2d and X.ndim != 2:
            hint = (". Reshape your data: X.reshape(-1, 1) for one feature, X.reshape(1, -1) for one point"
                    if X.ndim == 1 else "")
            raise ValueError(f"{name} must be a 2-D array (n points x d features); got {X.ndim} dimension(s){hint}")
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
        _check_magnitude(X, name)
        data_shape = X.shape
    if data_shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row(s); got {data_shape[0]}")
    return X


def check_points(X, name: str = "X"):
    """Finite float points as rows, dense ndarray or CSR (e.g. the CLUTO document sets).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    name : str, default "X"
        Name used in error messages.

    Returns
    -------
    ndarray of float64 or CSR matrix
    """
    return check_array(X, name, allow_sparse=True)


def input_float_dtype(X):
    """The float dtype a fitted estimator keeps for X, as scikit-learn's KMeans does:
    float32 for float32 input (an array, a sparse matrix or a DataFrame whose columns are
    all float32), float64 for everything else.

    Parameters
    ----------
    X : array_like, scipy.sparse matrix or pandas.DataFrame

    Returns
    -------
    numpy.dtype
        ``float32`` or ``float64``.
    """
    dtypes = getattr(X, "dtypes", None)          # a DataFrame: one dtype per column
    if dtypes is not None and not hasattr(X, "dtype"):
        try:
            kinds = {np.dtype(t) for t in dtypes}
        except TypeError:                         # extension dtypes: not float32
            return np.dtype(np.float64)
        return np.dtype(np.float32) if kinds == {np.dtype(np.float32)} else np.dtype(np.float64)
    return np.dtype(np.float32) if getattr(X, "dtype", None) == np.float32 else np.dtype(np.float64)


def record_features(estimator, X) -> None:
    """Set ``n_features_in_`` and, for a DataFrame with string column names,
    ``feature_names_in_`` from the ``fit`` input X, exactly as scikit-learn does
    (``sklearn.utils.validation.validate_data`` with ``reset=True``, X left unconverted: dpcore's
    own checks give the error messages). A later fit without names removes ``feature_names_in_``.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
    X : array_like, scipy.sparse matrix or pandas.DataFrame
        The input of ``fit``, before any conversion.
    """
    from sklearn.utils.validation import validate_data
    validate_data(estimator, X, reset=True, skip_check_array=True)


def check_fitted_input(estimator, X, attribute, *, allow_sparse: bool = False, name: str = "X"):
    """The input of ``predict`` or ``score``: the estimator must be fitted (``attribute`` set,
    else :class:`sklearn.exceptions.NotFittedError`), X must have the number of columns and the
    feature names seen in ``fit`` (scikit-learn's checks and messages: a ValueError for another
    number of columns or other names, a UserWarning when names appear or disappear), then
    dpcore's :func:`check_array` (its messages; first, for input that is not 2-D).

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
    X : array_like, scipy.sparse matrix or pandas.DataFrame
    attribute : str
        A fitted attribute (e.g. ``"cluster_centers_"``).
    allow_sparse : bool, default False
        Accept a scipy.sparse matrix (returned as CSR float64).
    name : str, default "X"
        Name used in error messages.

    Returns
    -------
    ndarray of float64 or CSR matrix
    """
    from sklearn.utils.validation import check_is_fitted, validate_data
    check_is_fitted(estimator, attribute)
    if not sp.issparse(X) and _ndim(X) != 2:
        check_array(X, name, allow_sparse=allow_sparse)      # dpcore's message (e.g. "Reshape your data")
    validate_data(estimator, X, reset=False, skip_check_array=True)      # names before values, as scikit-learn
    return check_array(X, name, allow_sparse=allow_sparse)


def _ndim(X):
    try:
        return np.ndim(X)
    except ValueError:          # a ragged list: left to check_array
        return 2


def check_subspaces(U, name: str = "subspaces", d: int | None = None) -> np.ndarray:
    """A stack of bases of shape (k, d, q) with orthonormal columns (tolerance 1e-6).

    Parameters
    ----------
    U : array_like of shape (k, d, q) or (d, q)
        A single (d, q) basis is turned into a stack of one.
    name : str, default "subspaces"
        Parameter name used in error messages.
    d : int, optional
        Required ambient dimension.

    Returns
    -------
    ndarray of float64 of shape (k, d, q)

    Raises
    ------
    ValueError
        If U is not 3-D (after the promotion), is not in R^d, or its columns are not
        orthonormal.
    """
    U = np.asarray(U, dtype=np.float64)
    if U.ndim == 2:
        U = U[None]
    if U.ndim != 3:
        raise ValueError(f"{name} must have shape (k, d, q); got shape {U.shape}")
    if d is not None and U.shape[1] != d:
        raise ValueError(f"{name} must live in R^{d} (shape (k, {d}, q)); got shape {U.shape}")
    gram = np.einsum("kdi,kdj->kij", U, U)
    if not np.allclose(gram, np.eye(U.shape[2])[None], atol=1e-6):
        raise ValueError(f"{name} must have orthonormal columns (UᵀU = I)")
    return U


def _range_text(low, high, low_inc, high_inc) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f" {'>=' if low_inc else '>'} {low:g}"
    if low is None:
        return f" {'<=' if high_inc else '<'} {high:g}"
    return f" in {'[' if low_inc else '('}{low:g}, {high:g}{']' if high_inc else ')'}"
