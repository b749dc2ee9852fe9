"""kmeans algorithms of dpcore (import from the submodules): the candidate-set method
(:mod:`.candidate`), its document variant DPHD (:mod:`.dphd`), SuLQ (:mod:`.sulq`),
sample-and-aggregate (:mod:`.sample_aggregate`), DP-Lloyd (:mod:`.baselines`: diffprivlib;
:mod:`.dplloyd`: ours, sparse input) and k-means++."""
