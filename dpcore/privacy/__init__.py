"""Differential privacy in :mod:`dpcore`: every noise draw and every privacy account.

- :mod:`dpcore.privacy.mechanisms` - Laplace, exact discrete Laplace, Gaussian (classic /
  analytic σ; every additive release exact on a public grid, :mod:`dpcore.privacy.exact`), exponential mechanism;
- :mod:`dpcore.privacy.accounting` - composition theorems, :class:`GaussianBudget` (exact
  Gaussian-DP composition), :class:`Release`, :class:`PrivacyLedger`,
  :class:`PrivateEstimatorMixin`;
- :mod:`dpcore.privacy.accountant` - :class:`PrivacyEvent` (typed releases), the neighbouring
  relations and their conversions, :class:`PrivacyAccountant` (basic and tight totals through
  dp-accounting, a budget that refuses a fit before it releases);
- :mod:`dpcore.privacy.exact` - every additive release on a public power-of-two grid with
  exact integer noise (proofs: ``docs/privacy_as_executed.md``);
- :mod:`dpcore.privacy.exact_samplers` - the exact discrete Gaussian, discrete Laplace and
  geometric samplers (Canonne, Kamath & Steinke 2020, integer arithmetic only);
- :mod:`dpcore.privacy.sample_aggregate` - the generic sample-aggregate framework (Alg. 1 of
  the subspace clustering paper; proofs: ``docs/sample_aggregate.md``); import it as a
  submodule (it loads scipy.stats).

The public names of the first three are re-exported here: ``from dpcore.privacy import X``.
"""
from .mechanisms import (  # noqa: F401
    analytic_gaussian_delta, bernoulli_draws, bounded_domain_laplace, bounded_domain_scale, bernoulli_exp, binomial_draws, discrete_laplace_mechanism, discrete_laplace_noise,
    discrete_laplace_scale, exponential_mechanism, exponential_mechanism_probabilities, gaussian_mechanism,
    gaussian_sigma, gaussian_sigma_analytic, gaussian_sigma_classic, laplace_mechanism,
)
from .accounting import (  # noqa: F401
    GaussianBudget, PrivacyLedger, PrivacyPlan, PrivateEstimatorMixin, Release, advanced_composition,
    advanced_composition_inverse, basic_composition, public_shape,
)
from .accountant import (  # noqa: F401
    RELATIONS, AccountedRun, PrivacyAccountant, PrivacyEvent, TightTotal, active_accountant, conversion_factor,
    convert_event, group_privacy, weakest_common_relation,
)
from .accountant import RdpTotal, gaussian_delta, gaussian_epsilon  # noqa: F401
from .odds import odds_sentence, posterior_bound  # noqa: F401
from .exact_choice import ChoicePlan, bernoulli_exp_dyadic, choice_plan, exact_exponential_mechanism  # noqa: F401
from . import mechanisms as _mechanisms, accounting as _accounting, accountant as _accountant

__all__ = list(_mechanisms.__all__) + list(_accounting.__all__) + [
    "RELATIONS", "AccountedRun", "PrivacyAccountant", "PrivacyEvent", "TightTotal", "active_accountant",
    "conversion_factor", "convert_event", "group_privacy", "weakest_common_relation"]
__all__ += ["RdpTotal", "gaussian_delta", "gaussian_epsilon", "odds_sentence", "posterior_bound"]
__all__ += ["ChoicePlan", "bernoulli_exp_dyadic", "choice_plan", "exact_exponential_mechanism"]
