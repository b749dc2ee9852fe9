"""The lab: what is not an algorithm.

Sweeps (:mod:`.sweeps`), the method catalogue (:mod:`.methods`), the k-means comparison
(:mod:`.compare`), the privacy audit (:mod:`.audit`), exact reachability (:mod:`.reachability`),
the papers' figures (:mod:`.reproduce`) and the shipped-run gallery (:mod:`.gallery`).
The lab sits above the algorithms: it imports them, they never import it.
"""
