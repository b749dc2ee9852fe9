"""SIGTERM ends the server while a Gibbs run is going on (issue 33: it was ignored until
SIGKILL). A hang guard, not a timing assertion: benchmarks/bench_shutdown.py prints the time
(goal ≤ 5 s)."""
import sys
from pathlib import Path

import pytest

from ui.shutdown import in_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


@pytest.mark.slow
def test_sigterm_ends_the_server_during_a_gibbs_run():
    pytest.importorskip("websockets")
    pytest.importorskip("psutil")          # benchmarks/bench_class.py measures the server with it
    from bench_shutdown import sigterm_during_gibbs
    assert sigterm_during_gibbs(guard=60.0) is not None


def test_the_prompt_exit_is_only_for_the_server():
    assert in_server(["/srv/app.py", "--class-budget", "3"], {})
    assert not in_server(["/srv/app.py"], {"pytest": object()})
    assert not in_server(["pytest", "-q"], {})
    assert not in_server(sys.argv, sys.modules)            # this process: never ended early
