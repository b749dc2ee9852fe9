"""dpcore: differentially private clustering, the numeric library behind dpclust-explorer.

A pure library (no Streamlit): sklearn-style estimators, every random choice through a
``numpy.random.Generator`` passed as ``random_state``, every private estimator reporting
its privacy spend through a :class:`dpcore.privacy.PrivacyLedger`.

Layout: ``data`` (generators and loaders; the real data ships in ``datasets/``),
``privacy/`` (mechanisms, composition, ledger, accountant), ``metrics``, ``preprocessing``,
``validation``, ``defaults``, ``exceptions``, ``subspace/`` (solvers and private subspace
clustering), ``cocluster/``, ``kmeans/``, ``plots/`` (plotly figures), ``upload`` and
``export`` (the app's file formats), and ``lab/`` (sweeps, comparisons, audits, the papers'
reproduction and its gallery: built on the library, which never imports it).
``python -m dpcore.reproduce`` runs the reproduction.
"""
__version__ = "0.3.0"
