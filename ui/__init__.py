"""Streamlit-side helpers shared by app.py and the pages (dpcore never imports this)."""
