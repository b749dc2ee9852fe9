"""Class load test: N student sessions on ONE ``streamlit run app.py`` server, no browser.

    python benchmarks/bench_class.py --sessions 10            # Cluster page, "Run"
    python benchmarks/bench_class.py --sessions 30 --after 60
    python benchmarks/bench_class.py --sessions 3 --page kmeans --button "Run"
    python benchmarks/bench_class.py --sessions 30 --probe    # + RSS once the sessions expired
    python benchmarks/bench_class.py --sessions 5 --classes 4 --ttl 10   # does memory grow per class?
    python benchmarks/bench_class.py --flow --sessions 30             # a class as it behaves (issue 33)
    python benchmarks/bench_class.py --flow --sessions 10 --arrive 60
    python benchmarks/bench_class.py --flow --sessions 30 --cold       # a fresh server, no warm-up
    python benchmarks/bench_class.py --flow --sessions 30 --server-option runner.postScriptGC=false
    python benchmarks/bench_class.py --flow --sessions 30 --browsers 3   # 27 websocket clients + 3 Chromium tabs

Each session speaks Streamlit's own websocket protocol (``ws://host:port/_stcore/stream``,
protobuf ``BackMsg`` up, ``ForwardMsg`` down), as the browser's frontend does, so no browser
runs beside the server: all sessions live in one asyncio loop in this process, which spends
≈ 1 % of the server's CPU decoding messages while the server does the work.

A session

1. connects and sends a ``rerun_script`` BackMsg whose ``ClientState.page_name`` is the page's
   URL path (``cluster`` for ``/cluster``: what the frontend sends when a browser opens that
   address; the server's PagesManager matches it against ``st.navigation``'s url paths);
2. waits for the run's ``script_finished`` (FINISHED_SUCCESSFULLY; a run ended early by
   ``st.rerun`` is followed by another one): the page is open. The run's ``navigation``
   message (sent by ``st.navigation``) gives the page's ``page_script_hash`` (``new_session``
   carries the main script's), ``page_info_changed`` messages the query string the app writes
   (shared links): both go into the next rerun, as the frontend sends them;
3. "presses" the page's default action: the first ``button`` element (a form's submit button
   is one) whose label is ``--button`` in the run's Delta messages gives the widget id; it
   sends a rerun whose ``WidgetStates`` holds that id with ``trigger_value = True`` (the other
   widgets keep their server-side values, as when a browser sends them unchanged);
4. waits for that run's ``script_finished`` and checks the result: at least one
   ``plotly_chart`` element, no ``exception`` element and no error box (``alert`` ERROR).

Protocol: phase "warm-up" (one session: imports and the cached default dataset are paid
before the class, as when a lecturer tries the page before the students come), then the class:
N sessions open at once; when all are open they all press at the same moment (the worst case
for the server); then all websockets close. The server's CPU (its process and children,
``psutil`` cpu_times user + system) is read before and after the class, and its RSS sampled
every 0.25 s from before the class to ``--after`` seconds after the last socket closed.

``--flow``: a class as it behaves (issue 33). The students arrive one by one, evenly spread over
``--arrive`` seconds (student i connects at i·arrive/N), and each goes through the lesson's
flow in one session: opens the Data page (``--data-page``, url path ``data``), presses its
``--load-button`` ("Generate / load": the form's default dataset, the subspace paper's Fig. 2
setting, with the seed field set to i + 1 so that every student builds a dataset of their own,
as when a class is told "pick a seed"; ``--same-data`` keeps the default seed for all), waits
for the page's "loaded" message, opens ``--page`` (``cluster``) as a click in the navigation
does (its page hash, no query string) and presses ``--button`` ("Run"), checked as above. No
barrier: each goes on as soon as its previous step is drawn. Reported: Run (press → finished)
and flow (connect → Run finished) p50/p95/max and every step's, the longest event-loop stall
(a separate process requests ``/_stcore/health`` every ``--probe-interval`` s; a stall is the
longest response time, so anything that holds the server's GIL or its event loop shows), server
CPU per student, RSS before the class / at peak / ``--after`` s after the last socket closed,
and issue 33's acceptance figures; exit status 1 if a session failed. The warm-up (one session,
the same flow with the default seed) is paid before the class, as in the default mode.

``--browsers B`` (with ``--flow``): B of the N students (spread evenly over the arrival order) are
real headless Chromium tabs (Python ``playwright``, ``--chromium`` executable, one browser process,
one context and page each), driven by an asyncio loop of their own in a separate thread so they
never block the websocket students' loop. At its arrival time a browser student goes to
``http://127.0.0.1:PORT/<data-page>``, types its seed into the "seed" field, clicks the load
button, waits for the "loaded" success message, clicks the sidebar link to ``--page`` (same
session, as a student does), clicks ``--button`` and waits until the result is drawn (the
"Result:" heading and one more visible ``.js-plotly-plot`` than before the click), ``--timeout``
per step. Its Run (click → chart visible) and flow (goto → chart visible) times count in the same
percentiles and are also printed on their own; a failure or an exception box is a failed session.

Prints p50/p95/max of "open" (connect → first finished run) and "action" (press → finished),
server CPU seconds per session, RSS before / at peak / after; exit status 1 if a session failed.
Memory after the class falls only when the server drops the disconnected sessions: Streamlit
keeps each one ``server.disconnectedSessionTTL`` seconds for a reconnect (our
``.streamlit/config.toml`` sets it); see docs/benchmarks.md, "A class on one server".
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
from websockets.asyncio.client import connect

from streamlit import __version__ as streamlit_version
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

REPO = Path(__file__).resolve().parents[1]
FINISHED = ForwardMsg.ScriptFinishedStatus
ERROR_ALERT = 1                 # streamlit.proto.Alert_pb2.Alert.ERROR
SUCCESS_ALERT = 4               # streamlit.proto.Alert_pb2.Alert.SUCCESS


# ----------------------------------------------------------------------------- server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    """Linux: the server gets SIGTERM when this process dies (no server left behind)."""
    try:
        import ctypes
        import signal
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort
        pass


def start_server(extra_args, log_path, timeout=300.0):
    """``streamlit run app.py`` in the repository (so ``.streamlit/config.toml`` applies) on a
    free port; returns (Popen, port) once ``/_stcore/health`` answers."""
    port = free_port()
    env = dict(os.environ, PYTHONUNBUFFERED="1", STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
         *extra_args],
        cwd=str(REPO), stdout=log, stderr=subprocess.STDOUT, env=env,
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}; log: {log_path}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, port
        except OSError:
            pass
        time.sleep(0.2)
    proc.terminate()
    raise RuntimeError(f"streamlit did not answer /_stcore/health within {timeout:.0f} s; log: {log_path}")


def server_options(args):
    """``--server-option runner.postScriptGC=false`` → ``["--runner.postScriptGC", "false"]`` for ``streamlit run``."""
    out = []
    for opt in args.server_option or ():
        key, sep, value = opt.partition("=")
        if not sep or not key:
            raise SystemExit(f"--server-option wants KEY=VALUE, not {opt!r}")
        out += [f"--{key.lstrip('-')}", value]
    return out


def _tree(pid):
    try:
        p = psutil.Process(pid)
        return [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def server_cpu(pid) -> float:
    """User + system CPU seconds of the server and its children (live and reaped)."""
    total = 0.0
    for p in _tree(pid):
        try:
            t = p.cpu_times()
            total += t.user + t.system + (t.children_user + t.children_system if p.pid == pid else 0.0)
        except psutil.NoSuchProcess:
            pass
    return total


def server_rss(pid) -> int:
    total = 0
    for p in _tree(pid):
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def configured_ttl() -> int:
    """``server.disconnectedSessionTTL`` of the repository's ``.streamlit/config.toml`` (120: Streamlit's default)."""
    import tomllib

    try:
        with open(REPO / ".streamlit" / "config.toml", "rb") as f:
            return int(tomllib.load(f).get("server", {}).get("disconnectedSessionTTL", 120))
    except OSError:
        return 120


async def settle(pid, least: float, limit: float = 180.0) -> bool:
    """Wait at least ``least`` s, then until the server tree is one process using < 5 % of a
    core over a second (``ui.warmup``'s background imports, kernel loads or compile in a child
    are done); False if that did not happen within ``limit`` s."""
    await asyncio.sleep(least)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        c0 = server_cpu(pid)
        await asyncio.sleep(1.0)
        if server_cpu(pid) - c0 < 0.05 and len(_tree(pid)) == 1:
            return True
    return False


# ----------------------------------------------------------------------------- one session
class SessionFailed(RuntimeError):
    pass


class Session:
    """One student: a websocket to ``/_stcore/stream`` and what the server drew in its last run."""

    def __init__(self, url: str, page: str, button: str, timeout: float):
        self.url, self.page, self.button, self.timeout = url, page, button, timeout
        self.ws = None
        self.page_hash = ""
        self.pages = {}                  # url path -> page_script_hash, from the navigation message
        self.query = ""
        self.runs = asyncio.Queue()      # one item per finished run: (status, elements of the run)
        self._elements = []              # (type, element) of the run going on
        self.opened = []                 # elements of the page as opened
        self._reader = None

    async def connect(self):
        # the frontend offers the "streamlit" subprotocol (its other entries carry an XSRF token
        # and a session id to resume; a new session has neither)
        self.ws = await connect(self.url, subprotocols=["streamlit"], max_size=None, open_timeout=self.timeout)
        self._reader = asyncio.create_task(self._read())

    async def _read(self):
        try:
            async for raw in self.ws:
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                kind = msg.WhichOneof("type")
                if kind == "new_session":          # a script run starts: its screen starts empty
                    self._elements = []
                elif kind == "navigation":         # st.navigation ran: the page being shown
                    self.page_hash = msg.navigation.page_script_hash
                    self.pages = {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages}
                elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                    el = msg.delta.new_element
                    self._elements.append((el.WhichOneof("type"), el))
                elif kind == "page_info_changed":
                    self.query = msg.page_info_changed.query_string
                elif kind == "script_finished":
                    self.runs.put_nowait((msg.script_finished, self._elements))
        except Exception as exc:  # noqa: BLE001 - a dropped socket ends the session's waits
            self.runs.put_nowait((exc, []))

    def _send_rerun(self, *, page_name="", widget=None, values=(), page_hash=None):
        """A ``rerun_script`` BackMsg: ``widget`` pressed (trigger), ``values`` ((widget id, WidgetState
        field, value), e.g. a number field's ``int_value``) sent with it, as a form's submit sends its fields."""
        back = BackMsg()
        cs = back.rerun_script
        cs.query_string = self.query
        cs.page_script_hash = self.page_hash if page_hash is None else page_hash
        cs.page_name = page_name
        for wid, field, value in values:
            ws = cs.widget_states.widgets.add()
            ws.id = wid
            setattr(ws, field, value)
        if widget is not None:
            ws = cs.widget_states.widgets.add()
            ws.id = widget
            ws.trigger_value = True
        return self.ws.send(back.SerializeToString())

    async def _finished_run(self):
        """Elements of the next run that finished successfully (runs ended early by a rerun skipped)."""
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SessionFailed(f"no finished run within {self.timeout:.0f} s")
            try:
                status, elements = await asyncio.wait_for(self.runs.get(), left)
            except asyncio.TimeoutError:
                raise SessionFailed(f"no finished run within {self.timeout:.0f} s") from None
            if isinstance(status, Exception):
                raise SessionFailed(f"websocket closed: {status!r}")
            if status == FINISHED.FINISHED_SUCCESSFULLY:
                return elements
            if status == FINISHED.FINISHED_WITH_COMPILE_ERROR:
                raise SessionFailed("the script did not compile")

    @staticmethod
    def _problems(elements):
        out = []
        for kind, el in elements:
            if kind == "exception":
                out.append(f"exception {el.exception.type}: {el.exception.message[:200]}")
            elif kind == "alert" and el.alert.format == ERROR_ALERT:
                out.append(f"error box: {el.alert.body[:200]}")
        return out

    async def open(self):
        """Connect and run the page, as a browser opening ``/<page>``; returns the run's elements."""
        await self.connect()
        await self._send_rerun(page_name=self.page)
        elements = await self._finished_run()
        if self.pages.get(self.page) != self.page_hash:
            raise SessionFailed(f"page {self.page!r} not opened (the app's url paths: {sorted(self.pages)})")
        problems = self._problems(elements)
        if problems:
            raise SessionFailed("on opening: " + "; ".join(problems))
        self.opened = elements
        return elements

    async def navigate(self, page):
        """Open another page of the app in this session, as a click in the navigation does (the
        page's hash, no query string: Streamlit clears the query on a page change)."""
        target = self.pages.get(page)
        if target is None:
            raise SessionFailed(f"no page {page!r} in the navigation (the app's url paths: {sorted(self.pages)})")
        self.query = ""
        await self._send_rerun(page_name=page, page_hash=target)
        elements = await self._finished_run()
        if self.page_hash != target:
            raise SessionFailed(f"page {page!r} not opened")
        problems = self._problems(elements)
        if problems:
            raise SessionFailed(f"on opening {page!r}: " + "; ".join(problems))
        self.page, self.opened = page, elements
        return elements

    def action_id(self, label=None):
        label = self.button if label is None else label
        for kind, el in self.opened:
            if kind == "button" and el.button.label == label:
                return el.button.id
        labels = sorted({el.button.label for kind, el in self.opened if kind == "button"})
        raise SessionFailed(f"no button {label!r} on page {self.page!r} (buttons: {labels})")

    def number_id(self, label):
        """The widget id of the page's number field ``label`` (as opened)."""
        for kind, el in self.opened:
            if kind == "number_input" and el.number_input.label == label:
                return el.number_input.id
        raise SessionFailed(f"no number field {label!r} on page {self.page!r}")

    async def press_elements(self, widget_id, values=()):
        """Press the button (with the fields ``values``, see :meth:`_send_rerun`) and wait for the
        run; returns its elements, checked for exceptions and error boxes."""
        await self._send_rerun(widget=widget_id, values=values)
        elements = await self._finished_run()
        problems = self._problems(elements)
        if problems:
            raise SessionFailed("after the action: " + "; ".join(problems))
        return elements

    async def press(self, widget_id, values=()):
        """Press the button and wait for the run; returns the number of plotly charts drawn."""
        elements = await self.press_elements(widget_id, values)
        charts = sum(kind == "plotly_chart" for kind, _ in elements)
        if charts == 0:
            raise SessionFailed("the action's run drew no plotly chart")
        return charts

    async def load_data(self, label, seed=None, seed_label="seed"):
        """On the Data page: press ``label`` (with the seed field set to ``seed`` unless None) and
        check the page's "loaded" message in the run that follows (the page reruns after a load)."""
        values = () if seed is None else ((self.number_id(seed_label), "int_value", int(seed)),)
        elements = await self.press_elements(self.action_id(label), values)
        if not any(kind == "alert" and el.alert.format == SUCCESS_ALERT and "loaded" in el.alert.body
                   for kind, el in elements):
            raise SessionFailed(f"{label!r} drew no 'loaded' message")
        if seed is not None:        # the page's link carries the loaded dataset's spec (data=<json>)
            spec = json.loads(urllib.parse.parse_qs(self.query).get("data", ["{}"])[0])
            if spec.get("random_state") != seed:
                raise SessionFailed(f"the loaded dataset's seed is {spec.get('random_state')!r}, not {seed}")
        self.opened = elements
        return elements

    async def close(self):
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)


# ----------------------------------------------------------------------------- the class
class Sampler:
    """RSS of the server tree every ``period`` seconds, as an asyncio task."""

    def __init__(self, pid, period=0.25):
        self.pid, self.period, self.samples = pid, period, []

    async def run(self):
        while True:
            self.samples.append((time.monotonic(), server_rss(self.pid)))
            await asyncio.sleep(self.period)


async def student(url, args, together, results, i):
    """Session ``i`` of the class: open, wait for everyone, press; times and error into ``results[i]``."""
    s = Session(url, args.page, args.button, args.timeout)
    rec = results[i] = {"open": None, "action": None, "error": None, "charts": 0}
    try:
        t0 = time.perf_counter()
        await s.open()
        rec["open"] = time.perf_counter() - t0
        wid = s.action_id()
    except Exception as exc:  # noqa: BLE001 - reported per session
        rec["error"] = f"{type(exc).__name__}: {exc}"
        await together.leave()
        await s.close()
        return
    await together.arrive()
    try:
        t0 = time.perf_counter()
        rec["charts"] = await s.press(wid)
        rec["action"] = time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001
        rec["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        await s.close()


class Barrier:
    """Everyone presses once every session has opened (or failed to)."""

    def __init__(self, n):
        self.n, self.count, self.event = n, 0, asyncio.Event()

    def _tick(self):
        self.count += 1
        if self.count >= self.n:
            self.event.set()

    async def arrive(self):
        self._tick()
        await self.event.wait()

    async def leave(self):
        self._tick()


def pct(xs, q):
    """The q-quantile (0..1) of xs, linear between order statistics."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def mb(b):
    return b / 2**20


async def main_async(args):
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_class_{os.getpid()}.log"
    extra = ([] if args.ttl is None else ["--server.disconnectedSessionTTL", str(args.ttl)]) + server_options(args)
    ttl = configured_ttl() if args.ttl is None else args.ttl
    t = time.perf_counter()
    proc, port = start_server(extra, log_path)
    pid = proc.pid
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    print(f"server pid {pid} on port {port} up in {time.perf_counter() - t:.1f} s (log: {log_path})")
    try:
        rss_fresh = server_rss(pid)
        # warm-up: one session, the page and its action, then closed
        t = time.perf_counter()
        s = Session(url, args.page, args.button, args.timeout)
        await s.open()
        t_open = time.perf_counter() - t
        t = time.perf_counter()
        await s.press(s.action_id())
        t_act = time.perf_counter() - t
        await s.close()
        print(f"warm-up session: open {t_open:.2f} s, action {t_act:.2f} s")
        quiet = await settle(pid, args.settle)   # the app's background imports and kernel loads finish
        if not quiet:
            print("warning: the server did not go quiet within 180 s after the warm-up")
        rss_before = server_rss(pid)
        cpu0 = server_cpu(pid)
        load_before = os.getloadavg()

        sampler = Sampler(pid)
        sampling = asyncio.create_task(sampler.run())
        results, between, t_closed = [], [], time.monotonic()
        t_class, rig0 = time.perf_counter(), time.process_time()
        for c in range(args.classes):
            if c:           # the previous class's sessions expire; this class's disconnects reap them
                await asyncio.sleep(max(0.0, t_closed + ttl + 5.0 - time.monotonic()))
                between.append(server_rss(pid))
            batch = [None] * args.sessions
            barrier = Barrier(args.sessions)
            await asyncio.gather(*(student(url, args, barrier, batch, i) for i in range(args.sessions)))
            results += batch
            t_closed = time.monotonic()
        class_seconds, rig_cpu = time.perf_counter() - t_class, time.process_time() - rig0
        cpu1 = server_cpu(pid)
        await asyncio.sleep(args.after)
        rss_after = server_rss(pid)
        rss_probe = None
        if args.probe:      # a late student once the class's sessions expired: its disconnect reaps them
            await asyncio.sleep(max(0.0, t_closed + ttl + 5.0 - time.monotonic()))
            late = Session(url, args.page, args.button, args.timeout)
            await late.open()
            await late.close()
            await asyncio.sleep(5.0)
            rss_probe = server_rss(pid)
        sampling.cancel()
        rss_peak = max(r for _, r in sampler.samples)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()

    opens = [r["open"] for r in results if r["open"] is not None]
    acts = [r["action"] for r in results if r["action"] is not None]
    failed = [(i, r["error"]) for i, r in enumerate(results) if r["error"]]
    n = len(results)
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        commit = "?"
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')}, commit {commit}, streamlit {streamlit_version}")
    classes = f" x {args.classes} classes" if args.classes > 1 else ""
    print(f"N = {args.sessions} sessions{classes} on page '{args.page}', action '{args.button}'; load average before "
          f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} on {os.cpu_count()} CPUs; "
          f"{'class' if args.classes == 1 else 'classes and the waits between'} took {class_seconds:.1f} s; server.disconnectedSessionTTL = {ttl} s")
    print("| measure | p50 | p95 | max |")
    print("|---|---|---|---|")
    for name, xs in (("open (connect → page drawn), s", opens), ("action (press → result drawn), s", acts)):
        print(f"| {name} | {pct(xs, .5):.2f} | {pct(xs, .95):.2f} | {max(xs, default=float('nan')):.2f} |")
    print("\n| server | value |\n|---|---|")
    print(f"| CPU per session (open + action), s | {(cpu1 - cpu0) / n:.2f} |")
    print(f"| this rig's CPU per session (all sessions in one asyncio loop), s | {rig_cpu / n:.3f} |")
    print(f"| RSS at start (no session), MB | {mb(rss_fresh):.0f} |")
    print(f"| RSS before the class (after warm-up), MB | {mb(rss_before):.0f} |")
    print(f"| RSS at peak, MB | {mb(rss_peak):.0f} |")
    for c, r in enumerate(between, start=2):
        print(f"| RSS before class {c} (class {c - 1}'s sessions expired), MB | {mb(r):.0f} "
              f"({100 * (r / rss_before - 1):+.0f} % of before) |")
    print(f"| RSS {args.after:.0f} s after all sessions closed, MB | {mb(rss_after):.0f} "
          f"({100 * (rss_after / rss_before - 1):+.0f} % of before) |")
    if rss_probe is not None:
        print(f"| RSS after the TTL, once one more session opened the page and closed, MB | {mb(rss_probe):.0f} "
              f"({100 * (rss_probe / rss_before - 1):+.0f} % of before) |")
    if args.trace:
        print("\nRSS after close (s: MB): " + ", ".join(
            f"{tt - t_closed:.0f}: {mb(r):.0f}" for tt, r in sampler.samples[::20] if tt >= t_closed))
    p95 = max(pct(opens, .95), pct(acts, .95))
    back = (rss_probe if rss_probe is not None else rss_after) / rss_before - 1
    print(f"\ngoals on 2 cores: p95 <= 10 s: {'met' if p95 <= 10 else 'NOT met'} ({p95:.2f} s); memory back within "
          f"25 % of before: {'met' if back <= 0.25 else 'NOT met'} ({100 * back:+.0f} %)")
    ok_sessions = n - len(failed)
    print(f"\n{ok_sessions}/{n} sessions succeeded")
    for i, err in failed:
        print(f"  session {i}: {err}")
    return 0 if not failed else 1


# ----------------------------------------------------------------------------- a class as it behaves (--flow)
def _health_probe(url, interval, stop, conn):
    """In a process of its own (the rig's asyncio loop must not delay it): GET ``url`` every
    ``interval`` s (sooner after a slow answer); sends [(monotonic start, seconds, ok)] on ``stop``.
    CLOCK_MONOTONIC is system-wide on Linux, so the times compare with the parent's."""
    samples = []
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=120) as r:
                r.read()
            ok = True
        except OSError:
            ok = False
        dt = time.monotonic() - t0
        samples.append((t0, dt, ok))
        stop.wait(max(0.0, interval - dt))
    conn.send(samples)
    conn.close()


class HealthProbe:
    """The server's event-loop stalls, seen from outside: :func:`_health_probe` in a child process."""

    def __init__(self, port, interval):
        ctx = multiprocessing.get_context("spawn")
        self._stop = ctx.Event()
        self._recv, send = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_health_probe, daemon=True,
                                 args=(f"http://127.0.0.1:{port}/_stcore/health", interval, self._stop, send))

    def start(self):
        self._proc.start()
        return self

    def stop(self):
        """The samples [(start, seconds, ok)]."""
        self._stop.set()
        samples = self._recv.recv() if self._recv.poll(30) else []
        self._proc.join(10)
        return samples


FLOW_STEPS = (("open_data", "open Data (connect → drawn)"), ("load", "Generate / load (press → drawn)"),
              ("open_run_page", "open Cluster (click → drawn)"), ("run", "Run (press → finished)"),
              ("flow", "flow (connect → Run finished)"))


async def flow_student(url, args, i, t_start, results, seed):
    """Student ``i``: arrives at ``t_start`` (monotonic), then Data → load → Cluster → Run in one session."""
    rec = results[i] = _flow_record()
    await asyncio.sleep(max(0.0, t_start - time.monotonic()))
    s = Session(url, args.data_page, args.load_button, args.timeout)
    step = "connect"
    try:
        t0 = t = time.perf_counter()
        rec["start"] = time.monotonic()
        step = f"open {args.data_page}"
        await s.open()
        rec["open_data"] = time.perf_counter() - t
        if args.think:
            await asyncio.sleep(args.think)
        step, t = f"press {args.load_button!r}", time.perf_counter()
        await s.load_data(args.load_button, seed)
        rec["load"] = time.perf_counter() - t
        if args.think:
            await asyncio.sleep(args.think)
        step, t = f"open {args.page}", time.perf_counter()
        await s.navigate(args.page)
        rec["open_run_page"] = time.perf_counter() - t
        if args.think:
            await asyncio.sleep(args.think)
        step = f"press {args.button!r}"
        wid = s.action_id(args.button)
        t = time.perf_counter()
        await s.press(wid)
        rec["run"] = time.perf_counter() - t
        rec["flow"] = time.perf_counter() - t0 - (3 * args.think)
        rec["end"] = time.monotonic()
    except Exception as exc:  # noqa: BLE001 - reported per session
        rec["error"] = f"{step}: {type(exc).__name__}: {exc}"
    finally:
        await s.close()


def browser_indices(n, b):
    """The students (indices in arrival order) who use a real browser: ``b`` of ``n``, spread evenly."""
    b = max(0, min(b, n))
    return sorted({min(n - 1, int((j + 0.5) * n / b)) for j in range(b)}) if b else []


class BrowserStudents:
    """``--browsers``: headless Chromium tabs doing the flow through the UI, in a thread of their own.

    ``start()`` launches the browser (one process) and opens one context + page per student, then
    waits; ``go(t_class, ...)`` lets each page begin at its arrival time (monotonic clock, shared
    with the websocket students); ``join()`` waits for all of them."""

    def __init__(self, port, args, indices, results, seeds):
        import threading

        self.port, self.args, self.indices, self.results, self.seeds = port, args, indices, results, seeds
        self.ready, self._go = threading.Event(), threading.Event()
        self.t_class = None
        self.error = None
        self._thread = threading.Thread(target=self._main, name="browser-students", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def go(self, t_class):
        self.t_class = t_class
        self._go.set()

    def join(self, timeout=None):
        self._thread.join(timeout)

    def _main(self):
        try:
            asyncio.run(self._run())
        except Exception as exc:  # noqa: BLE001 - the launch failed: every browser student fails
            self.error = f"browser: {type(exc).__name__}: {exc}"
            for i in self.indices:
                rec = self.results[i] = self.results[i] or _flow_record()
                rec["browser"] = True
                rec["error"] = rec["error"] or self.error
        finally:
            self.ready.set()

    async def _run(self):
        from playwright.async_api import async_playwright

        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=self.args.chromium, headless=True,
                                               args=["--no-sandbox", "--disable-dev-shm-usage"])
            try:
                pages = []
                for i in self.indices:
                    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
                    pages.append((i, await ctx.new_page()))
                self.ready.set()
                await asyncio.to_thread(self._go.wait)
                await asyncio.gather(*(self._student(page, i) for i, page in pages))
            finally:
                await browser.close()

    async def _student(self, page, i):
        args, ms = self.args, self.args.timeout * 1000
        rec = self.results[i] = _flow_record()
        rec["browser"] = True
        seed = self.seeds[i]
        await asyncio.sleep(max(0.0, self.t_class + i * (args.arrive / args.sessions) - time.monotonic()))
        base = f"http://127.0.0.1:{self.port}"
        step = "connect"
        try:
            t0 = t = time.perf_counter()
            rec["start"] = time.monotonic()
            step = f"open {args.data_page}"
            await page.goto(f"{base}/{args.data_page}", timeout=ms)
            load = page.get_by_role("button", name=args.load_button, exact=True)
            await load.wait_for(state="visible", timeout=ms)
            rec["open_data"] = time.perf_counter() - t
            if args.think:
                await asyncio.sleep(args.think)
            if seed is not None:
                step, t = "set seed", time.perf_counter()
                field = page.get_by_label("seed", exact=True)
                await field.fill(str(seed), timeout=ms)
                await field.press("Tab")
                rec["set_seed"] = time.perf_counter() - t
            step, t = f"press {args.load_button!r}", time.perf_counter()
            await load.click(timeout=ms)
            await page.get_by_text("loaded; the other pages now use it").first.wait_for(state="visible", timeout=ms)
            rec["load"] = time.perf_counter() - t
            await self._check(page, step)
            if seed is not None:
                got = await page.get_by_label("seed", exact=True).input_value(timeout=ms)
                if got.strip() != str(seed):
                    raise RuntimeError(f"the seed field shows {got!r} after the load, not {seed}")
            if args.think:
                await asyncio.sleep(args.think)
            step, t = f"open {args.page}", time.perf_counter()
            await page.locator(f'[data-testid="stSidebarNav"] a[href$="/{args.page}"]').first.click(timeout=ms)
            run = page.get_by_role("button", name=args.button, exact=True).first
            await run.wait_for(state="visible", timeout=ms)
            await page.wait_for_url(f"**/{args.page}*", timeout=ms)
            rec["open_run_page"] = time.perf_counter() - t
            if args.think:
                await asyncio.sleep(args.think)
            step = f"press {args.button!r}"
            before = await page.locator(".js-plotly-plot:visible").count()
            t = time.perf_counter()
            await run.click(timeout=ms)
            await page.get_by_role("heading", name="Result:").first.wait_for(state="visible", timeout=ms)
            await page.wait_for_function(
                "n => [...document.querySelectorAll('.js-plotly-plot')].filter(e => e.offsetParent !== null)"
                ".length > n", arg=before, timeout=ms)
            rec["run"] = time.perf_counter() - t
            rec["flow"] = time.perf_counter() - t0 - (3 * args.think)
            rec["end"] = time.monotonic()
            await self._check(page, step)
        except Exception as exc:  # noqa: BLE001 - reported per session
            rec["error"] = f"browser, {step}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        finally:
            try:
                await page.context.close()
            except Exception:  # noqa: BLE001
                pass

    @staticmethod
    async def _check(page, step):
        if await page.locator('[data-testid="stException"]').count():
            raise RuntimeError(f"exception box after {step}")


def _flow_record():
    return {**{k: None for k, _ in FLOW_STEPS}, "error": None, "start": None, "end": None, "browser": False,
            "set_seed": None}


def _stalls(samples, t0, t1):
    """(longest response time, its start relative to t0, samples, answers ≥ 0.5 s, ≥ 2 s, failed) in [t0, t1]."""
    win = [(t, dt, ok) for t, dt, ok in samples if t0 <= t <= t1]
    if not win:
        return float("nan"), float("nan"), 0, 0, 0, 0
    t, dt, _ = max(win, key=lambda x: x[1])
    return (dt, t - t0, len(win), sum(d >= 0.5 for _, d, _ in win), sum(d >= 2.0 for _, d, _ in win),
            sum(not ok for *_, ok in win))


async def flow_async(args):
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_class_{os.getpid()}.log"
    extra = ([] if args.ttl is None else ["--server.disconnectedSessionTTL", str(args.ttl)]) + server_options(args)
    ttl = configured_ttl() if args.ttl is None else args.ttl
    n = args.sessions
    t = time.perf_counter()
    proc, port = start_server(extra, log_path)
    pid = proc.pid
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    print(f"server pid {pid} on port {port} up in {time.perf_counter() - t:.1f} s (log: {log_path})", flush=True)
    probe = None
    try:
        rss_fresh = server_rss(pid)
        if not args.cold:       # the lecturer tries the flow once before the class (the default dataset)
            warm = [None]
            await flow_student(url, args, 0, time.monotonic(), warm, None)
            if warm[0]["error"]:
                raise SessionFailed(warm[0]["error"])
            print("warm-up flow: " + ", ".join(f"{k} {warm[0][k]:.2f} s" for k, _ in FLOW_STEPS), flush=True)
            if not await settle(pid, args.settle):
                print("warning: the server did not go quiet within 180 s after the warm-up")
        rss_before = server_rss(pid)
        load_before = os.getloadavg()
        probe = HealthProbe(port, args.probe_interval).start()
        sampler = Sampler(pid)
        sampling = asyncio.create_task(sampler.run())
        gap = args.arrive / n
        results = [None] * n
        seeds = [None if args.same_data else i + 1 for i in range(n)]
        in_browser = browser_indices(n, args.browsers)
        browsers = None
        if in_browser:        # launched before the class: Chromium's start is not a student's time
            t = time.perf_counter()
            browsers = BrowserStudents(port, args, in_browser, results, seeds).start()
            await asyncio.to_thread(browsers.ready.wait, 300)
            print(f"{len(in_browser)} browser students (students {', '.join(str(i) for i in in_browser)}) "
                  f"ready in {time.perf_counter() - t:.1f} s" + (f": {browsers.error}" if browsers.error else ""),
                  flush=True)
        await asyncio.sleep(3.0)          # the probe's baseline on the quiet server
        cpu0, rig0 = server_cpu(pid), time.process_time()
        t_class = time.monotonic()
        if browsers is not None:
            browsers.go(t_class)
        ws = [i for i in range(n) if i not in in_browser]
        await asyncio.gather(*(flow_student(url, args, i, t_class + i * gap, results, seeds[i]) for i in ws))
        if browsers is not None:
            await asyncio.to_thread(browsers.join)
        t_closed = time.monotonic()
        cpu1, rig_cpu = server_cpu(pid), time.process_time() - rig0
        await asyncio.sleep(max(0.0, t_closed + args.after - time.monotonic()))
        rss_after = server_rss(pid)
        sampling.cancel()
        samples = probe.stop()
        probe = None
        rss_peak = max(r for t_, r in sampler.samples if t_ >= t_class)
    finally:
        if probe is not None:
            probe.stop()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()

    failed = [(i, r["error"]) for i, r in enumerate(results) if r["error"]]
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip() or "?"
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        commit += " (+ uncommitted changes)" if dirty else ""
    except (OSError, subprocess.SubprocessError):
        commit = "?"
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')}, commit {commit}, streamlit {streamlit_version}")
    print(f"--flow: N = {n} students ({len(in_browser)} of them headless Chromium tabs) arriving evenly over {args.arrive:g} s (one every {gap:.2f} s), each: "
          f"{args.data_page} → {args.load_button!r} ({'default seed' if args.same_data else 'seed = student + 1'}) → "
          f"{args.page} → {args.button!r}{f', {args.think:g} s between steps' if args.think else ''}; "
          f"{'no warm-up' if args.cold else 'after a warm-up flow'}; "
          f"{'server options ' + ' '.join(args.server_option) + '; ' if args.server_option else ''}load average before {load_before[0]:.2f} "
          f"{load_before[1]:.2f} {load_before[2]:.2f} on {os.cpu_count()} CPUs; first arrival to last close "
          f"{t_closed - t_class:.1f} s; server.disconnectedSessionTTL = {ttl} s")
    print("| step | p50 | p95 | max |")
    print("|---|---|---|---|")
    for key, name in FLOW_STEPS:
        xs = [r[key] for r in results if r[key] is not None]
        print(f"| {name}, s | {pct(xs, .5):.2f} | {pct(xs, .95):.2f} | {max(xs, default=float('nan')):.2f} |")
    runs = [r["run"] for r in results if r["run"] is not None]
    flows = [r["flow"] for r in results if r["flow"] is not None]
    if in_browser:
        print(f"\nbrowser students ({len(in_browser)} headless Chromium tabs, {args.chromium}; Run = click → "
              "result chart visible, flow = goto → result chart visible; included in the table above):")
        print("| student | arrival, s | type seed, s | " + " | ".join(name for _, name in FLOW_STEPS) + " |")
        print("|---|---|---|" + "---|" * len(FLOW_STEPS))
        for i in in_browser:
            r = results[i]
            cells = [("—" if r[k] is None else f"{r[k]:.2f}") for k, _ in FLOW_STEPS]
            arr = "—" if r["start"] is None else f"{r['start'] - t_class:.1f}"
            sd = "—" if r.get("set_seed") is None else f"{r['set_seed']:.2f}"
            print(f"| {i}{' (failed)' if r['error'] else ''} | {arr} | {sd} | " + " | ".join(cells) + " |")
        ws_runs = [results[i]["run"] for i in ws if results[i]["run"] is not None]
        ws_flows = [results[i]["flow"] for i in ws if results[i]["flow"] is not None]
        print(f"websocket students alone ({len(ws)}): Run p50 {pct(ws_runs, .5):.2f} s, p95 {pct(ws_runs, .95):.2f} s; "
              f"flow p50 {pct(ws_flows, .5):.2f} s, p95 {pct(ws_flows, .95):.2f} s")
    base = _stalls(samples, t_class - 3.0, t_class)
    during = _stalls(samples, t_class, t_closed)
    after = _stalls(samples, t_closed, t_closed + args.after)
    print("\n| server | value |\n|---|---|")
    print(f"| longest event-loop stall during the class (/_stcore/health answer), s | {during[0]:.2f} "
          f"(at {during[1]:.0f} s after the first arrival) |")
    print(f"| health answers during the class: all / ≥ 0.5 s / ≥ 2 s / failed | {during[2]} / {during[3]} / "
          f"{during[4]} / {during[5]} |")
    print(f"| longest answer before the class (quiet server) / in the {args.after:.0f} s after, s | {base[0]:.3f} / "
          f"{after[0]:.3f} |")
    print(f"| server CPU per student, s | {(cpu1 - cpu0) / n:.2f} |")
    print(f"| this rig's CPU per student (all sessions in one asyncio loop), s | {rig_cpu / n:.3f} |")
    print(f"| RSS at start (no session), MB | {mb(rss_fresh):.0f} |")
    print(f"| RSS before the class ({'no warm-up' if args.cold else 'after the warm-up'}), MB | {mb(rss_before):.0f} |")
    print(f"| RSS at peak, MB | {mb(rss_peak):.0f} ({100 * (rss_peak / rss_before - 1):+.0f} %) |")
    print(f"| RSS {args.after:.0f} s after the last socket closed, MB | {mb(rss_after):.0f} "
          f"({100 * (rss_after / rss_before - 1):+.0f} % of before the class) |")
    if args.trace:
        print("\nhealth answers ≥ 0.5 s (s after first arrival: s): " + ", ".join(
            f"{t_ - t_class:.0f}: {d:.1f}" for t_, d, _ in samples if d >= 0.5 and t_ >= t_class))
        print("students (arrival s: flow s): " + ", ".join(
            f"{r['start'] - t_class:.0f}: {r['flow']:.1f}" for r in results if r["flow"] is not None))

    ok = n - len(failed)
    run_p95, flow_p95, stall = pct(runs, .95), pct(flows, .95), during[0]
    back = rss_after / rss_before - 1

    def line(goal, value, met):
        print(f"  {'met    ' if met else 'NOT met'}  {goal}: {value}")

    print(f"\nissue 33 acceptance ({'class of 10' if n <= 10 else 'class of 30'} goals, N = {n}):")
    line(f"{n}/{n} sessions succeed", f"{ok}/{n}", ok == n)
    if n <= 10:
        line("Run p95 ≤ 5 s", f"{run_p95:.2f} s", run_p95 <= 5)
    else:
        line("Run p95 ≤ 10 s", f"{run_p95:.2f} s", run_p95 <= 10)
        line("flow p95 ≤ 30 s", f"{flow_p95:.2f} s", flow_p95 <= 30)
        line("longest stall ≤ 2 s", f"{stall:.2f} s", stall <= 2)
        if args.cold:       # the start is a server that has imported nothing yet: its growth is not the class's
            print(f"  n/a      RSS {args.after:.0f} s after the sessions close within 10 % of its start: "
                  f"{100 * back:+.1f} % of the fresh server (not judged with --cold: run without it)")
        else:
            line(f"RSS {args.after:.0f} s after the sessions close within 10 % of its start (before the class)",
                 f"{100 * back:+.1f} %", abs(back) <= 0.10)
    print(f"  (also: Run p50 {pct(runs, .5):.2f} s, flow p50 {pct(flows, .5):.2f} s, flow p95 {flow_p95:.2f} s, "
          f"longest stall {stall:.2f} s)")
    for i, err in failed:
        print(f"  session {i}: {err}")
    return 0 if not failed else 1


def run(args) -> int:
    try:
        return asyncio.run(flow_async(args) if args.flow else main_async(args))
    except SessionFailed as exc:          # the warm-up session failed: nothing to measure
        print(f"warm-up failed: {exc}", file=sys.stderr)
        return 2


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", "-n", type=int, default=10, help="number of student sessions (default 10)")
    ap.add_argument("--classes", type=int, default=1,
                    help="classes one after another on the same server, TTL + 5 s apart (a leak grows with them)")
    ap.add_argument("--page", default="cluster", help="URL path of the page (default: cluster)")
    ap.add_argument("--button", default="Run", help="label of the page's default action button (default: Run)")
    ap.add_argument("--after", type=float, default=60.0,
                    help="seconds to watch memory after the last session closed (default 60)")
    ap.add_argument("--settle", type=float, default=3.0,
                    help="least seconds of rest after the warm-up, then until the server is quiet (default 3)")
    ap.add_argument("--timeout", type=float, default=600.0, help="per-step timeout of a session, s (default 600)")
    ap.add_argument("--ttl", type=int, default=None,
                    help="override server.disconnectedSessionTTL (default: .streamlit/config.toml's)")
    ap.add_argument("--probe", action="store_true",
                    help="once the class's sessions expired (TTL + 5 s after they closed), one more session "
                         "opens the page and closes (Streamlit reaps expired sessions on a disconnect); RSS 5 s later")
    ap.add_argument("--trace", action="store_true", help="also print RSS every 5 s after the sessions closed "
                    "(--flow: every slow health answer and every student's arrival and flow time)")
    ap.add_argument("--server-option", action="append", metavar="KEY=VALUE",
                    help="a Streamlit config option for the server, e.g. runner.postScriptGC=false (repeatable; "
                         "passed as --KEY VALUE to streamlit run, over .streamlit/config.toml)")
    fl = ap.add_argument_group("a class as it behaves (--flow, issue 33)")
    fl.add_argument("--flow", action="store_true",
                    help="students arrive staggered, each: Data page → load → --page → --button (see above)")
    fl.add_argument("--arrive", type=float, default=60.0,
                    help="--flow: the students arrive evenly over this many seconds (default 60)")
    fl.add_argument("--data-page", default="data", help="--flow: URL path of the Data page (default: data)")
    fl.add_argument("--load-button", default="Generate / load",
                    help="--flow: label of the Data page's load button (default: 'Generate / load')")
    fl.add_argument("--same-data", action="store_true",
                    help="--flow: every student loads the default dataset (default: student i sets seed i + 1)")
    fl.add_argument("--think", type=float, default=0.0,
                    help="--flow: seconds a student waits between steps (default 0; not counted in flow)")
    fl.add_argument("--probe-interval", type=float, default=0.1,
                    help="--flow: seconds between two /_stcore/health requests of the stall probe (default 0.1)")
    fl.add_argument("--cold", action="store_true", help="--flow: no warm-up flow before the class")
    fl.add_argument("--browsers", type=int, default=0, metavar="B",
                    help="--flow: B of the N students are real headless Chromium tabs (playwright; default 0)")
    fl.add_argument("--chromium", default="/usr/bin/chromium",
                    help="--browsers: the Chromium executable (default /usr/bin/chromium)")
    args = ap.parse_args(argv)
    if args.sessions < 1 or args.classes < 1:
        ap.error("--sessions and --classes must be at least 1")
    if args.browsers < 0 or args.browsers > args.sessions:
        ap.error("--browsers must be between 0 and --sessions")
    if args.browsers and not args.flow:
        ap.error("--browsers needs --flow")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
