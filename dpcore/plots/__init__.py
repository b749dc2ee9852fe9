"""Plotly figures (no Streamlit), one module per area: data, subspace, private_subspace, gibbs,
cocluster, kmeans, small_multiples, audit, experiments (privacy–utility curves) and paper (a
panel of the papers' figures). The presentation layer: it may use the lab (:mod:`dpcore.lab`);
the algorithms never import it."""
