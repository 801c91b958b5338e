"""How long something has left, as every status line says it: seconds up to 90, then minutes."""

from __future__ import annotations


def short_duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
