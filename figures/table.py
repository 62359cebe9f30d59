"""Plain-text and Markdown tables for the closing summaries of ``slr figures`` and ``slr verify``."""

from __future__ import annotations

__all__ = ["text_table", "markdown_table"]


def text_table(header, rows, *, max_width: int = 60) -> str:
    """Left-aligned columns separated by two spaces; cells longer than ``max_width`` are cut."""
    def cut(cell):
        cell = str(cell).replace("\n", " ")
        return cell if len(cell) <= max_width else cell[: max_width - 3] + "..."

    cells = [[cut(c) for c in header]] + [[cut(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(header, rows) -> str:
    """A GitHub-flavoured Markdown table; '|' inside cells is escaped."""
    def esc(cell):
        return str(cell).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(esc(c) for c in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
