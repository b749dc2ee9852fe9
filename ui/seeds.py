"""Secret noise by default: the "reproducible (noise public)" control every page uses.

A private run is only private if nobody can predict its noise. So every run draws its
randomness from the operating system's entropy (``random_state=None``) unless the user ticks
**reproducible (noise public)**. Then the run uses the seed shown next to the box, the link
and the "Reproduce in Python" script carry that seed, the privacy box says the run is not
private against anyone holding the link or the script, and the meter counts the run
as a non-private release.

Widget keys follow one convention: a page with prefix ``p`` has the checkbox ``p_repro`` and
the seed ``p_seed``, both bound to the URL (``bind="query-params"``). The seed input is drawn,
and so in the link, only while ``p_repro`` is ticked; :func:`ui.share.check_link` refuses a
link's seed without it.
"""
from __future__ import annotations

import secrets

import streamlit as st

from ui.common import number_input

REPRO_SUFFIX = "_repro"
SEED_SUFFIX = "_seed"
MAX_SEED = 2**31 - 1

REPRO_HELP = ("Off (default): every run draws fresh noise from the operating system's entropy, so nobody can "
              "predict it — this is what makes a private run private. On: the run uses the seed, so the same "
              "numbers come back and the link and the Python script carry the seed. Anyone holding them can "
              "recompute the noise and subtract it: such a run is NOT private: the meter shows ε = ∞ for its data, and a class budget refuses it.")


AUDIT_REPRO_HELP = ("Off (default): every audit draws fresh randomness from the operating system. On: the audit uses "
                    "the seed, so the same numbers come back and the link carries the seed. An audit runs the method on "
                    "data of its own and releases nothing about yours, so a public seed costs no privacy here.")


def seed_controls(prefix: str, container=None, default_seed: int = 0, releases: bool = True):
    """Draw the "reproducible (noise public)" box and, when it is ticked, the seed; return the
    ``random_state`` to use: None (fresh OS entropy) or the int seed.

    Draw it OUTSIDE the page's form: ticking the box then reruns the page and shows the seed
    input at once (inside a form nothing would change until the form's button). ``releases=False``
    (the Audit page) words the help for runs that release nothing: the seed only makes them repeatable."""
    c = st if container is None else container
    left, right = c.columns([1, 1])
    repro = left.checkbox("reproducible (noise public)", key=prefix + REPRO_SUFFIX,
                          help=REPRO_HELP if releases else AUDIT_REPRO_HELP, bind="query-params")
    if not repro:
        right.caption("Noise: fresh and secret on every run." if releases else "Randomness: fresh on every audit.")
        return None
    seed = number_input(right, "seed", 0, MAX_SEED, default_seed, step=1, key=prefix + SEED_SUFFIX, bind="query-params",
                              help="The seed of the method's noise and random choices (public: the run is not private)."
                              if releases else "The seed of the audit's runs (makes the audit repeatable).")
    return int(seed)


def master_seed(random_state):
    """An int seed for code that needs one (sweeps and audits derive every run's seed from it):
    the given seed, or a fresh secret one of 128 bits from the OS (never shown, never in the
    link; a 31-bit one could be found by trying them all against one run's output)."""
    return int(random_state) if random_state is not None else secrets.randbits(128)


def seed_caveat(random_state) -> list[str]:
    """Caveat lines for the privacy box: none for fresh noise; a warning for a public seed."""
    if random_state is None:
        return []
    return [f"Reproducible run with the public seed {random_state}: anyone holding this page's link or its Python "
            "script can regenerate the noise and remove it, so this run is NOT private against them. The session "
            "meter counts it as a non-private release."]


def seed_label(random_state) -> str:
    """How a run's seed is shown next to its numbers."""
    return "fresh OS entropy (secret)" if random_state is None else f"{random_state} (public: not private)"
