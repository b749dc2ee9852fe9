"""The real datasets shipped inside dpcore (package data, read by :mod:`dpcore.data`).

- ``cluto/<name>.npz``: the seven CLUTO document-term matrices of the co-clustering paper
  (classic3, cstr, tr11, tr41, k1b, hitech, reviews) as CSR arrays of int32 term counts
  (``data``, ``indices``, ``indptr``, ``shape``) and 0-based class ``labels``. Origin: the
  CLUTO collection (Karypis, University of Minnesota); research use, cite CLUTO and the
  original corpora. Loaded by :func:`dpcore.data.load_cluto`.
- ``yaleb.npz``: the 2414 cropped frontal faces of the Extended Yale Face Database B
  (Georghiades, Belhumeur & Kriegman, 2001; Lee, Ho & Kriegman, 2005; free for research use),
  reduced to 48×42 uint8 (``images``, ``labels``, ``subject_ids``, ``azimuth``, ``elevation``).
  Loaded by :func:`dpcore.data.load_yaleb`.

``scripts/convert_datasets.py`` (in the repository) writes these files from the original
ones. They are read through :mod:`importlib.resources` (:data:`dpcore.data.DATASETS`), never
through a path next to the source, so they load from a wheel installed anywhere.
"""
