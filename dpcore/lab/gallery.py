"""The papers' figures as shipped results: written by ``python -m dpcore.reproduce ... --ship DIR``,
read by the Paper figures page.

A shipped folder (``sample_data/paper_figures/`` in the app) holds ``manifest.json`` (the
command, the commit and whether the tree had uncommitted changes, the date, wall time per
figure and the peak memory of the run) and one folder per figure with, for every panel, its
result rows ``<panel>.csv`` (compact: 8 significant digits, Fig. 3 traces thinned to at most
:data:`SHIPPED_TRACE_POINTS` sweeps per chain, the dataset spec moved to ``panels.json``),
``panels.json`` (titles, captions, plot specs of :mod:`dpcore.plots.paper`, and for every
sweep panel the sweep that made it, so that any row can be recomputed), ``checks.csv`` (the
paper's statements and whether they hold) and the figure's extra tables (``diagnostics.csv``).
The reproduction's HTML files, images and plotly.js are not shipped: the app draws each panel
from its CSV (:func:`dpcore.plots.paper.panel_figure`). Manual: ``docs/reproduce.md``.

Every run's seed is a function of (master seed, method label, ε, trial) only
(:func:`dpcore.lab.methods.run_seed`), so :func:`recompute_row` reruns one shipped row on its
own and :func:`compare_row` says whether it gives the shipped numbers.
"""
from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["GALLERY_DIR", "SHIPPED_TRACE_POINTS", "ShippedPanel", "ShippedFigure", "load_gallery", "ship",
           "recompute_row", "compare_row", "statements_markdown", "write_statements", "STATEMENT_MARKERS",
           "README_WIDTH"]

#: where the app's shipped results live
GALLERY_DIR = Path(__file__).resolve().parents[2] / "sample_data" / "paper_figures"
#: most sweeps per chain kept in a shipped Fig. 3 trace (evenly spaced, the last one kept)
SHIPPED_TRACE_POINTS = 400
_FLOAT_FORMAT = "%.8g"


@dataclass
class ShippedPanel:
    """One panel of a shipped figure.

    Attributes
    ----------
    name, title, caption : str
        As written by the reproduction.
    plot : dict
        Plot spec (:func:`dpcore.plots.paper.panel_figure`).
    df : pandas.DataFrame
        The result rows.
    dataset : dict or None
        The dataset spec of a sweep panel.
    sweep : dict or None
        The sweep that made the rows (``dataset``, ``algorithms``, ``epsilons``, ``trials``,
        ``metrics``, ``delta``, ``seed``); None for Fig. 3 traces.
    """
    name: str
    title: str
    caption: str
    plot: dict
    df: pd.DataFrame
    dataset: dict | None = None
    sweep: dict | None = None

    def figure(self):
        """The panel's plotly figure (the one the reproduction drew).

        Returns
        -------
        plotly.graph_objects.Figure
        """
        from ..plots.paper import panel_figure
        return panel_figure(self.plot, self.df)


@dataclass
class ShippedFigure:
    """One shipped figure: its panels, the checks of the paper's statements, extra tables.

    Attributes
    ----------
    name : str
        E.g. ``"subspace-fig2"``.
    level : str
        ``"full"``, ``"quick"`` or ``"tiny"``.
    seconds : float
        Wall time of the figure's runs.
    n_runs : int
        Number of runs.
    panels : list of ShippedPanel
    checks : pandas.DataFrame
        Columns ``check`` (what we test), ``paper`` (the paper's words; empty in results shipped
        before it was recorded), ``ok``, ``detail``.
    extra : dict of str to pandas.DataFrame
        Other tables by file name (e.g. ``diagnostics.csv``).
    """
    name: str
    level: str
    seconds: float
    n_runs: int
    panels: list = field(default_factory=list)
    checks: pd.DataFrame = None
    extra: dict = field(default_factory=dict)


def _git(*args, cwd=None):
    import subprocess
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def code_version():
    """The commit of the dpcore in use and whether its tree has uncommitted changes.

    Returns
    -------
    dict
        ``commit`` (str or None when dpcore is not used from its own git checkout, e.g.
        installed from a wheel, even inside someone else's repository) and ``dirty`` (bool or None).
    """
    root = Path(__file__).resolve().parents[2]
    top = _git("rev-parse", "--show-toplevel", cwd=root)
    if top is None or Path(top).resolve() != root or not (root / "pyproject.toml").is_file():
        return {"commit": None, "dirty": None}
    commit = _git("rev-parse", "HEAD", cwd=root)
    status = _git("status", "--porcelain", "--untracked-files=no", "--", "dpcore", cwd=root)
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def _thin_traces(df, max_points):
    sweeps = np.sort(df["sweep"].unique())
    if len(sweeps) <= max_points:
        return df
    keep = sweeps[np.unique(np.linspace(0, len(sweeps) - 1, max_points).round().astype(int))]
    return df[df["sweep"].isin(keep)]


def ship(out, dest, figures, manifest, order=()):
    """Copy the compact results of ``figures`` from a reproduction's ``out`` folder to ``dest``.

    Parameters
    ----------
    out : str or Path
        The reproduction's output folder (``--out``).
    dest : str or Path
        Where to ship; each figure's folder there is replaced.
    figures : sequence of str
        The figures to ship (folders of ``out``).
    manifest : dict
        Written to ``dest/manifest.json``, merged with the figures already listed there (a
        figure shipped again replaces its entry).
    order : sequence of str, optional
        The order of the figures in the manifest (e.g. :data:`dpcore.lab.reproduce.FIGURES`);
        others follow in the order shipped. :func:`load_gallery` lists figures in this order.

    Returns
    -------
    Path
        ``dest``.
    """
    out, dest = Path(out), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for figure in figures:
        src, dst = out / figure, dest / figure
        meta = json.loads((src / "panels.json").read_text())
        if dst.exists():
            shutil.rmtree(dst)
        dst.mkdir()
        for p in meta["panels"]:
            df = pd.read_csv(src / f"{p['name']}.csv")
            if p["plot"]["kind"] == "traces":
                df = pd.concat([_thin_traces(part, SHIPPED_TRACE_POINTS) for _, part in df.groupby("epsilon", sort=False)],
                               ignore_index=True)
            df = df.drop(columns=[c for c in ("dataset", "figure") if c in df])
            df.to_csv(dst / f"{p['name']}.csv", index=False, float_format=_FLOAT_FORMAT)
        for f in src.glob("*.csv"):
            if f.stem not in {p["name"] for p in meta["panels"]}:
                pd.read_csv(f).to_csv(dst / f.name, index=False, float_format=_FLOAT_FORMAT)
        (dst / "panels.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n")
    path = dest / "manifest.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    runs = {r["figure"]: r for r in old.get("figures", [])}
    runs.update({r["figure"]: r for r in manifest.get("figures", [])})
    rank = {f: i for i, f in enumerate(order)}
    merged = {**old, **manifest, "figures": [runs[f] for f in sorted(runs, key=lambda f: rank.get(f, len(rank)))]}
    path.write_text(json.dumps(merged, ensure_ascii=False, indent=1) + "\n")
    return dest


def load_gallery(path=GALLERY_DIR):
    """The shipped figures in ``path`` and its manifest.

    Parameters
    ----------
    path : str or Path, default GALLERY_DIR
        A folder written by :func:`ship`.

    Returns
    -------
    manifest : dict
        ``manifest.json`` ({} when absent).
    figures : list of ShippedFigure
        In the manifest's order (folders it does not list last, by name).
    """
    path = Path(path)
    mpath = path / "manifest.json"
    manifest = json.loads(mpath.read_text()) if mpath.exists() else {}
    rank = {r["figure"]: i for i, r in enumerate(manifest.get("figures", []))}
    folders = [p for p in path.iterdir() if (p / "panels.json").exists()] if path.exists() else []
    figures = []
    for d in sorted(folders, key=lambda p: (rank.get(p.name, len(rank)), p.name)):
        meta = json.loads((d / "panels.json").read_text())
        panels = [ShippedPanel(p["name"], p["title"], p["caption"], p["plot"], pd.read_csv(d / f"{p['name']}.csv"),
                               p.get("dataset"), p.get("sweep")) for p in meta["panels"]]
        names = {p.name for p in panels} | {"checks"}
        extra = {f.name: pd.read_csv(f) for f in sorted(d.glob("*.csv")) if f.stem not in names}
        checks = pd.read_csv(d / "checks.csv", keep_default_na=False)
        if "paper" not in checks:
            checks.insert(1, "paper", "")
        checks["ok"] = checks["ok"].map(lambda v: v if isinstance(v, bool) else str(v).strip().lower() == "true")
        figures.append(ShippedFigure(meta["figure"], meta["level"], meta["seconds"], meta["n_runs"], panels,
                                     checks, extra))
    return manifest, figures


# ---------------------------------------------------------------------------- statements tables
#: the comments around a generated statements table in a Markdown file (README.md, docs/results.md)
STATEMENT_MARKERS = ("<!-- statements: generated by python -m dpcore.lab.gallery; do not edit -->",
                     "<!-- end of statements -->")


def _md_cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def _split_subject(statement, subjects=None):
    """``"cstr: DP-τCC …"`` -> ``("cstr", "DP-τCC …")``: the subject is a panel's name (of
    ``subjects``; any head of ≤ 40 characters when None); none -> ``("", statement)``."""
    head, sep, rest = statement.partition(": ")
    if sep and (head in subjects if subjects is not None else len(head) <= 40):
        return head, rest
    return "", statement


def _abridge(text, width):
    """``text`` cut to at most ``width`` characters at a word boundary, with "…" where it was cut."""
    text = " ".join(str(text).split())
    if width is None or len(text) <= width:
        return text
    return text[:width].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def _paper_words(paper):
    """The paper's words of a check without the section mark: the first quotation, or the text;
    "none (…)" for a check of ours the paper makes no statement about."""
    if paper.startswith("none:"):
        return "none (" + paper[len("none:"):].split("(")[0].split(".")[0].strip() + ")"
    first = paper.split('"')
    return ('"' + first[1] + '"') if len(first) > 2 else paper


_STATS_WORDS = ("=", "<", ">", "≤", "≥", "our", "Kendall", "Mann", "median", "p ", "sign test", "÷", "×")
#: a parenthesis that marks the whole check as ours, kept in the short table
_OURS_MARK = __import__("re").compile(r"not the paper|^ours\b")


def _test_words(test):
    """(our test without the parentheses that give its statistics or thresholds (innermost first;
    one that marks the check as ours stays), whether a dropped one named a threshold or a reading
    of ours)."""
    import re
    ours = False

    def drop(m):
        nonlocal ours
        if _OURS_MARK.search(m.group(1)) or not any(w in m.group(1) for w in _STATS_WORDS):
            return m.group(0)
        ours = ours or bool(re.search(r"\bour (threshold|reading|check)|\bours\b", m.group(1)))
        return ""
    while True:
        out = re.sub(r" ?\(([^()]*)\)", drop, test)
        if out == test:
            break
        test = out
    return test, ours


def statements_markdown(figures, grouped=True, width=None):
    """The checks of the papers' statements as Markdown, with the paper's words beside each.

    Parameters
    ----------
    figures : list of ShippedFigure
        From :func:`load_gallery`.
    grouped : bool, default=True
        True: one table row per statement of a paper (checks sharing the paper's words and our
        test, on several sets or panels, counted together: "5/7; not on cstr, tr41"), for the
        README. False: every check with its numbers, for ``docs/results.md``.
    width : int, optional
        With ``grouped``: one row per statement of a paper, its first quotation and our tests cut
        to about ``width`` characters, at most two tests named ("[ours]": a threshold or reading
        of ours; the README's short table); None: the whole texts.

    Returns
    -------
    str
        Markdown (a table when ``grouped``, else one list per figure).
    """
    if grouped and width is not None:
        lines = ["| Figure | The paper says | We check | Holds |", "|---|---|---|---|"]
        for fig in figures:
            groups = {}
            names = {p.name for p in fig.panels} or None
            for c in fig.checks.itertuples():
                subject, test = _split_subject(c.check, names)
                groups.setdefault(c.paper, []).append((test, bool(c.ok), subject))
            for paper, items in groups.items():
                by_analogy = "our check" in paper
                tests = list(dict.fromkeys(_abridge(words, width) + (" [ours]" if ours or by_analogy else "")
                                           for words, ours in (_test_words(t) for t, _, _ in items)))
                subjects = {s for _, _, s in items}
                if len(subjects) == 1 and "" not in subjects and len(items) > 1 or (
                        len(items) == 1 and items[0][2]):
                    tests[0] = f"{items[0][2]}: {tests[0]}"      # one panel: name it (rows may read alike)
                if len(tests) > 2:      # the same test of several methods: two, and how many more
                    tests = tests[:2] + [f"{len(tests) - 2} more alike"]
                held = sum(ok for _, ok, _ in items)
                verdict = f"{held}/{len(items)}" if held == len(items) else f"**{held}/{len(items)}**"
                lines.append(f"| {fig.name} | {_md_cell(_abridge(_paper_words(paper), width)) or '–'} | "
                             f"{_md_cell('; '.join(tests))} | {verdict} |")
        return "\n".join(lines)
    if grouped:
        lines = ["| Figure | The paper says | We check | Holds |", "|---|---|---|---|"]
        for fig in figures:
            groups = {}
            names = {p.name for p in fig.panels} or None
            for c in fig.checks.itertuples():
                subject, test = _split_subject(c.check, names)
                groups.setdefault((c.paper, test), []).append((subject, bool(c.ok)))
            for (paper, test), items in groups.items():
                held = sum(ok for _, ok in items)
                if len(items) == 1:
                    verdict = "yes" if held else "**no**"
                    test = items[0][0] + ": " + test if items[0][0] else test
                else:
                    failed = [sub for sub, ok in items if not ok]
                    verdict = f"{held}/{len(items)}" + (f"; not on {', '.join(failed)}" if failed else "")
                    if held < len(items):
                        verdict = f"**{verdict}**"
                lines.append(f"| {fig.name} | {_md_cell(paper) or '–'} | {_md_cell(test)} | {verdict} |")
        return "\n".join(lines)
    lines = []
    for fig in figures:
        n_ok = int(fig.checks["ok"].sum())
        lines += [f"### {fig.name} ({n_ok}/{len(fig.checks)} hold)", ""]
        for c in fig.checks.itertuples():
            lines.append(f"- {'✅' if c.ok else '❌'} {_md_cell(c.check)} — {_md_cell(c.detail)}"
                         + (f"  \n  *The paper:* {_md_cell(c.paper)}" if c.paper else ""))
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def write_statements(path, figures, grouped=True, check=False, width=None):
    """Put :func:`statements_markdown` between the :data:`STATEMENT_MARKERS` of a Markdown file.

    Parameters
    ----------
    path : str or Path
        The file; it must hold both markers.
    figures : list of ShippedFigure
        From :func:`load_gallery`.
    grouped : bool, default=True
        As in :func:`statements_markdown`.
    check : bool, default=False
        Do not write: return whether the file is up to date.
    width : int, optional
        As in :func:`statements_markdown`.

    Returns
    -------
    bool
        True when the file was (or, with ``check``, is) up to date before the call.

    Raises
    ------
    ValueError
        If the file does not hold both markers, in order.
    """
    path = Path(path)
    text = path.read_text()
    begin, end = STATEMENT_MARKERS
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"{path} must hold the lines {begin!r} and then {end!r}")
    new = text[:i + len(begin)] + "\n" + statements_markdown(figures, grouped, width) + "\n" + text[j:]
    if not check and new != text:
        path.write_text(new)
    return new == text


#: the README's short table: quotations and tests cut to about this many characters
README_WIDTH = 80

if __name__ == "__main__":      # python -m dpcore.lab.gallery [--check] FILE[:full|:short] ...
    import sys
    args = sys.argv[1:]
    only_check = "--check" in args
    _, shipped = load_gallery()
    stale = [a for a in args if a != "--check"
             if not write_statements(a.rsplit(":", 1)[0] if a.endswith((":full", ":short")) else a, shipped,
                                     grouped=not a.endswith(":full"), check=only_check,
                                     width=README_WIDTH if a.endswith(":short") else None)]
    print(("out of date: " if only_check else "updated: ") + (", ".join(stale) or "none"))
    sys.exit(1 if only_check and stale else 0)


def recompute_row(panel: ShippedPanel, row) -> dict:
    """Rerun the run of one shipped row of a sweep panel (same dataset, method, ε, trial, seed).

    Parameters
    ----------
    panel : ShippedPanel
        A sweep panel (``panel.sweep`` not None).
    row : pandas.Series or dict
        One of its rows.

    Returns
    -------
    dict
        The new row (:func:`dpcore.lab.sweeps.run_task`).

    Raises
    ------
    ValueError
        If the panel has no sweep (Fig. 3 traces) or the row's method is not in it.
    """
    from .sweeps import run_task
    if panel.sweep is None:
        raise ValueError(f"panel {panel.name!r} has no sweep to recompute (traces are rerun as a whole)")
    algs = {a["label"]: a for a in panel.sweep["algorithms"]}
    if row["algorithm"] not in algs:
        raise ValueError(f"algorithm {row['algorithm']!r} is not in the sweep of panel {panel.name!r}")
    eps = float(row["epsilon"])
    # the CSV keeps 8 significant digits (316.22777) but the run's seed came from the sweep's ε
    # (316.227766…, run_seed hashes its repr): take the sweep's value it rounds to
    grid = [float(e) for e in panel.sweep.get("epsilons", [])]
    near = [e for e in grid if not math.isnan(eps) and math.isclose(e, eps, rel_tol=1e-7)]
    eps = near[0] if near else eps
    task = {"dataset": panel.sweep["dataset"], "algorithm": algs[row["algorithm"]],
            "epsilon": math.nan if math.isnan(eps) else eps, "delta": panel.sweep["delta"],
            "trial": int(row["trial"]), "seed": panel.sweep["seed"], "metrics": panel.sweep["metrics"]}
    return run_task(task)


def compare_row(panel: ShippedPanel, row, rtol=1e-6):
    """Recompute one shipped row and compare its seed and metrics.

    Parameters
    ----------
    panel : ShippedPanel
    row : pandas.Series
    rtol : float, default 1e-6
        Relative tolerance on the metrics (shipped with 8 significant digits; the remaining
        slack allows for a different BLAS summation order).

    Returns
    -------
    list of str
        The differences, empty when the row is reproduced.
    """
    new = recompute_row(panel, row)
    diffs = []
    if int(new["seed"]) != int(row["seed"]):
        diffs.append(f"seed {new['seed']} != shipped {row['seed']}")
    for m in panel.sweep["metrics"]:
        a, b = float(new[m]), float(row[m])
        if not (math.isnan(a) and math.isnan(b)) and not math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12):
            diffs.append(f"{m} {a:.10g} != shipped {b:.10g}")
    return diffs
