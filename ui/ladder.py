"""Instant ε: a slider over a teaching preset's precomputed ε ladder (:mod:`dpcore.lab.ladders`)
that redraws only its figure, and a "Run live" button beside it.

Used by the Cluster page ("Compare ε", :mod:`ui.cluster_eps`), the k-means page ("ε side by
side", :mod:`ui.kmeans`) and the Gibbs page (Fig. 3's presets, :mod:`ui.gibbs`).

Decisions
---------
- The section appears only on a preset that has a ladder, and only while the page's settings
  are still that preset's (:func:`on_preset`: the preset box names it and
  :func:`dpcore.lab.ladders.find_ladder` finds it from the settings themselves): a changed
  setting loses it, and the page before any preset is chosen stays as it was.
- Ladders are loaded once per server process and shared by every session
  (``st.cache_resource``: :class:`LadderStore`). A ladder whose file is missing, or no longer
  matches the code (:func:`dpcore.lab.ladders.load_ladder` refuses it), is built in a
  background thread at its first use; meanwhile the section says it is being prepared and
  looks again every 2 s (a fragment with ``run_every``): the page is never blocked.
- The slider and the figure live in an ``st.fragment``: moving the slider reruns the fragment
  only. Each rung's figures are built once per process and kept by the store, and the first
  time a ladder is shown a background thread builds those of all its other rungs
  (:meth:`LadderStore.prebuild`), so the server's part of a redraw is a lookup and a
  serialisation; the words beside the button (the library's plan of a live run) are kept too.
  Figures are kept light (2-D, at most :data:`MAX_POINTS` points per panel, traces thinned,
  coordinates sent as float32): Streamlit mounts a plotly chart anew whenever its figure
  changes, so the browser draws the whole figure on every move; an unchanged chart beside it
  is not redrawn.
- A ladder is a precomputed demonstration with a public seed, not a private release: the
  section says so in words (:func:`demonstration_words`) and nothing here touches the privacy
  meter. "Run live" stores the chosen ε under the page's key and reruns the whole page
  (``st.rerun``); the page then runs its own run path at that ε (planned, reserved against the
  class budget, judged and charged as every run). Before it runs, the button's caption gives
  the time the rung took when the ladder was built ("measured when the ladder was built").
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import streamlit as st

from dpcore.lab.ladders import Ladder, LadderSpec, build_ladder, load_ladder

#: most points drawn per panel of an instant figure (every panel of one page the same points)
MAX_POINTS = 600
#: seconds between two looks at a ladder being prepared
POLL_SECONDS = 2.0
#: most figure sets (one per rung and page) and words the store keeps
MAX_KEPT = 256


def eps_label(e) -> str:
    """An ε of a ladder as the slider shows it: "0.1", "10"."""
    return f"{e:g}"


class LadderStore:
    """The ladders of one server process: loaded from their files, or built in the background.

    Parameters
    ----------
    directory : path-like, optional
        Where the files are (default: the package data, :data:`dpcore.lab.ladders.LADDER_DIR`).
    build : callable, default :func:`dpcore.lab.ladders.build_ladder`
        ``build(spec, progress)`` -> :class:`~dpcore.lab.ladders.Ladder`, run in a daemon thread
        for a ladder without a usable file.
    """

    def __init__(self, directory=None, build=build_ladder):
        self.directory, self._build = directory, build
        self._lock = threading.Lock()
        self._ready: dict[str, Ladder] = {}
        self._status: dict[str, str] = {}          # name -> what its background build is doing
        self._errors: dict[str, str] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._kept: OrderedDict = OrderedDict()      # (ladder, ε, what) -> figures or words
        self._prebuilt: set = set()

    def get(self, spec: LadderSpec):
        """The ladder of ``spec`` and None, or None and why it is not ready ("being prepared: …",
        or "failed: …"). Never waits for a build."""
        name = spec.name
        with self._lock:
            if name in self._ready:
                return self._ready[name], None
            if name in self._errors:
                return None, "failed: " + self._errors[name]
            if name in self._threads:
                return None, "being prepared: " + self._status.get(name, "starting")
        try:
            ladder = load_ladder(spec, self.directory)
        except (FileNotFoundError, ValueError) as exc:
            return None, "being prepared: " + self._start(spec, exc)
        with self._lock:
            self._ready.setdefault(name, ladder)
            return self._ready[name], None

    def _start(self, spec, why):
        with self._lock:
            if spec.name not in self._threads:
                self._status[spec.name] = "starting" if isinstance(why, FileNotFoundError) else \
                    f"starting (the shipped file is out of date: {why})"
                thread = threading.Thread(target=self._run, args=(spec,), name=f"ladder-{spec.name}", daemon=True)
                self._threads[spec.name] = thread
                thread.start()
            return self._status.get(spec.name, "starting")

    def _run(self, spec):
        def progress(done, total, text):
            with self._lock:
                self._status[spec.name] = f"{done} of {total} runs done, now {text}"
        try:
            ladder = self._build(spec, progress)
        except Exception as exc:  # noqa: BLE001 - shown on the page instead of a slider
            with self._lock:
                self._errors[spec.name] = str(exc) or type(exc).__name__
                self._threads.pop(spec.name, None)
            return
        with self._lock:
            self._ready[spec.name] = ladder
            self._threads.pop(spec.name, None)

    def kept(self, key, make):
        """``make()``, computed once per ``key`` and process (the last :data:`MAX_KEPT` kept)."""
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        value = make()
        with self._lock:
            self._kept[key] = value
            while len(self._kept) > MAX_KEPT:
                self._kept.popitem(last=False)
        return value

    def prebuild(self, keys_and_makers, tag):
        """Compute, in a daemon thread, every ``(key, make)`` not kept yet (once per ``tag``): the
        figures of a ladder's other rungs, so that a first move to them finds them ready."""
        with self._lock:
            if tag in self._prebuilt:
                return None
            self._prebuilt.add(tag)

        def work():
            for key, make in keys_and_makers:
                try:
                    self.kept(key, make)
                except Exception:  # noqa: BLE001 - the slider builds (and reports) it when it gets there
                    pass
        thread = threading.Thread(target=work, name=f"ladder-figures-{tag}", daemon=True)
        thread.start()
        return thread

    def wait(self, name, timeout=None) -> bool:
        """Wait for the background build of ``name`` (tests); True when no build is going on."""
        thread = self._threads.get(name)
        if thread is not None:
            thread.join(timeout)
        return name not in self._threads


@st.cache_resource(show_spinner=False)
def store() -> LadderStore:
    """The server's :class:`LadderStore` (one per process, shared by every session)."""
    return LadderStore()


def light(fig):
    """``fig`` with its float64 coordinates as float32 (plotly sends them as half as many bytes)."""
    for trace in fig.data:
        for name in ("x", "y", "z", "customdata"):
            value = getattr(trace, name, None)
            if isinstance(value, np.ndarray) and value.dtype == np.float64:
                setattr(trace, name, None)        # plotly keeps the old array when the new one compares equal
                setattr(trace, name, value.astype(np.float32))
    return fig


def on_preset(page, spec):
    """``spec`` (a ladder found from the page's settings, or None) when the page's preset box
    (``<page>_preset``) names its preset; else None."""
    return spec if spec is not None and st.session_state.get(f"{page}_preset") == spec.preset else None


def seconds_words(seconds) -> str:
    """A run's duration in words: "under a second", "about 3 s", "about 2 min"."""
    if seconds < 1:
        return "under a second"
    return f"about {seconds:.0f} s" if seconds < 90 else f"about {seconds / 60:.0f} min"


def demonstration_words(ladder: Ladder) -> str:
    """What the section shows, in words a student reads beside it: a precomputed demonstration
    with a public seed, not a private release, and not recorded in the privacy meter."""
    meta = ladder.meta
    eps = ladder.epsilons
    label = meta["method_label"][:1].upper() + meta["method_label"][1:]
    return (f":material/science: **Precomputed demonstration, not a private release.** {label} was run "
            f"once at each of the {len(eps)} values of ε from {eps_label(eps[0])} to {eps_label(eps[-1])} on this "
            f"preset's data, with the public seed {meta['seed']} (anyone can recompute it, noise included; built "
            f"{meta['built'][:10]} with dpcore {meta['versions']['dpcore']}). Moving ε redraws those runs: nothing of "
            "them is recorded in the privacy meter. **Run live** runs the method again at the chosen ε with the "
            "page's noise (secret unless its seed is made public), and that run is charged like every run.")


def instant_epsilon(spec: LadderSpec, *, key, default, figures, draw, live_key, live_words, words_key=None,
                    live_label="Run live"):
    """The instant-ε section of a page's preset: a slider over the ladder of ``spec``, the
    figure of the chosen rung, "Run live" and the words that go with them.

    Parameters
    ----------
    spec : dpcore.lab.ladders.LadderSpec
    key : str
        The slider's widget key.
    default : float
        The slider's first value (the nearest ladder value is used).
    figures : callable
        ``figures(ladder, epsilon)`` -> the rung's plotly figures (a tuple), built once per
        process (:meth:`LadderStore.kept`; the other rungs' in the background) and made
        :func:`light`.
    draw : callable
        ``draw(ladder, epsilon, figures)`` draws them and their captions (inside the fragment).
    live_key : str
        Session key the page reads: set to the chosen ε when "Run live" is pressed, then the
        page is rerun.
    live_words : callable
        ``live_words(ladder, epsilon)`` -> what a live run at that ε is and what it is charged
        (the button's caption, before the time it takes); kept per (ladder, ε, ``words_key``).
    words_key : hashable, optional
        What else the words depend on (the page's seed).
    live_label : str, default "Run live"
        The button's text, followed by " at ε = …".
    """
    ladder, status = store().get(spec)
    if ladder is None and status.startswith("failed"):
        st.warning(f"The precomputed ε ladder of this preset could not be prepared ({status[len('failed: '):]}). "
                   "The page's own buttons run the method live.")
        return
    if ladder is None:
        _not_ready(spec)
        return
    _instant(ladder, key, default, figures, draw, live_key, live_words, words_key, live_label)


def _nearest(options, value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return options[len(options) // 2]
    return min(options, key=lambda e: abs(e - value) / max(e, value))


def _figures(ladder, eps, figures):
    def make():
        return tuple(light(f) for f in figures(ladder, eps))
    return (ladder.spec.name, float(eps), "figures"), make


@st.fragment
def _instant(ladder, key, default, figures, draw, live_key, live_words, words_key, live_label):
    options, mark = list(ladder.epsilons), f"_{key}_ladder"
    if st.session_state.get(key) not in options or st.session_state.get(mark) != ladder.spec.name:
        st.session_state[key] = _nearest(options, default)     # a new preset starts at its own ε
    st.session_state[mark] = ladder.spec.name
    eps = st.select_slider(
        "ε of the precomputed ladder (instant)", options, key=key, format_func=eps_label,
        help="Moves through the runs computed in advance at every ε of the ladder (public seed): the figure "
             "changes at once, nothing is charged. Run live computes it again with the page's noise.")
    the_store = store()
    draw(ladder, eps, the_store.kept(*_figures(ladder, eps, figures)))
    the_store.prebuild([_figures(ladder, e, figures) for e in options if e != eps], ladder.spec.name)
    words = the_store.kept((ladder.spec.name, float(eps), "words", words_key), lambda: live_words(ladder, eps))
    b1, b2 = st.columns([1, 3], vertical_alignment="center")
    if b1.button(f"{live_label} at ε = {eps_label(eps)}", key=f"{key}_live",
                 help="Runs the method now at this ε through the page's own run, with the page's noise (secret "
                      "unless its 'reproducible' box is ticked): charged to the privacy meter as every run is."):
        st.session_state[live_key] = float(eps)
        st.rerun()
    b2.caption(f"{words} Time: {seconds_words(ladder.live_seconds(eps))} of computing, measured "
               f"when the ladder was built ({ladder.meta.get('cpus') or '?'} cores; a busy server takes longer).")
    st.caption(demonstration_words(ladder))


@st.fragment(run_every=POLL_SECONDS)
def _not_ready(spec):
    ladder, status = store().get(spec)
    if ladder is not None or status.startswith("failed"):
        st.rerun()                # the whole page: it draws the slider (or says why there is none) now
    st.info(f":material/hourglass_top: The precomputed ε ladder of this preset is being prepared on the server "
            f"({status.removeprefix('being prepared: ') if status else 'starting'}); its slider appears here when "
            "it is ready. The page works meanwhile: its own buttons run the method live.")
