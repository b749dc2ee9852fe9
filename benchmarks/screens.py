"""Screenshots of every page after every preset, with privacy contradictions and chart redraw times.

    python benchmarks/screens.py [--pages kmeans,cluster] [--presets-only-first] [--out /tmp/screens]
                                 [--repo DIR]

Starts ``streamlit run app.py`` (from this checkout, or ``--repo DIR``) on a free port and Debian's
Chromium through Playwright, as the browser tests do (tests/browser/stdriver.py). Each page is
opened in a new tab (its own session); for each option of its "Preset" box (pages without one:
the default settings) it

1. selects the preset and presses the page's main button ("Run", "Run chains", …; k-means's
   *ε side by side* preset presses "Compare ε values side by side"), and measures the seconds from
   the click until the run has finished, the page is idle and every plotly chart is drawn
   (``action``);
2. takes a full-page screenshot, ``<out>/<page>__<preset-slug>.png``;
3. checks the screen: exception boxes and st.error, except a page's own "Not private." warning
   (``problems``), and privacy contradictions
   (``stdriver.privacy_contradictions``: a release listed as private while a box says nothing on
   the page is private, or listed as private and not private in one box);
4. goes to another page through the sidebar and back, and measures the seconds from the click
   on the page's link until its script has run and every chart is drawn again (``redraw``; the
   issue's budget: 2 s in headless Chromium), then checks that screen again.

The table lists page, preset, action and redraw seconds, and the number of contradictions and
problems (the texts follow it; ``<out>/screens.md`` keeps the table). Action times over 10 s and
redraws over 2 s are marked ``*``. Seconds on a shared machine are indicative: run it on an idle
one. Exit status 1 when a screen shows a contradiction or a problem.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))

import stdriver as sd  # noqa: E402

ACTION_BUDGET = 10.0     # seconds: every preset's main action on an idle 2-core machine
REDRAW_BUDGET = 2.0      # seconds: a chart redraw after any navigation
RERUN_QUICK = re.compile(r"^\s*Rerun the quick version\b.*$")   # the Paper figures page's button
SIDE_BY_SIDE = re.compile(r"^\s*Compare ε.*side by side\s*$")   # k-means: one method at several ε


def kmeans_button(preset):
    return SIDE_BY_SIDE if preset and "side by side" in preset.lower() else "Run"


#: slug -> (URL path, sidebar title, main button: text, pattern, or function of the preset's text)
PAGES = {
    "home": ("/", "Home", None),
    "data": ("/data", "Data", "Generate / load"),
    "cluster": ("/cluster", "Cluster", "Run"),
    "gibbs": ("/gibbs", "Gibbs", "Run chains"),
    "coclustering": ("/coclustering", "Co-clustering", "Run"),
    "kmeans": ("/kmeans", "k-means", kmeans_button),
    "privacy_utility": ("/privacy_utility", "Privacy–utility", "Run sweep"),
    "audit": ("/audit", "Audit", "Run audit"),
    "paper_figures": ("/paper_figures", "Paper figures", RERUN_QUICK),
}


@dataclass
class Row:
    page: str
    preset: str
    action: float | None = None
    redraw: float | None = None
    shot: str = ""
    contradictions: list = field(default_factory=list)
    problems: list = field(default_factory=list)


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:60].rstrip("-") or "default"


def full_page_screenshot(page, path):
    """A screenshot of the whole page. Streamlit scrolls inside the app, not the document, so
    the viewport is made as tall as the content for the shot (at most 20,000 px), then restored."""
    size = page.viewport_size
    height = page.evaluate("""() => Math.max(...[...document.querySelectorAll('[data-testid="stMain"], section, div')]
      .filter(e => e.scrollHeight > e.clientHeight + 1 && getComputedStyle(e).overflowY !== 'visible')
      .map(e => e.scrollHeight), document.documentElement.scrollHeight)""")
    page.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), 20_000))})
    try:
        page.wait_for_function(sd.ALL_CHARTS_DRAWN_JS, timeout=sd.DEFAULT_TIMEOUT, polling=100)
        page.evaluate(sd.TWO_FRAMES_JS)
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(size)


def check(page, row: Row, when=""):
    tag = f" ({when})" if when else ""
    row.problems += [p + tag for p in sd.screen_problems(page)]
    n, missing = sd.charts_status(page)
    if missing:
        row.problems.append(f"plotly chart(s) {missing} of {n} not drawn{tag}")
    row.contradictions += [c + tag for c in sd.privacy_contradictions(sd.screen_texts(page))]


def visit(ctx, base, name, out_dir, only_first) -> list[Row]:
    """Every preset of page ``name`` in one new tab; one Row per preset."""
    path, title, button = PAGES[name]
    elsewhere = "Data" if name == "home" else "Home"
    rows = []
    tab = ctx.new_page()
    try:
        sd.open_page(tab, base + path)
        presets = sd.preset_options(tab) or [None]
        if only_first:
            presets = presets[:1]
        for preset in presets:
            row = Row(name, preset or "(default)")
            rows.append(row)
            try:
                if preset:
                    sd.choose_preset(tab, rf"^{re.escape(preset)}$")
                label = button(preset) if callable(button) else button
                if label is not None and not sd.has_button(tab, label):
                    row.problems.append(f"no button {getattr(label, 'pattern', label)!r} on the page")
                elif label is not None:
                    long_run = name in ("privacy_utility", "paper_figures")     # sweeps, figure reruns
                    timeout = (2 if long_run else 1) * sd.ACTION_TIMEOUT
                    row.action = sd.press_timed(tab, label, timeout=timeout)
                    if name == "data":      # a load ends with st.rerun(): its message says it is done
                        tab.locator(f"{sd.MAIN} [data-testid='stAlertContentSuccess']").first.wait_for(
                            state="visible", timeout=sd.DEFAULT_TIMEOUT)
                check(tab, row)
                shot = out_dir / f"{name}__{slug(row.preset)}.png"
                full_page_screenshot(tab, shot)
                row.shot = str(shot)
                sd.navigate(tab, elsewhere)
                row.redraw = sd.navigate(tab, title)
                check(tab, row, "after coming back")
            except Exception as exc:  # noqa: BLE001 - a timeout or a missing control: reported, the walk goes on
                row.problems.append(f"driver: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
                tab.close()
                tab = ctx.new_page()
                sd.open_page(tab, base + path)
    finally:
        tab.close()
    return rows


def fmt(x, budget):
    return "      -" if x is None else f"{x:6.1f}{'*' if x > budget else ' '}"


def table(rows) -> list[str]:
    lines = [f"{'page':16s} {'preset':52s} {'action':>7s} {'redraw':>7s} {'contra.':>7s} {'problems':>8s}"]
    for r in rows:
        lines.append(f"{r.page:16s} {r.preset[:52]:52s} {fmt(r.action, ACTION_BUDGET)} {fmt(r.redraw, REDRAW_BUDGET)} "
                     f"{len(r.contradictions):7d} {len(r.problems):8d}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", help=f"comma-separated pages (default all: {','.join(PAGES)})")
    ap.add_argument("--presets-only-first", action="store_true", help="only the first preset of each page")
    ap.add_argument("--out", default="/tmp/screens", help="folder of the screenshots (default /tmp/screens)")
    ap.add_argument("--repo", default=str(REPO), help="the checkout whose app.py is served (default this one)")
    args = ap.parse_args(argv)
    names = [p.strip() for p in args.pages.split(",")] if args.pages else list(PAGES)
    unknown = [p for p in names if p not in PAGES]
    if unknown:
        ap.error(f"unknown page(s) {unknown}; known: {', '.join(PAGES)}")
    if not (Path(args.repo) / "app.py").is_file():
        ap.error(f"no app.py in {args.repo}")
    missing = sd.playwright_missing()
    if missing:
        sys.exit(f"screens: {missing}")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    print(f"load average: {os.getloadavg()}")
    rows: list[Row] = []
    t0 = time.perf_counter()
    server = sd.StreamlitServer(cwd=args.repo, log_path=out_dir / "server.log")
    try:
        with sync_playwright() as pw:
            browser = sd.launch_chromium(pw)
            ctx = sd.new_context(browser)
            try:
                first = ctx.new_page()          # "/" first: st.navigation then owns the page routes
                sd.open_page(first, server.url + "/")
                first.close()
                for name in names:
                    page_rows = visit(ctx, server.url, name, out_dir, args.presets_only_first)
                    rows += page_rows
                    for line in table(page_rows)[1:]:
                        print(line, flush=True)
            finally:
                ctx.close()
                browser.close()
    finally:
        server.stop()
    lines = table(rows)
    print(f"\n{len(rows)} screens in {time.perf_counter() - t0:.0f} s; seconds from the click until every chart is "
          f"drawn; * over {ACTION_BUDGET:g} s (action) or {REDRAW_BUDGET:g} s (redraw)")
    print("\n".join(lines))
    details = [f"{r.page} / {r.preset}: {kind}: {text}" for r in rows
               for kind, texts in (("contradiction", r.contradictions), ("problem", r.problems)) for text in texts]
    if details:
        print("\n" + "\n".join(details))
    print(f"load average: {os.getloadavg()}; screenshots in {out_dir}")
    (out_dir / "screens.md").write_text("```\n" + "\n".join(lines + [""] + details) + "\n```\n")
    return 1 if details else 0


if __name__ == "__main__":
    sys.exit(main())
