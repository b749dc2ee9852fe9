"""How long the server takes to exit on SIGTERM while a Gibbs run is going on (issue 33: it
used to ignore SIGTERM until SIGKILL while the compiled sweeps ran).

    python benchmarks/bench_shutdown.py            # prints sigterm_to_exit_s=<x>

Starts ``streamlit run app.py`` (benchmarks/bench_class.py's launcher), opens the Gibbs page
in one websocket session, presses "Run chains" with the page's defaults (Fig. 3's setting: 8
chains, 1,000 sweeps, four ε), waits until the run's progress bar has moved, sends SIGTERM and
measures until the process has exited. The goal is ≤ 5 s; ``tests/test_shutdown.py`` checks that
the server exits at all (a hang guard, no timing assertion).

What makes it quick: the compiled sweeps read a cancel token at every sweep
(:mod:`dpcore.runtime`), every live token is cancelled at interpreter exit before the kernels'
thread pool is joined, and Streamlit's script threads are daemons.
"""
from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_class import Session, start_server  # noqa: E402


async def _start_gibbs_run(port, timeout):
    s = Session(f"ws://127.0.0.1:{port}/_stcore/stream", "gibbs", "Run chains", timeout)
    await s.open()
    await s._send_rerun(widget=s.action_id())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:          # the run is going on once its progress bar has a sweep in it
        if any(kind == "progress" and "sweep" in el.progress.text for kind, el in s._elements):
            return s
        await asyncio.sleep(0.1)
    raise RuntimeError("the Gibbs run did not start")


def sigterm_during_gibbs(timeout=300.0, guard=120.0):
    """Seconds from SIGTERM to the server's exit during a Gibbs run, or None if it had not
    exited after ``guard`` seconds (it is then killed). The websocket session runs in an event
    loop of its own thread (the caller may be inside a running loop, e.g. under pytest)."""
    log = Path(tempfile.mkdtemp()) / "server.log"
    proc, port = start_server([], log, timeout=timeout)

    async def scenario():
        session = await _start_gibbs_run(port, timeout)
        try:
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            while proc.poll() is None:
                if time.monotonic() - t0 > guard:
                    return None
                await asyncio.sleep(0.02)
            return time.monotonic() - t0
        finally:
            await session.close()

    try:
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, scenario()).result()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main():
    seconds = sigterm_during_gibbs()
    print("server did not exit" if seconds is None else f"exited {seconds:.2f} s after SIGTERM (goal ≤ 5 s)")
    print(f"sigterm_to_exit_s={'inf' if seconds is None else f'{seconds:.3f}'}")
    return 0 if seconds is not None and seconds <= 5 else 1


if __name__ == "__main__":
    sys.exit(main())
