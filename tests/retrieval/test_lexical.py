"""The French/English analyzer and the BM25-style sparse vectors."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from services.language import fold as folding
from services.retrieval import lexical
from services.retrieval.lexical import (
    SUBWORD_FIELD,
    TITLE_FIELD,
    analyze,
    encode_document,
    encode_query,
    fold_accents,
    matched_terms,
    subwords,
    term_id,
)
from services.retrieval.models import SparseVector


def weight_of(vector: SparseVector, term: str) -> float:
    return dict(zip(vector.indices, vector.values, strict=True)).get(term_id(term), 0.0)


@pytest.mark.parametrize(
    ("elided", "plain"),
    [
        ("l'analyse", "analyse"),
        ("l’analyse", "analyse"),
        ("d'abord", "abord"),
        ("d’abord", "abord"),
        ("qu'il", ""),
        ("qu’elle", ""),
        ("jusqu'à l’État", "état"),
        ("lorsqu'on utilise", "utilise"),
        ("puisqu’il s'agit", "agit"),
        ("j'aime n'importe c'est m'appelle t'envoie", "aime importe appelle envoie"),
    ],
)
def test_elisions_are_removed(elided: str, plain: str) -> None:
    assert analyze(elided) == analyze(plain)


def test_accents_and_ligatures_are_folded() -> None:
    assert analyze("Réunion à l'hôpital") == analyze("reunion a l'hopital") == ["reunion", "hopital"]
    assert analyze("cœur") == analyze("coeur")
    assert analyze("Cæsar") == analyze("caesar")
    assert analyze("garçon") == analyze("garcon")


def test_stop_words_are_removed() -> None:
    assert analyze("le la les de des du et un une est dans pour avec sur pas") == []
    assert analyze("the of and a an is are was to in on for with not") == ["an"]
    assert analyze("Le projet et la réunion") == ["projet", "reunion"]


@pytest.mark.parametrize(
    "family",
    [
        "données donnée donnees donnee",
        "protégés protéger protégé protégée proteger protegee",
        "cookies cookie",
        "projets projet",
        "chevaux cheval",
        "nationale national nationaux nationales",
        "analyse analyses analyser analysé analysée",
        "recherche recherches rechercher recherché",
        "mesure mesures mesurer mesurée",
        "policies policy",
        "queries query",
        "searching searched searches search",
        "tests testing tested test",
        "embeddings embedding",
    ],
)
def test_stemming_makes_inflections_meet(family: str) -> None:
    terms = {tuple(analyze(word)) for word in family.split()}
    assert len(terms) == 1, terms
    assert len(next(iter(terms))) == 1


def test_english_words_are_kept() -> None:
    assert analyze("Vector database indexing") == ["vector", "databas", "index"]


def test_digits_are_kept_and_single_letters_dropped() -> None:
    assert analyze("Réunion du 2024-03-15 à 9h, version 3.5, point x") == [
        "reunion",
        "2024",
        "03",
        "15",
        "9h",
        "version",
        "3",
        "5",
        "point",
    ]


def test_nfkc_and_casefold() -> None:
    assert analyze("ﬁchier") == analyze("fichier")
    assert analyze("Ｈ２００ ２０２４") == ["h200", "2024"]
    assert analyze("PYTHON Python python") == ["python"] * 3


def test_hyphen_parts_are_separate_terms() -> None:
    assert analyze("porte-monnaie") == analyze("porte monnaie")
    assert len(analyze("porte-monnaie")) == 2
    assert analyze("snake_case") == analyze("snake case")


def test_overlong_tokens_are_dropped() -> None:
    assert analyze("a" * 41 + " hash") == ["hash"]


def test_term_id_is_a_stable_31_bit_id() -> None:
    ids = {term_id(term) for term in ["donn", "proteg", "cook", "2024", ""]}
    assert len(ids) == 5
    assert all(0 <= i < 2**31 for i in ids)
    # Pinned: changing the hash silently invalidates every stored sparse vector.
    assert term_id("donn") == 245591418


def test_term_id_is_identical_in_another_process() -> None:
    terms = ["donn", "proteg", "reunion", "été", "2024"]
    code = f"from services.retrieval.lexical import term_id; print([term_id(t) for t in {terms!r}])"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == str([term_id(t) for t in terms])


def sub(gram: str) -> str:
    return SUBWORD_FIELD + gram


def title(term: str) -> str:
    return TITLE_FIELD + term


def test_encode_document_is_sorted_unique_and_positive() -> None:
    vector = encode_document("Les données, les données et encore les données du projet.")
    assert vector.indices == sorted(set(vector.indices))
    assert len(vector.values) == len(vector.indices)
    assert all(v > 0 for v in vector.values)
    assert weight_of(vector, "donn") > weight_of(vector, "projet") > 0
    assert weight_of(vector, "les") == weight_of(vector, "encore") == 0.0  # stop words


def test_title_alias_and_heading_terms_are_boosted() -> None:
    body = "atlas budget calendrier"
    vector = encode_document(body, title="Projet Atlas", aliases=["Calendrier"], headings=["Budget"])
    plain = encode_document(body)
    assert weight_of(vector, "atlas") > weight_of(plain, "atlas")
    assert weight_of(vector, "calendri") > weight_of(plain, "calendri")
    assert weight_of(vector, "budget") > weight_of(plain, "budget")
    assert weight_of(vector, "atlas") > weight_of(vector, "budget")  # TITLE_BOOST > HEADING_BOOST
    assert weight_of(vector, "projet") > 0  # a title-only term is indexed too


def test_saturation_and_length_normalisation() -> None:
    once, thrice = encode_document("atlas"), encode_document("atlas atlas atlas")
    assert weight_of(once, "atlas") < weight_of(thrice, "atlas") < lexical.K1 + 1
    longer = encode_document("atlas " + " ".join(f"mot{i}" for i in range(300)))
    assert weight_of(longer, "atlas") < weight_of(once, "atlas")


def test_empty_inputs_give_empty_vectors() -> None:
    assert encode_document("").indices == []
    assert encode_query("").indices == []
    assert encode_query("?! …").indices == []
    # Stop words give no term, only the sub-words of those long enough to have one.
    assert set(encode_document("le la les").indices) == {term_id(sub("#les#"))}


def test_colliding_term_ids_are_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexical, "term_id", lambda term: 7)
    document = encode_document("atlas budget", title="calendrier")
    assert document.indices == [7]
    assert len(document.values) == 1
    query = encode_query("atlas budget")
    # 2 terms + 2 title-field terms + 7 sub-words (#atla atlas tlas# #budg budge udget dget#) at 0.2
    assert query.indices == [7]
    assert query.values == [pytest.approx(2.0 + 2 * lexical.QUERY_TITLE_WEIGHT + 7 * lexical.QUERY_SUBWORD_WEIGHT)]


def test_encode_query() -> None:
    vector = encode_query("Les données protégées des données")
    terms = ["donn", "proteg"]
    grams = subwords("Les données protégées des données")
    expected = {term_id(t) for t in terms} | {term_id(title(t)) for t in terms} | {term_id(sub(g)) for g in grams}
    assert vector.indices == sorted(expected)
    assert weight_of(vector, "donn") == 2.0
    assert weight_of(vector, "proteg") == 1.0
    assert weight_of(vector, title("donn")) == 2.0 * lexical.QUERY_TITLE_WEIGHT
    assert weight_of(vector, sub("#donn")) == pytest.approx(2 * lexical.QUERY_SUBWORD_WEIGHT)
    assert weight_of(vector, sub("#les#")) == pytest.approx(lexical.QUERY_SUBWORD_WEIGHT)


def test_query_terms_meet_document_terms() -> None:
    document = encode_document("La donnée personnelle est protégée par le RGPD.")
    query = encode_query("données personnelles protégés rgpd")
    body = {term_id(t) for t in analyze("données personnelles protégés rgpd")}
    assert body <= set(document.indices)
    # Title-field terms only meet notes whose title has them; this one has no title.
    assert not {term_id(title(t)) for t in analyze("données personnelles protégés rgpd")} & set(document.indices)
    shared_grams = set(query.indices) & set(document.indices) - body
    assert {term_id(sub(g)) for g in ["#donn", "prote", "#rgpd"]} <= shared_grams


def test_title_and_aliases_form_a_field_of_their_own() -> None:
    vector = encode_document("Le budget du projet.", title="Projet Atlas", aliases=["Calendrier"], headings=["Risques"])
    assert weight_of(vector, title("atlas")) == lexical.TITLE_FIELD_WEIGHT
    assert weight_of(vector, title("projet")) == lexical.TITLE_FIELD_WEIGHT  # once, even if the body has it
    assert weight_of(vector, title("calendri")) == lexical.TITLE_FIELD_WEIGHT
    assert weight_of(vector, title("budget")) == 0.0  # a body word is not a title word
    assert weight_of(vector, title("risqu")) == 0.0  # headings stay in the body field
    assert weight_of(vector, "risqu") > 0


def test_a_query_word_in_the_title_outweighs_the_same_word_in_the_body() -> None:
    query = encode_query("atlas")
    in_title = encode_document("Réunion de lundi.", title="Atlas")
    in_body = encode_document("Réunion de lundi sur atlas.", title="Compte rendu")

    def dot(doc: SparseVector) -> float:
        weights = dict(zip(doc.indices, doc.values, strict=True))
        return sum(v * weights.get(i, 0.0) for i, v in zip(query.indices, query.values, strict=True))

    assert dot(in_title) > dot(in_body) > 0


def test_subwords_are_folded_character_ngrams() -> None:
    assert subwords("Publicité") == ["#publ", "publi", "ublic", "blici", "licit", "icite", "cite#"]
    assert subwords("FCC") == subwords("fcc") == ["#fcc#"]  # a three-letter word is one gram
    assert subwords("CNIL") == ["#cnil", "cnil#"]
    assert subwords("l’été") == subwords("l'ete") == ["#ete#"]  # accents folded, "l" too short
    assert subwords("un à") == []


def test_subwords_let_stemming_misses_and_glued_words_meet() -> None:
    # Snowball keeps these apart; their sub-words overlap.
    assert analyze("publicité") != analyze("publicitaire")
    assert len(set(subwords("publicité")) & set(subwords("publicitaire"))) >= 4
    assert analyze("fichier") != analyze("fichage")
    assert set(subwords("fichier")) & set(subwords("fichage"))
    # An export that glued two words ("sitepour") still meets "site" and "pour".
    assert "#site" in subwords("sitepour") and "pour#" in subwords("sitepour")


def test_matched_terms() -> None:
    assert matched_terms("données protégées cookies", "La donnée est protégée.") == ["donn", "proteg"]
    assert matched_terms("le la", "le la") == []
    assert matched_terms("atlas atlas", "Projet Atlas") == ["atlas"]


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Données protégées", "Donnees protegees"),
        ("cœur, ægée, straße", "coeur, aegee, strasse"),
        ("e\u0301te\u0301 de\u0301compose\u0301", "ete decompose"),  # combining accents, as macOS writes names
        ("« l’été » — 20 €", "« l’ete » — 20 €"),  # punctuation is not a diacritic
        ("plain ascii", "plain ascii"),
    ],
)
def test_fold_accents_removes_diacritics_and_expands_ligatures(text: str, folded: str) -> None:
    assert fold_accents(text) == folded
    assert fold_accents(text) == folding._fold_slowly(text)  # the per-character table = decomposing it all


def test_one_fold_for_case_and_accent_blind_comparisons() -> None:
    from services.indexing.mentions import normalize_name

    assert folding.fold("Œuvres Complètes, É\u0301TÉ") == "oeuvres completes, ete"
    assert normalize_name("Jean-Luc Mélenchon") == folding.fold("jean luc melenchon")
