"""A generation that loops or echoes its instructions: stopped while it streams, cleaned once it ends."""

from __future__ import annotations

from services.chat.prompts import SYSTEM
from services.llm.degeneration import DegenerationWatch, clean_answer, is_degenerate, last_sentence_boundary

LINE = "Le projet dure dix-huit mois et se termine en juin 2027.\n"


def stream(watch: DegenerationWatch, text: str, size: int = 5) -> tuple[str, str | None]:
    """Feed ``text`` piece by piece until the watch says stop: (what was fed, why it stopped)."""
    fed = ""
    for start in range(0, len(text), size):
        fed += text[start : start + size]
        if reason := watch.feed(text[start : start + size]):
            return fed, reason
    return fed, None


def test_a_line_written_forever_stops_at_its_second_repeat_and_is_kept_once() -> None:
    fed, reason = stream(DegenerationWatch(SYSTEM["fr"]), LINE * 50)
    assert reason == "repetition" and fed.count("Le projet dure") == 3  # the line, then two repeats
    assert clean_answer(fed, SYSTEM["fr"], cut=True) == LINE.strip()


def test_a_phrase_looping_inside_one_line_stops_too() -> None:
    text = "La projet est " + "une carte web des îlots de chaleur pour la Métropole, " * 20
    fed, reason = stream(DegenerationWatch(), text)
    assert reason == "repetition" and fed.count("une carte web") == 3
    assert clean_answer(fed, cut=True).count("une carte web") == 1


def test_sentences_of_the_system_prompt_are_cut_and_a_second_one_stops_the_generation() -> None:
    system = SYSTEM["fr"]
    echo = (
        "Réponds en français, de façon concise, uniquement à partir des extraits fournis. Les objectifs sont "
        "trois [1]. Cite chaque affirmation avec le numéro de son extrait entre crochets, par exemple [1]. Puis"
    )
    fed, reason = stream(DegenerationWatch(system), echo + " encore du texte.")
    assert reason == "echo" and fed.startswith(echo[:60])
    assert clean_answer(fed, system, cut=True) == "Les objectifs sont trois [1]."


def test_a_sound_answer_is_left_alone() -> None:
    answer = "Atlas a trois objectifs [1] :\n1. Publier une carte web.\n2. Réduire les délais.\n3. Former 40 agents."
    fed, reason = stream(DegenerationWatch(SYSTEM["fr"]), answer)
    assert reason is None and clean_answer(fed, SYSTEM["fr"]) == answer and not is_degenerate(answer)


def test_a_cut_answer_ends_on_its_last_sentence_or_list_line() -> None:
    assert (
        last_sentence_boundary("Le projet dure 18 mois. Il a démarré en janvier et doit") == "Le projet dure 18 mois."
    )
    assert last_sentence_boundary("1. Publier une carte [1]\n2. Réduire le temps de") == "1. Publier une carte [1]"
    assert last_sentence_boundary("La projet est **18") == "La projet est **18"  # no sentence at all: kept


def test_degenerate_means_a_repeated_line_or_eight_word_phrase() -> None:
    assert is_degenerate(LINE * 2)
    assert is_degenerate("un deux trois quatre cinq six sept huit, puis un deux trois quatre cinq six sept huit")
    assert not is_degenerate("Une phrase.\nUne autre phrase, différente.")
