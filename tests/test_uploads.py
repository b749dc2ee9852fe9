"""Uploads: dpcore.upload.load_upload and the Data page's uploader.

Every bad input of the table is checked twice: in dpcore (a ValueError naming the problem)
and through AppTest on the Data page (an st.error with exactly dpcore's words, the previous
dataset kept, and the page still usable: a good upload right after works). AppTest drives
``st.file_uploader`` directly (``set_value((name, bytes, mime))``, Streamlit ≥ 1.5x).
"""
from __future__ import annotations

import io
import json
import os
import pickle
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
import scipy.io as sio
import scipy.sparse as sp
from streamlit.testing.v1 import AppTest

from apptest_helpers import by_key, open_page, press
from apptest_helpers import submit as form_button
from dpcore.data import DATASETS, load_dataset, make_union_of_subspaces
from dpcore.upload import MAX_BYTES, MAX_CELLS, load_upload, registered, reload_code, upload_key
import dpcore.upload as upload_mod

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_data" / "uploads"
PREV = {"kind": "subspaces", "n": 120, "d": 5, "k": 2, "q": 2, "sigma": 0.05, "random_state": 1}


# ----------------------------------------------------------------------------- file builders
def npy(a, **kw):
    b = io.BytesIO()
    np.save(b, a, **kw)
    return b.getvalue()


def npz(compressed=False, **arrays):
    b = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(b, **arrays)
    return b.getvalue()


def sparse_npz(m):
    b = io.BytesIO()
    sp.save_npz(b, m)
    return b.getvalue()


def mtx(m, **kw):
    b = io.BytesIO()
    sio.mmwrite(b, m, **kw)
    return b.getvalue()


def csv_bytes(X, labels=None, header=None):
    lines = [",".join(header)] if header else []
    for i, row in enumerate(X):
        lines.append(",".join(f"{v:.6g}" for v in row) + ("" if labels is None else f",{labels[i]}"))
    return ("\n".join(lines) + "\n").encode()


class Evil:
    """Unpickling this calls os.mkdir(path): a loader that unpickles would create the folder."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


MARKER = str(Path(__file__).resolve().parent / "_unpickled_marker_must_not_exist")
_rng = np.random.default_rng(0)
GOOD_CSV = csv_bytes(_rng.standard_normal((20, 3)), header=["a", "b", "c"])
BAD_SPARSE = npz(format=np.array("csr"), shape=np.array([2, 2]), data=np.array([1.0]), indices=np.array([7]),
                 indptr=np.array([0, 1, 1]))


def too_big_bytes():
    return b"1,2\n" * (MAX_BYTES // 4 + 1)


# (id, file name, bytes or a function returning them, options, expected substring of the message)
FILE_CASES = [
    ("empty csv", "empty.csv", b"", {}, "empty.csv is empty"),
    ("blank lines only", "blank.csv", b"\n  \n\n", {}, "blank.csv is empty"),
    ("header only", "header.csv", b"x,y,z\n", {}, "has a header line (x, y, z) but no data rows"),
    ("text cell", "text.csv", b"x,y\n1,2\n3,abc\n", {}, "line 3, column 2 ('y'): 'abc' is not a number"),
    ("text label without the label option", "iris.csv", b"1,2,setosa\n3,4,virginica\n", {},
     "tick 'last column is the class label'"),
    ("NaN cell", "nan.csv", b"1,2\n3,nan\n", {}, "line 2, column 2: 'nan' — NaN and infinite values are not allowed"),
    ("inf cell", "inf.csv", b"1,2\n-inf,4\n", {}, "line 2, column 1: '-inf' — NaN and infinite values"),
    ("missing cell", "gap.csv", b"1,2\n3,\n", {}, "line 2, column 2 is empty: missing values are not allowed"),
    ("ragged rows", "ragged.csv", b"1,2,3\n4,5\n", {}, "line 2: 2 field(s) but the first line has 3"),
    ("empty class label", "lab.csv", b"1,2,a\n3,4,\n", {"labels": "last_column"},
     "line 2: the class label (last column) is empty"),
    ("label column leaves no feature", "one.csv", b"1\n2\n", {"labels": "last_column"},
     "has a single column: with the last column as the class label no feature is left"),
    ("not UTF-8", "latin.csv", "1;2\n3;é\n".encode("latin-1"), {}, "is not UTF-8 text"),
    ("npy renamed csv", "arr.csv", npy(np.ones((3, 2))), {}, "it looks like a .npy array"),
    ("1-D npy", "vec.npy", npy(np.arange(5.0)), {}, "got a 1-D array of length 5"),
    ("3-D npy", "cube.npy", npy(np.zeros((2, 3, 4))), {}, "got a 3-D array of shape (2, 3, 4)"),
    ("object npy", "obj.npy", npy(np.array([{"a": 1}, None], dtype=object), allow_pickle=True), {},
     "holds Python objects (a pickle)"),
    ("malicious pickle npy", "evil.npy", npy(np.array([Evil(MARKER)], dtype=object), allow_pickle=True), {},
     "pickles are never loaded"),
    ("raw pickle named npy", "pickle.npy", pickle.dumps({"X": [1, 2]}), {}, "is not a valid .npy file"),
    ("text npy", "words.npy", npy(np.array([["a", "b"], ["c", "d"]])), {}, "holds text (dtype <U1), not numbers"),
    ("complex npy", "cplx.npy", npy(np.ones((3, 2), complex)), {}, "holds complex numbers"),
    ("npz without arrays", "nothing.npz", npz(), {}, "holds no arrays"),
    ("npz with several unnamed arrays", "multi.npz", npz(a=np.ones((3, 2)), b=np.ones((3, 2))), {},
     "holds several arrays (a, b): name the data array 'X'"),
    ("pickle inside npz", "evil.npz", npz(X=np.array([Evil(MARKER)], dtype=object)), {},
     "holds Python objects (a pickle)"),
    ("corrupt npz", "broken.npz", b"PK\x03\x04 this is not a zip", {}, "is not a valid .npz file"),
    ("sparse npz with bad indices", "badidx.npz", BAD_SPARSE, {"kind": "counts"}, "is not a valid sparse .npz file"),
    ("npz labels and label column", "lab.npz", npz(X=np.ones((3, 2)), labels=np.arange(3)),
     {"labels": "last_column"}, "already holds a 'labels' array"),
    ("corrupt mtx (truncated)", "cut.mtx", b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n", {},
     "is not a valid Matrix Market file"),
    ("mtx without banner", "plain.mtx", b"3 3 1\n1 1 1.0\n", {}, "the first line must start with %%MatrixMarket"),
    # scipy's Matrix Market reader killed the process (SIGFPE) on an array of 0 rows: the whole server (issue 33)
    ("empty mtx array", "none.mtx", b"%%MatrixMarket matrix array real general\n%\n0 1\n", {},
     "none.mtx is empty: the matrix has shape 0×1"),
    ("negative counts (csv)", "neg.csv", b"1,2\n3,-4\n", {"kind": "counts"},
     "negative counts — a count matrix must be ≥ 0, but 1 entry is negative, the first at row 2, column 2"),
    ("negative counts (mtx)", "neg.mtx", mtx(sp.coo_matrix(np.array([[1.0, 0], [0, 4], [-2, 1]]))),
     {"kind": "counts"}, "negative counts"),
    ("all-zero counts", "zeros.csv", b"0,0\n0,0\n", {"kind": "counts"}, "every count is zero"),
    ("too many cells", "huge.npz", npz(compressed=True, X=np.zeros((MAX_CELLS // 1000 + 1, 1000), np.float32)), {},
     f"the limit is {MAX_CELLS:,} cells (n·d)"),
    ("too many bytes", "big.csv", too_big_bytes, {},
     "is too large: 50.0 MB (52,428,804 bytes); the limit is 50.0 MB (52,428,800 bytes)"),
    ("wrong extension", "table.xlsx", b"PK\x03\x04", {}, "unsupported file extension '.xlsx'"),
    ("no extension", "README", b"1,2\n", {}, "unsupported file extension '(none)'"),
    ("transposed points", "wide.csv", csv_bytes(np.ones((3, 40))), {},
     "rows must be points; did you mean to transpose?"),
    ("transpose with label column", "t.csv", b"1,2,a\n3,4,b\n", {"labels": "last_column", "transpose": True},
     "transpose and labels='last_column' cannot be combined"),
    ("a single point", "one_row.csv", b"1,2,3\n", {}, "at least 2 points (rows) are needed"),
]

# (id, dpcore spec, Data page kind, {parameter: value} set in the inputs data_<kind>_<parameter>, or None to
# inject the spec, expected substring)
PARAM_CASES = [
    ("n < k", {"kind": "subspaces", "n": 2, "d": 5, "k": 3, "q": 2}, "subspaces",
     {"n": 2, "k": 3}, "n must be >= k"),
    ("q >= d", {"kind": "subspaces", "n": 50, "d": 3, "k": 2, "q": 3}, "subspaces",
     {"d": 3, "q": 3}, "q must be < d"),
    # the form's inputs cannot go below their limits (dpcore.data.GENERATOR_LIMITS): such specs come from a session
    ("sigma < 0", {"kind": "subspaces", "n": 50, "d": 5, "k": 2, "q": 2, "sigma": -0.1}, None, None,
     "sigma must be a number from 0 to 10"),
    ("centre box 0", {"kind": "gaussians", "n": 50, "center_box": 0.0}, None, None,
     "center_box must be a number from 0.01 to 100"),
    ("n × d above the cap", {"kind": "gaussians", "n": 100_000, "d": 101}, "gaussians",
     {"n": 100_000, "d": 101}, "n × d must be at most 10,000,000 cells"),
    ("row clusters > rows", {"kind": "blocks", "n_rows": 3, "k": 5}, "blocks", {"n_rows": 3, "k": 5},
     "k must be an integer in [1, 3]"),      # the Data page: "row clusters must be …" (PAGE_WORDS)
    ("unknown dataset", {"kind": "mnist"}, None, None, "kind must be one of"),
]


#: what the Data page says instead of dpcore's words: the parameter named by its field's label (pages/2_data.py
#: FIELD_LABELS, ui.common.in_user_words); dpcore says "k", the field is "row clusters"
PAGE_WORDS = {"row clusters > rows": "row clusters must be an integer in [1, 3]; got 5"}


def _data(data):
    return data() if callable(data) else data


def _file_params():
    return [pytest.param(name, data, opts, msg, id=cid) for cid, name, data, opts, msg in FILE_CASES]


def _param_params(page=False):
    return [pytest.param(spec, kind, widgets, PAGE_WORDS.get(cid, msg) if page else msg, id=cid)
            for cid, spec, kind, widgets, msg in PARAM_CASES]


def test_table_is_large_enough():
    assert len(FILE_CASES) + len(PARAM_CASES) >= 15
    assert len({c[0] for c in FILE_CASES + PARAM_CASES}) == len(FILE_CASES) + len(PARAM_CASES)


# ----------------------------------------------------------------------------- dpcore level
@pytest.mark.parametrize("name,data,opts,message", _file_params())
def test_bad_file_raises_valueerror(name, data, opts, message):
    with pytest.raises(ValueError) as exc:
        load_upload(name, _data(data), **opts)
    assert message in str(exc.value)
    assert not os.path.exists(MARKER), "a pickle was unpickled"


@pytest.mark.parametrize("spec,kind,widgets,message", _param_params())
def test_bad_parameters_raise_valueerror(spec, kind, widgets, message):
    with pytest.raises(ValueError, match=None) as exc:
        load_dataset(**spec)
    assert message in str(exc.value)


@pytest.mark.parametrize("kwargs,message", [
    ({"kind": "matrix"}, "kind must be 'points' or 'counts'"),
    ({"labels": "first_column"}, "labels must be 'none' or 'last_column'"),
    ({"norm": "max"}, "norm must be one of none, rows, clip"),
    ({"transpose": "yes"}, "transpose must be True or False"),
    ({"max_bytes": 10}, "ok.csv is too large: 12 bytes; the limit is 10 bytes"),
    ({"max_cells": 5}, "the limit is 5 cells (n·d)"),
])
def test_bad_options_raise_valueerror(kwargs, message):
    with pytest.raises(ValueError) as exc:
        load_upload("ok.csv", b"1,2,3\n4,5,6\n", **kwargs)
    assert message in str(exc.value)


def test_data_must_be_bytes():
    with pytest.raises(ValueError, match="data must be the file's bytes"):
        load_upload("x.csv", "1,2\n3,4\n")


# ----------------------------------------------------------------------------- dpcore good paths
def test_csv_with_header_and_text_labels():
    ds = load_upload("two_planes.csv", (SAMPLES / "two_planes.csv").read_bytes(), labels="last_column")
    assert ds.kind == "points" and ds.X.shape == (200, 5) and ds.X.dtype == np.float64
    assert ds.extras["class_names"] == ["A", "B"] and ds.n_classes == 2
    assert ds.extras["column_names"] == ["x1", "x2", "x3", "x4", "x5", "class"]
    assert ds.params["kind"] == "upload" and len(ds.params["sha256"]) == 64
    assert "data-derived" in ds.description and "NOT private" in ds.privacy_note
    # the file was written from the generator's stream default_rng(0) (before data generators got a
    # stream of their own, random_state=0 meant that; dpcore.data.data_rng)
    truth = make_union_of_subspaces(n=200, d=5, k=2, q=2, sigma=0.02, random_state=np.random.default_rng(0))
    np.testing.assert_allclose(ds.X, truth.X, atol=1e-5)
    np.testing.assert_array_equal(ds.labels, truth.labels)


def test_numeric_labels_are_ordered_numerically_and_delimiters_sniffed():
    ds = load_upload("s.tsv", b"1\t2\t10\n3\t4\t2\n5\t6\t2\n", labels="last_column")
    assert ds.extras["class_names"] == ["2", "10"] and list(ds.labels) == [1, 0, 0]
    ds = load_upload("s.csv", b"1;2\n3;4\n5;6\n")
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4], [5, 6]])
    ds = load_upload("w.txt", b"1 2\n 3  4\n\n5 6\n")
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4], [5, 6]])


def test_npy_points_with_norm_options():
    X = np.random.default_rng(1).standard_normal((30, 4)) * 3
    ds = load_upload("x.npy", npy(X))
    np.testing.assert_array_equal(ds.X, X)
    assert "public_radius" not in ds.extras and ds.labels is None
    rows = load_upload("x.npy", npy(X), norm="rows")
    assert np.all(np.linalg.norm(rows.X, axis=1) <= 1.0) and rows.extras["public_radius"] == 1.0
    np.testing.assert_allclose(np.linalg.norm(rows.X, axis=1), 1.0)
    clip = load_upload("x.npy", npy(X), norm="clip")
    assert np.all(np.linalg.norm(clip.X, axis=1) <= 1.0) and clip.extras["n_clipped"] > 0
    ds = load_upload("w.npy", npy(X[:3].T.copy()), transpose=True)   # (4, 3) on file -> 3 points in R^4
    assert ds.X.shape == (3, 4)
    ds = load_upload("l.npy", npy(np.c_[X, np.arange(30) % 3]), labels="last_column")
    assert ds.X.shape == (30, 4) and ds.n_classes == 3 and ds.extras["class_names"] == ["0", "1", "2"]


def test_sparse_npz_and_mtx_counts():
    A = sp.random(25, 40, density=0.2, format="csr", random_state=2)
    A.data = np.ceil(A.data * 5)
    for name, data in [("a.npz", sparse_npz(A)), ("a.npz", sparse_npz(A.tocsc())), ("a.npz", sparse_npz(A.tocoo())),
                       ("a.mtx", mtx(A))]:
        ds = load_upload(name, data, kind="counts")
        assert sp.isspmatrix_csr(ds.X) and ds.X.shape == (25, 40) and (ds.X != A).nnz == 0
        assert ds.kind == "counts" and "not all integers" not in ds.privacy_note
    ds = load_upload("blocks_counts.mtx", (SAMPLES / "blocks_counts.mtx").read_bytes(), kind="counts")
    assert ds.X.shape == (60, 40) and ds.X.nnz > 0
    ds = load_upload("frac.mtx", mtx(A * 0.5), kind="counts")
    assert "not all integers" in ds.privacy_note
    ds = load_upload("classic3.npz", (DATASETS / "cluto" / "classic3.npz").read_bytes(), kind="counts")
    assert ds.X.shape == (3891, 4303) and ds.n_classes == 3   # the shipped CSR triplet, with its labels
    # a sparse file loaded as points becomes dense
    ds = load_upload("a.npz", sparse_npz(A[:, :8]), kind="points")
    assert isinstance(ds.X, np.ndarray) and ds.X.shape == (25, 8)


def test_dense_npz_picks_X_and_labels():
    X = np.arange(12.0).reshape(6, 2)
    ds = load_upload("d.npz", npz(X=X, labels=np.array([0, 1, 0, 1, 2, 2]), extra=np.ones(3)))
    np.testing.assert_array_equal(ds.X, X)
    assert ds.n_classes == 3
    assert load_upload("one.npz", npz(compressed=True, data=X)).X.shape == (6, 2)
    ds = load_upload("t.npz", npz(X=X, y=np.array(["cat", "dog", "cat", "cat", "dog", "eel"])))
    assert ds.extras["class_names"] == ["cat", "dog", "eel"] and list(ds.labels) == [0, 1, 0, 0, 1, 2]


def test_registry_makes_upload_specs_loadable_only_inside_the_block():
    ds = load_upload("x.csv", GOOD_CSV)
    with pytest.raises(ValueError, match="uploaded data live only in the session"):
        load_dataset(**ds.params)
    with registered(ds):
        with registered(ds):
            assert load_dataset(**ds.params) is ds
        assert load_dataset(**ds.params) is ds   # reference-counted
    assert upload_mod._REGISTRY == {}
    with pytest.raises(ValueError):
        load_dataset(**ds.params)


def test_reload_code_rebuilds_the_upload(tmp_path, monkeypatch):
    data = (SAMPLES / "two_planes.csv").read_bytes()
    ds = load_upload("two_planes.csv", data, labels="last_column", norm="rows")
    (tmp_path / "two_planes.csv").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec("\n".join(reload_code(ds.params)), scope)
    np.testing.assert_array_equal(scope["ds"].X, ds.X)
    assert scope["ds"].params == ds.params


# ----------------------------------------------------------------------------- Data page (AppTest)
def data_page(spec=PREV):
    return open_page("2_data.py", spec=spec)


def summary(at):
    return dict(zip(at.table[0].value.index, at.table[0].value["value"]))


def choose_kind(at, kind):
    box = by_key(at, "data_kind")
    if box.value != kind:
        box.set_value(kind)
        at.run()
        assert not at.exception, at.exception


def submit(at):
    """Press the Data page's "Generate / load" (an error box is what some tests expect)."""
    form_button(at, "dataset_form").click()
    at.run()


def upload(at, name, data, kind="points", labels="none", transpose=False, norm="none"):
    choose_kind(at, "upload")
    next(u for u in at.file_uploader if u.key == "data_upload_file").set_value((name, data, "application/octet-stream"))
    by_key(at, "data_upload_data_kind").set_value(kind)
    by_key(at, "data_upload_norm").set_value(norm)
    by_key(at, "data_upload_labels").set_value(labels == "last_column")
    by_key(at, "data_upload_transpose").set_value(transpose)
    submit(at)


def assert_still_usable(at):
    upload(at, "good.csv", GOOD_CSV)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert summary(at)["name"] == "upload: good.csv"
    assert any("good.csv loaded" in s.value for s in at.success)


@pytest.mark.parametrize("name,data,opts,message", _file_params())
def test_page_bad_file_shows_dpcore_error_and_keeps_dataset(name, data, opts, message):
    data = _data(data)
    with pytest.raises(ValueError) as exc:
        load_upload(name, data, **opts)
    at = data_page()
    before, spec_before = summary(at), dict(at.session_state["dataset"]["spec"])
    upload(at, name, data, **opts)
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [str(exc.value)]      # the very words of dpcore
    assert message in at.error[0].value
    assert summary(at) == before and at.session_state["dataset"]["spec"] == spec_before
    assert not os.path.exists(MARKER), "a pickle was unpickled"
    assert_still_usable(at)


@pytest.mark.parametrize("spec,kind,widgets,message", _param_params(page=True))
def test_page_bad_parameters_show_error_and_keep_dataset(spec, kind, widgets, message):
    if widgets is None:   # a stale or unknown spec in the session: error, then the default dataset
        at = data_page(spec)
        assert any(message in e.value for e in at.error)
        assert summary(at)["name"].startswith("union of subspaces (n=1000")
    else:
        at = data_page()
        before = summary(at)
        choose_kind(at, kind)
        for name, value in widgets.items():
            by_key(at, f"data_{kind}_{name}").set_value(value)
        submit(at)
        assert not at.exception, at.exception
        assert len(at.error) == 1 and message in at.error[0].value
        assert summary(at) == before and at.session_state["dataset"]["spec"] == PREV
    assert_still_usable(at)


def test_page_submit_without_file():
    at = data_page()
    before = summary(at)
    choose_kind(at, "upload")
    submit(at)
    assert not at.exception and "Choose a file to upload first" in at.error[0].value
    assert summary(at) == before
    assert_still_usable(at)


def test_page_csv_with_labels():
    at = data_page()
    upload(at, "two_planes.csv", (SAMPLES / "two_planes.csv").read_bytes(), labels="last_column")
    assert not at.exception and not at.error
    s = summary(at)
    assert (s["name"], s["kind"], s["rows (n)"], s["columns (d)"], s["classes"]) == \
        ("upload: two_planes.csv", "points", "200", "5", "2")
    captions = " ".join(c.value for c in at.caption)
    assert "classes: A, B" in captions and "data-derived" in captions and "SHA-256" in captions
    spec = at.session_state["dataset"]["spec"]
    assert spec["kind"] == "upload" and spec["labels"] == "last_column" and spec["data_kind"] == "points"
    # the form now shows the upload's options (the page reran with them)
    assert by_key(at, "data_upload_labels").value is True
    assert len(at.get("plotly_chart")) >= 1


def test_page_npy_points_scaled_rows():
    X = np.random.default_rng(3).standard_normal((50, 4)) * 5
    at = data_page()
    upload(at, "pts.npy", npy(X), norm="rows")
    assert not at.exception and not at.error
    s = summary(at)
    assert s["name"] == "upload: pts.npy" and float(s["max row norm"]) <= 1.0
    assert "unit norm" in " ".join(i.value for i in at.info)


def test_page_sparse_npz_as_counts():
    A = sp.random(30, 50, density=0.1, format="csr", random_state=4)
    A.data = np.ceil(A.data * 3)
    at = data_page()
    upload(at, "docs.npz", sparse_npz(A), kind="counts")
    assert not at.exception and not at.error
    s = summary(at)
    assert (s["kind"], s["rows (n)"], s["columns (d)"], s["non-zeros"]) == ("counts", "30", "50", str(A.nnz))


def test_page_mtx_counts():
    at = data_page()
    upload(at, "blocks_counts.mtx", (SAMPLES / "blocks_counts.mtx").read_bytes(), kind="counts")
    assert not at.exception and not at.error
    s = summary(at)
    assert (s["name"], s["kind"], s["rows (n)"], s["columns (d)"]) == \
        ("upload: blocks_counts.mtx", "counts", "60", "40")


def test_page_keeps_a_bounded_number_of_uploads():
    at = data_page()
    for i in range(5):
        upload(at, f"f{i}.csv", csv_bytes(np.random.default_rng(i).standard_normal((10, 2))))
        assert not at.error
    store = at.session_state["uploaded_datasets"]
    assert len(store) == 3 and summary(at)["name"] == "upload: f4.csv"
    # an evicted upload spec reports itself and the page falls back to the default
    evicted = load_upload("f0.csv", csv_bytes(np.random.default_rng(0).standard_normal((10, 2)))).params
    at.session_state["dataset"] = {"spec": evicted}
    at.run()
    assert not at.exception and "no longer in this session's memory" in at.error[0].value
    assert summary(at)["name"].startswith("union of subspaces (n=1000")


# ----------------------------------------------------------------------------- other pages on uploads
def test_cluster_page_runs_kplane_on_uploaded_points():
    """Upload on the Data page, switch to Cluster (same session), run k-plane. (AppTest's
    switch_page runs the page script alone, so the shared sidebar is not drawn here.)"""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/2_data.py")
    at.run()
    upload(at, "two_planes.csv", (SAMPLES / "two_planes.csv").read_bytes(), labels="last_column")
    assert not at.exception and not at.error
    assert at.session_state["dataset"]["spec"]["name"] == "two_planes.csv"
    at.switch_page("pages/3_cluster.py")
    at.run()
    assert not at.exception, at.exception
    assert "upload: two_planes.csv" in " ".join(c.value for c in at.caption)
    by_key(at, "cl_method").set_value("kplane")
    at.run()
    by_key(at, "cl_q").set_value(2)
    press(at, "cluster_form")
    assert not at.error, [e.value for e in at.error]
    df = at.dataframe[0].value
    m = dict(zip(df.index, df["value"]))
    assert float(m["accuracy"]) >= 0.95          # two planes in R^5, σ = 0.02: k-plane separates them


def _with_upload(page_name, ds, timeout=120):
    """The page with ``ds`` as this session's only upload and the current dataset."""
    return open_page(page_name, spec=dict(ds.params), timeout=timeout,
                     state={"uploaded_datasets": OrderedDict({upload_key(ds.params): ds})})


@pytest.mark.parametrize("page_file", ["4_gibbs.py", "5_coclustering.py", "6_kmeans.py", "7_privacy_utility.py",
                                       "8_audit.py"])
@pytest.mark.parametrize("kind", ["points", "counts"])
def test_other_pages_render_with_an_upload(page_file, kind):
    if kind == "points":
        ds = load_upload("two_planes.csv", (SAMPLES / "two_planes.csv").read_bytes(), labels="last_column")
    else:
        ds = load_upload("blocks_counts.mtx", (SAMPLES / "blocks_counts.mtx").read_bytes(), kind="counts")
    at = _with_upload(page_file, ds)
    assert not at.error, [e.value for e in at.error]


def test_privacy_utility_sweep_runs_in_process_on_an_upload():
    truth = make_union_of_subspaces(n=120, d=12, k=2, q=3, sigma=0.01, random_state=5)
    ds = load_upload("planes12.csv", csv_bytes(truth.X, labels=truth.labels), labels="last_column")
    at = _with_upload("7_privacy_utility.py", ds, timeout=300)
    workers = by_key(at, "pu_jobs")
    assert list(workers.options) == ["1"]         # uploads cannot be rebuilt in worker processes
    by_key(at, "pu_methods").set_value(["k-plane", "SuLQ-10"])
    by_key(at, "pu_metrics").set_value(["cost", "nmi"])
    by_key(at, "pu_points").set_value(2)
    by_key(at, "pu_trials").set_value(1)
    press(at, "sweep_form")
    assert not at.error, [e.value for e in at.error]
    df = at.session_state["privacy_utility"]["df"]
    assert len(df) == 1 + 2 and df["nmi"].notna().all()
    assert upload_mod._REGISTRY == {}                  # nothing outlives the sweep


@pytest.mark.slow
def test_default_sweep_and_audit_run_on_two_planes():
    """The Privacy–utility page's DEFAULT sweep and the Audit page run on the shipped sample
    upload two_planes.csv (d = 5; docs/data.md). The sweep used to fail: its default q fell back to 9 with no cap
    at d − 1 (now dpcore.defaults.default_subspace_dim, shared by pages, sweeps and audits)."""
    ds = load_upload("two_planes.csv", (SAMPLES / "two_planes.csv").read_bytes(), labels="last_column")
    at = _with_upload("7_privacy_utility.py", ds, timeout=600)
    press(at, "sweep_form")                                                      # every control at its default
    assert not at.error, [e.value for e in at.error]
    df = at.session_state["privacy_utility"]["df"]
    assert len(df) > 0 and df["warnings"].str.contains("subspace_dim").sum() == 0
    at = _with_upload("8_audit.py", ds, timeout=600)
    press(at, "audit_form")
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["audit"]["res"].n_runs > 0


# ----------------------------------------------------------------------------- the subspace dimension q of an upload
TWO_PLANES = SAMPLES / "two_planes.csv"


def two_planes(**opts):
    return load_upload("two_planes.csv", TWO_PLANES.read_bytes(), labels="last_column", **opts)


def lines_csv():
    """Three lines through 0 in R^10 (q = 1): the public default (3) and the data's q differ."""
    truth = make_union_of_subspaces(n=240, d=10, k=3, q=1, sigma=0.02, random_state=3)
    return csv_bytes(truth.X, labels=truth.labels)


def test_upload_default_q_is_public_from_the_shape_only():
    """Uploads used to default to q = 3: on two_planes.csv (d = 5) k-plane then lands at d_W 1.02
    and Gibbs at 1.53. The default is now min(3, ⌊d/2⌋): 2 there, and it depends on d only."""
    from dpcore.defaults import default_subspace_dim, public_upload_subspace_dim, subspace_dim_reason
    ds = two_planes()
    assert default_subspace_dim(ds) == 2
    assert [public_upload_subspace_dim(d) for d in range(1, 9)] == [1, 1, 1, 2, 2, 3, 3, 3]
    other = load_upload("noise.csv", csv_bytes(np.random.default_rng(9).standard_normal((200, 5)) * 40))
    assert default_subspace_dim(other) == 2           # other values, same shape: the same default
    assert "public" in subspace_dim_reason(ds) and "d = 5" in subspace_dim_reason(ds)
    with pytest.raises(ValueError, match="d must be"):
        public_upload_subspace_dim(0)


def test_suggested_q_is_read_off_the_data():
    from dpcore.upload import suggest_subspace_dim
    assert suggest_subspace_dim(two_planes().X, 2) == 2
    assert suggest_subspace_dim(two_planes().X, 3) == 2       # without the labels' k (3 is the pages' fallback)
    lines = load_upload("lines.csv", lines_csv(), labels="last_column")
    assert suggest_subspace_dim(lines.X, 3) == 1
    solids = make_union_of_subspaces(n=500, d=6, k=2, q=3, sigma=0.05, random_state=1)
    assert suggest_subspace_dim(solids.X, 2) == 3
    for bad, message in [(np.ones(5), "2-D array"), (np.array([[1.0, np.nan], [0, 1]]), "NaN")]:
        with pytest.raises(ValueError, match=message):
            suggest_subspace_dim(bad, 2)
    with pytest.raises(ValueError, match="n_clusters"):
        suggest_subspace_dim(two_planes().X, 0)


def test_accepted_q_lives_in_the_spec_and_says_it_is_not_private(tmp_path, monkeypatch):
    from dpcore.defaults import default_subspace_dim, subspace_dim_reason
    from dpcore.upload import with_subspace_dim
    ds = two_planes()
    fixed = with_subspace_dim(ds, 3)
    assert fixed.params["subspace_dim"] == 3 and default_subspace_dim(fixed) == 3 and fixed.X is ds.X
    assert "NOT private" in fixed.privacy_note and "NOT private" in subspace_dim_reason(fixed)
    back = with_subspace_dim(fixed, None)
    assert back.params == ds.params and back.privacy_note == ds.privacy_note
    assert two_planes(subspace_dim=3).params == fixed.params
    with registered(fixed):
        assert load_dataset(**fixed.params) is fixed
    (tmp_path / "two_planes.csv").write_bytes(TWO_PLANES.read_bytes())
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec("\n".join(reload_code(fixed.params)), scope)
    assert scope["ds"].params == fixed.params
    for q in (0, 5):
        with pytest.raises(ValueError, match="subspace_dim"):
            with_subspace_dim(ds, q)
    counts = load_upload("blocks_counts.mtx", (SAMPLES / "blocks_counts.mtx").read_bytes(), kind="counts")
    with pytest.raises(ValueError, match="points"):
        with_subspace_dim(counts, 2)


def _q_text(at):
    return " ".join(m.value for m in at.markdown) + " " + " ".join(c.value for c in at.caption)


def test_data_page_shows_the_public_q_and_the_datas_q():
    at = data_page()
    upload(at, "two_planes.csv", TWO_PLANES.read_bytes(), labels="last_column")
    assert not at.exception and not at.error
    text = _q_text(at)
    assert "Subspace dimension q" in text and "**2**" in text
    assert "min(3, ⌊d/2⌋) with d = 5" in text and "(not private): q = 2 — the same" in text
    assert not any(b.key == "data_upload_q_use" for b in at.button)     # nothing to accept


def test_data_page_accepts_the_datas_q_in_one_click_and_every_page_follows():
    at = data_page()
    upload(at, "lines.csv", lines_csv(), labels="last_column")
    assert "Public default, from the shape only: min(3, ⌊d/2⌋) with d = 10" in _q_text(at)
    use = by_key(at, "data_upload_q_use")
    assert use.label == "Use q = 1 (read off the data: not private)"
    use.click()
    at.run()
    assert not at.exception and not at.error
    spec = at.session_state["dataset"]["spec"]
    assert spec["subspace_dim"] == 1
    assert "q = 1 was read off the data: NOT private" in _q_text(at)
    ds = at.session_state["uploaded_datasets"][upload_key(spec)]
    for page_file, key in [("3_cluster.py", "cl_q"), ("4_gibbs.py", "g_q"), ("7_privacy_utility.py", "pu_q")]:
        page = _with_upload(page_file, ds)
        assert by_key(page, key).value == 1, page_file
    by_key(at, "data_upload_q_public").click()
    at.run()
    assert "subspace_dim" not in at.session_state["dataset"]["spec"]


@pytest.mark.parametrize("page_file, key", [("3_cluster.py", "cl_q"), ("4_gibbs.py", "g_q"),
                                            ("7_privacy_utility.py", "pu_q")])
def test_pages_default_to_the_uploads_public_q(page_file, key):
    """Cluster, Gibbs and Privacy–utility take the same q on two_planes.csv: 2 (was 3)."""
    at = _with_upload(page_file, two_planes())
    assert by_key(at, key).value == 2


# ----------------------------------------------------------------------------- upload link, file on the Data page
def test_upload_link_waits_for_the_file_uploaded_on_the_data_page():
    """A link made on an upload, opened in a new session on the Cluster page: its settings wait;
    the student uploads the file on the Data page (with the form's default options: the link's
    are used), goes back to Cluster, and the settings are applied there."""
    data = TWO_PLANES.read_bytes()
    spec = two_planes().params
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["data"] = json.dumps(spec)
    at.query_params["cl_q"] = "3"
    at.run()
    at.switch_page("pages/3_cluster.py")
    at.run()
    assert not at.exception, at.exception
    assert any("This link used an uploaded file (two_planes.csv). Upload it here; the link's settings (cl_q = 3)"
               in w.value for w in at.warning), [w.value for w in at.warning]
    at.switch_page("pages/2_data.py")
    at.run()
    assert any("will then be applied on the Cluster page" in w.value for w in at.warning)
    upload(at, "two_planes.csv", data)          # with the form, labels left unticked: the link's options win
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["dataset"]["spec"] == spec
    assert any("is loaded, read as the link says (points, last column = class label, norm: none). Open the Cluster "
               "page: the link's settings (cl_q = 3) will be applied there" in i.value for i in at.info)
    at.switch_page("pages/3_cluster.py")
    at.run()
    assert not at.exception, at.exception
    assert by_key(at, "cl_q").value == 3 and by_key(at, "cl_k").value == 2     # k follows the upload (2 classes)
    assert any("the link's settings were applied: cl_q = 3" in s.value for s in at.success)
    assert not any("This link used an uploaded file" in w.value for w in at.warning)


# ----------------------------------------------------------------------------- issue 33: tracebacks, a wrong diagnosis
COMMENTED = b"# generated by me\n# x,y,z\n1,2,3\n4,5,6\n7,8,9.5\n"                # the IndexError of issue 33
COMMENTED_MORE = b"# exported\n  # from my script\n1,2,3\n\n# a comment between rows\n4,5,6\n7,8,9.5\n"
PAGE_OPTIONS = {"kind": "points", "labels": "none", "transpose": False, "norm": "none"}   # the form's defaults


def test_csv_starting_with_comment_lines_loads_as_the_data_page_reads_it():
    """Was an IndexError from pandas: the comment line was taken for a whitespace-separated header of
    4 names, and the body's width was not the header's."""
    for data in (COMMENTED, COMMENTED_MORE):
        ds = load_upload("commented.csv", data, **PAGE_OPTIONS)
        np.testing.assert_array_equal(ds.X, [[1, 2, 3], [4, 5, 6], [7, 8, 9.5]])
    from ui.pickers import suggested_subspace_dim
    assert suggested_subspace_dim(ds) in (1, 2)          # and the page's q suggestion works on it
    # the same mismatch without comments: a space-separated header over comma-separated rows
    with pytest.raises(ValueError, match=r"mixed.csv, line 2: 1 field\(s\) but the first \(header\) line has 3 — rows "
                                         r"are ragged \(fields are separated by spaces"):
        load_upload("mixed.csv", b"x y z\n1,2,3\n4,5,6\n")
    with pytest.raises(ValueError, match="has only comment lines"):
        load_upload("notes.csv", b"# nothing here\n  # really\n")
    with pytest.raises(ValueError, match="a comment must be a line of its own"):
        load_upload("inline.csv", b"1,2\n3,4 # the last row\n")


def test_page_loads_a_csv_starting_with_comment_lines():
    at = data_page()
    upload(at, "commented.csv", COMMENTED)
    assert not at.exception and not at.error, [e.value for e in at.error]
    s = summary(at)
    assert (s["name"], s["rows (n)"], s["columns (d)"]) == ("upload: commented.csv", "3", "3")


def test_two_row_upload_gets_a_q_and_the_data_page_keeps_working():
    """Was: "n_clusters must be an integer in [1, 2]; got 3" from the q suggestion (the pages' default
    k = 3 > n = 2), a traceback on every later visit of the Data page."""
    two = b"1,2,3\n4,5,7\n"
    at = data_page()
    upload(at, "two.csv", two)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    for _ in range(2):                       # every later visit too
        at.run()
        assert not at.exception, at.exception
        assert "Read off the data (not private): q = 1" in _q_text(at)
    from ui.pickers import suggested_subspace_dim, suggestion_clusters
    ds = load_upload("two.csv", two, **PAGE_OPTIONS)
    assert suggestion_clusters(ds) == 2 and suggested_subspace_dim(ds) == 1


def test_values_too_small_are_refused_with_the_right_diagnosis():
    """Values of 1e-170 loaded, then their squared distances underflowed to 0 and the k-means page
    said "Choose fewer clusters than distinct points (k < 200)" with k = 3. The upload now names the
    real problem; an all-zero file is not "too small" (its rows are one point, which the pages say)."""
    X = np.random.default_rng(0).standard_normal((200, 5)) * 1e-170
    data = ("\n".join(",".join(repr(float(v)) for v in row) for row in X) + "\n").encode()
    with pytest.raises(ValueError, match=r"tiny.csv: every value is smaller than 1e-100 in magnitude \(the largest is "
                                         r"[0-9.]+e-170\).*rescale the file"):
        load_upload("tiny.csv", data)
    at = data_page()
    upload(at, "tiny.csv", data)
    assert not at.exception and len(at.error) == 1 and "every value is smaller than 1e-100" in at.error[0].value
    assert load_upload("zeros.csv", b"0,0\n0,0\n0,0\n").X.shape == (3, 2)
    assert load_upload("small.csv", b"1e-90,0\n0,1e-95\n").X.shape == (2, 2)      # just above the limit


def test_the_q_suggestion_is_quick_and_right_on_wide_data():
    """k-plane on 1000 × 1000 points took 51 s (1000 × 10,000: over 5 minutes) on the Data page: the
    suggestion now fits in the span of the leading principal directions. It still finds the planted q."""
    from dpcore.upload import _principal_coordinates, suggest_subspace_dim
    for q in (1, 2, 4):
        truth = make_union_of_subspaces(n=600, d=200, k=3, q=q, sigma=0.02, random_state=q)
        assert suggest_subspace_dim(truth.X, 3) == q
    X = np.random.default_rng(1).standard_normal((50, 300))
    P, outside = _principal_coordinates(X, 20)
    assert P.shape == (50, 20)
    # the energy is split exactly between the kept directions and the rest
    assert np.mean(np.sum(P ** 2, axis=1)) + outside == pytest.approx(np.mean(np.sum(X ** 2, axis=1)), rel=1e-9)
    assert _principal_coordinates(X[:, :20], 20)[0] is not None and _principal_coordinates(X[:, :20], 20)[1] == 0.0


@pytest.mark.parametrize("name", ["a.npz", "a.npy", "a.mtx"])
def test_every_one_byte_corruption_is_refused_in_words_or_loads(name):
    """Every byte of a small file flipped in 9 ways: a Dataset or a ValueError naming the file. Found by the fuzz
    suite: a flipped zip directory raised NotImplementedError ("zip file version 10.9"), a bad member offset a
    bare "negative seek value", and (not a flip) a Matrix Market array of 0 rows killed the process (SIGFPE)."""
    A = np.arange(16, dtype=np.float16).reshape(4, 4)
    data = {"a.npz": npz(arr_0=A), "a.npy": npy(A), "a.mtx": mtx(A.astype(float))}[name]
    outcomes = set()
    for i in range(len(data)):
        for x in (1, 2, 4, 8, 16, 32, 64, 128, 255):
            bad = data[:i] + bytes([data[i] ^ x]) + data[i + 1:]
            try:
                ds = load_upload(name, bad)
            except ValueError as exc:
                assert str(exc).startswith(name), (i, x, str(exc))
                outcomes.add("refused")
            else:
                assert ds.X.ndim == 2 and ds.n >= 2
                outcomes.add("loaded")
    assert outcomes == {"refused", "loaded"}
