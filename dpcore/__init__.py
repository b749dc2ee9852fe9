"""dpcore: differentially private clustering, the numeric library behind dpclust-explorer.

A pure library (no Streamlit): sklearn-style estimators, every random choice through a
``numpy.random.Generator`` passed as ``random_state``, every private estimator reporting
its privacy spend through a :class:`dpcore.privacy.accounting.PrivacyLedger`.

Layout: ``data`` (generators and loaders; the real data ships in ``datasets/``),
``privacy/`` (mechanisms, composition, ledger, accountant), ``metrics``, ``preprocessing``,
``validation``, ``work`` (every fit's work bounded before it starts), ``defaults``, ``exceptions``,
``subspace/`` (solvers and private subspace clustering), ``cocluster/``, ``kmeans/``, ``upload``
and ``export`` (the app's file formats);
``lab/`` (the method catalogue, sweeps, comparisons, audits, the papers' reproduction and its
gallery), built on the library; ``plots/`` (plotly figures), the presentation layer above both.

The library — the algorithm subpackages ``kmeans``, ``subspace``, ``cocluster`` and
``privacy``, and ``data``, ``metrics``, ``preprocessing``, ``validation``, ``work``, ``defaults``,
``exceptions``, ``upload``, ``export`` — never imports the lab. ``plots/`` may (it draws
sweeps' results), and ``dpcore/reproduce.py`` is only the command's short name:
``python -m dpcore.reproduce`` runs :mod:`dpcore.lab.reproduce`.
"""
__version__ = "0.3.0"
