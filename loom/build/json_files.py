"""Reading loom's own JSON files (build index, variant section, climb): a missing, unreadable or
foreign file is one located LoomError, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from loom.errors import LoomError


def read_format_file(path: Path, fmt: str, what: str, missing: str) -> dict:
    """The JSON object of ``path`` whose ``format`` is ``fmt``; ``missing`` is said when there is no file."""
    try:
        content = json.loads(path.read_text())
    except FileNotFoundError:
        raise LoomError(f"no such {what}: {path} ({missing})") from None
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise LoomError(f"cannot read the {what}: {error}", filename=str(path)) from None
    if not isinstance(content, dict) or content.get("format") != fmt:
        raise LoomError(f"not a {what} (format {fmt} expected)", filename=str(path))
    return content
