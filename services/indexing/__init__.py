"""Indexing: from a vault file to chunks, vectors, catalog records and entities; rebuilds."""
