"""What the chat does with memory: "retiens que …", "oublie que …", reminders confirmed before saving, recall."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.memory_models import FactKind, FactSource, FactStatus
from services.config import Settings
from services.memory.assistant import ChatMemory
from services.memory.recall import memory_block, statement_fact
from services.memory.wording import fact_phrase
from services.retrieval.fact_vectors import MemoryMatch

NOW = datetime(2026, 12, 1, 12, 0).astimezone()


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[ChatMemory]:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    catalog = Catalog(settings.catalog_path)
    yield ChatMemory(settings, catalog)
    catalog.close()


@pytest.mark.parametrize(
    ("sentence", "triple", "kind"),
    [
        ("je préfère le thé vert le matin", ("moi", "je préfère", "le thé vert le matin"), FactKind.PREFERENCE),
        ("mon dentiste s'appelle Dr Roy", ("moi", "dentiste", "Dr Roy"), FactKind.PREFERENCE),
        ("Sophie est ma sœur", ("Sophie", "est", "ma sœur"), FactKind.ENTITY),
        (
            "j'ai décidé de passer Atlas sous Postgres",
            ("moi", "j'ai", "décidé de passer Atlas sous Postgres"),
            FactKind.DECISION,
        ),
        ("I always run on Sundays", ("moi", "I always", "run on Sundays"), FactKind.HABIT),
        ("I'm vegetarian", ("moi", "I'm", "vegetarian"), FactKind.PREFERENCE),
    ],
)
def test_statements_become_facts(sentence: str, triple: tuple[str, str, str], kind: FactKind) -> None:
    fact = statement_fact(sentence, NOW, "t1")
    assert (fact.subject, fact.predicate, fact.value) == triple and fact.kind == kind and fact.source == "chat"


@pytest.mark.parametrize(
    ("sentence", "phrase"),
    [
        ("je suis végétarien", "Tu es végétarien"),  # not « moi — suis : végétarien » (#26, point 7)
        ("je préfère le thé vert", "Tu préfères le thé vert"),
        ("j'ai deux chats", "Tu as deux chats"),
        ("je ne mange pas de viande", "Tu ne manges pas de viande"),
        ("je ne suis pas du matin", "Tu n'es pas du matin"),
        ("j'habite à Lyon", "Tu habites à Lyon"),
        ("je peux courir 10 km", "Tu peux courir 10 km"),
        ("mon dentiste s'appelle Dr Roy", "Dentiste : Dr Roy"),
        ("Sophie est ma sœur", "Sophie est ma sœur"),
        ("le code du portail change en mars", "Le code du portail change en mars"),
        ("I am vegetarian", "You are vegetarian"),
        ("I'm vegetarian", "You're vegetarian"),
        ("I like tea", "You like tea"),
    ],
)
def test_a_fact_reads_as_a_sentence(sentence: str, phrase: str) -> None:
    assert fact_phrase(statement_fact(sentence, NOW, "t1")) == phrase


def test_a_fact_from_the_notes_reads_as_a_label() -> None:
    fact = statement_fact("x", NOW, "t1").model_copy(
        update={"predicate": "régime", "value": "végétarien", "source": FactSource.CONSOLIDATION}
    )
    assert fact_phrase(fact) == "Régime : végétarien"
    about_sophie = fact.model_copy(update={"subject": "Sophie", "predicate": "métier", "value": "designer"})
    assert fact_phrase(about_sophie) == "Sophie — métier : designer"
    stored_before = fact.model_copy(update={"predicate": "suis", "source": FactSource.CHAT})  # (moi, suis, …)
    assert fact_phrase(stored_before) == "Tu es végétarien"


def test_remember_supersede_and_forget(memory: ChatMemory) -> None:
    assert (
        memory.reply("retiens que je préfère le thé vert", "t1", "fr", NOW) == "C'est noté : tu préfères le thé vert."
    )
    assert memory.reply("Retiens bien que je préfère le thé vert.", "t1", "fr", NOW).startswith("Je le savais déjà")  # type: ignore[union-attr]
    memory.reply("retiens que je préfère le café noir", "t1", "fr", NOW)
    [current] = memory.catalog.facts([FactStatus.CONFIRMED])
    assert current.value == "le café noir" and current.supersedes is not None
    assert memory.recall("que bois-je le matin, du café ?")[0].id == current.id
    assert memory.reply("oublie que je préfère le café noir", "t1", "fr", NOW) == (
        "J'ai oublié : tu préfères le café noir."
    )
    assert memory.recall("du café ?") == []
    assert memory.reply("oublie que j'aime le ski", "t1", "fr", NOW) == "Je ne trouve rien de tel dans ma mémoire."
    assert memory.reply("Quels sont les objectifs du projet Atlas ?", "t1", "fr", NOW) is None


def test_a_reminder_is_confirmed_back_then_saved_on_yes(memory: ChatMemory) -> None:
    confirmation = memory.reply("rappelle-moi dans 3 semaines de relancer Sophie", "t1", "fr", NOW)
    assert confirmation is not None and "relancer Sophie" in confirmation and confirmation.endswith("Je l'enregistre ?")
    assert memory.catalog.reminders() == []  # nothing saved before the user says yes
    saved = memory.reply("oui", "t1", "fr", NOW)
    [reminder] = memory.catalog.reminders()
    assert saved == f"C'est enregistré (rappel #{reminder.id}) : relancer Sophie, le mardi 22 décembre 2026 à 09:00."
    assert reminder.due_at == (NOW + timedelta(days=21)).replace(hour=9, minute=0) and reminder.source_ref == "t1"
    # Clicked again (or said again): the answer says so truthfully and saves nothing, never reaching the
    # model, which claimed « C'est enregistré (rappel #1) » for a save that did not happen.
    again = "Ce rappel est déjà enregistré (rappel #1) : je n'enregistre rien de plus."
    assert memory.reply("oui", "t1", "fr", NOW) == again and memory.reply("Oui !", "t1", "fr", NOW) == again
    assert len(memory.catalog.reminders()) == 1
    assert memory.reply("Quels sont les objectifs du projet Atlas ?", "t1", "fr", NOW) is None
    assert memory.reply("oui", "t1", "fr", NOW) is None  # the reminder is behind: an ordinary message


def test_a_reminder_draft_is_dropped_on_no_or_another_question(memory: ChatMemory) -> None:
    memory.reply("remind me tomorrow at 9 to call mum", "t2", "en", NOW)
    assert memory.reply("no", "t2", "en", NOW) == "All right, I won't save it."
    assert memory.reply("yes", "t2", "en", NOW) == "You said no: that reminder is not saved. Ask again if you want it."
    memory.reply("rappelle-moi demain de sortir", "t3", "fr", NOW)
    assert memory.reply("Quels sont les objectifs du projet Atlas ?", "t3", "fr", NOW) is None
    assert memory.reply("oui", "t3", "fr", NOW) is None and memory.catalog.reminders() == []
    assert memory.reply("rappelle-moi de sortir", "t4", "fr", NOW).startswith("Je n'ai pas compris quand")  # type: ignore[union-attr]


def test_a_reminder_on_an_impossible_or_past_day_is_asked_again(memory: ChatMemory) -> None:
    """« La question n'a pas abouti (ValueError) » in the web chat; a past day saved a day late, due at once."""
    impossible = memory.reply("rappelle-moi le 31 février de relancer Claire", "t1", "fr", NOW)
    assert impossible == "Le 31 février n'existe pas : pour quel jour veux-tu ce rappel (« relancer Claire ») ?"
    assert memory.reply("oui", "t1", "fr", NOW) is None and memory.catalog.reminders() == []  # no draft to save
    past = memory.reply("rappelle-moi le 3 janvier 2020 à 9h de payer la facture", "t2", "fr", NOW)
    assert past is not None and past.startswith("Le vendredi 3 janvier 2020 à 09:00 est déjà passé")
    assert memory.reply("hier", "t2", "fr", NOW).startswith("Le lundi 30 novembre 2026 à 09:00 est déjà passé")  # type: ignore[union-attr]
    confirmation = memory.reply("le 5 janvier à 10h", "t2", "fr", NOW)  # the answer to « pour quand ? »
    assert confirmation == "Je te le rappellerai le mardi 5 janvier 2027 à 10:00 : payer la facture. Je l'enregistre ?"
    memory.reply("oui", "t2", "fr", NOW)
    [saved] = memory.catalog.reminders()
    assert (saved.text, saved.due_at) == ("payer la facture", datetime(2027, 1, 5, 10).astimezone())
    english = memory.reply("remind me yesterday at 9 to call Bob", "t3", "en", NOW)
    assert english is not None and english.endswith("passed: when do you want this reminder (“call Bob”) for?")
    assert memory.reply("no", "t3", "en", NOW) == "All right, I won't save it." and len(memory.catalog.reminders()) == 1


def test_recall_stays_within_its_budget_and_names_subjects(memory: ChatMemory) -> None:
    memory.reply("retiens que Sophie est ma sœur", "t1", "fr", NOW)
    for n in range(30):
        memory.reply(f"retiens que le projet Atlas utilise l'outil numéro {n} pour la carte", "t1", "fr", NOW)
    facts = memory.recall("que dit le projet Atlas de la carte ?")
    assert 0 < len(facts) < 30 and sum(len(f.sentence()) for f in facts) <= memory.settings.memory_chat_chars
    assert memory.recall("Quand vois-je Sophie ?")[0].subject == "Sophie"
    assert memory_block(facts[:1], "fr").startswith("Ce que tu sais de l'utilisateur")


def test_recall_takes_the_facts_close_in_meaning_and_the_names_a_value_holds(memory: ChatMemory) -> None:
    memory.reply("retiens que je préfère le thé vert au café", "t1", "fr", NOW)
    memory.reply("retiens que mon dentiste s'appelle le Dr Roy", "t1", "fr", NOW)
    tea, dentist = sorted(memory.catalog.facts([FactStatus.CONFIRMED]), key=lambda f: f.id or 0)
    question = "quelle boisson chaude au petit-déjeuner ?"
    assert memory.recall(question) == []  # no word in common
    close = [MemoryMatch(fact_id=tea.id or 0, cosine=0.27)]  # what the indexer's search found
    assert [f.id for f in memory.recall(question, close)] == [tea.id]
    assert memory.for_prompt(question, "fr", close).uses[0].text == "Tu préfères le thé vert au café"
    # A proper name of the value, named by the question, weighs as a subject does: before a match by meaning.
    near = [MemoryMatch(fact_id=tea.id or 0, cosine=0.3)]
    assert [f.id for f in memory.recall("le Dr Roy reçoit-il le samedi ?", near)] == [dentist.id, tea.id]
    # A capitalised word opening the value, or a stop word, is no name.
    memory.reply("retiens que je note Les réunions finissent tard", "t1", "fr", NOW)
    assert memory.recall("les horaires de la cantine ?") == []
