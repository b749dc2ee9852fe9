"""Time left of a run, calibrated: shown only when it can be trusted.

A class reported "about 8912 s left" early in a Gibbs run that took 661 s: the first sweeps pay
for compilation, caches and a cold CPU, and a rate measured from the start extrapolates that
start-up over the whole run. :class:`TimeLeft` therefore says nothing numeric before
:data:`MIN_SHARE` of the work is done, and then extrapolates the rate measured *since*
:data:`SKIP_SHARE` of the work (the start-up excluded). On runs whose units of work cost about
the same (sweeps of one chain set, runs of one sweep cell) the estimate is then within 2× of
the truth; ``tests/test_eta.py`` checks it against a start-up 100× slower than the rest.
Streamlit-free.
"""
from __future__ import annotations

import time

MIN_SHARE = 0.10      # no number before this share of the work is done
SKIP_SHARE = 0.05     # the rate is measured from this share on (start-up excluded)
WAITING_TEXT = "estimating the time left"


def seconds_text(seconds):
    """'less than a second left', 'about 12 s left', 'about 3 min left'."""
    if seconds < 1:
        return "less than a second left"
    return f"about {seconds:.0f} s left" if seconds < 90 else f"about {seconds / 60:.0f} min left"


class TimeLeft:
    """Time left of ``total`` units of work, from the progress reported so far.

    Parameters
    ----------
    total : float
        Units of work of the whole run (sweeps × ε values, runs of a sweep, ...).
    clock : callable, default=time.perf_counter
        Seconds.
    min_share, skip_share : float
        No estimate before ``min_share`` of the work; the rate is measured from the first
        report at or after ``skip_share`` of it.
    """

    def __init__(self, total, clock=time.perf_counter, min_share=MIN_SHARE, skip_share=SKIP_SHARE):
        if not total > 0:
            raise ValueError(f"total must be > 0; got {total!r}")
        if not 0 <= skip_share < min_share <= 1:
            raise ValueError("need 0 <= skip_share < min_share <= 1")
        self.total, self.clock = float(total), clock
        self.min_share, self.skip_share = min_share, skip_share
        self._mark = None                       # (done, time) at the first report past skip_share

    def seconds_left(self, done):
        """Seconds left once ``done`` units are done, or None while it cannot be trusted."""
        now = self.clock()
        if self._mark is None and done >= self.skip_share * self.total:
            self._mark = (float(done), now)
            return None
        if self._mark is None or done < self.min_share * self.total or done <= self._mark[0]:
            return None
        d0, t0 = self._mark
        return max(0.0, (now - t0) / (done - d0) * (self.total - done))

    def text(self, done):
        """The words for a progress bar: the time left, or 'estimating the time left'."""
        s = self.seconds_left(done)
        return WAITING_TEXT if s is None else seconds_text(s)
