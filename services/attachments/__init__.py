"""Documents beside the notes: PDF, Office files, EPUB and images, read page by page (OCR for scans).

Owns which files are attachments (``kinds``), what an extraction holds (``models``), the readers per format
(``readers``), OCR (``ocr``), the limits that make a bad document fail alone (``guards``), the one entry
point (``extract``) and the cache of extracted text by content hash with per-file progress (``cache``).
Uses ``services.vault`` and ``services.config`` alone; the indexing turns pages into chunks.
"""
