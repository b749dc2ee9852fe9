"""Uploaded data: parse and validate a user's file into a :class:`~dpcore.data.Dataset`.

:func:`load_upload` takes the file's name and bytes and returns a Dataset, or raises a
``ValueError`` whose message names the problem (and, for a bad cell, where it is), so the
app can show the very same words. Nothing here imports Streamlit.

Accepted formats (by extension)
-------------------------------
- ``.csv`` (also ``.tsv`` / ``.txt``): delimited numbers, one point (or document) per line.
  Lines whose first non-blank character is ``#`` are comments and skipped (as
  ``numpy.loadtxt`` does); a ``#`` inside a line is not a comment. The delimiter is the most
  frequent of ``,``, ``;`` and tab in the first line that is neither blank nor a comment
  (whitespace when none occurs). That line is a header when none of its (feature) cells is a
  number. Blank lines are skipped. Optionally the last column is the class label (any
  text; classes are numbered in sorted order, their names kept in ``extras['class_names']``).
- ``.npy``: one 2-D numeric array. Loaded with ``allow_pickle=False``: a pickled object
  array is refused, never unpickled (unpickling can run arbitrary code).
- ``.npz``: a sparse matrix written by ``scipy.sparse.save_npz``; the CSR triplet of the
  shipped CLUTO files (``data``, ``indices``, ``indptr``, ``shape``); or dense arrays — the
  only array, or the one named ``X``, with optional 1-D ``labels`` (or ``y``).
- ``.mtx``: Matrix Market (coordinate or array; real, integer or pattern; general, symmetric or
  skew-symmetric), read by this module (not ``scipy.io.mmread``, whose compiled reader can crash
  the process on a malformed file).

Limits (checked before anything large is decompressed or allocated): the file is at most
:data:`MAX_BYTES` (50 MB); a dense matrix has at most :data:`MAX_CELLS` cells (n·d ≤ 10
million, 80 MB as float64); a sparse one at most :data:`MAX_CELLS` stored entries and at most
:data:`MAX_SIDE` rows and columns.

Scale. Every value must be finite and at most :data:`dpcore.validation.MAX_ABS_VALUE` (1e100)
in magnitude (squared distances of larger values overflow), and the largest magnitude must be
at least :data:`MIN_SCALE` (1e-100) unless every value is 0: squared distances of smaller
values underflow towards 0, so a method would see every point at the same place and blame its
own parameters (an objective of 0 "because k is too large"). Both refusals say to rescale the
file by a power of ten, which changes no clustering.

Orientation rule. Rows must be points (or documents). For ``kind="points"`` a matrix with
more than :data:`WIDE_RATIO` (10) times as many columns as rows is refused with the hint
"rows must be points; did you mean to transpose?": a file of feature rows × point columns
almost always looks like that, and even when such data are real, the private methods' noise
grows with d, so n < d/10 points leave nothing but noise (reduce the dimension first, e.g.
by PCA or a random projection). ``transpose=True`` flips the matrix after reading. Count
matrices (documents × terms) commonly have many more columns than rows and are not checked.

Privacy. Nothing is known publicly about an uploaded file. Any bound computed from it (a
radius Λ = max ‖x‖, a range, a maximum count) is *data-derived* and using it is not private;
the Dataset's description and ``privacy_note`` say so. Two per-record / public options help:
``norm="rows"`` scales every row to unit norm (one record at a time: leaks nothing) and
``norm="clip"`` clips rows to the public unit ball; both give a public radius of 1.

In-process registry. An uploaded dataset cannot be rebuilt from small parameters, so
``load_dataset(kind="upload", ...)`` works only while the dataset is registered in this
process with :func:`registered` (a context manager, reference-counted, so nothing outlives
the block). :func:`load_upload` and :func:`registered` add ``"upload"`` to
:data:`dpcore.data.DATASET_KINDS` (:func:`dpcore.data.register_dataset_kind`); importing this
module changes nothing.
Worker processes of a sweep cannot see the registry: run sweeps on uploads in process.

Subspace dimension. The subspace methods need a dimension q. An upload's default is public,
from its shape only (:func:`dpcore.defaults.public_upload_subspace_dim`: min(3, ⌊d/2⌋)).
:func:`suggest_subspace_dim` reads a better q off the data (the elbow of k-plane's residual):
that is NOT private. Accepting it (``subspace_dim=`` of :func:`load_upload`, or
:func:`with_subspace_dim`) keeps it in the spec, where the defaults of every page find it, and
says so in the privacy note.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import threading
import zipfile
from contextlib import contextmanager
from pathlib import PurePosixPath

import numpy as np
import scipy.sparse as sp

from .data import Dataset, register_dataset_kind
from .preprocessing import clip_rows, normalize_rows
from .validation import MAX_ABS_VALUE

__all__ = ["register_upload_kind", "load_upload", "registered", "load_registered_upload", "upload_key", "reload_code",
           "suggest_subspace_dim", "with_subspace_dim", "MAX_BYTES", "MAX_CELLS", "MAX_SIDE", "WIDE_RATIO",
           "EXTENSIONS", "DATA_KINDS", "LABEL_MODES", "NORMS", "LIMITS_TEXT", "MIN_SCALE"]

MAX_BYTES = 50 * 1024 * 1024   #: largest accepted file (50 MB)
MAX_CELLS = 10_000_000         #: largest n·d of a dense matrix / stored entries of a sparse one
MAX_SIDE = 1_000_000           #: most rows or columns of a sparse matrix
WIDE_RATIO = 10                #: points with d > WIDE_RATIO·n are refused (probably transposed)
#: the largest |value| of a file must be at least this (unless all are 0): squared distances of smaller values
#: underflow (MAX_ABS_VALUE's mirror image)
MIN_SCALE = 1e-100
TEXT_EXTENSIONS = (".csv", ".tsv", ".txt")
EXTENSIONS = TEXT_EXTENSIONS + (".npy", ".npz", ".mtx")
DATA_KINDS = ("points", "counts")
LABEL_MODES = ("none", "last_column")
NORMS = ("none", "rows", "clip")
LIMITS_TEXT = (f"at most {MAX_BYTES // 2**20} MB, and at most {MAX_CELLS:,} cells (n·d) for a dense matrix "
               f"or {MAX_CELLS:,} stored entries for a sparse one")
_NPY_MAGIC = b"\x93NUMPY"


# ----------------------------------------------------------------------------- entry point
def load_upload(name, data, kind="points", labels="none", transpose=False, norm="none",
                max_bytes=MAX_BYTES, max_cells=MAX_CELLS, subspace_dim=None) -> Dataset:
    """Parse and validate an uploaded file.

    Parameters
    ----------
    name : the file name as uploaded; its extension chooses the parser.
    data : the file's bytes.
    kind : ``"points"`` (rows are points, dense) or ``"counts"`` (a non-negative count matrix,
        documents × terms, for co-clustering; kept sparse).
    labels : ``"none"`` or ``"last_column"`` (the last column holds the class labels, used
        only to evaluate).
    transpose : flip the matrix after reading (when the file's columns are the points).
    norm : points only — ``"none"`` (as uploaded), ``"rows"`` (each row scaled to unit norm,
        a per-record map) or ``"clip"`` (rows clipped to the public unit ball).
    max_bytes : int, default MAX_BYTES (50 MB)
        Largest accepted file.
    max_cells : int, default MAX_CELLS (10 million)
        Largest n·d of a dense matrix / stored entries of a sparse one.
    subspace_dim : int in [1, d − 1] or None, default None
        Points only: the q the subspace methods default to on this upload (see
        :func:`with_subspace_dim`); None leaves the public default.

    Returns a :class:`Dataset` whose ``params`` are ``{"kind": "upload", "sha256": …, …}``.
    Raises ``ValueError`` naming the problem.

    Returns
    -------
    Dataset
        Dense float64 ``X`` for points, CSR for counts; labels 0.. when the file has them.

    Raises
    ------
    ValueError
        If an argument is invalid, ``transpose`` is combined with labels, the extension is
        unsupported, the file is empty, too large or unreadable, or its values or shape do
        not suit ``kind``.
    """
    register_upload_kind()
    if not isinstance(name, str) or not name.strip():
        raise ValueError("name must be the uploaded file's name (a non-empty string)")
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise ValueError(f"data must be the file's bytes; got {type(data).__name__}")
    if kind not in DATA_KINDS:
        raise ValueError(f"kind must be 'points' or 'counts'; got {kind!r}")
    if labels not in LABEL_MODES:
        raise ValueError(f"labels must be 'none' or 'last_column'; got {labels!r}")
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {', '.join(NORMS)}; got {norm!r}")
    if not isinstance(transpose, (bool, np.bool_)):
        raise ValueError(f"transpose must be True or False; got {transpose!r}")
    transpose = bool(transpose)
    if transpose and labels == "last_column":
        raise ValueError("transpose and labels='last_column' cannot be combined (on the Data page: 'columns are "
                         "points (transpose)' and 'last column is the class label'): put the class labels in the last "
                         "column of a file whose rows are the points")
    fname = PurePosixPath(name.replace("\\", "/")).name[:120]
    ext = _extension(fname)
    if ext not in EXTENSIONS:
        raise ValueError(f"unsupported file extension {ext or '(none)'!r} in {fname!r}: upload a .csv (or .tsv/.txt), "
                         ".npy, .npz or .mtx file")
    if len(data) > max_bytes:
        raise ValueError(f"{fname} is too large: {_size_text(len(data))}; the limit is {_size_text(max_bytes)}")
    if len(data) == 0 or (ext in TEXT_EXTENSIONS and not data.strip()):
        raise ValueError(f"{fname} is empty: the file has no data")

    y, class_names, columns = None, None, None
    if ext in TEXT_EXTENSIONS:
        X, y, class_names, columns = _read_text(fname, data, labels == "last_column", max_cells)
    elif ext == ".npy":
        X = _read_npy(fname, data, max_cells)
    elif ext == ".npz":
        X, y = _read_npz(fname, data, max_cells)
    else:
        X = _read_mtx(fname, data, max_cells)

    X = _as_2d_numeric(fname, X)
    _check_size(fname, X, max_cells, kind)
    if transpose:
        if y is not None:
            raise ValueError(f"{fname}: its 'labels' array describes the file's rows, so it cannot be used with "
                             "transpose (on the Data page: untick 'columns are points (transpose)')")
        X = X.T
    if labels == "last_column" and ext not in TEXT_EXTENSIONS:   # text files split off their label column when read
        if y is not None:
            raise ValueError(f"{fname} already holds a 'labels' array: untick 'last column is the class label'")
        if X.shape[1] < 2:
            raise ValueError(f"{fname} has a single column: with the last column as the class label no feature "
                             "is left")
        last = X[:, -1]
        last = last.toarray().ravel() if sp.issparse(last) else np.asarray(last).ravel()
        X = X[:, :-1].tocsr() if sp.issparse(X) else X[:, :-1]
        _check_finite(fname, last.reshape(-1, 1), what="class label (last column)")
        classes, y = np.unique(last, return_inverse=True)
        class_names = [f"{c:g}" for c in classes]
    if y is not None:
        y = np.asarray(y).ravel()
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"{fname}: labels has {y.shape[0]} entries but the data have {X.shape[0]} rows")
        if class_names is None:
            classes, y = np.unique(y, return_inverse=True)
            class_names = [str(c) for c in classes]
    X = _check_values(fname, X, kind)
    n, d = X.shape
    _check_shape(fname, n, d, kind)

    sha = hashlib.sha256(data).hexdigest()
    params = dict(kind="upload", name=fname, sha256=sha, data_kind=kind, labels=labels, transpose=transpose,
                  norm=norm if kind == "points" else "none")
    extras = {"format": ext.lstrip("."), "sha256": sha, "size_bytes": len(data), "n_clipped": 0}
    if class_names is not None:
        extras["class_names"] = class_names
    if columns is not None:
        extras["column_names"] = columns
    notes = []
    if kind == "points":
        X = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        if params["norm"] == "rows":
            X = normalize_rows(X, 1.0)
            extras["public_radius"] = 1.0
            note = "each row scaled to unit norm (a per-record map: leaks nothing); public radius 1"
        elif params["norm"] == "clip":
            X, extras["n_clipped"] = clip_rows(X, 1.0)
            extras["public_radius"] = 1.0
            note = "rows clipped to the public unit ball (radius 1, chosen without looking at the data)"
        else:
            note = ("uploaded data have no public norm bound: the private subspace methods clip rows to the unit "
                    "ball themselves; a radius Λ computed from the data (max ‖x‖) is data-derived and NOT private — "
                    "type a public Λ or upload with rows scaled to unit norm")
    else:
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        X.eliminate_zeros()
        note = "counts; neighbouring matrices differ by 1 in one cell"
        if X.nnz and not np.all(X.data == np.round(X.data)):
            note += (" — these values are not all integers: DP-τCC refuses them (its integer noise would leave each "
                     "cell's fraction exact); round them to whole counts first")
            notes.append("non-integer values")
    desc = (f"uploaded {ext.lstrip('.')} file {fname}: {n} rows × {d} columns"
            + (", transposed" if transpose else "")
            + (f", {len(class_names)} classes from the "
               + ("last column" if labels == "last_column" else "'labels' array") if class_names is not None else "")
            + (", " + ", ".join(notes) if notes else "")
            + ". Bounds derived from these data (radius, norms, ranges) are data-derived, not public: "
              "using them is not private.")
    ds = Dataset(name=f"upload: {fname}", description=desc, X=X, labels=None if y is None else y.astype(int),
                 kind=kind, privacy_note=note, extras=extras, params=params)
    return ds if subspace_dim is None else with_subspace_dim(ds, subspace_dim)


def with_subspace_dim(ds: Dataset, subspace_dim) -> Dataset:
    """A copy of the uploaded dataset ``ds`` whose spec fixes q = ``subspace_dim`` (None: back
    to the public default), without reading the file again. The data are shared, not copied.

    :func:`dpcore.defaults.default_subspace_dim` returns this q, so every page and sweep
    defaults to it. The privacy note says that a q read off the data (e.g. the one of
    :func:`suggest_subspace_dim`) is not private: no private method accounts for that choice.

    Parameters
    ----------
    ds : Dataset
        An uploaded dataset of points (params kind "upload").
    subspace_dim : int in [1, d − 1] or None

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        If ``ds`` is not an upload of points or ``subspace_dim`` is out of range.
    """
    from dataclasses import replace

    from .validation import check_int

    if ds.params.get("kind") != "upload" or ds.kind != "points":
        raise ValueError("with_subspace_dim takes an uploaded dataset of points (params kind 'upload')")
    params = {k: v for k, v in ds.params.items() if k != "subspace_dim"}
    note = ds.privacy_note.split(_Q_NOTE_START)[0].rstrip()
    if subspace_dim is not None:
        if ds.d < 2:
            raise ValueError(f"subspace_dim needs d ≥ 2 columns; {ds.params.get('name')} has d = {ds.d}")
        params["subspace_dim"] = check_int(subspace_dim, "subspace_dim", 1, ds.d - 1)
        note += (f"{_Q_NOTE_START} q = {params['subspace_dim']} fixed with the upload: if it was read off the data "
                 "(the suggested q), the choice of q is NOT private — no private method accounts for it")
    return replace(ds, params=params, privacy_note=note)


_Q_NOTE_START = " · subspace dimension:"


def suggest_subspace_dim(X, n_clusters, *, max_rows=1000, max_dim=10, n_init=5, random_state=0) -> int:
    """A subspace dimension q read off the data: NOT private (it looks at the values).

    The elbow of k-plane's residual. For q = 1 … min(d − 1, ``max_dim``), k-plane (k =
    ``n_clusters``) is fitted and its residual R(q) (mean squared distance to the nearest of the
    k subspaces, over the mean squared norm; R(0) = 1) is divided by the d − q dimensions left
    out, which isotropic noise would fill evenly. The suggestion is the q where this residual
    per left-out dimension falls the most (largest r(q − 1)/r(q)): past the data's own
    dimension, adding one only removes noise, at a steady rate. On the sample two_planes.csv
    (two planes in R^5) R falls from 0.31 at q = 1 to 0.001 at q = 2, then stays: q = 2.

    Parameters
    ----------
    X : array-like of shape (n, d), n ≥ 2, d ≥ 2
        Points as rows.
    n_clusters : int ≥ 1
        k of the k-plane fits (e.g. the pages' default k).
    max_rows : int, default 1000
        At most this many rows (drawn at random) are used.
    max_dim : int, default 10
        Largest q tried.
    n_init : int, default 5
        Restarts of each k-plane fit.
    random_state : None, int or numpy.random.Generator, default 0
        Seed of the row sample and of k-plane's starts (a fixed default: the same data give
        the same suggestion).

    Returns
    -------
    int
        q in [1, d − 1].

    Raises
    ------
    ValueError
        If X is not a finite 2-D array with n ≥ 2 rows and d ≥ 2 columns, or an argument is out of range.
    """
    from .subspace.kplane import KPlane
    from .validation import check_int

    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 2:
        raise ValueError(f"X must be a 2-D array with at least 2 rows and 2 columns; got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    k = check_int(n_clusters, "n_clusters", 1, X.shape[0])
    max_rows = check_int(max_rows, "max_rows", 2)
    max_dim = check_int(max_dim, "max_dim", 1)
    n_init = check_int(n_init, "n_init", 1)
    rng = np.random.default_rng(random_state)
    if X.shape[0] > max_rows:
        X = X[np.sort(rng.choice(X.shape[0], max_rows, replace=False))]
    n, d = X.shape
    energy = float(np.mean(np.einsum("ij,ij->i", X, X)))
    top = min(d - 1, max_dim, max(1, n // k - 1))
    if energy == 0.0 or top == 1:
        return 1
    X, outside = _principal_coordinates(X, k * (top + 1))
    R = [1.0]
    for q in range(1, top + 1):
        model = KPlane(n_clusters=k, subspace_dim=q, n_init=n_init, max_iter=30, random_state=rng).fit(X)
        R.append((model.cost_ + outside) / energy)
    R = np.maximum(np.asarray(R), 1e-12)
    per_dim = R / (d - np.arange(R.size))
    return int(np.argmax(per_dim[:-1] / per_dim[1:])) + 1


def _principal_coordinates(X, rank):
    """``X`` in the coordinates of its ``rank`` leading principal directions (through 0, as
    the planes are), and the mean squared norm left outside them, which every plane in their
    span leaves: ``(P, outside)``. X itself (and 0) when it has at most ``rank`` columns or rows.

    Why: k-plane's cost grows with d (an SVD of each cluster per iteration): on 1000 × 1000
    random points the suggestion took 51 s, on 1000 × 10,000 over 5 minutes. Its k planes of
    dimension ≤ q span at most k·q directions, which for data near k subspaces are the leading
    ones; in their span the fits take well under a second."""
    n, d = X.shape
    if d <= rank or n <= rank:
        return X, 0.0
    if n < d:                                   # X = U S Vᵀ: the coordinates U S from X Xᵀ = U S² Uᵀ
        w, U = np.linalg.eigh(X @ X.T)
        top = np.argsort(w)[::-1][:rank]
        P = U[:, top] * np.sqrt(np.maximum(w[top], 0.0))
    else:
        w, V = np.linalg.eigh(X.T @ X)
        P = X @ V[:, np.argsort(w)[::-1][:rank]]
    inside = float(np.mean(np.einsum("ij,ij->i", P, P)))
    total = float(np.mean(np.einsum("ij,ij->i", X, X)))
    return np.ascontiguousarray(P), max(total - inside, 0.0)


def upload_key(params: dict) -> str:
    """The registry key of an upload spec (its parameters as sorted JSON).

    Parameters
    ----------
    params : dict
        An upload spec (``Dataset.params`` of an upload).

    Returns
    -------
    str
    """
    return json.dumps({k: params[k] for k in sorted(params)}, sort_keys=True, default=str)


def reload_code(params: dict) -> list[str]:
    """Python lines that rebuild an uploaded dataset from the file (for "reproduce in
    Python" snippets: ``load_dataset(**params)`` cannot, outside the uploading session).

    Parameters
    ----------
    params : dict
        An upload spec (kind "upload").

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        If ``params`` is not an upload spec.
    """
    if params.get("kind") != "upload":
        raise ValueError(f"params must be an upload spec (kind 'upload'); got kind {params.get('kind')!r}")
    opts = {"kind": params["data_kind"], "labels": params["labels"], "transpose": params["transpose"],
            "norm": params["norm"]}
    if params.get("subspace_dim"):
        opts["subspace_dim"] = params["subspace_dim"]
    args = ", ".join(f"{k}={v!r}" for k, v in opts.items())
    return ["from dpcore.upload import load_upload",
            f"# the file you uploaded (SHA-256 {params['sha256']}), next to this script",
            f"ds = load_upload({params['name']!r}, open({params['name']!r}, 'rb').read(), {args})"]


# ----------------------------------------------------------------------------- registry
_REGISTRY: dict[str, list] = {}   # key -> [Dataset, reference count]
_LOCK = threading.Lock()


@contextmanager
def registered(ds: Dataset):
    """While the block runs, ``load_dataset(**ds.params)`` returns ``ds`` in this process
    (for code that rebuilds datasets from their parameters, e.g. an in-process sweep).

    Parameters
    ----------
    ds : Dataset
        An uploaded dataset (params kind "upload").

    Yields
    ------
    Dataset
        ``ds``.

    Raises
    ------
    ValueError
        If ``ds`` is not an uploaded dataset.
    """
    if ds.params.get("kind") != "upload":
        raise ValueError("registered() takes an uploaded dataset (params kind 'upload')")
    register_upload_kind()
    key = upload_key(ds.params)
    with _LOCK:
        entry = _REGISTRY.setdefault(key, [ds, 0])
        entry[1] += 1
    try:
        yield ds
    finally:
        with _LOCK:
            entry[1] -= 1
            if entry[1] <= 0:
                _REGISTRY.pop(key, None)


def load_registered_upload(**params) -> Dataset:
    """``load_dataset(kind="upload", …)``: the registered dataset of these parameters.

    Parameters
    ----------
    **params
        The upload spec without its "kind".

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        If no dataset with these parameters is registered in this process.
    """
    key = upload_key({"kind": "upload", **params})
    with _LOCK:
        entry = _REGISTRY.get(key)
    if entry is None:
        raise ValueError(f"the uploaded file {params.get('name', '?')!r} is not available here: uploaded data "
                         "live only in the session that uploaded them (upload it again on the Data page; sweeps on "
                         "uploads run in one process)")
    return entry[0]


def register_upload_kind():
    """Register ``load_dataset(kind="upload", ...)`` (:func:`load_registered_upload`); idempotent."""
    register_dataset_kind("upload", load_registered_upload)


# ----------------------------------------------------------------------------- readers
def _extension(fname):
    dot = fname.rfind(".")
    return fname[dot:].lower() if dot > 0 else ""


def _size_text(nbytes):
    return f"{nbytes / 2**20:.1f} MB ({nbytes:,} bytes)" if nbytes >= 2**20 / 10 else f"{nbytes:,} bytes"


def _entries(k):
    return "1 entry is" if k == 1 else f"{k:,} entries are"


def _is_number(cell):
    """Whether the cell is a number as the reader takes it: Python's float syntax, ASCII only
    (``float`` also reads other scripts' digits, which the fast reader does not) and without
    the digit separator ``_``."""
    if not cell.isascii() or "_" in cell:
        return False
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _is_comment(line):
    return line.lstrip().startswith("#")


def _delimiter_name(delim):
    return {",": "commas", ";": "semicolons", "\t": "tabs", None: "spaces"}[delim]


def _sniff_delimiter(line):
    counts = {c: line.count(c) for c in (",", ";", "\t")}
    best = max(counts, key=counts.get)
    return best if counts[best] else None   # None: whitespace-separated


def _split(line, delim):
    if delim is None:             # whitespace: a cell may be quoted ("1.5" "2"), as csv would allow
        return [c[1:-1] if len(c) > 1 and c[0] == c[-1] == '"' else c for c in line.split()]
    return [c.strip() for c in next(csv.reader([line], delimiter=delim, skipinitialspace=True))]   # as pandas


def _read_text(fname, data, label_last, max_cells):
    """Delimited text -> (X, labels codes or None, class names or None, column names or None)."""
    if data.startswith(_NPY_MAGIC) or data.startswith(b"PK\x03\x04"):
        what = "a .npy array" if data.startswith(_NPY_MAGIC) else "a zip archive (.npz, .xlsx, …)"
        raise ValueError(f"{fname} is not a text file: it looks like {what}; give it the right extension "
                         "(Excel files: save as CSV first)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{fname} is not UTF-8 text (invalid byte at offset {exc.start}): is it really a CSV? "
                         "Save it as UTF-8 CSV") from None
    if "\x00" in text:
        raise ValueError(f"{fname} is not a text file (it contains NUL bytes): corrupt or binary")
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip()]
    if not lines:
        raise ValueError(f"{fname} is empty: the file has no data")
    lines = [(i, ln) for i, ln in lines if not _is_comment(ln)]
    if not lines:
        raise ValueError(f"{fname} has only comment lines (starting with #) and no data")
    delim = _sniff_delimiter(lines[0][1])
    first = _split(lines[0][1], delim)
    feats = first[:-1] if label_last else first
    header = None
    if feats and not any(_is_number(c) for c in feats):
        header, lines = first, lines[1:]
        if not lines:
            raise ValueError(f"{fname} has a header line ({', '.join(first[:5])}{', …' if len(first) > 5 else ''}) "
                             "but no data rows")
    width = len(header) if header is not None else len(first)
    if label_last and width < 2:
        raise ValueError(f"{fname} has a single column: with the last column as the class label no feature is left")
    if len(lines) * width > max_cells:
        raise ValueError(f"{fname} is too large: {len(lines):,} rows × {width:,} columns = {len(lines) * width:,} "
                         f"cells; the limit is {max_cells:,} cells (n·d)")
    X = labels = None
    n_feat = width - 1 if label_last else width
    try:
        import pandas as pd
        body = "\n".join(ln for _, ln in lines)
        if delim is None and ("_" in body or not body.isascii()):
            raise ValueError("pandas' Python engine reads 1_000 and other scripts' digits as numbers; _is_number not")
        dtype = {i: np.float64 for i in range(n_feat)}
        if label_last:
            dtype[n_feat] = str
        df = pd.read_csv(io.StringIO(body), sep=r"\s+" if delim is None else delim, header=None,
                         dtype=dtype, skipinitialspace=True, keep_default_na=False,
                         engine="c" if delim is not None else "python")
        if df.shape == (len(lines), width):   # an unbalanced quote makes pandas join lines: then scan them
            X = df.iloc[:, :n_feat].to_numpy(dtype=np.float64)
            if label_last:
                labels = df.iloc[:, n_feat]
                if labels.isna().any() or not np.all(np.isfinite(X)):
                    X = None
            elif not np.all(np.isfinite(X)):
                X = None
    except Exception:   # noqa: BLE001 - any failure of the fast reader (pandas raises ParserError, also IndexError
        X = None        # when a header's width is not the body's): the line scan below names the problem
    if X is None:
        _locate_text_problem(fname, lines, delim, width, label_last, header)   # raises with the line and column
        # every line has its fields and every cell is a finite number: what pandas could not read (quoted cells
        # between spaces, …), the line scanner's own split reads
        cells = [_split(line, delim) for _, line in lines]
        X = np.array([[float(c) for c in row[:n_feat]] for row in cells], dtype=np.float64).reshape(len(cells), n_feat)
        labels = [row[-1] for row in cells] if label_last else None
    class_names = None
    if label_last:
        text_labels = np.asarray([str(v).strip() for v in labels], dtype=str)
        if np.any(text_labels == ""):
            line = lines[int(np.flatnonzero(text_labels == "")[0])][0]
            raise ValueError(f"{fname}, line {line}: the class label (last column) is empty")
        classes, codes = np.unique(text_labels, return_inverse=True)
        if all(_is_number(c) for c in classes):   # numeric labels: order 2 < 10, not "10" < "2"
            order = np.argsort([float(c) for c in classes], kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            classes, codes = classes[order], rank[codes]
        labels, class_names = codes, [str(c) for c in classes]
    return X, labels, class_names, header


def _locate_text_problem(fname, lines, delim, width, label_last, header):
    """Scan the lines in Python and raise a ValueError naming the first bad line and column."""
    n_feat = width - 1 if label_last else width
    for lineno, line in lines:
        cells = _split(line, delim)
        if len(cells) != width:
            raise ValueError(f"{fname}, line {lineno}: {len(cells)} field(s) but the first "
                             f"{'(header) ' if header is not None else ''}line has {width} — rows are ragged "
                             f"(fields are separated by {_delimiter_name(delim)}, as in the first line)")
        for j, cell in enumerate(cells[:n_feat]):
            where = f"{fname}, line {lineno}, column {j + 1}" + (f" ({header[j]!r})" if header is not None else "")
            if cell == "":
                raise ValueError(f"{where} is empty: missing values are not allowed (every cell must be a number)")
            if not _is_number(cell):
                if "#" in cell:
                    hint = " — a comment must be a line of its own, starting with #"
                elif any(c in cell for c in ",;|\t "):
                    hint = f" — fields are separated by {_delimiter_name(delim)} (the delimiter of the first line)"
                elif j == width - 1 and not label_last:
                    hint = " — if the last column holds class labels, tick 'last column is the class label'"
                else:
                    hint = ""
                raise ValueError(f"{where}: {cell[:40]!r} is not a number{hint}")
            if not np.isfinite(float(cell)):
                raise ValueError(f"{where}: {cell!r} — NaN and infinite values are not allowed (every value must be "
                                 "a finite number)")
        if label_last and cells[-1] == "":
            raise ValueError(f"{fname}, line {lineno}: the class label (last column) is empty")


def _npy_header(fname, f, what):
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
    except Exception as exc:   # any malformed header: corrupt file
        raise ValueError(f"{fname} is not a valid {what} (corrupt header: {exc})") from None
    return shape, dtype


def _check_header(fname, shape, dtype, max_cells, what="array"):
    if dtype.hasobject:
        raise ValueError(f"{fname}: the {what} holds Python objects (a pickle); only numeric arrays are accepted — "
                         "pickles are never loaded, because unpickling can run arbitrary code")
    if dtype.names is not None:
        raise ValueError(f"{fname}: the {what} is a structured (record) array; save a plain 2-D numeric array")
    if dtype.kind in "USa":
        raise ValueError(f"{fname}: the {what} holds text (dtype {dtype}), not numbers")
    if dtype.kind == "c":
        raise ValueError(f"{fname}: the {what} holds complex numbers; only real values are accepted")
    if dtype.kind not in "biuf":
        raise ValueError(f"{fname}: the {what} has dtype {dtype}; only numeric (bool, int, float) arrays are accepted")
    cells = int(np.prod(shape, dtype=np.float64)) if len(shape) else 1
    if cells > max_cells:
        raise ValueError(f"{fname} is too large: the {what} has shape {tuple(shape)} = {cells:,} cells; the limit is "
                         f"{max_cells:,} cells (n·d)")


def _read_npy(fname, data, max_cells):
    if not data.startswith(_NPY_MAGIC):
        raise ValueError(f"{fname} is not a valid .npy file (no NumPy header): corrupt, or another format")
    f = io.BytesIO(data)
    shape, dtype = _npy_header(fname, f, ".npy file")
    _check_header(fname, shape, dtype, max_cells)
    f.seek(0)
    try:
        return np.load(f, allow_pickle=False)
    except Exception as exc:
        raise ValueError(f"{fname} is not a valid .npy file ({exc})") from None


def _read_npz(fname, data, max_cells):
    """-> (X dense or sparse, labels or None)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        members = [m for m in zf.namelist() if m.endswith(".npy")]
    except Exception as exc:   # noqa: BLE001 - BadZipFile, EOFError, NotImplementedError ("zip file version 10.9"), …
        raise ValueError(f"{fname} is not a valid .npz file (not a readable zip archive: {exc})") from None
    if not members:
        raise ValueError(f"{fname} holds no arrays (an .npz must contain at least one array)")
    headers = {}
    for m in members:
        try:
            with zf.open(m) as f:
                headers[m[:-4]] = _npy_header(fname, f, ".npz member")
        except ValueError as exc:
            if str(exc).startswith(fname):     # _npy_header's own words
                raise
            raise ValueError(f"{fname} is not a valid .npz file (member {m}: {exc})") from None   # e.g. a bad offset
        except Exception as exc:   # CRC errors, truncated members, bad compression
            raise ValueError(f"{fname} is not a valid .npz file (member {m}: {exc})") from None
    keys = set(headers)

    def get(key, text=False):
        if key not in headers:     # e.g. a sparse matrix's 'indptr' missing (or its member name damaged)
            raise ValueError(f"{fname} is not a valid .npz file: the array {key!r} is missing (it holds "
                             f"{', '.join(sorted(keys)) or 'no arrays'})")
        shape, dtype = headers[key]
        if text and dtype.kind in "US" and len(shape) <= 1:   # the sparse format tag, text class labels
            if (shape[0] if shape else 1) > max_cells:
                raise ValueError(f"{fname} is too large: the array {key!r} has {shape[0]:,} entries; the limit is "
                                 f"{max_cells:,}")
        else:
            _check_header(fname, shape, dtype, max_cells, what=f"array {key!r}")
        try:
            with zf.open(key + ".npy") as f:
                return np.lib.format.read_array(f, allow_pickle=False)
        except Exception as exc:
            raise ValueError(f"{fname} is not a valid .npz file (array {key!r}: {exc})") from None

    def sparse_shape(key="shape"):
        shp = get(key).ravel() if key in keys else None
        if shp is None or shp.size != 2 or np.any(shp < 0):
            raise ValueError(f"{fname}: a sparse .npz needs a 'shape' array of two non-negative integers")
        n, d = int(shp[0]), int(shp[1])
        if max(n, d) > MAX_SIDE:
            raise ValueError(f"{fname} is too large: shape {n}×{d}; a sparse matrix may have at most {MAX_SIDE:,} rows "
                             "and columns")
        return n, d

    try:
        if "format" in keys:   # scipy.sparse.save_npz
            fmt = get("format", text=True)
            fmt = fmt.item().decode() if fmt.dtype.kind == "S" else str(fmt.item())
            shape = sparse_shape()
            if fmt in ("csr", "csc", "bsr"):
                cls = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "bsr": sp.bsr_matrix}[fmt]
                X = cls((get("data"), get("indices"), get("indptr")), shape=shape)
                X.check_format(full_check=True)   # out-of-range indices must not reach compiled code
            elif fmt == "coo":
                if "coords" in keys:
                    coords = get("coords")
                    X = sp.coo_matrix((get("data"), (coords[0], coords[1])), shape=shape)
                else:
                    X = sp.coo_matrix((get("data"), (get("row"), get("col"))), shape=shape)
            elif fmt == "dia":
                X = sp.dia_matrix((get("data"), get("offsets")), shape=shape)
            else:
                raise ValueError(f"{fname}: unknown sparse format {fmt!r} (expected csr, csc, bsr, coo or dia)")
            return X, None
        if {"data", "indices", "indptr", "shape"} <= keys:   # a CSR triplet (the shipped CLUTO files)
            X = sp.csr_matrix((get("data"), get("indices"), get("indptr")), shape=sparse_shape())
            X.check_format(full_check=True)
            return X, _npz_labels(fname, keys, get)
    except ValueError as exc:
        if str(exc).startswith(fname):
            raise
        raise ValueError(f"{fname} is not a valid sparse .npz file ({exc})") from None
    except (IndexError, TypeError) as exc:
        raise ValueError(f"{fname} is not a valid sparse .npz file ({exc})") from None
    label_keys = {"labels", "y"} & keys
    data_keys = sorted(keys - label_keys)
    if "X" in keys:
        key = "X"
    elif len(data_keys) == 1:
        key = data_keys[0]
    elif not data_keys:
        raise ValueError(f"{fname} holds only labels ({', '.join(sorted(label_keys))}): add the data array 'X'")
    else:
        raise ValueError(f"{fname} holds several arrays ({', '.join(sorted(keys))}): name the data array 'X' "
                         "(and optionally the labels 'labels')")
    return get(key), _npz_labels(fname, keys, get)


def _npz_labels(fname, keys, get):
    key = "labels" if "labels" in keys else ("y" if "y" in keys else None)
    if key is None:
        return None
    y = get(key, text=True)
    if y.ndim != 1:
        raise ValueError(f"{fname}: the {key!r} array must be 1-D (one label per row); got shape {y.shape}")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{fname}: the {key!r} array contains NaN or infinite values")
    return y


MTX_SYMMETRIES = ("general", "symmetric", "skew-symmetric")


def _read_mtx(fname, data, max_cells):
    """A Matrix Market file, read here (numpy parses the numbers), not by ``scipy.io.mmread``: SciPy
    1.17's compiled reader kills the process on some malformed files — a floating-point exception
    on an array of 0 rows, a segmentation fault on a last value followed by other characters and no
    final newline (``1.5E1x``) — and reads ``4.0x`` as 4.0. For an upload, that is the whole server."""
    pos, lines_seen, banner_line, size_line = 0, 0, None, None
    while pos < len(data):                       # the banner, comments and the size line
        nl = data.find(b"\n", pos)
        nl = len(data) if nl < 0 else nl
        line = data[pos:nl].decode("latin-1").strip()
        pos, lines_seen = nl + 1, lines_seen + 1
        if banner_line is None:
            banner_line = line
            if not line.lower().startswith("%%matrixmarket"):
                break
        elif line and not line.startswith("%"):
            size_line = line
            break
    if not banner_line or not banner_line.lower().startswith("%%matrixmarket"):
        raise ValueError(f"{fname} is not a valid Matrix Market file: the first line must start with %%MatrixMarket")
    banner = banner_line.lower().split()
    if len(banner) < 5 or banner[1] != "matrix" or banner[2] not in ("coordinate", "array"):
        raise ValueError(f"{fname} is not a valid Matrix Market file: bad banner {banner_line[:80]!r} (expected "
                         "'%%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric')")
    if banner[3] == "complex":
        raise ValueError(f"{fname}: complex Matrix Market files are not supported; only real values are accepted")
    if banner[3] not in ("real", "integer", "pattern", "double"):
        raise ValueError(f"{fname} is not a valid Matrix Market file: unknown field {banner[3]!r}")
    coordinate, pattern, symmetry = banner[2] == "coordinate", banner[3] == "pattern", banner[4]
    if symmetry not in MTX_SYMMETRIES:
        raise ValueError(f"{fname} is not a valid Matrix Market file: unknown symmetry {symmetry!r} (expected "
                         f"{', '.join(MTX_SYMMETRIES)})")
    if pattern and not coordinate:
        raise ValueError(f"{fname} is not a valid Matrix Market file: an array cannot be 'pattern'")
    try:
        dims = [int(t) for t in size_line.split()]
    except (AttributeError, ValueError):
        raise ValueError(f"{fname} is not a valid Matrix Market file: missing or bad size line") from None
    if len(dims) != (3 if coordinate else 2) or min(dims) < 0:
        raise ValueError(f"{fname} is not a valid Matrix Market file: bad size line {size_line[:80]!r}")
    n, d = dims[0], dims[1]
    if coordinate:
        if dims[2] > max_cells or max(n, d) > MAX_SIDE:
            raise ValueError(f"{fname} is too large: {n}×{d} with {dims[2]:,} entries; the limits are {max_cells:,} "
                             f"entries and {MAX_SIDE:,} rows/columns")
    elif n * d > max_cells:
        raise ValueError(f"{fname} is too large: {n}×{d} = {n * d:,} cells; the limit is {max_cells:,} cells (n·d)")
    if symmetry != "general" and n != d:
        raise ValueError(f"{fname} is not a valid Matrix Market file: a {symmetry} matrix must be square; the size "
                         f"line says {n}×{d}")
    per = (2 if pattern else 3) if coordinate else 1
    if coordinate:
        count = dims[2]
    else:
        count = n * d if symmetry == "general" else (n * (n + 1) // 2 if symmetry == "symmetric" else n * (n - 1) // 2)
    values = _mtx_numbers(fname, data[pos:], count * per)
    if coordinate:
        table = values.reshape(count, per)
        rows, cols = table[:, 0], table[:, 1]
        for what, idx, side in (("row", rows, n), ("column", cols, d)):
            bad = (idx != np.floor(idx)) | (idx < 1) | (idx > side)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{fname} is not a valid Matrix Market file: entry {k + 1} has {what} {idx[k]:g}; "
                                 f"{what}s are whole numbers from 1 to {side:,}")
        i, j = rows.astype(np.int64) - 1, cols.astype(np.int64) - 1
        v = np.ones(count) if pattern else table[:, 2]
        if symmetry != "general":                 # the lower triangle is stored: mirror the rest
            if np.any(j > i):
                raise ValueError(f"{fname} is not a valid Matrix Market file: a {symmetry} file stores the lower "
                                 "triangle only, but an entry lies above the diagonal")
            off = i != j
            sign = 1.0 if symmetry == "symmetric" else -1.0
            i, j, v = np.concatenate([i, j[off]]), np.concatenate([j, i[off]]), np.concatenate([v, sign * v[off]])
        return sp.coo_matrix((v, (i, j)), shape=(n, d))
    if symmetry == "general":
        return values.reshape(d, n).T.copy()      # column-major
    X = np.zeros((n, n))
    lower = np.tril_indices(n, 0 if symmetry == "symmetric" else -1)
    order = np.lexsort((lower[0], lower[1]))      # by column, then row: the file's order
    X[lower[0][order], lower[1][order]] = values
    return X + (X.T - np.diag(np.diag(X)) if symmetry == "symmetric" else -X.T)


def _mtx_numbers(fname, body, count):
    """The ``count`` numbers of a Matrix Market body (whitespace-separated; % lines are comments)."""
    import warnings

    text = body.decode("latin-1")
    if "%" in text:
        text = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("%"))
    if not text.strip():                         # (numpy reads a blank text as [-1.0])
        values = np.zeros(0)
    else:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")   # numpy stops at the first word that is not a number, with a warning
                values = np.fromstring(text, dtype=np.float64, sep=" ")
        except (ValueError, DeprecationWarning):
            word = next((w for w in text.split() if not _is_number(w)), "?")
            raise ValueError(f"{fname} is not a valid Matrix Market file: {word[:40]!r} is not a number") from None
    if values.size != count:
        raise ValueError(f"{fname} is not a valid Matrix Market file: the size line announces {count:,} numbers after "
                         f"it, the file holds {values.size:,} (cut short, or more than announced)")
    return values


# ----------------------------------------------------------------------------- checks
def _as_2d_numeric(fname, X):
    if sp.issparse(X):
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{fname}: the matrix has dtype {X.dtype}; only real numbers are accepted")
        return sp.csr_matrix(X, dtype=np.float64)
    X = np.asarray(X)
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{fname}: the array has dtype {X.dtype}; only real numbers are accepted")
    if X.ndim != 2:
        if X.ndim == 1:
            hint = (f"a 1-D array of length {X.shape[0]}: if it is one feature per point, save X.reshape(-1, 1); "
                    "rows must be points, columns features")
        elif X.ndim == 0:
            hint = "a single number (0-D)"
        else:
            hint = (f"a {X.ndim}-D array of shape {X.shape}: flatten each item to one row first, e.g. "
                    "X.reshape(len(X), -1)")
        raise ValueError(f"{fname} must hold a 2-D array (n points × d features); got {hint}")
    return X.astype(np.float64, copy=False)


def _check_size(fname, X, max_cells, kind):
    n, d = X.shape
    if sp.issparse(X) and kind == "points" and n * d > max_cells:   # points are made dense
        raise ValueError(f"{fname} is too large to load as points: {n}×{d} = {n * d:,} cells once dense; the limit is "
                         f"{max_cells:,} cells (n·d) — load it as counts, or reduce it")
    if sp.issparse(X):
        if X.nnz > max_cells or max(n, d) > MAX_SIDE:
            raise ValueError(f"{fname} is too large: {n}×{d} with {X.nnz:,} stored entries; the limits are "
                             f"{max_cells:,} entries and {MAX_SIDE:,} rows/columns")
    elif n * d > max_cells:
        raise ValueError(f"{fname} is too large: {n}×{d} = {n * d:,} cells; the limit is {max_cells:,} cells (n·d)")


def _flagged(X, bad):
    """How many entries ``bad(values)`` flags, and the first in reading order:
    ``(count, row, column, value)`` with 1-based row and column, or None."""
    if sp.issparse(X):
        C = X.tocoo()
        m = bad(C.data)
        rows, cols, vals = C.row[m], C.col[m], C.data[m]
    else:
        rows, cols = np.nonzero(bad(X))
        vals = X[rows, cols]
    if rows.size == 0:
        return None
    i = np.lexsort((cols, rows))[0]
    return int(rows.size), int(rows[i]) + 1, int(cols[i]) + 1, vals[i]


def _check_finite(fname, X, what="data"):
    hit = _flagged(X, lambda v: ~np.isfinite(v))
    if hit is not None:
        count, i, j, v = hit
        raise ValueError(f"{fname}: NaN or infinite values are not allowed — {count:,} in the {what}, the first at "
                         f"row {i}, column {j} (1-based): {v}")


def _check_values(fname, X, kind):
    n, d = X.shape
    if n == 0 or d == 0:
        raise ValueError(f"{fname} is empty: the matrix has shape {n}×{d}")
    _check_finite(fname, X)
    hit = _flagged(X, lambda v: np.abs(v) > MAX_ABS_VALUE)
    if hit is not None:
        count, i, j, v = hit
        raise ValueError(f"{fname}: {_entries(count)} larger than {MAX_ABS_VALUE:g} in magnitude, the first at row {i}, "
                         f"column {j} (1-based): {v:g}. Squared distances of such values overflow floating point: "
                         "rescale the file (divide every value by the same power of ten; the clusters do not change)")
    values = X.data if sp.issparse(X) else X
    top = float(np.abs(values).max()) if values.size else 0.0
    if 0.0 < top < MIN_SCALE:
        raise ValueError(f"{fname}: every value is smaller than {MIN_SCALE:g} in magnitude (the largest is {top:.3g}). "
                         "Squared distances of such values underflow floating point to 0, so every method would see "
                         "all points at one place: rescale the file (multiply every value by the same power of ten; "
                         "the clusters do not change)")
    if kind == "counts":
        hit = _flagged(X, lambda v: v < 0)
        if hit is not None:
            count, i, j, v = hit
            raise ValueError(f"{fname}: negative counts — a count matrix must be ≥ 0, but {_entries(count)} "
                             f"negative, the first at row {i}, column {j} (1-based): {v:g}. Load the file as points "
                             "instead?")
        if X.sum() == 0:
            raise ValueError(f"{fname}: every count is zero — nothing to co-cluster")
    return X


def _check_shape(fname, n, d, kind):
    if kind == "points":
        if n < 2:
            raise ValueError(f"{fname} has {n} row: at least 2 points (rows) are needed")
        if d > WIDE_RATIO * n:
            raise ValueError(f"{fname} has n={n} rows and d={d} columns (more than {WIDE_RATIO}× as many columns as "
                             "rows): rows must be points; did you mean to transpose? (If the rows really are points, "
                             "reduce the dimension first: the private methods' noise grows with d.)")
    elif n < 2 or d < 2:
        raise ValueError(f"{fname} has shape {n}×{d}: a count matrix needs at least 2 rows and 2 columns")
