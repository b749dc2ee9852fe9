"""The Co-clustering page's Fig. 1 section: why co-clustering leaks more than clustering, and
a simulation of DP-τCC's released column partitions on the paper's two public matrices."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.cocluster.examples import column_partition_frequencies, figure1_solutions
from dpcore.plots.cocluster import figure1_leak
from ui.common import run_guarded


def figure1_section():
    """The paper's Fig. 1 (A and A′, their best co-clusterings) and the frequency simulation."""
    st.subheader("Why co-clustering leaks more than clustering (the paper's Fig. 1)")
    sol = figure1_solutions()
    st.plotly_chart(figure1_leak(sol["A"], sol["A_prime"],
                                 (sol["A_solution"]["rows"], sol["A_solution"]["cols"]),
                                 (sol["A_prime_solution"]["rows"], sol["A_prime_solution"]["cols"]),
                                 sol["A_solution"]["T"], sol["A_prime_solution"]["T"]), width="stretch")
    st.markdown("""
    Rows are customers u1–u4, columns products p1–p6. A′ differs from A in one cell: customer u3
    bought one unit of product p3. The best 2×2 co-clusterings (exhaustive search of
    τ̂_{R|C} + τ̂_{C|R}) are the paper's: the **table** changes from T to T′, and so does the
    **column partition** - p3 moves from {p1, p2, p3} to {p3, …, p6}. Publishing either the table or
    the product groups tells whether u3's purchase is in the data. DP-τCC randomises both: below,
    the frequency of each released column partition on A and on A′ may differ by at most a factor
    e^ε (up to sampling error).
    """)
    with st.form("fig1_form"):
        c1, c2 = st.columns(2)
        eps_fig = c1.number_input("ε for the simulation", value=2.0, step=0.5, format="%.2f",
                                  help="Budget of each simulated DP-τCC run (K0 = L0 = 2, 𝓘 = 1). Must be > 0.")
        runs_fig = c2.number_input("runs on each matrix", value=200, min_value=10, max_value=2000, step=50,
                                   help="More runs = smaller sampling error (about 5 ms per run).")
        go_fig = st.form_submit_button("Simulate DP-τCC on A and A′")
    if go_fig:
        rows = run_guarded(column_partition_frequencies, eps_fig, int(runs_fig), 1, 0)
        if rows is not None:
            st.session_state["cocluster_fig1"] = dict(eps=eps_fig, rows=rows)
    fig1 = st.session_state.get("cocluster_fig1")
    if fig1 is not None:
        df = pd.DataFrame(fig1["rows"]).head(10)
        df["ratio A/A′"] = np.where(df["freq_A_prime"] > 0, df["freq_A"] / df["freq_A_prime"].where(df["freq_A_prime"] > 0, 1), np.nan)
        st.dataframe(df.rename(columns={"freq_A": "frequency on A", "freq_A_prime": "frequency on A′"}),
                     hide_index=True, width="stretch")
        st.caption(f"The 10 most frequent released column partitions (p-numbers; '|' separates clusters, '/' lists "
                   f"products in no cluster). DP bounds each true ratio by e^ε = {np.exp(fig1['eps']):.2f}. These "
                   "simulations use the fixed public matrices of Fig. 1, so they spend no budget of your data.")
