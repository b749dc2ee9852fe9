"""kmeans algorithms of dpcore: the candidate-set method (:mod:`.candidate`), its document
variant DPHD (:mod:`.dphd`), SuLQ (:mod:`.sulq`), sample-and-aggregate
(:mod:`.sample_aggregate`), the LSH-coreset peer (:mod:`.lsh_coreset`: Google's
library), DP-Lloyd (:mod:`.baselines`: diffprivlib, imported on first fit;
:mod:`.dplloyd`: ours, sparse input) and k-means++.

Every estimator is importable from here, e.g. ``from dpcore.kmeans import CandidateKMeans``.
"""
from .baselines import DPLloydKMeans, KMeansPlusPlus
from .candidate import CandidateKMeans, CandidateKMedian
from .dphd import DPHD
from .dplloyd import SparseDPLloydKMeans
from .lsh_coreset import LSHCoresetKMeans
from .sample_aggregate import SampleAggregateKMeans
from .sulq import SuLQKMeans

__all__ = ["CandidateKMeans", "CandidateKMedian", "DPHD", "SuLQKMeans", "SampleAggregateKMeans", "DPLloydKMeans",
           "SparseDPLloydKMeans", "KMeansPlusPlus", "LSHCoresetKMeans"]
