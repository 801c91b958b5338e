"""Indexing: from a vault file to what retrieval reads.

Owns chunking (``chunking``: heading-path chunks sized in model tokens), the index pipeline
(``pipeline``: read, chunk, embed, upsert, record in the catalog; reconcile the vault with the index),
entities (``entities``: spaCy NER, names in payloads) and the rebuild with another model (``rebuild``).

May use ``retrieval`` (embedding, lexical, store), ``catalog``, ``vault``, ``language`` and ``config``.
"""
