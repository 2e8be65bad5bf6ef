"""Reading loom's own JSON files (build index, variant section, climb): a missing, unreadable or
foreign file is one located LoomError, never a traceback."""

from __future__ import annotations

from pathlib import Path

from loom.core.json_text import read_json_file
from loom.errors import LoomError


def read_format_file(path: Path, fmt: str, what: str, missing: str) -> dict:
    """The JSON object of ``path`` whose ``format`` is ``fmt``; ``missing`` is said when there is no file."""
    if not Path(path).exists():
        raise LoomError(f"no such {what}: {path} ({missing})")
    content = read_json_file(str(path), what)
    if not isinstance(content, dict) or content.get("format") != fmt:
        raise LoomError(f"not a {what} (format {fmt} expected)", filename=str(path))
    return content
