"""Where in the user's source a definition or schedule call was made."""

from __future__ import annotations

import os
import sys

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def user_location():
    """(filename, line) of the first caller frame outside this package, or (None, None)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PKG_DIR:
        frame = frame.f_back
    if frame is None:
        return None, None
    return frame.f_code.co_filename, frame.f_lineno
