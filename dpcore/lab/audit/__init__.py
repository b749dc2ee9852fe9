"""Empirical privacy audits: do releases on neighbouring inputs respect e^ε?

An audit runs a method many times on a dataset D and on a neighbour D′, reduces each release
to a statistic, and turns how well a test tells D from D′ into a lower bound ε̂ on the ε
really spent. A pass means the runs show no violation (not a proof of privacy); ε̂ above the
claimed ε is strong evidence of a leak. The reasoning behind every bound is in
``docs/audit.md``.

Modules
-------
bounds
    Clopper–Pearson intervals, the frequency check, ε and Gaussian-DP lower bounds.
scores
    Exact log-likelihood ratios and the fitted likelihood-ratio score.
runners
    :func:`audit_from_statistics`, :func:`run_audit`, :func:`audit_estimator`.
neighbours
    Constructions of D′, their relations and the relation each method claims.
statistics
    What an audit looks at in a fitted estimator (:class:`EstimatorStatistic`).
datasets
    Small public audit sets (:data:`AUDIT_SETS`).
unreachable
    The exact "unreachable release" test as an audit (:func:`reachability_audit`).
"""
from .bounds import (FrequencyCheck, bucket_counts, clopper_pearson, epsilon_lower_bound, frequency_check, gdp_delta,
                     gdp_epsilon, gdp_mu_lower_bound)
from .datasets import AUDIT_SETS, AuditSet, audit_dataset, three_axes
from .neighbours import (ALL_NEIGHBOURS, CLAIMED_RELATION, NEIGHBOUR_RELATION, NEIGHBOURS, RELATIONS, add_point,
                         change_cell, claimed_relation, default_neighbour, far_outlier, make_neighbour, remove_point,
                         replace_point)
from .runners import (MIN_TRIALS, AuditResult, GDPAudit, audit_delta, audit_estimator, audit_from_statistics,
                      audit_plan, audit_verdict, gdp_audit_from_statistics, run_audit)
from .scores import LRScore, exponential_llr, fit_lr_score, gaussian_llr, laplace_llr
from .statistics import FAMILY_STATISTICS, STATISTIC_HELP, EstimatorStatistic, release_features
from .unreachable import ReachabilityAudit, reachability_audit

__all__ = ["clopper_pearson", "FrequencyCheck", "frequency_check", "bucket_counts", "epsilon_lower_bound",
           "AuditResult", "audit_from_statistics", "run_audit", "add_point", "remove_point", "replace_point",
           "change_cell", "far_outlier", "gaussian_llr", "laplace_llr", "exponential_llr", "LRScore", "fit_lr_score",
           "gdp_mu_lower_bound", "gdp_delta", "gdp_epsilon", "GDPAudit", "gdp_audit_from_statistics",
           "STATISTIC_HELP", "FAMILY_STATISTICS", "EstimatorStatistic", "release_features",
           "RELATIONS", "CLAIMED_RELATION", "NEIGHBOUR_RELATION", "claimed_relation", "default_neighbour",
           "NEIGHBOURS", "MIN_TRIALS", "make_neighbour", "audit_estimator", "audit_delta", "audit_verdict", "audit_plan",
           "three_axes", "AuditSet", "AUDIT_SETS", "audit_dataset", "ALL_NEIGHBOURS", "ReachabilityAudit",
           "reachability_audit"]
