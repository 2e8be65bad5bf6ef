"""Plain-text tables for command output (results people compare come out as tables)."""

from __future__ import annotations


def format_table(headers: list[str], rows: list[list[object]]) -> str:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if _numeric(c) and n else c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-2 or abs(value) >= 1e4 else f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


def _numeric(text: str) -> bool:
    try:
        float(text.rstrip("x%"))
        return True
    except ValueError:
        return False


def shorten_path(text: str, width: int) -> str:
    """``text`` (a place such as ``/a/long/dir/net.py:12 (fc: Linear)``) in about ``width`` characters: leading
    directories of its path give way to ``...`` at a separator, so the file name and line stay whole (cutting
    at a character count split names in the middle)."""
    if len(text) <= width:
        return text
    path_end = len(text.split(" ", 1)[0])
    separators = [i for i, c in enumerate(text[:path_end]) if c in "/\\"]
    for i in separators:
        if len(text) - i + 3 <= width:
            return "..." + text[i:]
    return "..." + text[separators[-1]:] if separators else text
