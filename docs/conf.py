"""Sphinx configuration of the documentation site (build: see docs/README.md).

Pages: the derivations (docs/math/, MyST Markdown with LaTeX), the API reference, the figure
gallery and the verification report; the last three are generated at build time by the local
extension ``docs/_ext/slr_docs.py``. MathJax is served from the build itself
(``sphinx-mathjax-offline``), so the site renders without network access.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "_ext"))

project = "single-location-regression"
author = "single-location-regression developers"
copyright = "2025, single-location-regression developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",
    "slr_docs",
]

myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", "screenshots"]

nitpicky = True
autodoc_typehints = "none"
autodoc_default_options = {"member-order": "bysource"}
autodoc_mock_imports = ["torch", "transformers", "sklearn"]
suppress_warnings = []

html_theme = "alabaster"
html_title = "single-location-regression"
html_static_path = []
html_theme_options = {
    "description": "Companion toolkit of Marion, Berthier, Biau, Boyer (ICLR 2025)",
    "page_width": "1260px",   # docstrings are shown as written, up to 100 characters a line
    "sidebar_width": "240px",
    "body_max_width": "none",
}
