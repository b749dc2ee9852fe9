"""Home: what differentially private clustering is and what each page does."""
import streamlit as st

st.title("dpclust-explorer")
st.markdown("""
**See differentially private clustering work.**

*Clustering* groups similar records. *Subspace clustering* looks for groups that lie near
low-dimensional subspaces (faces of one person under different lights, for example);
*co-clustering* groups the rows and the columns of a table at once (documents and words);
*k-means* looks for centres.

*Differential privacy* (DP) is a promise about the **release**: whatever is published
(subspaces, a contingency table, centres) would have been almost as likely had one person's
record been **different**. Which change counts is part of the promise (the *neighbouring
relation*), and each page names it: the subspace and k-means methods protect a record
**replaced** by any other (the number of records n is public; diffprivlib's DP-Lloyd, a peer we
compare with, is stated for a record added or removed); DP-τCC protects **one count in one
cell** of a document × term table, one larger or smaller (one word occurrence, not a whole
document). The privacy budget **ε** says how close "almost" is: the probability of any output
changes by at most a factor e^ε. Small ε = strong privacy = more noise. Some methods also have a
small failure probability **δ**.

DP is bought with noise or randomness, so every private result here is shown next to the
non-private one, with what was released privately, what was not, and the budget spent.
""")

st.subheader("A lesson in eight steps (about 90 minutes)")
st.markdown("""
Walk the pages in this order. Each step names the **Preset** (a box at the top of the page) that
makes its point; choose it, press the page's button, and talk about what appears.

1. **Home** (5 min) — the promise of DP above: one person's record changed, the release almost
   equally likely. Small ε = strong privacy = more noise.
2. **Data**, preset *Three lines in R³* (5 min) — a *union of subspaces*: every point lies near
   one of three lines through the origin. Turn the 3-D picture; this is what the clustering
   methods must find. *Two planes in R³* shows the same with planes.
3. **Cluster**, same data (15 min) — run the non-private k-plane first (it finds the lines),
   then a private method, then **Compare ε**: the same data at several ε side by side, next to
   the non-private result. The privacy box says what was released privately and what was not;
   the sidebar meter adds up the ε you spent.
4. **Gibbs**, preset *Quick look* (15 min) — the exponential mechanism, sampled by a Markov
   chain. Its privacy holds only once the chain has *mixed*: watch the traces and the R̂/ESS
   verdict. The preset *from the k-plane start* shows a start that is not private.
5. **Audit**, preset *Gibbs start leak* (10 min) — do not trust, measure: run a method many
   times on two neighbouring datasets and see how much it really leaks (ε̂) against its claim.
6. **Co-clustering**, the *Figure 1* example and preset *Synthetic blocks* (15 min) — documents ×
   words; the neighbour is one word count changed by one. The frequency plot shows the e^±ε band
   that DP promises.
7. **k-means**, preset *The leaking radius*, then the preset *ε side by side* (10 min) — a norm bound read off
   the data breaks the guarantee; the page says so and the meter shows ε = ∞ for those data.
8. **Privacy–utility**, preset *Paper Fig. 2 middle* (15 min) — the papers' figure: utility
   against ε for several methods, the non-private methods as dashed lines.

Every chart downloads as a PNG for slides from the camera icon in its toolbar.
""")

st.subheader("The pages")
st.markdown("""
| page | what you do there |
|---|---|
| **Data** | generate a union of subspaces or a Gaussian mixture, or load Extended Yale B faces or a CLUTO document-term matrix; see a summary and a figure. The other pages use the dataset chosen here. |
| **Cluster** | run a subspace clustering solver (k-plane, TSC, SSC, LRR) or a private one (sample-aggregate, SuLQ k-plane) at any ε, and compare several ε side by side. |
| **Gibbs** | the exponential mechanism for subspace clustering, sampled by Gibbs: watch chains mix, because its privacy holds only once they have. |
| **Co-clustering** | Fast-τCC and private DP-τCC on documents × terms, beside the paper's peers (DPHD, DP-KMeans, DPNMF). |
| **k-means** | private k-means in high dimension, with its baselines, and several ε side by side. |
| **Privacy–utility** | sweep ε for several methods and see utility rise as privacy weakens (the papers' Fig. 2). |
| **Audit** | run a method many times on two neighbouring datasets and measure how much it really leaks (ε̂). |
| **Paper figures** | every figure of the three papers at full settings, drawn at once from shipped results, beside each statement of the paper and whether it holds; rerun the quick version live. |
""")

st.subheader("Honest about privacy")
st.markdown("""
- Labels computed by assigning the raw points to released subspaces or centres are **not private**;
  they are shown for evaluation only.
- Ground-truth labels are used only to evaluate.
- A non-private initialisation, or a norm bound read off the data, voids or weakens a guarantee;
  the pages say so wherever it happens.
- The Gibbs sampler is private only **asymptotically**: exactly when its chain has mixed.
- Noise is secret by default: every run draws it from the operating system's entropy. Ticking
  **reproducible (noise public)** gives repeatable numbers and a link and script that carry the
  seed — and such a run is **not private** against anyone holding them.
- The sidebar keeps a meter of the ε spent on each dataset on this server, by every tab (running
  again is a new release), in the weakest neighbouring relation the runs share, with the number of
  fits (one run of a method on the data = one release); once a run that was not private used a
  dataset, its ε is ∞ (the private runs' total beside it). Audits of your own data are charged
  too; a class budget, if set, refuses runs past it and runs that would not be private. A reload
  keeps the meter: spent privacy is not given back.
- Every Gaussian and Laplace release of dpcore's own methods is **exact as executed**: the value is rounded to a public grid
  and integer noise is drawn exactly, so no released number can rule out a neighbouring dataset
  (float noise can: Mironov 2012). So are the exponential mechanism's choices (DP-τCC's partitions,
  the candidate method's stages, the Gibbs label updates and chain choice) and the candidate
  partition's coins: integer draws on a public grid. What stays floating-point, and why: the Gibbs
  sampler's continuous draws (no exact sampler is known; their acceptance tests are bounded and paid
  from ε) and the diffprivlib peer's own noise (not private as executed). docs/privacy.md ("Privacy
  as delivered") gives the proofs.
""")
st.caption("Papers: Y. Wang, Y.-X. Wang & A. Singh, Differentially private subspace clustering (NeurIPS 2015); "
           "E. Battaglia & R. G. Pensa, Differentially private associative co-clustering; "
           "M.-F. Balcan, T. Dick, Y. Liang, W. Mou & H. Zhang, Differentially private clustering in "
           "high-dimensional Euclidean spaces (ICML 2017). Full citations in the README.")
