"""Saved conversations as evidence: the user's questions and the answers drawn from notes, never the
assistant's own confirmations, refusals and failures (« C'est noté », « Cette information n'est pas dans
ton coffre. »), which would otherwise answer later questions in place of the notes (issue #24).

The export (``services.chat.export``) marks such a turn with ``NOT_EVIDENCE``; an export older than the mark
says ``*Provenance : Aucune*`` under it. Either way the indexer leaves the turn out of the note's chunks.
"""

from __future__ import annotations

import re

NOT_EVIDENCE = "%% obsirag: not-evidence (the assistant's own reply, not a source) %%"
_NOT_EVIDENCE = re.compile(r"^%% obsirag: not-evidence\b|^\*Provenance : Aucune\*\s*$")
_TURN = re.compile(r"^## ")
_FENCE = ("```", "~~~")


def evidence_body(body: str) -> str:
    """The export's body without the turns (``## question`` sections) marked as no evidence."""
    kept: list[str] = []
    turn: list[str] = []
    fenced = False
    for line in body.split("\n"):
        if line.strip().startswith(_FENCE):
            fenced = not fenced
        if not fenced and _TURN.match(line):
            kept += _evidence(turn)
            turn = []
        turn.append(line)
    kept += _evidence(turn)
    return "\n".join(kept)


def _evidence(turn: list[str]) -> list[str]:
    is_turn = bool(turn) and bool(_TURN.match(turn[0]))
    return [] if is_turn and any(_NOT_EVIDENCE.match(line) for line in turn) else turn
