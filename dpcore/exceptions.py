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

__all__ = ["PrivacyLeakWarning"]


class PrivacyLeakWarning(UserWarning):
    """Something computed from the data without noise entered a private computation (a bound,
    a radius, a scaler's statistics): the guarantee shown does not cover it."""
