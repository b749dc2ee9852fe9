"""Warnings of dpcore about privacy.

One class, :class:`PrivacyLeakWarning` (as diffprivlib's ``diffprivlib.utils.PrivacyLeakWarning``):
every warning that says "something was read off the data without noise, so the release is not
(fully) private" is this class or a subclass, so a user can turn all of them into errors at once::

    import warnings
    from dpcore.exceptions import PrivacyLeakWarning
    warnings.simplefilter("error", PrivacyLeakWarning)

Subclasses: :class:`dpcore.kmeans.common.DataDerivedRadiusWarning` (a radius Λ read off the
data, ``radius="data"``).
"""
from __future__ import annotations

import warnings
from contextvars import ContextVar

__all__ = ["PrivacyLeakWarning", "warn_privacy_leak"]


class PrivacyLeakWarning(UserWarning):
    """Something computed from the data without noise entered a private computation (a bound,
    a radius, a scaler's statistics): the guarantee shown does not cover it."""


#: the privacy leaks noted during the private fit running in this thread (None outside a fit):
#: :class:`dpcore.privacy.PrivateEstimatorMixin`'s fit wrapper sets a fresh list and stores it as
#: the estimator's ``privacy_leaks_`` (a context variable, so concurrent sessions do not mix)
_CURRENT_LEAKS = ContextVar("dpcore_privacy_leaks", default=None)


def warn_privacy_leak(message, category=PrivacyLeakWarning, stacklevel=2):
    """Warn with ``category`` (a :class:`PrivacyLeakWarning`) and note the leak on the private
    fit running in this thread, which is then not counted as private.

    Parameters
    ----------
    message : str
    category : subclass of PrivacyLeakWarning, default PrivacyLeakWarning
    stacklevel : int, default 2
        As for :func:`warnings.warn`, counted from the caller of this function.
    """
    leaks = _CURRENT_LEAKS.get()
    if leaks is not None:
        leaks.append(str(message))
    warnings.warn(message, category, stacklevel=stacklevel + 1)
