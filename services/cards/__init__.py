"""Flashcards (issue #36): cards made from a note (the model's JSON, else rules), written as Markdown the Obsidian
Spaced Repetition plugin reads, their review state in the catalog, scheduled by FSRS. Uses llm, vault, config."""
