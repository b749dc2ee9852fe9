"""DPHD: the high-dimensional paper's candidate-set k-means (Balcan et al. 2017,
:class:`~dpcore.kmeans.candidate.CandidateKMeans`) on documents, as the co-clustering paper
runs it among its peers (its Fig. 2, "DPHD", reference [1]).

What it does. Every document (row of a count matrix) is scaled to unit L2 norm - a per-record
map, so it costs nothing and keeps the neighbouring relation - and the candidate-set pipeline
runs on these points with the public radius Λ = 1: JL projection to p = ⌈ln(n)/2⌉ dimensions,
private candidate set, local swaps, noisy means in R^m. k is the number of classes.

Decisions
---------
- **Sparse throughout.** The count matrix stays CSR: the JL projection is a sparse × dense
  product (n × m times m × p), the recovery's cluster sums are a sparse k × n indicator times
  the rows, and only the k × m centres are dense. Time and memory per run: docs/benchmarks.md.
- **δ = 1e-5** by default (the δ the co-clustering paper gives its (ε, δ) peers), spent by the
  Gaussian recovery stage only.
- **No SuLQ refinement by default** (``refine_iter=0``). 8 refinement iterations (the
  high-dimensional paper's §7) split the recovery budget over 9 Gaussian releases in R^m with
  m in the thousands. It did not help on the CLUTO sets (docs/benchmarks.md). The option stays available.
- Rows are normalised inside ``fit`` (zero rows stay zero), so a raw count matrix is the input,
  like DP-τCC's and DPNMF's.

Neighbouring datasets: one document (row) replaced, n public - the candidate method's relation
(:mod:`dpcore.kmeans.common`).
"""
from __future__ import annotations

from ..preprocessing import normalize_rows
from .candidate import CandidateKMeans

__all__ = ["DPHD"]


class DPHD(CandidateKMeans):
    """(ε, δ)-DP document clustering by the candidate-set k-means on L2-normalised rows
    (Balcan et al. 2017; the co-clustering paper's DPHD peer). See the module docstring.

    Every parameter of :class:`~dpcore.kmeans.candidate.CandidateKMeans` is exposed with the
    same meaning; only the defaults of ``radius`` (1: rows are unit vectors) and ``delta``
    (1e-5) differ.

    Parameters
    ----------
    n_clusters : int, default=8
        Number k of document clusters, in [1, n].
    epsilon : float, default=1.0
        Total ε > 0.
    radius : float, default=1.0
        Public radius Λ; the normalised rows have norm 1, so 1 is exact (a larger Λ only adds
        noise, a smaller one clips every row).
    delta : float, default=1e-5
        δ of the Gaussian recovery, in (0, 1).
    objective, projection_dim, n_repeats, max_depth, gamma, n_swaps, swap_init, refine_iter, recovery, sparsity, eta, budget_split
        As in :class:`~dpcore.kmeans.candidate.CandidateKMeans`.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of every random draw.

    Attributes
    ----------
    As in :class:`~dpcore.kmeans.candidate.CandidateKMeans`; ``cluster_centers_`` live in the
    space of the normalised documents, ``labels_`` (NOT private) is the row partition;
    ``predict`` and ``score`` normalise the rows of their input first.
    """

    #: one document (row) replaced, n public (a key of :data:`dpcore.lab.audit.RELATIONS`)
    claimed_relation = "replace_one"

    def __init__(self, *, n_clusters=8, epsilon=1.0, radius=1.0, delta=1e-5, objective="kmeans", projection_dim=None,
                 n_repeats=1, max_depth=None, gamma=None, n_swaps=None, swap_init="seeded", refine_iter=0,
                 recovery="dense", sparsity=None, eta=0.5, budget_split=None, random_state=None):
        super().__init__(n_clusters=n_clusters, epsilon=epsilon, radius=radius, delta=delta, objective=objective,
                         projection_dim=projection_dim, n_repeats=n_repeats, max_depth=max_depth, gamma=gamma,
                         n_swaps=n_swaps, swap_init=swap_init, refine_iter=refine_iter, recovery=recovery,
                         sparsity=sparsity, eta=eta, budget_split=budget_split, random_state=random_state)

    def fit(self, X, y=None):
        """Scale every row of X to unit norm (per record) and run the candidate-set pipeline.

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, m)
            Documents as rows (counts or weights; kept sparse).
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            As :meth:`CandidateKMeans.fit <dpcore.kmeans.candidate.CandidateKMeans.fit>`.
        """
        super().fit(X)      # checks the raw input for a scaler's pattern, then normalises (_input_map)
        self.ledger_.entries[0].note = ("rows (documents) L2-normalised per record before the pipeline (free); "
                                        + self.ledger_.entries[0].note)
        return self

    def _input_map(self, X):
        """Every document scaled to unit L2 norm (zero rows stay zero): ``fit``, ``predict`` and
        ``score`` see the normalised rows."""
        return normalize_rows(X)
