"""Class load test: N student sessions on ONE ``streamlit run app.py`` server, no browser.

    python benchmarks/bench_class.py --sessions 10            # Cluster page, "Run"
    python benchmarks/bench_class.py --sessions 30 --after 60
    python benchmarks/bench_class.py --sessions 3 --page kmeans --button "Run"
    python benchmarks/bench_class.py --sessions 30 --probe    # + RSS once the sessions expired
    python benchmarks/bench_class.py --sessions 5 --classes 4 --ttl 10   # does memory grow per class?

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

Prints p50/p95/max of "open" (connect → first finished run) and "action" (press → finished),
server CPU seconds per session, RSS before / at peak / after; exit status 1 if a session failed.
Memory after the class falls only when the server drops the disconnected sessions: Streamlit
keeps each one ``server.disconnectedSessionTTL`` seconds for a reconnect (our
``.streamlit/config.toml`` sets it); see docs/benchmarks.md, "A class on one server".
"""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
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

    def _send_rerun(self, *, page_name="", widget=None):
        back = BackMsg()
        cs = back.rerun_script
        cs.query_string = self.query
        cs.page_script_hash = self.page_hash
        cs.page_name = page_name
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

    def action_id(self):
        for kind, el in self.opened:
            if kind == "button" and el.button.label == self.button:
                return el.button.id
        labels = sorted({el.button.label for kind, el in self.opened if kind == "button"})
        raise SessionFailed(f"no button {self.button!r} on page {self.page!r} (buttons: {labels})")

    async def press(self, widget_id):
        """Press the button and wait for the run; returns the number of plotly charts drawn."""
        await self._send_rerun(widget=widget_id)
        elements = await self._finished_run()
        problems = self._problems(elements)
        if problems:
            raise SessionFailed("after the action: " + "; ".join(problems))
        charts = sum(kind == "plotly_chart" for kind, _ in elements)
        if charts == 0:
            raise SessionFailed("the action's run drew no plotly chart")
        return charts

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
    extra = [] if args.ttl is None else ["--server.disconnectedSessionTTL", str(args.ttl)]
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


def run(args) -> int:
    try:
        return asyncio.run(main_async(args))
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
    ap.add_argument("--trace", action="store_true", help="also print RSS every 5 s after the sessions closed")
    args = ap.parse_args(argv)
    if args.sessions < 1 or args.classes < 1:
        ap.error("--sessions and --classes must be at least 1")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
