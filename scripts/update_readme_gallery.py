"""Refresh the README's gallery (docs/gallery/*.png) and claim table from an `slr reproduce` run.

Usage: python scripts/update_readme_gallery.py [OUT]   (OUT: the run's output folder, default out/)

The images are downscaled copies of OUT/figures/*.png; the table is OUT/verification.json, one row
per claim (the full report, with methods and tolerance derivations, is OUT/verification.md).
The README text between the markers <!-- gallery:start/end --> and <!-- claims:start/end --> is
replaced; nothing else is touched.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 1000
# a derivation page cited in a claim's statement becomes a link in the README's table
_DOC_PATH = re.compile(r"(docs/math/[\w.-]+\.md(?:#[\w-]+)?)")


def _replace(text: str, marker: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- {marker}:start -->\n).*?(<!-- {marker}:end -->)", re.S)
    if not pattern.search(text):
        raise ValueError(f"README.md has no <!-- {marker}:start --> ... <!-- {marker}:end --> block")
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)


def main(out: Path) -> None:
    gallery = ROOT / "docs" / "gallery"
    gallery.mkdir(parents=True, exist_ok=True)
    report = json.loads((out / "verification.json").read_text())
    from figures.registry import discover_recipes

    known = {r.name: (r.title, r.caption) for r in discover_recipes()}
    titles = {}
    for png in sorted((out / "figures").glob("*.png")):
        image = Image.open(png).convert("RGBA")   # an opaque figure's PNG is RGB: quantised as its RGBA pixels
        if image.width > WIDTH:
            image = image.resize((WIDTH, round(image.height * WIDTH / image.width)), Image.LANCZOS)
        image.convert("P", palette=Image.ADAPTIVE, colors=256).save(gallery / png.name, optimize=True)
        titles[png.stem] = known.get(png.stem, (png.stem.replace("_", " "), ""))
    figures = "\n".join(f"**`{name}`**: {title}\n\n![{name}](docs/gallery/{name}.png)\n"
                        + (f"\n*{caption}*\n" if caption and caption != title else "")
                        for name, (title, caption) in titles.items())
    rows = ["| claim | statement | measured | tolerance | status |", "|---|---|---|---|---|"]
    for c in report["claims"]:
        statement = _DOC_PATH.sub(r"[derivation](\1)", c["statement"].replace("|", "\\|"))
        rows.append(f"| `{c['claim_id']}` | {statement} | {c['measured']:.3g} | {c['tolerance']:.3g} | {c['status']} |")
    claims = (f"Mode {report['mode']}, seed {report['seed']}, {report['summary']}; "
              f"numpy {report['versions'].get('numpy')}, scipy {report['versions'].get('scipy')}.\n\n"
              + "\n".join(rows) + "\n")
    readme = ROOT / "README.md"
    text = _replace(readme.read_text(), "gallery", figures)
    readme.write_text(_replace(text, "claims", claims))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "out")
