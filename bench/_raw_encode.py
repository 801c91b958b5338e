"""The baseline of ``bench/vault_scale.py``'s ratio: the same model encoding, in one call in the bench's
process, the kind of texts the running system embedded during the first index — notes' chunks and summaries,
and documents' page chunks and summaries, in the vault's proportion — each built the way the pipeline builds
it (``services/indexing/pipeline.py``: the context line, the note summary, ``chunk_pages``)."""

from __future__ import annotations

import time
from typing import Any

from index_throughput import chunk_texts


def raw_encode(settings: Any, notes: int = 200) -> dict[str, float]:
    """Texts/s of one ``encode`` over the first ``notes`` notes of the vault (by path) and as many documents as
    the vault holds for that many notes, read from the extraction cache the first index filled."""
    from services import vault
    from services.indexing.rebuild import indexing_embedder

    embedder = indexing_embedder(settings)  # the threads the system's indexer encodes with
    paths = list(vault.iter_vault_paths(settings.vault, settings.exclude, attachments=settings.attachments))
    note_paths = [path for path in paths if path.lower().endswith(".md")]  # the files the system indexes
    documents = [path for path in paths if not path.lower().endswith(".md")]
    share = round(len(documents) * min(notes, len(note_paths)) / max(1, len(note_paths)))
    texts = chunk_texts(settings, embedder, note_paths[:notes])
    texts += document_texts(settings, embedder, documents[:share])
    embedder.encode(texts[:8])
    began = time.perf_counter()
    embedder.encode(texts)
    seconds = time.perf_counter() - began
    return {"texts": len(texts), "documents": share, "texts_per_s": round(len(texts) / seconds, 2)}


def document_texts(settings: Any, embedder: Any, paths: list[str]) -> list[str]:
    """What the pipeline embeds for these documents (``IndexPipeline._pages``): each page chunk's
    ``embedding_text`` and the document's summary; a document never extracted, or unusable, gives none."""
    from services.attachments.cache import ExtractionCache
    from services.indexing import attachments
    from services.indexing.chunking import chunk_pages, embedding_texts, fitted_context
    from services.indexing.context import note_summary

    counter = embedder.token_counter
    max_tokens = min(settings.chunk_tokens, embedder.max_tokens)
    cache, texts = ExtractionCache(settings.extraction_cache_path), []
    for path in paths:
        file = settings.vault / path
        digest = attachments.content_hash(file)
        extraction = cache.get(digest)
        if extraction is None or attachments.unusable(extraction):
            continue
        note = attachments.attachment_note(path, file, digest, extraction)
        context = fitted_context(note, counter, max_tokens)
        pages = attachments.page_texts(extraction)
        chunks = chunk_pages(note.title, pages, counter, max_tokens, settings.chunk_overlap_tokens, context)
        texts += [*embedding_texts(note, chunks, counter, max_tokens), note_summary(note)]
    return list(dict.fromkeys(texts))
