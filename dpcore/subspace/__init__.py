"""subspace algorithms of dpcore: the private estimators (sample-and-aggregate
:mod:`.sample_aggregate`, SuLQ k-plane :mod:`.sulq`, the Gibbs sampler of the exponential
mechanism :mod:`.gibbs`) and the non-private solvers (k-plane :mod:`.kplane`, TSC :mod:`.tsc`,
SSC :mod:`.ssc`, LRR :mod:`.lrr`).

Every estimator is importable from here, e.g. ``from dpcore.subspace import SuLQKPlane``.
Importing it does not import numba: the Gibbs sampler's compiled kernels load on first use.
"""
from .gibbs import GibbsSubspaceClustering
from .kplane import KPlane
from .lrr import LRR
from .sample_aggregate import SampleAggregateSubspace
from .ssc import SSC
from .sulq import SuLQKPlane
from .tsc import TSC

__all__ = ["SampleAggregateSubspace", "SuLQKPlane", "GibbsSubspaceClustering", "KPlane", "TSC", "SSC", "LRR"]
