"""Quoted answers: the sentences of the notes that answer, chosen by meaning and terms, cited at their heading."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from services.chat.context import ContextBlock
from services.chat.grounding import Evidence, Grounding
from services.chat.passages import units_of
from services.chat.quoting import ScoreFn, quote_answer, quote_notes
from services.config import Settings
from services.retrieval.search import SearchResult

NOTE = """# Atlas

Atlas cartographie les îlots de chaleur. #projet

## Objectifs

Les trois objectifs contractuels :

1. **Publier une carte web** chaque semaine.
2. **Réduire le temps de production** d'une carte à deux jours.
3. **Former 40 agents** de la Métropole.

## Durée

Le projet dure **18 mois**. Il se termine fin juin 2027.

| Phase | Période |
| --- | --- |
| Cadrage | janvier – mars 2026 |

> [!note] Pourquoi ?
> Pour couvrir deux étés de mesures.

```python
print("jamais cité")
```
"""


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    (tmp_path / "Projets").mkdir()
    (tmp_path / "Projets" / "Atlas.md").write_text(NOTE, encoding="utf-8")
    return Settings(vault=tmp_path, data_dir=tmp_path / "data")


def result(heading: str, text: str, path: str = "Projets/Atlas.md", title: str = "Atlas") -> SearchResult:
    return SearchResult(
        path=path, title=title, score=1.0, heading=heading, snippet="", text=text, chunk_index=0, note_type="note"
    )


def grounding(*results: SearchResult, missing_names: list[str] | None = None) -> Grounding:
    evidence = Evidence(*[0.5] * 8)
    return Grounding(True, 0.9, evidence, list(results), results[0], missing_names=missing_names or [])


def by_words(scores: dict[str, float]) -> ScoreFn:
    """A scorer that rates a sentence by the first word of ``scores`` it holds (else 0.8)."""
    return lambda question, texts: [next((v for k, v in scores.items() if k in t), 0.8) for t in texts]


def test_sections_become_sentences_items_and_rows_without_code() -> None:
    units = units_of(NOTE.split("## Durée")[1])
    assert [u.kind for u in units] == ["sentence", "sentence", "row", "sentence"]
    assert units[2].text == "Cadrage — Période : janvier – mars 2026"
    assert units[3].plain == "Pour couvrir deux étés de mesures."  # the callout's text, not its title
    objectives = units_of(NOTE.split("## Objectifs")[1].split("## Durée")[0])
    assert objectives[0].intro and [u.group for u in objectives] == [0, 1, 1, 1]


def test_the_list_is_quoted_whole_with_the_sentence_announcing_it(settings: Settings) -> None:
    main = result("Atlas > Objectifs", "Les trois objectifs contractuels :")
    quote = quote_answer(settings, "Quels sont les objectifs ?", "fr", grounding(main), by_words({"Objectifs": 0.9}))
    assert quote.text.startswith("D'après tes notes :\n\n> Les trois objectifs contractuels :\n>\n> 1. **Publier")
    assert "> 1. **Publier une carte web** chaque semaine.\n> 2. **Réduire" in quote.text  # one list
    assert "> 3. **Former 40 agents** de la Métropole." in quote.text
    assert quote.text.endswith("— Atlas › Objectifs [1]") and "18 mois" not in quote.text
    assert [(s.n, s.heading, s.primary) for s in quote.sources] == [(1, "Atlas > Objectifs", True)]


def test_the_sentence_that_answers_is_chosen_in_the_note_s_other_sections(settings: Settings) -> None:
    main = result("Atlas > Objectifs", "Les trois objectifs contractuels :")
    score = by_words({"18 mois": 0.95, "Objectifs": 0.85})
    quote = quote_answer(settings, "et la durée du projet ?", "fr", grounding(main), score)
    assert "> Le projet dure **18 mois**." in quote.text and "— Atlas › Durée [1]" in quote.text
    assert "jamais cité" not in quote.text


def test_english_framing_around_french_passages_and_what_is_missing(settings: Settings) -> None:
    main = result("Atlas > Durée", "Le projet dure 18 mois.")
    quote = quote_answer(
        settings, "How long does Atlas last?", "en", grounding(main, missing_names=["Nordic"]), by_words({"18": 0.9})
    )
    assert quote.text.startswith("From your notes:\n\n> Le projet dure **18 mois**.")
    assert quote.text.endswith("I find nothing about « Nordic » in these passages.")


def test_without_the_indexer_the_terms_choose(settings: Settings) -> None:
    def down(question: str, texts: list[str]) -> list[float]:
        raise TimeoutError("the indexer did not answer")

    main = result("Atlas > Durée", "Le projet dure 18 mois.")
    quote = quote_answer(settings, "Quand se termine le projet ?", "fr", grounding(main), down)
    assert "Il se termine fin juin 2027." in quote.text and "[1]" in quote.text


def test_a_gone_note_is_quoted_from_its_indexed_chunk(settings: Settings) -> None:
    gone = result("Vieux > Notes", "Une phrase indexée avant la suppression.", path="Vieux.md", title="Vieux")
    quote = quote_answer(settings, "vieux ?", "fr", grounding(gone), by_words({}))
    assert "> Une phrase indexée avant la suppression." in quote.text and quote.sources[0].path == "Vieux.md"


def test_a_document_s_page_is_quoted_from_its_text_and_cited_with_its_number(settings: Settings) -> None:
    (settings.vault / "Manuel.pdf").write_text("%PDF-1.4 text that is no Markdown", encoding="utf-8")
    hit = result("", "La vanne se ferme en tournant la molette vers la droite.", path="Manuel.pdf", title="Manuel.pdf")
    hit.page = 12
    quote = quote_answer(settings, "comment fermer la vanne ?", "fr", grounding(hit), by_words({}))
    assert "> La vanne se ferme en tournant la molette vers la droite." in quote.text
    assert "— Manuel.pdf, p. 12 [1]" in quote.text and "PDF-1.4" not in quote.text
    assert (quote.sources[0].path, quote.sources[0].page) == ("Manuel.pdf", 12)


def test_the_paragraph_after_a_list_stays_a_paragraph_of_its_own(settings: Settings) -> None:
    items = "1. **Publier** la carte.\n2. **Former 40 agents** de la Métropole."
    text = f"Les objectifs :\n\n{items}\n\nUn objectif implicite : que l'outil survive."
    (settings.vault / "Projets" / "Atlas.md").write_text(f"# Atlas\n\n## Objectifs\n\n{text}\n", encoding="utf-8")
    main = result("Atlas > Objectifs", text)
    quote = quote_answer(settings, "que faire ?", "fr", grounding(main), by_words({"agents": 0.9, "implicite": 0.89}))
    assert "> 2. **Former 40 agents** de la Métropole.\n>\n> Un objectif implicite" in quote.text
    html = MarkdownIt().render(quote.text)  # the list item ends where the paragraph begins
    assert "de la Métropole.</li>" in html and "<p>Un objectif implicite" in html


def test_a_numbered_heading_of_a_document_s_text_is_no_list_item(settings: Settings) -> None:
    (settings.vault / "Guide.pdf").write_text("%PDF-1.4", encoding="utf-8")
    text = "2. Le bokashi en appartement\nLe bokashi fait fermenter les restes dans un seau fermé.\nIl ne sent pas."
    hit = result("", text, path="Guide.pdf", title="Guide.pdf")
    hit.page = 3
    units = units_of(text, document=True)
    assert [(u.kind, u.group) for u in units] == [("sentence", 0), ("sentence", 1), ("sentence", 1)]
    assert units_of(text)[0].kind == "item"  # in a note, Markdown says it is a list
    quote = quote_answer(settings, "le bokashi ?", "fr", grounding(hit), by_words({"bokashi": 0.9}))
    assert "> 2\\. Le bokashi en appartement\n>\n> Le bokashi fait fermenter" in quote.text
    html = MarkdownIt().render(quote.text)
    assert "<li>" not in html and "<p>2. Le bokashi en appartement</p>" in html


def test_a_period_is_quoted_by_each_note_s_opening_sentences() -> None:
    blocks = [
        ContextBlock(1, "Journal/a.md", "Lundi", "", "Réunion Atlas. Puis courses. Puis sport."),
        ContextBlock(2, "Journal/b.md", "Mardi", "", "- [ ] appeler Sophie à propos du potager"),
    ]
    text = quote_notes(blocks, "fr")
    assert text.splitlines() == [
        "Ce que tu as écrit sur la période :",
        "- **Lundi** [1] : « Réunion Atlas. Puis courses. »",
        "- **Mardi** [2] : « appeler Sophie à propos du potager »",
    ]


REMINDERS = """Rappels est un module qui t'envoie une notification à l'heure choisie pour chaque tâche.

## Créer un rappel

1. Ouvre la tâche.
2. Clique sur l'icône de cloche.
3. Choisis le jour et l'heure.
4. Valide avec **Enregistrer**.

## Couleurs

Un rappel en retard revient en rouge dans la liste des tâches.
Il passe au gris quand la tâche date de plus d'une semaine. Un rappel fait revient en vert.
La couleur des retards se change dans le thème.

## Export

Un rappel exporté revient dans le fichier CSV avec sa date.
L'export couvre les tâches d'une semaine passée. Le fichier revient vide quand aucun rappel n'existe.
Le séparateur du fichier est le point-virgule.

## Corbeille

Un rappel supprimé revient de la corbeille si tu le restaures dans la semaine.
La corbeille se vide ensuite toute seule. Un rappel restauré revient à sa place.
La corbeille garde au plus cent éléments.

## Options

### Son

Le son joué par défaut est une cloche discrète.

### Répétition

Les répétitions possibles :

- **Aucune** : la notification n'est envoyée qu'une fois.
- **Quotidienne** : elle est relancée chaque matin.
- **Jours ouvrés** : du lundi au vendredi.
- **Mensuelle** : le même jour de chaque mois.
- **Annuelle** : à la même date chaque année.
- **Hebdomadaire** : la notification est relancée le même jour tous les sept jours.
"""


@pytest.fixture
def reminders(tmp_path: Path) -> Settings:
    (tmp_path / "Rappels.md").write_text(REMINDERS, encoding="utf-8")
    return Settings(vault=tmp_path, data_dir=tmp_path / "data")


@pytest.fixture
def e5_score(e5_embedder) -> ScoreFn:  # type: ignore[no-untyped-def]
    from services.retrieval.sentence_scores import sentence_scores

    return lambda question, texts: sentence_scores(e5_embedder, question, texts)


def test_a_list_item_far_down_a_sibling_section_is_quoted_before_sections_sharing_words(
    reminders: Settings, e5_score: ScoreFn
) -> None:
    """The chunk found is « Son »; the answer is the last item of « Répétition » beside it, below three sections
    holding the question's words (« rappel », « revient », « semaine ») that say nothing of repeating: they
    used to take every unit the quote may score."""
    main = result("Options > Son", "Le son joué par défaut est une cloche discrète.", "Rappels.md", "Rappels")
    question = "Comment faire pour que mon rappel revienne chaque semaine ?"
    quote = quote_answer(reminders, question, "fr", grounding(main), e5_score)
    assert "**Hebdomadaire** : la notification est relancée le même jour tous les sept jours." in quote.text
    assert "— Rappels › Répétition [" in quote.text


def test_the_note_s_opening_says_what_answers_a_question_that_does_not_name_it(
    reminders: Settings, e5_score: ScoreFn
) -> None:
    main = result("Créer un rappel", "1. Ouvre la tâche.", "Rappels.md", "Rappels")
    question = "Est-ce que l'application peut me prévenir à une heure précise pour une tâche ?"
    quote = quote_answer(reminders, question, "fr", grounding(main), e5_score)
    assert quote.text.startswith("D'après tes notes :\n\n> Rappels est un module qui t'envoie une notification")
    assert quote.sources[0].heading == "" and quote.sources[0].path == "Rappels.md"


def test_a_question_naming_the_note_gets_no_opening(reminders: Settings, e5_score: ScoreFn) -> None:
    main = result("Créer un rappel", "1. Ouvre la tâche.", "Rappels.md", "Rappels")
    quote = quote_answer(reminders, "Comment créer des rappels ?", "fr", grounding(main), e5_score)
    assert "Rappels est un module" not in quote.text and "> 2. Clique sur l'icône de cloche." in quote.text


def test_a_note_of_more_sections_than_one_scoring_reads_is_still_quoted(tmp_path: Path, e5_score: ScoreFn) -> None:
    """The indexer scores at most 64 texts a request (``sentence_scores.MAX_SENTENCES``); a glossary of 80
    sections used to end the question in an error (the sections' closeness one short of the sections)."""
    sections = "\n\n".join(f"## Terme {i}\n\nLe terme numéro {i} désigne une chose du glossaire." for i in range(80))
    (tmp_path / "Glossaire.md").write_text(f"# Glossaire\n\n{sections}\n", encoding="utf-8")
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    main = result(
        "Glossaire > Terme 3", "Le terme numéro 3 désigne une chose du glossaire.", "Glossaire.md", "Glossaire"
    )
    quote = quote_answer(settings, "Que désigne le terme numéro 3 ?", "fr", grounding(main), e5_score)
    assert "Le terme numéro 3 désigne une chose du glossaire." in quote.text
