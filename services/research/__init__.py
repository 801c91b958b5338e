"""Research mode: questions that span several notes, answered in visible steps and kept as a note (issue #35)."""
