"""A generation that loops or echoes its instructions: noticed while it streams, cleaned once it ends.

``DegenerationWatch`` reads the pieces the worker streams and says when to stop: a line or an 8-word phrase
written a third time (the second repeat), or a second sentence copied from the system prompt. ``clean_answer``
then gives the answer as it should be kept: each repeated line and phrase once, no sentence of the system prompt,
ending on a sentence boundary when it was cut. The bench's "degenerate" figure reads ``is_degenerate``.
"""

from __future__ import annotations

import re
from collections import Counter

PHRASE_WORDS = 8  # a phrase this long written three times is a loop, not a style
REPEATS_ALLOWED = 1  # a line or phrase may come back once; its second repeat stops the generation
ECHOES_ALLOWED = 1  # sentences of the system prompt copied before the generation stops
MIN_LINE_WORDS = 3  # shorter lines ("---", "Sources :") may repeat
MIN_ECHO_WORDS = 6
_WORD = re.compile(r"\w+(?:['’]\w+)*")
_SENTENCE = re.compile(r"[^.!?…\n]+[.!?…]*")
_BOUNDARY = re.compile(r"(?:[.!?…»)\]*]|\[\d+\])\s*$")
_SENTENCE_END = re.compile(r"[.!?…](?=\s|$)|\[\d+\](?=\s|$)")
_LIST_MARKER = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+")


def words_of(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def system_sentences(system: str) -> list[tuple[str, ...]]:
    """The sentences of a system prompt long enough to tell a copy from a coincidence, as word tuples."""
    found = (tuple(words_of(s)) for s in _SENTENCE.findall(system))
    return [s for s in found if len(s) >= MIN_ECHO_WORDS]


class DegenerationWatch:
    """Fed the pieces of one generation; ``feed`` returns why to stop ("repetition", "echo") or None."""

    def __init__(self, system: str = "") -> None:
        self.echo_sources = system_sentences(system)
        self.text = ""
        self._lines: Counter[str] = Counter()
        self._phrases: Counter[tuple[str, ...]] = Counter()
        self._words: list[str] = []
        self._echoes = 0
        self._checked = 0  # characters of ``text`` whose complete lines were counted

    def feed(self, piece: str) -> str | None:
        self.text += piece
        grown = self._grow()
        if self._repeats_a_line() or self._repeats_a_phrase(grown):
            return "repetition"
        return "echo" if self._echoes_twice(grown) else None

    def _grow(self) -> int:
        """Take in the words this piece completed (the last word may still grow); returns how many."""
        words = words_of(self.text)
        complete = words[:-1] if self.text[-1:].isalnum() else words
        grown = max(0, len(complete) - len(self._words))
        self._words = complete
        return grown

    def _repeats_a_line(self) -> bool:
        end = self.text.rfind("\n")
        if end < self._checked:
            return False
        lines, self._checked = self.text[self._checked : end].split("\n"), end + 1
        for line in lines:
            key = " ".join(words_of(line))
            if len(key.split()) >= MIN_LINE_WORDS:
                self._lines[key] += 1
                if self._lines[key] > REPEATS_ALLOWED + 1:
                    return True
        return False

    def _repeats_a_phrase(self, grown: int) -> bool:
        words = self._words
        for end in range(len(words) - grown + 1, len(words) + 1):
            if end >= PHRASE_WORDS:
                phrase = tuple(words[end - PHRASE_WORDS : end])
                self._phrases[phrase] += 1
                if self._phrases[phrase] > REPEATS_ALLOWED + 1:
                    return True
        return False

    def _echoes_twice(self, grown: int) -> bool:
        words = self._words
        for end in range(len(words) - grown + 1, len(words) + 1):
            self._echoes += sum(1 for s in self.echo_sources if end >= len(s) and tuple(words[end - len(s) : end]) == s)
        return self._echoes > ECHOES_ALLOWED


def _count(words: list[str], sentence: tuple[str, ...]) -> int:
    size = len(sentence)
    return sum(1 for i in range(len(words) - size + 1) if tuple(words[i : i + size]) == sentence)


def clean_answer(text: str, system: str = "", cut: bool = False) -> str:
    """``text`` without the sentences it copied from ``system``, each repeated line kept once, and the phrase
    that looped kept once; ``cut`` (the generation was stopped): ended on its last sentence boundary."""
    echoes = system_sentences(system)
    kept: list[str] = []
    seen: set[str] = set()
    for line in text.split("\n"):
        line = _without_echoes(line, echoes)
        key = " ".join(words_of(line))
        if len(key.split()) >= MIN_LINE_WORDS and key in seen:
            continue
        seen.add(key)
        kept.append(line)
    cleaned = _without_looping_phrase("\n".join(kept))
    cleaned = re.sub(r"\n{3,}", "\n\n", cleaned).strip()
    return last_sentence_boundary(cleaned) if cut else cleaned


def _without_echoes(line: str, echoes: list[tuple[str, ...]]) -> str:
    if not echoes:
        return line
    pieces = _SENTENCE.findall(line)
    kept = [p for p in pieces if not any(_count(words_of(p), e) for e in echoes)]
    return line if len(kept) == len(pieces) else "".join(kept).strip()


def _without_looping_phrase(text: str) -> str:
    """Cut the text where a phrase comes back for the second time: what follows is the loop."""
    spans = [(m.start(), m.group().casefold()) for m in _WORD.finditer(text)]
    counts: Counter[tuple[str, ...]] = Counter()
    for i in range(len(spans) - PHRASE_WORDS + 1):
        phrase = tuple(word for _, word in spans[i : i + PHRASE_WORDS])
        counts[phrase] += 1
        if counts[phrase] > REPEATS_ALLOWED:
            return text[: spans[i][0]].rstrip()
    return text


def last_sentence_boundary(text: str) -> str:
    """``text`` up to its last complete sentence (or list line); all of it when it has none."""
    lines = text.rstrip().split("\n")
    while lines and not _BOUNDARY.search(lines[-1]):
        last = lines[-1]
        marker = _LIST_MARKER.match(last)
        start = marker.end() if marker else 0
        ends = [m.end() for m in _SENTENCE_END.finditer(last, start)]
        if ends:
            lines[-1] = last[: ends[-1]]
            break
        if len(lines) == 1:
            return text.strip()
        lines.pop()
    return "\n".join(lines).strip()


def is_degenerate(text: str) -> bool:
    """A line written twice or an 8-word phrase written twice (the bench's measure of a looping answer)."""
    lines = [" ".join(words_of(line)) for line in text.split("\n")]
    lines = [line for line in lines if len(line.split()) >= MIN_LINE_WORDS]
    if len(lines) != len(set(lines)):
        return True
    words = words_of(text)
    phrases = [tuple(words[i : i + PHRASE_WORDS]) for i in range(len(words) - PHRASE_WORDS + 1)]
    return len(phrases) != len(set(phrases))
