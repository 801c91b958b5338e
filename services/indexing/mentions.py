"""Mentions: the names inside the NER model's spans, tidied, then counted and merged into a note's entities.

A span is cut into runs of name words (leading articles, stop words, dates and punctuation dropped);
mentions of one name are grouped under ``normalize_name``'s form, obvious variants (surname, first
name, acronym) merge into the longer name, and single words the note also writes in lowercase are
dropped as common nouns. A person's name ends with a name word, and names no thing: a span the model
calls a person is a thing (misc) when it ends in a lowercase word (« Data engineer »), when it is another
person of the note followed by more words (« Ada Lovelace Day »: named after her), or when its last word
is one the note also writes as an ordinary word (« Difference Engine », beside « engines »).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from services.catalog.models import EntityKind, NoteEntity
from services.language.fold import fold

MAX_WORDS = 6
# spaCy's labels (French pipelines: PER, ORG, LOC, MISC; English ones: OntoNotes) by the kind they make.
_KIND_LABELS = {
    EntityKind.PERSON: ("PER", "PERSON"),
    EntityKind.ORG: ("ORG", "NORP"),
    EntityKind.PLACE: ("LOC", "GPE", "FAC"),
    EntityKind.MISC: ("MISC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"),
}
_LABELS = {label: kind for kind, labels in _KIND_LABELS.items() for label in labels}
_KIND_ORDER = (EntityKind.PERSON, EntityKind.ORG, EntityKind.PLACE, EntityKind.MISC)
# A word of these makes an organisation, whatever label the model gave the span.
_ORG_WORDS = frozenset(
    "banque bank banca banco bundesbank museum musée université university department ministère ministry "
    "commission fonds fund conseil council société company inc corp group groupe institut institute agence agency "
    "association fédération réserve reserve eurosystème parlement parliament".split()
)
_PARTICLES = frozenset("de du des la le von van der den of da di del della y el al bin ben ter zu & d' l'".split())
_CALENDAR = frozenset(
    "january february march april may june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday janvier février mars avril mai juin juillet août septembre octobre "
    "novembre décembre lundi mardi mercredi jeudi vendredi samedi dimanche".split()
)
_ELISION = re.compile(r"^[ldLD]['’]")


def normalize_name(name: str) -> str:
    """The form names are compared and filtered in: no accents, casefolded, punctuation and hyphens to spaces."""
    text = fold(name.replace("’", "'"))
    return " ".join(re.sub(r"[^\w'&]+", " ", text).replace("_", " ").split())


# --- mentions: what the model found, tidied ------------------------------------------------------


@dataclass
class Mention:
    text: str
    kind: EntityKind
    initial: bool  # the span opens its sentence (a capital that may not mean a name)


def _words(span: Any) -> list[tuple[str, int]]:
    """The span's words (tokens glued without spaces, like ``Jean-Claude`` or ``d'Italia``) with their start index."""
    words: list[tuple[str, int]] = []
    glued = False
    for token in span:
        if glued and words:
            words[-1] = (words[-1][0] + token.text, words[-1][1])
        else:
            words.append((token.text, token.i))
        glued = not token.whitespace_
    return words


def _is_name_word(word: str) -> bool:
    core = _ELISION.sub("", word)
    return bool(core) and (core[0].isupper() or (core[0].isdigit() and any(c.isupper() for c in core)))


def _is_stop(word: str, stops: frozenset[str]) -> bool:
    lowered = word.lower().strip(".,;:!?'’\"()")
    return lowered in stops or lowered in _CALENDAR


def _runs(words: list[tuple[str, int]], strict: bool) -> list[list[tuple[str, int]]]:
    """Stretches of name words, cut at punctuation; strict mode also cuts at inner lowercase words.

    Lenient mode keeps inner lowercase words (``Banque centrale européenne``); both trim the ends.
    """
    runs: list[list[tuple[str, int]]] = [[]]
    for word in words:
        punctuation = not any(c.isalnum() for c in word[0])
        if not punctuation and (_is_name_word(word[0]) or (runs[-1] and (word[0].lower() in _PARTICLES or not strict))):
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    trimmed = []
    for run in runs:
        while run and not _is_name_word(run[-1][0]) and (strict or run[-1][0].lower() in _PARTICLES):
            run = run[:-1]
        if run:
            trimmed.append(run)
    return trimmed


def span_mentions(span: Any, stops: frozenset[str], strict: bool) -> list[Mention]:
    """The tidy names inside one model span (leading articles, stop words and punctuation removed)."""
    kind = _LABELS.get(span.label_)
    if kind is None:
        return []
    words = _words(span)
    while words and (not _is_name_word(words[0][0]) or _is_stop(words[0][0], stops)):
        words = words[1:]  # "au Havre", "Les grandes séquences", "The US Department"
    mentions = []
    for run in _runs(words, strict):
        text = _ELISION.sub("", " ".join(w for w, _ in run)).strip(" .,;:!?'’\"()-")
        if len(text) < 2 or len(run) > MAX_WORDS or (len(run) == 1 and _is_stop(text, stops)):
            continue
        start = run[0][1]
        previous = span.doc[start - 1].text if start > 0 else "."
        named = kind != EntityKind.PERSON or _is_name_word(run[-1][0])  # « Data engineer » is no one
        initial = previous in {".", "!", "?", ":", ";", "—", "-"}
        mentions.append(Mention(text, kind if named else EntityKind.MISC, initial=initial))
    return mentions


# --- merging mentions into entities --------------------------------------------------------------


@dataclass
class _Group:
    key: str
    variants: Counter[str] = field(default_factory=Counter)
    kinds: Counter[EntityKind] = field(default_factory=Counter)  # the labels of this name's own mentions
    initial_only: bool = True

    @property
    def words(self) -> list[str]:
        return self.key.split()

    @property
    def count(self) -> int:
        return sum(self.variants.values())

    def absorb(self, other: _Group) -> None:
        """Take a variant's mentions; the kind stays the one of the longer name (``Draghi`` LOC → Mario Draghi)."""
        self.variants.update(other.variants)
        self.initial_only = self.initial_only and other.initial_only


def merge_mentions(mentions: Iterable[Mention], text: str) -> list[NoteEntity]:
    """Count mentions per normalised name, merge obvious variants, drop common nouns; most mentioned first."""
    groups: dict[str, _Group] = {}
    for mention in mentions:
        key = normalize_name(mention.text)
        group = groups.setdefault(key, _Group(key))
        group.variants[mention.text] += 1
        group.kinds[mention.kind] += 1
        group.initial_only = group.initial_only and mention.initial and " " not in key
    lowercase_words = set(re.findall(r"\b[a-zà-ÿ][\w'-]*\b", text))
    _no_one(groups, {fold(word) for word in lowercase_words})
    for short in sorted(groups, key=len):  # shortest first: a variant merges before it could absorb others
        target = _variant_of(groups[short], groups)
        if target is not None:
            groups[target].absorb(groups.pop(short))
    entities = [
        _entity(group)
        for group in groups.values()
        if not (len(group.words) == 1 and _is_common_noun(group, lowercase_words))
    ]
    return sorted(entities, key=lambda e: (-e.count, e.normalized))


def _no_one(groups: dict[str, _Group], ordinary: set[str]) -> None:
    """Person-labelled names that are things: named after a person of the note (« Ada Lovelace Day »), or
    ending in a word the note also writes as an ordinary word (« Difference Engine » beside « engines »).
    A surname is not a word the same note writes in lowercase; their mentions count as misc."""
    people = [g.words for g in groups.values() if _kind(g) == EntityKind.PERSON and len(g.words) > 1]
    for group in groups.values():
        if _kind(group) != EntityKind.PERSON:
            continue
        words = group.words
        eponym = any(len(words) > len(person) and words[: len(person)] == person for person in people)
        if eponym or (len(words) > 1 and _is_ordinary(words[-1], ordinary)):
            group.kinds[EntityKind.MISC] += group.kinds.pop(EntityKind.PERSON)


def _variant_of(group: _Group, groups: dict[str, _Group]) -> str | None:
    """The longer name this group is an obvious variant of: surname, first name, acronym, hyphenated prefix."""
    candidates = []
    for key, other in groups.items():
        if key == group.key or len(key) <= len(group.key):
            continue
        words = other.words
        is_name = _kind(other) == EntityKind.PERSON and len(words) > 1
        if (
            (is_name and len(group.words) == 1 and group.key in (words[0], words[-1]))
            or (len(group.words) == 1 and group.key == _acronym(other))
            or (key.startswith(group.key + " ") and _kind(other) == _kind(group) == EntityKind.PLACE)
        ):
            candidates.append(other)
    candidates.sort(key=lambda g: -g.count)
    if not candidates or (len(candidates) > 1 and candidates[0].count == candidates[1].count):
        return None  # ambiguous: "Byron" may be Lord Byron or Augusta Ada Byron
    return candidates[0].key


def _acronym(group: _Group) -> str:
    display = group.variants.most_common(1)[0][0]
    words = [w for w in re.split(r"[\s-]+", display) if len(w) > 2 and w.lower() not in _PARTICLES]
    return "".join(w[0] for w in words).lower() if len(words) > 1 else ""


def _is_common_noun(group: _Group, lowercase_words: set[str]) -> bool:
    """A single word that the note also writes in lowercase, or that only ever opens a sentence or a line."""
    word = group.variants.most_common(1)[0][0]
    return word.lower() in lowercase_words or group.initial_only


def _is_ordinary(word: str, ordinary: set[str]) -> bool:
    """``word`` (folded) is written in lowercase by the note (folded), itself or in the singular or plural."""
    return bool({word, word + "s", word + "es", word.removesuffix("s")} & ordinary)


def _kind(group: _Group) -> EntityKind:
    if any(word in _ORG_WORDS or word.endswith("bank") for word in group.words):
        return EntityKind.ORG
    return max(_KIND_ORDER, key=lambda kind: (group.kinds[kind], -_KIND_ORDER.index(kind)))


def _entity(group: _Group) -> NoteEntity:
    longest = max(group.variants, key=lambda v: (len(normalize_name(v).split()), group.variants[v], v))
    name_key = normalize_name(longest)
    variants = sorted(v for v in group.variants if v != longest)
    return NoteEntity(
        name=longest, normalized=name_key, kind=_kind(group), count=sum(group.variants.values()), variants=variants
    )
