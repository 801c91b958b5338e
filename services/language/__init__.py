"""French and English text: folding, language detection, date expressions and moments ahead."""
