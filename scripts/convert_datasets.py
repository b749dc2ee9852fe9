"""Convert ../shared/datasets into the compact files dpcore ships as package data (dpcore/datasets/).

Run once from the repository root:  python scripts/convert_datasets.py [SHARED_DATASETS_DIR]

- CLUTO: each document-term matrix becomes dpcore/datasets/cluto/<name>.npz holding the CSR
  arrays (data as int32 counts, indices, indptr, shape) and 0-based class labels.
  The quirks of the source files (see shared/datasets/README.md) are handled here:
  the column named ``cluster`` holds the count; tr11/tr41 have an extra leading index
  column; cstr.txt has explicit zero cells (dropped) and 1-based labels; hitech and reviews
  are MATLAB files with ``dtm``.
- Yale B: the 48x42 uint8 faces, labels, subject ids and light angles are copied into
  dpcore/datasets/yaleb.npz (file names dropped).
dpcore reads them through importlib.resources (dpcore.data.DATASETS), so they travel in its wheel;
neither dpcore nor the app ever reads the shared folder at run time.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
#: Where the files go: dpcore's package data (pyproject.toml's [tool.setuptools.package-data]).
OUT = ROOT / "dpcore" / "datasets"
CLUTO_TEXT = ["classic3", "cstr", "tr11", "tr41", "k1b"]
CLUTO_MAT = ["hitech", "reviews"]


def verify_checksums(src: Path, listing: str):
    for line in (src / listing).read_text().splitlines():
        digest, name = line.split()
        folder = src / listing.replace(".sha256", "")
        actual = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        if actual != digest:
            raise SystemExit(f"checksum mismatch for {folder / name}")


def read_labels(path: Path) -> np.ndarray:
    raw = np.array([int(s) for s in path.read_text().split()])
    return np.unique(raw, return_inverse=True)[1].astype(np.int16)  # 0-based, order kept


def read_cluto_text(path: Path, n_rows: int) -> sp.csr_matrix:
    df = pd.read_csv(path)
    df = df[["doc", "word", "cluster"]]  # drops tr11/tr41's unnamed index column
    df = df[df["cluster"] != 0]  # explicit zero cells (cstr)
    n_cols = int(df["word"].max()) + 1
    M = sp.coo_matrix((df["cluster"].to_numpy(np.int32), (df["doc"].to_numpy(), df["word"].to_numpy())),
                      shape=(n_rows, n_cols)).tocsr()
    M.sum_duplicates()
    return M


def save_cluto(M: sp.csr_matrix, labels: np.ndarray, out: Path):
    M = sp.csr_matrix(M, dtype=np.int32)
    M.eliminate_zeros()
    np.savez_compressed(out, data=M.data, indices=M.indices.astype(np.int32), indptr=M.indptr.astype(np.int64),
                        shape=np.array(M.shape), labels=labels)


def main(src: Path):
    verify_checksums(src, "cluto.sha256")
    verify_checksums(src, "yaleb.sha256")
    out = OUT / "cluto"
    out.mkdir(parents=True, exist_ok=True)
    for name in CLUTO_TEXT + CLUTO_MAT:
        labels = read_labels(src / "cluto" / f"{name}_target.txt")
        if name in CLUTO_MAT:
            M = sp.csr_matrix(scipy.io.loadmat(src / "cluto" / f"{name}.mat")["dtm"])
        else:
            M = read_cluto_text(src / "cluto" / f"{name}.txt", labels.size)
        save_cluto(M, labels, out / f"{name}.npz")
        print(f"{name}: {M.shape[0]} x {M.shape[1]}, nnz {M.nnz}, classes {labels.max() + 1}")
    z = np.load(src / "yaleb" / "extended_yaleb_cropped_48x42.npz")
    np.savez_compressed(OUT / "yaleb.npz", images=z["images"], labels=z["labels"],
                        subject_ids=z["subject_ids"], azimuth=z["azimuth"], elevation=z["elevation"])
    print("yaleb:", z["images"].shape)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "datasets")
