"""cocluster algorithms of dpcore: Fast-τCC (:mod:`.taucc`), DP-τCC (:mod:`.dptaucc`) and the
co-clustering paper's DPNMF peer (:mod:`.dpnmf`; its DPHD and DP-KMeans peers are in
:mod:`dpcore.kmeans.dphd` and :mod:`dpcore.kmeans.dplloyd`).

Every estimator is importable from here, e.g. ``from dpcore.cocluster import DPTauCC``.
"""
from .dpnmf import DPNMF
from .dptaucc import DPTauCC
from .taucc import FastTauCC

__all__ = ["FastTauCC", "DPTauCC", "DPNMF"]
