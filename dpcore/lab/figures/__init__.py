"""The papers' figures, one module per paper: what :mod:`dpcore.lab.reproduce` runs.

Each module has ``SETTINGS`` (figure → level → every number it uses) and ``RUNNERS`` (figure →
``runner(level, R) -> (panels, checks, extra)``, ``R`` a :class:`dpcore.lab.reproduce.Runner`);
the shared pieces are in :mod:`.common`.
"""
from . import cocluster, highdim, subspace

__all__ = ["FIGURES", "RUNNERS", "SETTINGS"]

_MODULES = (subspace, cocluster, highdim)
#: every figure, in the order of the papers
RUNNERS = {f: r for m in _MODULES for f, r in m.RUNNERS.items()}
FIGURES = tuple(RUNNERS)
#: every number each figure uses, per level (the table of docs/reproduce.md)
SETTINGS = {f: m.SETTINGS[f] for m in _MODULES for f in m.RUNNERS}
