"""The app works offline: no page asks for anything outside its own server (a classroom
report: the page icon was fetched from Google's font server and failed without a network)."""
from __future__ import annotations

import stdriver as sd
from test_browser import PAGES


def test_no_request_leaves_the_server(app_url, chromium):
    ctx = sd.new_context(chromium)
    outside = []

    def route(r):
        url = r.request.url
        if url.startswith(app_url) or url.startswith(("data:", "blob:")):
            return r.continue_()
        outside.append(url)
        return r.abort()          # as without a network: the page must not depend on it

    ctx.route("**/*", route)
    try:
        page = ctx.new_page()
        for spec in PAGES:
            sd.open_page(page, app_url + spec.path)
            sd.check_page(page)
        assert outside == [], f"requests outside the server: {sorted(set(outside))}"
    finally:
        ctx.close()
