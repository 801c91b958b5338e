"""Retrieval: embedding models, the lexical side, the vector store, fusion and the search engine."""
