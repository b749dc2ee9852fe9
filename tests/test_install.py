"""dpcore is installable (issue 15): after the README's install (``pip install -r
requirements.txt``, which installs dpcore itself in editable mode), a page's "Reproduce in
Python" script runs from any folder and prints the page's numbers."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from apptest_helpers import open_page

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"kind": "subspaces", "n": 300, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}


@pytest.mark.slow
def test_cluster_page_script_runs_outside_the_repository(tmp_path):
    at = open_page("3_cluster.py", spec=SMALL)
    next(w for w in at.selectbox if w.label == "Method").set_value("sulq")
    at.run()
    next(c for c in at.checkbox if c.label == "reproducible (noise public)").check()
    at.run()
    next(b for b in at.button if b.label == "Run").click()
    at.run()
    assert not at.exception and not at.error
    res = at.session_state["cluster_result"]
    script = tmp_path / "reproduce.py"
    script.write_text(res["code"])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}     # nothing points at the repository
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    if "No module named 'dpcore'" in out.stderr:
        pytest.fail("dpcore is not installed: run `pip install -r requirements.txt` (it installs dpcore with -e .)")
    assert out.returncode == 0, out.stderr
    # and it ran THIS checkout's dpcore (an editable install of another checkout would not count)
    where = subprocess.run([sys.executable, "-c", "import dpcore; print(dpcore.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60).stdout.strip()
    assert Path(where).resolve().is_relative_to(ROOT), f"dpcore imported from {where}, not from {ROOT}"
    printed = dict(line.split(": ", 1) for line in out.stdout.strip().splitlines() if ": " in line)
    # same estimator, parameters and seed: the same numbers, printed to full precision
    assert float(printed["accuracy"]) == pytest.approx(res["metrics"]["accuracy"], rel=1e-12)
    assert float(printed["d_W to truth"]) == pytest.approx(res["metrics"]["d_W to truth"], rel=1e-12)
