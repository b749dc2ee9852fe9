"""Plotly figures (no Streamlit). One module per area: data, subspace, gibbs, cocluster, kmeans."""
