"""cocluster algorithms of dpcore (import from the submodules): Fast-τCC (:mod:`.taucc`),
DP-τCC (:mod:`.dptaucc`) and the co-clustering paper's DPNMF peer (:mod:`.dpnmf`; its
DPHD and DP-KMeans peers are in :mod:`dpcore.kmeans.dphd` and :mod:`dpcore.kmeans.dplloyd`)."""
