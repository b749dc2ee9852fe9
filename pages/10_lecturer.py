"""Lecturer: what the class has spent on each dataset of this server, and the class budget.

The meter is one per server (:mod:`ui.meter`): every tab and session of this server charges the
same one, so this page shows the whole class. Anyone may look; setting the budget needs the
passphrase given at launch (``streamlit run app.py -- --lecturer-passphrase WORDS``).
"""
import pandas as pd
import streamlit as st

from ui.common import number_input, stop_page
from ui.meter import (DELTAS, as_delta, budget_settings, class_meter, delta_words, epsilon_odds, format_epsilon,
                      passphrase_ok, relation_words, set_class_budget)

st.title("Lecturer")
st.markdown("What the class has spent on each dataset of this server: every tab and session charges one meter, so "
            "this is the whole class. Privacy composes per dataset, over everything released about it.")

meter = class_meter()
budget, passphrase, problem = budget_settings()
if problem:
    st.error(problem)
delta = st.selectbox("δ of the tight and RDP totals", DELTAS, index=0, format_func=delta_words, key="lecturer_delta",
                     help="By default each dataset's own: the δ its private fits spent together (basic composition).")
rows = []
for h in meter.summary(as_delta(delta)):
    sessions = {r.session for r in meter.rows(h.dataset) if r.session}
    rows.append({"dataset": h.dataset, "ε": format_epsilon(h.epsilon),
                 "private fits: ε (adding up)": format_epsilon(h.private_epsilon),
                 "tight ε": "–" if h.tight is None else format_epsilon(h.tight.epsilon),
                 "RDP ε": "–" if h.rdp is None else format_epsilon(h.rdp.epsilon),
                 "relation": relation_words(h.relation) if h.relation else "–", "private fits": h.private_fits,
                 "fits not private": h.nonprivate_fits, "tabs": len(sessions),
                 "left of the budget": "no budget" if h.budget is None else format_epsilon(h.remaining)})
if rows:
    st.table(pd.DataFrame(rows).set_index("dataset"))
    st.caption("ε = ∞: a fit that was not private (a public seed, a non-private start, a radius read off the data, "
               "float noise) used the dataset, so nothing bounds what was learnt about it; the private fits' total "
               "stands beside it. Tight and RDP: upper bounds on the same private fits' ε at the δ chosen above.")
else:
    st.info("Nothing has been run on this server yet.")

st.subheader("Class budget")
current = meter.budget_epsilon
st.markdown("**Now:** " + (f"ε ≤ {format_epsilon(current)} per dataset (set {meter.budget_source or 'earlier'})."
                           if current is not None else "no budget: runs are not limited."))
if current is not None:
    epsilon_odds(st, current)
if passphrase is None:
    st.info("No lecturer passphrase was given when this server started, so the budget is "
            + ("fixed at launch." if budget is not None else "set in the sidebar by whoever uses the app (one person "
               "on a laptop).")
            + " To run a class: `streamlit run app.py -- --class-budget 3 --lecturer-passphrase \"some words\"` (or the "
            "environment variables DPCLUST_CLASS_BUDGET and DPCLUST_LECTURER_PASSPHRASE).")
    stop_page()
with st.form("lecturer_form"):
    words = st.text_input("Lecturer passphrase", type="password", key="lecturer_passphrase")
    new = number_input(st, "Class budget: ε per dataset (empty: no budget)", 0.01, None, value=current,
                       key="lecturer_budget", step=1.0, format="%.4g", placeholder="no budget")
    if new is not None and new >= 0.01:
        epsilon_odds(st, new)
    go = st.form_submit_button("Set the class budget", type="primary")
if go:
    if not passphrase_ok(words):
        st.error("Wrong passphrase: the budget was not changed.")
    elif new is not None and new < 0.01:
        st.error("The budget must be at least 0.01 (or empty for none): not changed.")
    else:
        set_class_budget(new)
        st.success("Class budget " + (f"set to ε ≤ {format_epsilon(new)} per dataset" if new is not None else "cleared")
                   + ". It holds at once for every tab and session of this server. What was spent stays spent: a "
                   "budget below a dataset's total leaves nothing for it.")
