"""AppTest runs of the app shell, the Home page and the Data page."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apptest_helpers import open_page

ROOT = Path(__file__).resolve().parents[1]


def page(name):
    return open_page(name)


def summary(at):
    return dict(zip(at.dataframe[0].value.index, at.dataframe[0].value["value"]))


def test_app_shell_runs_with_navigation_and_sidebar():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception
    assert any("Private ε spent on this dataset" in m.label for m in at.sidebar.metric)
    assert any("dpclust-explorer" in t.value for t in at.title)  # Home is the default page


def test_home_page_runs():
    at = page("1_home.py")
    assert "differential" in " ".join(m.value for m in at.markdown).lower()


def test_data_page_default_summary_and_parameter_change():
    at = page("2_data.py")
    assert summary(at)["rows (n)"] == "1000"
    n_widget = next(w for w in at.number_input if w.label == "points n")
    n_widget.set_value(400)
    at.button[0].click()
    at.run()
    assert not at.exception and not at.error
    assert summary(at)["rows (n)"] == "400"


@pytest.mark.parametrize("label,value,message", [
    ("subspaces k", 50, "n must be >= k"),
    ("subspace dimension q", 10, "q must be < d"),
    ("noise σ", -0.5, "sigma must be"),
])
def test_data_page_bad_input_shows_error_and_keeps_dataset(label, value, message):
    at = page("2_data.py")
    before = summary(at)
    if label == "subspaces k":
        next(w for w in at.number_input if w.label == "points n").set_value(20)
    next(w for w in at.number_input if w.label == label).set_value(value)
    at.button[0].click()
    at.run()
    assert not at.exception
    assert any(message in e.value for e in at.error)
    assert summary(at) == before


@pytest.mark.parametrize("kind,expect", [("gaussians", "Gaussian mixture"), ("yaleb", "Extended Yale B"),
                                         ("cluto", "CLUTO classic3"), ("blocks", "block matrix")])
def test_data_page_loads_every_kind(kind, expect):
    at = page("2_data.py")
    next(s for s in at.selectbox if s.label == "Dataset type").set_value(kind)
    at.run()
    at.button[0].click()
    at.run()
    assert not at.exception and not at.error
    assert expect in summary(at)["name"]


def test_warmup_imports_the_pages_modules_once_in_the_background():
    import sys

    from ui import warmup
    first = warmup.start()
    assert warmup.start() is first and first.daemon                 # one thread per server
    first.join(timeout=120)
    assert not first.is_alive()
    assert all(name in sys.modules for name in warmup.MODULES)       # every listed module really exists
