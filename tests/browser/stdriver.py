"""Small helpers to drive a Streamlit app with Playwright (sync API) and to check a page.

Shared by ``tests/browser`` and ``benchmarks/bench_load.py``; nothing here imports
Playwright at module level, so the module can be imported where Playwright is missing.

How a finished script run is detected
-------------------------------------
The root element ``[data-testid="stApp"]`` carries ``data-test-script-state``
(``initial`` → ``running`` → ``notRunning``; also ``rerunRequested``, ``stopRequested``).
A widget change does not flip that attribute at once (the rerun request travels to the
server first), so "state is notRunning" right after a click says nothing; and a quick run
can go from ``notRunning`` to ``notRunning`` in one React render, leaving no trace in the
attribute. An init script (:data:`RUN_COUNTER_JS`) therefore counts the server's
``script_finished`` messages on the websocket (ForwardMsg field 6): a run is finished
when that count has grown past its value before the action, 100 ms have passed for the
app to handle the last messages, and the state is ``notRunning``.

"Idle" (:data:`IDLE_JS`) adds: connected, no "running…" status widget (``stStatusWidget``)
or spinner shown, and no skeleton. Widgets and charts are lazy-loaded React components:
until their code has arrived a skeleton (``stSkeleton``) stands in for them, even after
the run has finished (a page's number inputs appear ~0.3 s after its run has ended).
"""
from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Timeouts (ms) of the waits. Generous on purpose: on a loaded machine (a parallel test run,
#: CPU-burning neighbours) a page is slow, not wrong; no test asserts how long anything took
#: (benchmarks/bench_render.py measures that). DEFAULT_TIMEOUT: one element or event;
#: PAGE_TIMEOUT: a page's first run, drawn; ACTION_TIMEOUT: a run started by a click.
DEFAULT_TIMEOUT = 90_000
PAGE_TIMEOUT = 180_000
ACTION_TIMEOUT = 300_000

#: filled by the browser tests, printed by conftest's terminal summary (for information)
RENDER_TIMES: dict[str, float] = {}
RENDER_BREAKDOWN: dict[str, dict] = {}

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--enable-unsafe-swiftshader"]

APP = '[data-testid="stApp"]'
MAIN = '[data-testid="stMain"]'
EXCEPTION = '[data-testid="stException"]'
ERROR = '[data-testid="stAlertContentError"]'
WARNING = '[data-testid="stAlertContentWarning"]'
CHART = '[data-testid="stPlotlyChart"]'
CHART_DRAWN = '.main-svg'
SKELETON = '[data-testid="stSkeleton"]'
SPINNER = '[data-testid="stSpinner"]'
STATUS = '[data-testid="stStatusWidget"]'

RUN_COUNTER_JS = r"""
(() => {
  if (window.__stScriptsFinished !== undefined) return;
  // every "script_finished" message from the server (ForwardMsg field 6, a varint), read off
  // the websocket: exact even when React renders "running" and "notRunning" at once
  window.__stScriptsFinished = 0;
  window.__stLastFinish = 0;
  const finished = (buf) => {
    const b = new Uint8Array(buf);
    let i = 0;
    while (i < b.length) {
      let tag = 0, shift = 0, x;
      do { x = b[i++]; tag += (x & 0x7f) * 2 ** shift; shift += 7; } while (x & 0x80 && i < b.length);
      const field = Math.floor(tag / 8), wire = tag % 8;
      if (wire === 0) {
        do { x = b[i++]; } while (x & 0x80 && i < b.length);
        if (field === 6) return true;
      } else if (wire === 2) {
        let len = 0; shift = 0;
        do { x = b[i++]; len += (x & 0x7f) * 2 ** shift; shift += 7; } while (x & 0x80 && i < b.length);
        i += len;
      } else if (wire === 1) { i += 8; } else if (wire === 5) { i += 4; } else { return false; }
    }
    return false;
  };
  const mark = () => { window.__stScriptsFinished += 1; window.__stLastFinish = performance.now(); };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (ev) => {
        if (ev.data instanceof ArrayBuffer) { if (finished(ev.data)) mark(); }
        else if (ev.data instanceof Blob) { ev.data.arrayBuffer().then((b) => { if (finished(b)) mark(); }); }
      });
    }
  };
})();
"""

IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  const visible = (sel) => [...document.querySelectorAll(sel)].some(e => e.offsetParent !== null);
  if (visible('[data-testid="stStatusWidget"]') || visible('[data-testid="stSpinner"]')) return false;
  // widgets and charts are lazy-loaded components: a skeleton stands in until they mount
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  return true;
}"""


# ----------------------------------------------------------------------------- environment
def chromium_path() -> str | None:
    """$CHROMIUM if set (None when it is not an executable), else Debian's /usr/bin/chromium
    or a chromium on the PATH; None when there is none."""
    if "CHROMIUM" in os.environ:
        cand = os.environ["CHROMIUM"]
        return cand if os.path.isfile(cand) and os.access(cand, os.X_OK) else None
    for cand in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def playwright_missing() -> str | None:
    """Why browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright python package is not installed (pip install playwright)"
    if chromium_path() is None:
        where = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        return f"no Chromium at {where} (apt-get install chromium, or set $CHROMIUM)"
    return None


def new_context(browser, **kwargs):
    """A browser context (one Streamlit session per page) with the run counter installed."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, **kwargs)
    ctx.add_init_script(RUN_COUNTER_JS)
    ctx.set_default_timeout(DEFAULT_TIMEOUT)
    return ctx


def launch_chromium(playwright):
    """Launch Chromium through a started ``sync_playwright()`` or ``async_playwright()``."""
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)


# ----------------------------------------------------------------------------- server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    """Linux: the server gets SIGTERM when the process that started it dies, so a killed
    test run or benchmark leaves no server behind."""
    try:
        import ctypes
        import signal
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort, other systems
        pass


class StreamlitServer:
    """``streamlit run app.py`` as a subprocess on a free port; ``stop()`` ends it."""

    def __init__(self, app="app.py", cwd=REPO, log_path=None, timeout=300.0):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log_path) if log_path else Path(os.environ.get("TMPDIR", "/tmp")) / f"streamlit-{self.port}.log"
        env = dict(os.environ, PYTHONUNBUFFERED="1", STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", app, "--server.headless", "true",
             "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=str(cwd), stdout=self._log, stderr=subprocess.STDOUT, env=env,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        self.started = time.perf_counter()
        atexit.register(self.stop)
        try:
            self._wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise
        self.up_seconds = time.perf_counter() - self.started

    def _wait_healthy(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"streamlit did not answer /_stcore/health within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, n=40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        if not self._log.closed:
            self._log.close()


# ----------------------------------------------------------------------------- waiting
def wait_idle(page, timeout=PAGE_TIMEOUT):
    """Wait until no script run is going on and no spinner / status widget shows."""
    page.wait_for_function(IDLE_JS, timeout=timeout, polling=50)


#: script runs finished so far in a page (script_finished messages received)
RUNS_JS = "() => window.__stScriptsFinished ?? 0"
#: texts of every exception box and st.error on the page (for the async driver of bench_load)
PROBLEMS_JS = f"""() => [
  ...[...document.querySelectorAll('{EXCEPTION}')].map(e => 'exception: ' + e.innerText.slice(0, 400)),
  ...[...document.querySelectorAll('{ERROR}')].map(e => 'st.error: ' + e.innerText.slice(0, 400)),
]"""
#: [number of plotly charts, number of them not drawn yet]
CHARTS_JS = f"""() => {{
  const charts = [...document.querySelectorAll('{CHART}')];
  return [charts.length, charts.filter(c => !c.querySelector('{CHART_DRAWN}')).length];
}}"""


def runs_done(page) -> int:
    """Script runs finished so far in this page (script_finished messages received)."""
    return page.evaluate(RUNS_JS)


#: a run counted after ``b`` has finished, its last messages have had 100 ms to be handled,
#: and the app says it is not running
SCRIPT_DONE_JS = """(b) => (window.__stScriptsFinished ?? 0) > b && performance.now() - window.__stLastFinish > 100 &&
  document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state') === 'notRunning'"""


#: how long no new run may start for a run (and its reruns) to count as the last one
QUIET_MS = 300
NOT_RUNNING_JS = """() => document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state') === 'notRunning'"""

#: every plotly chart on the page has drawn its SVG
ALL_CHARTS_DRAWN_JS = f"""() => [...document.querySelectorAll('{CHART}')].every(c => c.querySelector('{CHART_DRAWN}'))"""


@contextlib.contextmanager
def rerun(page, timeout=ACTION_TIMEOUT, drawn=True):
    """``with rerun(page): <action>`` — waits until the run the action triggers has finished
    and (``drawn``) everything it shows is mounted; ``drawn=False`` waits for the script only."""
    before = runs_done(page)
    yield
    page.wait_for_function(SCRIPT_DONE_JS, arg=before, timeout=timeout, polling=50)
    # a run may end with st.rerun() (the Data page does after a load): wait until no further run
    # follows within QUIET_MS, so the state seen is the last run's (sidebar, URL), also on a slow machine
    for _ in range(20):
        done = runs_done(page)
        page.wait_for_timeout(QUIET_MS)
        if runs_done(page) == done and page.evaluate(NOT_RUNNING_JS):
            break
        page.wait_for_function(SCRIPT_DONE_JS, arg=done, timeout=timeout, polling=50)
    if drawn:
        wait_idle(page, timeout=timeout)


def open_page(page, url, timeout=PAGE_TIMEOUT, breakdown=None):
    """Go to ``url`` and wait until its first run is done, everything is drawn and a title
    is shown; returns the seconds from ``goto``. ``breakdown`` (a dict), if given, receives
    the seconds until the first script run had finished and the page's title was shown
    (``run``) and until idle, lazily loaded widgets and charts drawn (``drawn``)."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded", timeout=timeout)
    page.wait_for_function(SCRIPT_DONE_JS, arg=0, timeout=timeout, polling=50)
    page.locator(f"{MAIN} h1").first.wait_for(state="visible", timeout=timeout)
    t_run = time.perf_counter() - t0
    wait_idle(page, timeout=timeout)
    page.wait_for_function(ALL_CHARTS_DRAWN_JS, timeout=timeout, polling=50)
    seconds = time.perf_counter() - t0
    if breakdown is not None:
        breakdown.update(run=t_run, drawn=seconds)
    return seconds


# ----------------------------------------------------------------------------- checks
def problems(page) -> list[str]:
    """Texts of every exception box and st.error shown on the page."""
    out = []
    for sel, kind in ((EXCEPTION, "exception"), (ERROR, "st.error")):
        for text in page.locator(sel).all_inner_texts():
            out.append(f"{kind}: {text.strip()[:600]}")
    return out


def charts_status(page, timeout=DEFAULT_TIMEOUT):
    """(number of plotly charts, list of indices of charts without a drawn ``.main-svg``).

    Charts are lazy-loaded: until the plotly bundle has arrived an element shows a
    skeleton (``stSkeleton``) instead of ``stPlotlyChart``, so skeletons are waited out first."""
    page.wait_for_function(f"() => document.querySelectorAll('{MAIN} {SKELETON}').length === 0",
                           timeout=timeout, polling=100)
    charts = page.locator(CHART)
    n = charts.count()
    missing = []
    for i in range(n):
        try:
            charts.nth(i).locator(CHART_DRAWN).first.wait_for(state="attached", timeout=timeout)
        except Exception:  # noqa: BLE001 - a Playwright TimeoutError
            missing.append(i)
    return n, missing


def check_page(page, min_charts=0, allowed_errors=()):
    """Assert: no exception, no st.error (except texts matching ``allowed_errors``), at least
    ``min_charts`` plotly charts and every one drawn."""
    bad = [p for p in problems(page) if not any(re.search(a, p) for a in allowed_errors)]
    assert not bad, f"{page.url}: " + "\n".join(bad)
    n, missing = charts_status(page)
    assert n >= min_charts, f"{page.url}: {n} plotly chart(s), expected at least {min_charts}"
    assert not missing, f"{page.url}: plotly chart(s) {missing} of {n} not drawn (no .main-svg)"
    return n


# ----------------------------------------------------------------------------- widgets
def widget(page, testid, label):
    """The widget of type ``testid`` (e.g. "stNumberInput") whose label is exactly ``label``."""
    return page.locator(f'{MAIN} [data-testid="{testid}"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=re.compile(rf"^\s*{re.escape(label)}\s*$")))


def set_number(page, label, value):
    """Type a value into a number input and commit it (Tab). Outside a form this reruns."""
    field = widget(page, "stNumberInput", label).locator("input").first
    field.fill(str(value))
    field.press("Tab")


def set_text(page, label, value):
    field = widget(page, "stTextInput", label).locator("input").first
    field.fill(str(value))
    field.press("Tab")


def selectbox_options(page, label) -> list[str]:
    box = widget(page, "stSelectbox", label).first
    combo = box.locator('input[role="combobox"]')
    combo.click()
    listbox = page.locator('[role="listbox"]').last
    try:
        listbox.wait_for(state="visible", timeout=2000)
    except Exception:  # noqa: BLE001 - still focused from an earlier choice, the click toggled it shut
        combo.press("ArrowDown")
        listbox.wait_for(state="visible")
    texts = [t.strip() for t in listbox.locator('[role="option"]').all_inner_texts()]
    page.keyboard.press("Escape")
    listbox.wait_for(state="hidden")
    return texts


def selectbox_value(page, label) -> str:
    return widget(page, "stSelectbox", label).first.locator('input[role="combobox"]').input_value()


def choose(page, label, option):
    """Pick ``option`` (its displayed text) in the selectbox ``label``."""
    box = widget(page, "stSelectbox", label).first
    combo = box.locator('input[role="combobox"]')
    combo.click()
    listbox = page.locator('[role="listbox"]').last
    try:
        listbox.wait_for(state="visible", timeout=2000)
    except Exception:  # noqa: BLE001 - still focused from an earlier choice, the click toggled it shut
        combo.press("ArrowDown")
        listbox.wait_for(state="visible")
    listbox.locator('[role="option"]').filter(has_text=re.compile(rf"^\s*{re.escape(option)}\s*$")).first.click()
    listbox.wait_for(state="hidden")


def multiselect_keep(page, label, keep):
    """Remove every selected tag of the multiselect ``label`` except those in ``keep``."""
    box = widget(page, "stMultiSelect", label).first
    tags = lambda: box.locator("[data-tag]").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
    for _ in range(100):
        extra = [t for t in tags() if t not in keep]
        if not extra:
            break
        box.locator(f'button[aria-label="Remove {extra[0]}"]').click()
    chosen = tags()
    assert chosen and set(chosen) <= set(keep), f"{label}: selection is {chosen}, wanted {keep}"


def press(page, label, timeout=ACTION_TIMEOUT):
    """Click the button (or form submit button) with this text (or whose text matches this
    compiled pattern) and wait for the run it starts."""
    pattern = label if isinstance(label, re.Pattern) else re.compile(rf"^\s*{re.escape(label)}\s*$")
    button = page.locator(f'{MAIN} button').filter(has_text=pattern).first
    with rerun(page, timeout=timeout):
        button.click()


CONTROL_VALUES_JS = r"""() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const out = [];
  const label = (el) => (el.querySelector('[data-testid="stWidgetLabel"]')?.innerText ?? '').trim();
  const kinds = {
    stNumberInput: (el) => el.querySelector('input')?.value,
    stTextInput: (el) => el.querySelector('input')?.value,
    stSelectbox: (el) => el.querySelector('input[role="combobox"]')?.value,
    stMultiSelect: (el) => [...el.querySelectorAll('[data-tag]')].map(t => t.getAttribute('aria-label')).join(' | '),
    stSlider: (el) => [...el.querySelectorAll('input[type="range"]')].map(i => i.getAttribute('aria-valuetext') ?? i.value).join(' – '),
    stCheckbox: (el) => String(el.querySelector('input')?.checked),
    stRadio: (el) => el.querySelector('[data-selected="true"] [data-testid="stMarkdownContainer"]')?.innerText,
  };
  for (const [kind, read] of Object.entries(kinds)) {
    for (const el of main.querySelectorAll(`[data-testid="${kind}"]`)) {
      out.push([kind, label(el), read(el) ?? null]);
    }
  }
  return out;
}"""


def control_values(page) -> dict:
    """{(widget type, label, occurrence): shown value} for every input widget in the main area."""
    seen, out = {}, {}
    for kind, label, value in page.evaluate(CONTROL_VALUES_JS):
        i = seen[(kind, label)] = seen.get((kind, label), -1) + 1
        out[(kind, label, i)] = value
    return out


def step_number_input(page):
    """Step a number input of the main area up (down at its maximum): the last one outside
    any form if there is one (a cheap rerun), else the last one inside a form, whose form
    must then be submitted. The last input of a page is usually its seed, so the step costs
    little. Hidden (collapsed) and disabled inputs are passed over.

    Returns (label, old value, new value, inside_form), or None when nothing could change."""
    inputs = page.locator(f'{MAIN} [data-testid="stNumberInput"]').all()[::-1]
    in_form = [el.evaluate("e => !!e.closest('[data-testid=\"stForm\"]')") for el in inputs]
    for el, inside_form in sorted(zip(inputs, in_form), key=lambda pair: pair[1]):
        field = el.locator("input").first
        if not el.is_visible() or not field.is_enabled():
            continue
        label = el.locator('[data-testid="stWidgetLabel"]').inner_text().strip()
        old = field.input_value()
        up = el.locator('[data-testid="stNumberInputStepUp"]')
        button = up if up.is_enabled() else el.locator('[data-testid="stNumberInputStepDown"]')
        if not button.is_enabled():
            continue
        if inside_form:
            button.click()
            # the frontend commits a stepped value to the form's pending state asynchronously: on a
            # loaded machine a submit right after the click could still send the old value
            page.wait_for_function("([el, v]) => el.value !== v", arg=[field.element_handle(), old],
                                   timeout=DEFAULT_TIMEOUT)
            page.wait_for_timeout(300)
        else:
            with rerun(page):
                button.click()
        new = field.input_value()
        if new != old:
            return label, old, new, inside_form
    return None


def submit_form_of(page, number_label, timeout=ACTION_TIMEOUT, drawn=True):
    """Click the submit button of the form holding the number input ``number_label`` (the
    last one of that label) and wait for the run (see :func:`rerun` for ``drawn``)."""
    form = widget(page, "stNumberInput", number_label).last.locator("xpath=ancestor::*[@data-testid='stForm'][1]")
    with rerun(page, timeout=timeout, drawn=drawn):
        form.locator('[data-testid="stFormSubmitButton"] button').first.click()


# ----------------------------------------------------------------------------- navigation, presets, timing
#: every plotly chart drawn and the page idle (no run, spinner, status widget or skeleton)
DRAWN_IDLE_JS = f"""() => ({IDLE_JS})() && ({ALL_CHARTS_DRAWN_JS})()"""
#: resolves after two animation frames: the browser's main thread is free (a chart drawing blocks it)
TWO_FRAMES_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def _settled(page, before, t0, timeout):
    """Wait until the runs started after ``before`` have finished (and any run they start with
    st.rerun), the page is idle and every chart drawn; seconds from ``t0`` (perf_counter) until
    then, the quiet check that follows not counted."""
    page.wait_for_function(SCRIPT_DONE_JS, arg=before, timeout=timeout, polling=50)
    for _ in range(20):
        done = runs_done(page)
        page.wait_for_function(DRAWN_IDLE_JS, timeout=timeout, polling=50)
        page.evaluate(TWO_FRAMES_JS)
        seconds = time.perf_counter() - t0
        page.wait_for_timeout(QUIET_MS)
        if runs_done(page) == done and page.evaluate(NOT_RUNNING_JS):
            return seconds
        page.wait_for_function(SCRIPT_DONE_JS, arg=done, timeout=timeout, polling=50)
    return time.perf_counter() - t0


def press_timed(page, label, timeout=ACTION_TIMEOUT) -> float:
    """:func:`press`, returning the seconds from the click until the run it starts (and any rerun
    that follows) has finished, the page is idle and every plotly chart is drawn."""
    pattern = label if isinstance(label, re.Pattern) else re.compile(rf"^\s*{re.escape(label)}\s*$")
    button = page.locator(f'{MAIN} button').filter(has_text=pattern).first
    button.wait_for(state="visible", timeout=timeout)
    before = runs_done(page)
    t0 = time.perf_counter()
    button.click()
    return _settled(page, before, t0, timeout)


def has_button(page, label) -> bool:
    """Whether the main area shows a button with this text (or matching this compiled pattern)."""
    pattern = label if isinstance(label, re.Pattern) else re.compile(rf"^\s*{re.escape(label)}\s*$")
    return page.locator(f'{MAIN} button').filter(has_text=pattern).count() > 0


def navigate(page, title, timeout=PAGE_TIMEOUT) -> float:
    """Go to the page ``title`` through the sidebar navigation (same session: a new URL would
    start a new one); seconds from the click until its run has finished, its title shows and
    every plotly chart is drawn (the chart redraw time of that page)."""
    # the link's text starts with its icon's ligature name: match the title's own span exactly
    link = page.locator('[data-testid="stSidebarNav"] a').get_by_text(title, exact=True).first
    before = runs_done(page)
    t0 = time.perf_counter()
    link.click()
    seconds = _settled(page, before, t0, timeout)
    page.locator(f"{MAIN} h1").first.wait_for(state="visible", timeout=timeout)
    return seconds


def preset_options(page) -> list[str]:
    """The options of the page's "Preset" selectbox without "(custom)"; [] when it has none."""
    if widget(page, "stSelectbox", "Preset").count() == 0:
        return []
    return [o for o in selectbox_options(page, "Preset") if o != "(custom)"]


def choose_preset(page, pattern, timeout=ACTION_TIMEOUT) -> str:
    """Select the first preset whose text matches ``pattern`` (a regex searched in the text, so
    that a preset's wording may change around its name) and wait for the run it starts; nothing
    happens when it is selected already. Returns the preset's text."""
    options = preset_options(page)
    match = [o for o in options if re.search(pattern, o, re.I)]
    assert match, f"{page.url}: no preset matches {pattern!r}; the page offers {options}"
    if selectbox_value(page, "Preset") != match[0]:    # choosing the selected option starts no run
        with rerun(page, timeout=timeout):
            choose(page, "Preset", match[0])
    return match[0]


# ----------------------------------------------------------------------------- privacy words on screen
#: the blocks of text of the main area, each once: every alert box (st.info/warning/error/success),
#: and every markdown or caption outside an alert; hidden ones (a closed expander) are empty and skipped
SCREEN_TEXTS_JS = f"""() => {{
  const main = document.querySelector('{MAIN}');
  if (!main) return [];
  const alerts = [...main.querySelectorAll('[data-testid="stAlert"]')];
  const inAlert = (el) => alerts.some(a => a.contains(el));
  const md = [...main.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .filter(el => !inAlert(el) && !el.parentElement.closest('[data-testid="stMarkdownContainer"]'));
  return [...alerts, ...md].map(el => el.innerText.trim()).filter(t => t.length > 0);
}}"""


def screen_texts(page) -> list[str]:
    """The texts the main area shows, one per box or paragraph block (:data:`SCREEN_TEXTS_JS`)."""
    return page.evaluate(SCREEN_TEXTS_JS)


#: the "Private" and "Not private" lines of a privacy box (ui.common.privacy_statement), as the
#: browser shows them ("Private (differentially private releases): a; b") or as markdown ("**…:** a; b")
_PRIVATE_LINE = re.compile(r"^[\W_]*Private(?:\s*\([^)\n]*\))?\s*:[*_\s]*(?P<items>.*)$", re.M)
_NOT_PRIVATE_LINE = re.compile(r"^[\W_]*Not\s+private(?:\s*\([^)\n]*\))?\s*:[*_\s]*(?P<items>.*)$", re.M | re.I)
#: one sentence (or list item) saying that nothing on the page, or nothing a run releases, is private
_NOTHING = re.compile(r"\b(nothing|none)\b", re.I)
_IS_PRIVATE = re.compile(r"\b(is|are)\s+(differentially\s+)?private\b", re.I)
_WHOLE_SCREEN = re.compile(r"\b(on|of|in)\s+this\s+(page|screen)\b|\bhere\b|\bon\s+screen\b|"
                           r"\b(a|any)\s+run\s+(releases|shows)\b|\bthis\s+page\s+(shows|releases)\b", re.I)


def _items(text: str) -> list[str]:
    """``text`` split at the semicolons outside parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == ";" and depth <= 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [s.strip(" *_.") for s in out if s.strip(" *_.")]


def _release_key(item: str) -> str:
    """What an item names, without its explanation: lower case, no parentheses, cut at " — " or
    ":", no leading "the" and no trailing "too"."""
    s = item.lower()
    while True:
        t = re.sub(r"\([^()]*\)", "", s)
        if t == s:
            break
        s = t
    s = re.split(r"\s[—–-]\s|:", s)[0]
    s = re.sub(r"[^\w\s+'′ε-]", " ", s)
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"^the ", "", s)
    return re.sub(r" too$", "", s)


def _same_release(a: str, b: str) -> bool:
    ka, kb = _release_key(a), _release_key(b)
    if not ka or not kb:
        return False
    if ka == kb:
        return True
    short, long_ = sorted((ka, kb), key=len)
    return len(short.split()) >= 3 and long_.startswith(short + " ")


def privacy_boxes(text: str) -> tuple[list[str], list[str]]:
    """(items listed as private, items listed as not private) in one box's text. Items of a
    "Private" line that say nothing is ("nothing (see the ledger)") are not claims and left out."""
    private = [i for m in _PRIVATE_LINE.finditer(text) for i in _items(m.group("items"))
               if not _NOTHING.match(i) and not re.match(r"(no|n/a)\b", i, re.I)]
    not_private = [i for m in _NOT_PRIVATE_LINE.finditer(text) for i in _items(m.group("items"))]
    return private, not_private


#: a "Not private" item that denies the whole screen: "everything on this page", "all results shown"
_EVERYTHING = re.compile(r"^\W*(everything|all)\b[^.;]*?(\b(on|of|in)\s+this\s+(page|screen)\b|\bhere\b|"
                         r"\bon\s+screen\b|\bshown\b|\bbelow\b)", re.I)
#: words inside a "Private" item that take it back ("… listed there as not private", "not yet mixed")
_TAKEN_BACK = re.compile(r"\bnot\s+(yet\s+)?(differentially\s+)?private\b|\bnot\s+yet\s+mixed\b", re.I)


def nothing_private_statements(text: str) -> list[str]:
    """The sentences of ``text`` that say nothing on the page (or nothing a run releases) is
    private, e.g. "NOTHING on this page is private for this run", and the "Not private" items
    that claim the whole screen ("Not private: everything on this page …")."""
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|;|\n", text):
        if _NOTHING.search(sentence) and _IS_PRIVATE.search(sentence) and _WHOLE_SCREEN.search(sentence):
            out.append(sentence.strip())
    out += [i for m in _NOT_PRIVATE_LINE.finditer(text) for i in _items(m.group("items")) if _EVERYTHING.search(i)]
    return out


#: st.error boxes a page shows on purpose: a run's "Not private." warning (e.g. Gibbs from the k-plane
#: start); matched against the texts of :func:`problems`
INTENDED_ERRORS = (r"^st\.error:\W*Not private\b",)


def screen_problems(page, allowed_errors=INTENDED_ERRORS) -> list[str]:
    """:func:`problems` without the st.error boxes that match ``allowed_errors``."""
    return [p for p in problems(page) if not any(re.search(a, p) for a in allowed_errors)]


def privacy_contradictions(texts) -> list[str]:
    """What contradicts itself about privacy on one screen; [] when nothing does.

    ``texts``: the screen's text, one string per box or block (:func:`screen_texts`), or one
    string (then one block). Two contradictions are found:

    - a box lists a release as **private** while a box or warning on the same screen says that
      nothing on the page is private ("NOTHING on this page is private", "Not private:
      everything on this page");
    - one box lists the same release both as private and as not private, or a "Private" item
      takes itself back ("… of each ε run; … listed there as not private").

    Pure: a function of the texts only, for pages, saved page texts and made-up examples alike."""
    blocks = [texts] if isinstance(texts, str) else list(texts)
    out = []
    nothing = [(i, s) for i, b in enumerate(blocks) for s in nothing_private_statements(b)]
    for i, block in enumerate(blocks):
        private, not_private = privacy_boxes(block)
        for p in private:
            for j, s in nothing:
                where = "the same box" if j == i else "another block"
                out.append(f"private {p!r} while {where} says {s!r}")
        for p in private:
            for n in not_private:
                if _same_release(p, n):
                    out.append(f"one box lists {p!r} as private and {n!r} as not private")
            if _TAKEN_BACK.search(p):
                out.append(f"one box lists {p!r} under Private")
    return out
