"""Fixtures of the browser suite: one ``streamlit run app.py`` server for the whole session,
one Chromium (Debian's /usr/bin/chromium, or $CHROMIUM), one browser context in which
every test opens its own tab (= its own Streamlit session), and a second context for
links opened "elsewhere".

Every test here is marked ``browser`` and is skipped (with the reason) when the playwright
package or Chromium is missing. Under pytest-xdist (``-n``, pytest.ini) they all run in one
worker (``xdist_group("browser")`` with ``--dist loadgroup``): one server and one Chromium, and
test_browser's order (test_first_render_of_every_page first) holds.
"""
from __future__ import annotations

import pytest

from stdriver import (RENDER_BREAKDOWN, RENDER_TIMES, StreamlitServer, launch_chromium, new_context, open_page,
                      playwright_missing)

MISSING = playwright_missing()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.xdist_group("browser"))   # one worker: one server, one Chromium
            if MISSING:
                item.add_marker(pytest.mark.skip(reason=f"browser tests skipped: {MISSING}"))


@pytest.fixture(scope="session")
def st_server(tmp_path_factory):
    """The app served on a free port; stopped at the end of the session."""
    if MISSING:
        pytest.skip(MISSING)
    server = StreamlitServer(log_path=tmp_path_factory.mktemp("streamlit") / "server.log")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pw():
    if MISSING:
        pytest.skip(MISSING)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def chromium(pw):
    browser = launch_chromium(pw)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def context(chromium):
    """One browser context for the suite: every test opens its own tab (a new Streamlit
    session: sessions are per tab) and the tabs share the HTTP cache, so the app's
    JavaScript is not fetched and compiled again for every test."""
    ctx = new_context(chromium)
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def link_context(chromium):
    """A second browser context (its own cookies, storage and cache): where
    test_url_round_trip opens the links copied from the first one."""
    ctx = new_context(chromium)
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def app_url(st_server, context):
    """The server's base URL, after one visit of "/".

    On a fresh server, the very first session that asks for a page URL such as /data is
    served by Streamlit's legacy pages/ mode (it runs pages/2_data.py alone, without
    app.py's st.navigation and sidebar); once app.py has run once, st.navigation owns the
    routes. Opening "/" first makes every later page URL mean what app.py says."""
    page = context.new_page()
    RENDER_BREAKDOWN["/"] = {}
    # the app's very first render, in a browser with an empty cache
    RENDER_TIMES["/"] = open_page(page, st_server.url + "/", breakdown=RENDER_BREAKDOWN["/"])
    page.close()
    return st_server.url


@pytest.fixture
def page(context, app_url):
    tab = context.new_page()
    yield tab
    tab.close()


def pytest_sessionfinish(session):
    """An xdist worker hands its render times to the controller (tests/conftest.py prints them)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None and RENDER_TIMES:
        workeroutput["render_times"] = dict(RENDER_TIMES)
        workeroutput["render_breakdown"] = dict(RENDER_BREAKDOWN)
