"""Sphinx configuration of dpcore's documentation.

Build: ``python -m sphinx -W --keep-going -b html docs /tmp/docs_html`` (warnings are errors;
``tests/test_docs.py`` runs the same build).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))           # document the dpcore next to these pages, installed or not

import dpcore  # noqa: E402

project = "dpcore"
author = "dpclust-explorer"
copyright = "dpclust-explorer authors"
release = dpcore.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# --- MyST (Markdown pages) ------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3               # [text](page.md#a-heading) links resolve

# --- autodoc / numpydoc ---------------------------------------------------------------------
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"             # the numpydoc sections carry the types
autosummary_generate = False           # pages list their objects with autoclass / autofunction
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()
nitpicky = False

# --- HTML -----------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"dpcore {release}"
html_static_path = []
html_theme_options = {"description": "differentially private clustering", "fixed_sidebar": False,
                      "page_width": "1180px", "sidebar_width": "230px"}


# --- docstrings: plain-text mathematics -----------------------------------------------------
# dpcore's docstrings write mathematics in plain Unicode text, read with help() as often as
# here: |x| is an absolute value or a norm, never a reStructuredText substitution, and t_·l or
# n_clipped_ is a subscript or a fitted attribute, never a hyperlink reference (dpcore defines
# neither). Outside literals, interpreted text (roles) and literal blocks, "|", a "_" that
# ends a word and a star of Python's unpacking are escaped.
import re  # noqa: E402

_LITERAL = re.compile(r"(``.+?``|(?::[\w:.-]+:)?`[^`]+`_{0,2})")
_WORD_END_UNDERSCORE = re.compile(r"(?<=\w)_(?=[^\w{]|$)")


# Python's unpacking in prose, "shape (*size, d)" or "fn(**kw)": a star right after "(" that no
# star closes on the same line
_UNPACKING = re.compile(r"(?<=\()(\*{1,2})(?=\w)(?!\w*[^*\s]\1)")


def _escape_plain(text):
    text = _UNPACKING.sub(lambda m: "\\*" * len(m.group(1)), text)
    return _WORD_END_UNDERSCORE.sub(r"\\_", text.replace("|", r"\|"))


# a numpydoc entry "name : type" or "name1, name2 : type": the names stay as numpydoc reads them
_ENTRY = re.compile(r"^(\s*\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)((?:\s+:(?:\s.*)?)?)$")


def _escape_line(line):
    head, entry = "", _ENTRY.match(line)
    if entry:                            # (a bare name alone on a line too: an entry without type)
        head, line = entry.group(1), entry.group(2)
    parts = _LITERAL.split(line)
    return head + "".join(p if i % 2 else _escape_plain(p) for i, p in enumerate(parts))


def _plain_math(app, what, name, obj, options, lines):
    literal_indent = None                # indentation of the paragraph that opened a literal block
    opener = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None
            else:
                continue
        if opener and stripped:
            opener = False
        if "|" in line or "_" in line or "(*" in line:
            lines[i] = _escape_line(line)
        if stripped.endswith("::") and not stripped.startswith(".. "):
            literal_indent, opener = indent, True


# scikit-learn's metadata-routing methods (set_fit_request, ...) are generated per class and
# documented by scikit-learn, not here
def _skip_members(app, what, name, obj, skip, options):
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


# module constants show their value in the signature; a catalogue (a dict of every method) would
# fill a screen, so a long value is cut
_VALUE_CHARS = 80


def _short_values(app, doctree):
    from docutils import nodes
    from sphinx import addnodes
    for desc in doctree.findall(addnodes.desc):
        if desc.get("objtype") not in ("data", "attribute"):
            continue
        for ann in desc.findall(addnodes.desc_annotation):
            text = ann.astext().strip()
            if text.startswith("=") and len(text) > _VALUE_CHARS:
                ann.children = []
                ann += nodes.Text(" " + text[:_VALUE_CHARS].rstrip() + " …")


def setup(app):
    app.connect("autodoc-process-docstring", _plain_math, priority=400)   # before numpydoc (500)
    app.connect("autodoc-skip-member", _skip_members)
    app.connect("doctree-read", _short_values)
