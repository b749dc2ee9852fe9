"""Load benchmark (issue 8): many simultaneous browser sessions on one ``streamlit run`` server.

    python benchmarks/bench_load.py                  # 10 sessions on the Cluster page, "Run"
    python benchmarks/bench_load.py --sessions 4     # fewer

Starts ONE server (``streamlit run app.py`` on a free port) and Debian's Chromium
(/usr/bin/chromium, or $CHROMIUM) through Playwright, then

1. warm-up: opens "/" (so that st.navigation owns the routes) and runs the page once, so
   that imports and the cached default dataset are not charged to what follows;
2. reference: ONE session opens the page and presses its button (the Cluster page's
   default: k-plane on the default dataset, n = 1000, d = 10) and waits for the result;
3. load: N sessions (one browser context each, i.e. N Streamlit sessions) open the page
   at the same time; when all are loaded they press the button at the same moment; the
   benchmark waits until every one has finished and checks that none shows an exception
   box or an st.error and that each drew its plotly chart(s).

Prints the wall times (load phase, run phase, total) of the N sessions and of the single
one, their ratio, and the server's peak RSS (the streamlit process and its children,
sampled every 0.2 s with psutil, or /proc without it) before and during the load.

The browser runs on the same machine as the server: on 2 cores the N renderers compete
with the server for CPU, so the figures are an upper bound of what the server needs.
Exit status 1 if a session failed.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))

import stdriver as sd  # noqa: E402



# ----------------------------------------------------------------------------- memory
def _rss_proc(pid: int) -> int:
    """RSS in bytes of pid and its descendants, from /proc."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            pass
    return total


def rss_of_tree(pid: int) -> int:
    try:
        import psutil
    except ImportError:
        return _rss_proc(pid)
    try:
        root = psutil.Process(pid)
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of a process and its live descendants (0 without psutil)."""
    try:
        import psutil
        root = psutil.Process(pid)
        procs = [root] + root.children(recursive=True)
    except Exception:  # noqa: BLE001 - psutil missing or the process gone
        return 0.0
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except Exception:  # noqa: BLE001
            pass
    return total


class BrowserCpu:
    """CPU seconds of the Chromium processes started by this benchmark (through Playwright),
    including those that have exited since: each process's last sample is kept."""

    def __init__(self):
        self.seen = {}
        self.lock = threading.Lock()

    def sample(self):
        try:
            import psutil
            kids = psutil.Process().children(recursive=True)
        except Exception:  # noqa: BLE001 - psutil missing
            return
        for p in kids:
            try:
                if "chrom" in p.name():
                    t = p.cpu_times()
                    with self.lock:
                        self.seen[(p.pid, p.create_time())] = t.user + t.system
            except Exception:  # noqa: BLE001 - the process is gone
                pass

    def total(self):
        self.sample()
        with self.lock:
            return sum(self.seen.values())


BROWSER_CPU = BrowserCpu()


class RssSampler(threading.Thread):
    """Samples the RSS of a process tree every ``interval`` s; ``peak`` since the last reset."""

    def __init__(self, pid, interval=0.2):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak = self.last = 0
        self._halt = threading.Event()

    def reset(self):
        self.peak = self.last = rss_of_tree(self.pid)

    def run(self):
        while not self._halt.is_set():
            BROWSER_CPU.sample()
            self.last = rss_of_tree(self.pid)
            self.peak = max(self.peak, self.last)
            self._halt.wait(self.interval)

    def stop(self):
        self._halt.set()
        self.join(timeout=5)


# ----------------------------------------------------------------------------- one session
async def wait_run(page, before, timeout):
    await page.wait_for_function(sd.SCRIPT_DONE_JS, arg=before, timeout=timeout, polling=50)
    await page.wait_for_function(sd.IDLE_JS, timeout=timeout, polling=50)   # (idle includes: no skeleton)


class Session:
    def __init__(self, browser, url, button, timeout):
        self.browser, self.url, self.button, self.timeout = browser, url, button, timeout
        self.t = {}
        self.problems, self.charts = [], (0, 0)

    async def load(self):
        self.ctx = await self.browser.new_context(viewport={"width": 1400, "height": 1000})
        await self.ctx.add_init_script(sd.RUN_COUNTER_JS)
        self.page = await self.ctx.new_page()
        self.t["load0"] = time.perf_counter()
        await self.page.goto(self.url, wait_until="domcontentloaded", timeout=self.timeout)
        await wait_run(self.page, 0, self.timeout)
        self.t["load1"] = time.perf_counter()

    async def run(self):
        import re
        before = await self.page.evaluate(sd.RUNS_JS)
        button = self.page.locator('[data-testid="stMain"] button').filter(
            has_text=re.compile(rf"^\s*{re.escape(self.button)}\s*$")).first
        self.t["run0"] = time.perf_counter()
        await button.click(timeout=self.timeout)
        await self.page.wait_for_function(sd.SCRIPT_DONE_JS, arg=before, timeout=self.timeout, polling=50)
        self.t["script1"] = time.perf_counter()
        await wait_run(self.page, before, self.timeout)
        self.t["run1"] = time.perf_counter()
        self.problems = await self.page.evaluate(sd.PROBLEMS_JS)
        self.charts = await self.page.evaluate(sd.CHARTS_JS)

    @property
    def ok(self):
        return not self.problems and self.charts[0] >= 1 and self.charts[1] == 0

    async def close(self):
        await self.ctx.close()


class Cpu:
    """CPU seconds spent by the server and by the browser between ``start`` and ``stop``."""

    def __init__(self, server_pid):
        self.pid = server_pid

    def start(self):
        self.s0, self.b0 = cpu_seconds(self.pid), BROWSER_CPU.total()

    def stop(self):
        return cpu_seconds(self.pid) - self.s0, BROWSER_CPU.total() - self.b0


async def phase(sessions, what):
    t0 = time.perf_counter()
    await asyncio.gather(*(getattr(s, what)() for s in sessions))
    return time.perf_counter() - t0


# ----------------------------------------------------------------------------- main
async def bench(args):
    from playwright.async_api import async_playwright

    server = sd.StreamlitServer(log_path=args.log)
    sampler = RssSampler(server.proc.pid)
    sampler.start()
    url = server.url + args.page
    out = {"server_up": server.up_seconds}
    try:
        async with async_playwright() as pw:
            browser = await sd.launch_chromium(pw)
            # 1. warm-up
            home = Session(browser, server.url + "/", None, args.timeout)
            await home.load()
            await home.close()
            warm = Session(browser, url, args.button, args.timeout)
            await warm.load()
            await warm.run()
            await warm.close()
            out["warmup"] = (warm.t["load1"] - warm.t["load0"], warm.t["run1"] - warm.t["run0"], warm.ok)
            # 2. one session
            sampler.reset()
            cpu = Cpu(server.proc.pid)
            one = Session(browser, url, args.button, args.timeout)
            t_one = time.perf_counter()
            cpu.start()
            await one.load()
            cpu_load = cpu.stop()
            cpu.start()
            await one.run()
            cpu_run = cpu.stop()
            out["one"] = dict(total=time.perf_counter() - t_one, load=one.t["load1"] - one.t["load0"],
                              run=one.t["run1"] - one.t["run0"], script=one.t["script1"] - one.t["run0"],
                              ok=one.ok, problems=one.problems, charts=one.charts, peak=sampler.peak,
                              cpu_load=cpu_load, cpu_run=cpu_run)
            await one.close()
            # 3. N sessions at once
            await asyncio.sleep(1.0)
            sampler.reset()
            out["rss_before"] = sampler.last
            many = [Session(browser, url, args.button, args.timeout) for _ in range(args.sessions)]
            t_all = time.perf_counter()
            cpu.start()
            t_load = await phase(many, "load")
            cpu_load = cpu.stop()
            out["rss_loaded"] = sampler.last
            cpu.start()
            t_run = await phase(many, "run")
            cpu_run = cpu.stop()
            out["many"] = dict(total=time.perf_counter() - t_all, load=t_load, run=t_run,
                               cpu_load=cpu_load, cpu_run=cpu_run,
                               script=max(s.t["script1"] for s in many) - min(s.t["run0"] for s in many),
                               per_run=[s.t["run1"] - s.t["run0"] for s in many],
                               per_script=[s.t["script1"] - s.t["run0"] for s in many],
                               per_load=[s.t["load1"] - s.t["load0"] for s in many],
                               failed=[(i, s.problems, s.charts) for i, s in enumerate(many) if not s.ok],
                               peak=sampler.peak)
            for s in many:
                await s.close()
            await browser.close()
    finally:
        try:
            sampler.stop()
        finally:
            server.stop()
    return out


def mb(b):
    return f"{b / 2**20:,.0f} MB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--page", default="/cluster", help="URL path of the page (default /cluster)")
    ap.add_argument("--button", default="Run", help="text of the button to press (default Run)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per wait")
    ap.add_argument("--log", default=None, help="where the server's output goes (default: a file in /tmp)")
    args = ap.parse_args()
    args.timeout *= 1000
    why = sd.playwright_missing()
    if why:
        sys.exit(f"bench_load: cannot run: {why}")

    load_before = os.getloadavg()
    out = asyncio.run(bench(args))
    one, many, n = out["one"], out["many"], args.sessions
    print(f"server up in {out['server_up']:.1f} s; warm-up: page {out['warmup'][0]:.2f} s, "
          f"{args.button!r} {out['warmup'][1]:.2f} s, {'ok' if out['warmup'][2] else 'FAILED'}")
    print(f"\npage {args.page}, button {args.button!r}, cpus: {os.cpu_count()}, "
          f"load average (1/5/15 min) at start {' '.join(f'{x:.2f}' for x in load_before)}, "
          f"at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    head = ["page loaded", "Run: scripts done", "Run: all drawn", "total", "server peak RSS"]
    print(f"\n{'':22s}" + "".join(f"{h:>19s}" for h in head))
    rows = [("1 session", one), (f"{n} sessions at once", many)]
    for name, d in rows:
        print(f"{name:22s}" + "".join(f"{d[k]:18.2f}s" for k in ("load", "script", "run", "total"))
              + f"{mb(d['peak']):>19s}" + ("" if d is many or one["ok"] else f"  FAILED {one['problems']}"))
    print(f"{f'ratio ({n} / 1)':22s}" + "".join(f"{many[k] / one[k]:18.2f}x" for k in ("load", "script", "run", "total")))
    print("  (the Run columns: from the first click to the last session whose script has finished / whose "
          "result is drawn)")
    print("\nCPU seconds spent            page loaded          Run")
    for name, d in rows:
        (sl, bl), (sr, br) = d["cpu_load"], d["cpu_run"]
        print(f"  {name:22s}  server {sl:5.1f} browser {bl:5.1f}   server {sr:5.1f} browser {br:5.1f}")
    for what, key in (("click → script finished", "per_script"), ("click → result drawn", "per_run")):
        pr = sorted(many[key])
        print(f"per session, {what:24s}: min {pr[0]:6.2f} s, median {statistics.median(pr):6.2f} s, "
              f"max {pr[-1]:6.2f} s")
    print(f"server RSS: {mb(out['rss_before'])} before the {n} sessions, {mb(out['rss_loaded'])} with them loaded, "
          f"peak {mb(many['peak'])} (+{mb(many['peak'] - out['rss_before'])})")
    if many["failed"]:
        print(f"\nFAILED sessions: {len(many['failed'])} of {n}")
        for i, probs, charts in many["failed"]:
            print(f"  session {i}: charts (shown, not drawn) = {charts}; {probs}")
        sys.exit(1)
    print(f"all {n} sessions finished without exception or st.error, every chart drawn")


if __name__ == "__main__":
    main()
