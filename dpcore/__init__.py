"""dpcore: differentially private clustering, the numeric library behind dpclust-explorer.

A pure library (no Streamlit): sklearn-style estimators, every random choice through a
``numpy.random.Generator`` passed as ``random_state``, every private estimator reporting
its privacy spend through a :class:`dpcore.privacy.PrivacyLedger`.

Layout: ``data`` (datasets), ``privacy`` (mechanisms, composition, ledger), ``metrics``,
``subspace/`` (solvers and private subspace clustering), ``cocluster/``, ``kmeans/``,
``plots/`` (plotly figures).
"""
__version__ = "0.1.0"
