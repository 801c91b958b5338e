"""French/English analyzer and BM25-style sparse vectors for the lexical side of hybrid search.

Qdrant applies IDF itself (sparse vector ``lexical`` with ``Modifier.IDF``), so a document vector
carries saturated term frequencies and a query vector carries plain term weights.

One pipeline serves both languages: the same surface form always maps to the same term, whatever the
language of the note or of the question around it (French notes are full of English technical words,
and questions are often asked in the other language). Snowball French does the stemming after accent
folding, so "donnees" typed without accents meets "données"; two tiny fix-ups then let common English
inflections (-ing, -ed, -ies/-y) meet as well.

A vector holds three kinds of terms, told apart by a prefix so that each gets its own IDF:
- body terms (the analysed words, with title/alias/heading pseudo-occurrences, BM25-saturated);
- title terms (``t:`` + term): the note's title and aliases as a field of their own, so that a query
  word found in a title is weighted by how rare it is among titles, not among all the text;
- sub-word terms (``~`` + five characters of a folded word): they let words meet that stemming keeps
  apart (publicité/publicitaire, fichier/fichage) or that a bad export glued together
  ("simplesà", "sitepour"), at a fifth of a word's weight in the query.
Every knob was chosen on the French benchmarks: see docs/performance.md, "Retrieval quality".
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache

import Stemmer

from services.language.fold import fold_accents
from services.retrieval.models import SparseVector

# BM25 saturation. AVG_DOC_LEN is a constant (not a corpus statistic) so that a chunk's vector never
# depends on the rest of the vault. Measured on the sample vault with 256-token chunks: median 32
# analysed terms per chunk, a full chunk ~80 (stop words gone), so 60 sits between the two.
K1 = 1.2
B = 0.75
AVG_DOC_LEN = 60.0

# Field boosts: a term present in the field adds this many pseudo-occurrences to the body term
# (once per field). The title also has a field of its own (TITLE_FIELD), so these are half what they
# were when the body term was the only place a title word counted (CNIL: sparse MRR 0.572 → 0.578).
TITLE_BOOST = 1.0
ALIAS_BOOST = 1.0
HEADING_BOOST = 0.5

# The title field: each distinct title/alias term of a chunk's note, as ``t:term``.
TITLE_FIELD = "t:"
TITLE_FIELD_WEIGHT = 1.0  # in a chunk's vector (no saturation: a title is short)
QUERY_TITLE_WEIGHT = 1.0  # in a query's vector, next to the plain term's 1.0

# Sub-words: character n-grams of every folded word, word ends marked by "#".
SUBWORD_FIELD = "~"
SUBWORD_SIZE = 5
SUBWORD_TITLE_BOOST = 2.0  # title/alias n-grams count this many times
QUERY_SUBWORD_WEIGHT = 0.2  # a word has several n-grams: together they stay below the word itself

MAX_TERM_LEN = 40  # longer "words" are hashes, base64 or minified junk
_ID_MASK = 0x7FFF_FFFF


def _words(text: str) -> list[str]:
    return text.split()


_FRENCH_STOP = _words("""
au aux avec ce ces dans de des du elle en et eux il ils je la le les leur leurs lui ma mais me meme
mes moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un
une vos votre vous ceci cela ca celle celles celui ceux cet cette ci la ici lors donc or ni car si
sans sous chez vers entre dont quoi quel quelle quels quelles lequel laquelle lesquels lesquelles
auquel auxquels duquel desquels tout tous toute toutes aussi tres plus moins bien non oui
est sont suis es sommes etes etait etaient etais serai sera seront serait seraient soit soient
ai as avons avez ont avait avaient avais aurai aura auront aurait eu peut
jusqu lorsqu puisqu comme ainsi alors deja encore
""")

_ENGLISH_STOP = _words("""
a the and or but if then else of at by for with about against between into through during before
after above below to from up down in out on off over under again further once here there when where
why how all any both each few more most other some such no nor not only own same so than too very
can will just should now i me my myself we our ours ourselves you your yours yourself yourselves he
him his himself she her hers herself it its itself they them their theirs themselves what which who
whom this that these those am is are was were be been being have has had having do does did doing
would could shall might must may also
doesn isn didn won wasn aren couldn shouldn wouldn hasn haven hadn weren ll re ve
""")

# Short function words only, in folded form. Negations (ne, pas, non, sans, not, no) are stop words too:
# a bag of words cannot tell "pas X" from "X", so they would only add noise (the dense side reads them).
# Kept on purpose: "an" (a year in French; IDF tames the English article) and "ete" (summer).
STOP_WORDS: frozenset[str] = frozenset(_FRENCH_STOP + _ENGLISH_STOP)

_APOSTROPHES = ("’", "‘", "ʼ")  # typographic apostrophes, read as "'" (str.replace: translate is 20× slower)
_ELISION = re.compile(r"(?<![^\W_])(?:jusqu|lorsqu|puisqu|qu|[ldjnsmtc])'(?=[^\W\d_])")
_TOKEN = re.compile(r"[^\W_]+")
_ASCII_WORD = re.compile(r"[a-z]+")
_CONSONANT_Y = re.compile(r"(?<=[^aeiouy])y$")

_FRENCH = Stemmer.Stemmer("french")
_ENGLISH = Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Stem one folded, lowercase token. Tokens with digits or non-ASCII letters are kept as they are."""
    if not _ASCII_WORD.fullmatch(word):
        return word
    if len(word) > 3:
        word = _CONSONANT_Y.sub("i", word)  # policy/policies, query/queries
    stemmed = _FRENCH.stemWord(word)
    if len(stemmed) >= 6 and stemmed.endswith(("ing", "ed")):
        stemmed = _ENGLISH.stemWord(stemmed)  # searching/searched → search
    if len(stemmed) > 3 and stemmed.endswith("e"):
        stemmed = stemmed[:-1]  # protégée/protégé, donnée/données: folded forms keep a stray "e"
    return stemmed


def _keep(token: str) -> bool:
    if len(token) > MAX_TERM_LEN or token in STOP_WORDS:
        return False
    return len(token) > 1 or token.isdigit()


def _tokens(text: str) -> list[str]:
    """Folded words of ``text`` that are not stop words: NFKC, casefold, elisions, accent folding."""
    text = unicodedata.normalize("NFKC", text).casefold()
    for mark in _APOSTROPHES:
        text = text.replace(mark, "'")
    text = fold_accents(_ELISION.sub("", text))
    return [token for token in _TOKEN.findall(text) if _keep(token)]


def analyze(text: str) -> list[str]:
    """Terms of ``text`` in order: NFKC, casefold, elisions, accent folding, stop words, stemming."""
    terms = (stem(token) for token in _tokens(text))
    return [term for term in terms if len(term) > 1 or term.isdigit()]


def subwords(text: str, size: int = SUBWORD_SIZE) -> list[str]:
    """Character ``size``-grams of each folded word of ``text`` (``#`` marks both ends), in order.

    Words shorter than ``size - 1`` letters give none. Stop words are kept here: glued words
    ("sitepour", "concernéepar") share their n-grams with them (CNIL: sparse MRR 0.597 → 0.614).
    """
    folded = fold_accents(unicodedata.normalize("NFKC", text).casefold())
    grams: list[str] = []
    for token in _TOKEN.findall(folded):
        if len(token) > MAX_TERM_LEN:
            continue
        padded = f"#{token}#"
        grams += [padded[i : i + size] for i in range(len(padded) - size + 1)]
    return grams


@lru_cache(maxsize=65536)  # ~10 MB; a chunk has ~300 terms, mostly seen before: its sparse vector 1.6 -> 1.0 ms
def term_id(term: str) -> int:
    """Stable non-negative 31-bit id of a term (blake2b; identical across processes and machines)."""
    digest = hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "big") & _ID_MASK


def _field_terms(texts: Iterable[str]) -> set[str]:
    return {term for text in texts for term in analyze(text)}


def _saturate(tf: float, doc_len: int) -> float:
    norm = K1 * (1.0 - B + B * doc_len / AVG_DOC_LEN)
    return tf * (K1 + 1.0) / (tf + norm)


def _to_sparse(weights: dict[int, float]) -> SparseVector:
    indices = sorted(weights)
    return SparseVector(indices=indices, values=[weights[i] for i in indices])


def _add(weights: dict[int, float], terms: Iterable[str], weight: float, prefix: str = "") -> None:
    for term in terms:
        tid = term_id(prefix + term)
        weights[tid] = weights.get(tid, 0.0) + weight


def encode_document(
    text: str, title: str = "", aliases: Sequence[str] = (), headings: Sequence[str] = ()
) -> SparseVector:
    """Sparse vector of a chunk: BM25-saturated body terms with field boosts, title terms, sub-words.

    Body terms count once per occurrence; a term present in the title, an alias or a heading adds
    ``TITLE_BOOST``/``ALIAS_BOOST``/``HEADING_BOOST`` pseudo-occurrences (once per field). Length
    normalisation uses the body's term count only, so boosts do not penalise short chunks. Each
    distinct title/alias term is added once more in the title field (``TITLE_FIELD_WEIGHT``), and the
    body's sub-words (title/alias ones counted ``SUBWORD_TITLE_BOOST`` times) are saturated like body
    terms. Term ids that collide are merged before saturation.
    """
    body = analyze(text)
    weights: dict[int, float] = {}
    _add(weights, body, 1.0)
    boosted = ((_field_terms([title]), TITLE_BOOST), (_field_terms(aliases), ALIAS_BOOST))
    for terms, boost in (*boosted, (_field_terms(headings), HEADING_BOOST)):
        _add(weights, terms, boost)
    _add(weights, subwords(text), 1.0, SUBWORD_FIELD)
    for name in (title, *aliases):
        _add(weights, subwords(name), SUBWORD_TITLE_BOOST, SUBWORD_FIELD)
    saturated = {tid: _saturate(w, len(body)) for tid, w in weights.items() if w > 0}
    _add(saturated, _field_terms([title, *aliases]), TITLE_FIELD_WEIGHT, TITLE_FIELD)
    return _to_sparse(saturated)


def encode_query(text: str, ignore: Collection[str] = ()) -> SparseVector:
    """Sparse vector of a query: 1.0 per analysed term, ``QUERY_TITLE_WEIGHT`` per term in the title
    field, ``QUERY_SUBWORD_WEIGHT`` per sub-word; repeats summed. ``ignore``: analysed terms left out (their
    sub-words stay)."""
    terms = [term for term in analyze(text) if term not in ignore]
    weights: dict[int, float] = {}
    _add(weights, terms, 1.0)
    _add(weights, terms, QUERY_TITLE_WEIGHT, TITLE_FIELD)
    _add(weights, subwords(text), QUERY_SUBWORD_WEIGHT, SUBWORD_FIELD)
    return _to_sparse(weights)


def matched_terms(query: str, text: str) -> list[str]:
    """The analysed query terms (unique, in query order) that also occur in ``text``."""
    present = set(analyze(text))
    return [term for term in _unique_terms(query) if term in present]


@lru_cache(maxsize=256)
def _unique_terms(query: str) -> tuple[str, ...]:
    # One query, ten results: analysed once, not once a result.
    return tuple(dict.fromkeys(analyze(query)))
