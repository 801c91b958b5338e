"""Retrieval: from a query to ranked notes and passages.

Owns the embedding models (``embedding``, its calibration and token counter; the e5 engine in ``e5/``;
``embedding_cache``), the lexical side (``lexical``: French/English analysis, sparse vectors), the vector
store (``store/``: Qdrant Edge embedded, or a Qdrant server), its types (``models``), the fusion of the
dense, title and lexical lists (``fusion``), the search engine (``search``), the facts close in meaning to
a query (``fact_vectors``) and notes close to a note (``similar``).

May use ``catalog`` (facts, titles), ``vault``, ``language`` and ``config``; never indexing, chat or above.
"""
