"""Secrets out of any text before it reaches a model: API keys and tokens, password lines, IBANs, card
numbers (Luhn-checked), e-mail addresses and phone numbers each become a placeholder.

Redaction errs on the side of hiding: a long random-looking string is taken for a token. IBANs are
checked with their mod-97 digits and cards with Luhn, so ordinary numbers (dates, amounts) stay.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

API_KEY = "[CLÉ_API]"
PASSWORD = "[MOT_DE_PASSE]"
IBAN = "[IBAN]"
CARD = "[CARTE_BANCAIRE]"
EMAIL = "[EMAIL]"
PHONE = "[TÉLÉPHONE]"

_SECRET_WORDS = r"mot\s+de\s+passe|mdp|password|passwd|pwd|passphrase|pass|code\s+pin|pin|code\s+secret|secret"
# "mot de passe : hunter2", "password = x", "MDP wifi: x": everything after the separator goes.
_PASSWORD_LINE = re.compile(
    rf"(?im)^(?P<head>.*?\b(?:{_SECRET_WORDS})\b[^:=\n]{{0,30}}?(?:\s*[:=]|\s+(?:est|is))\s*)(?P<value>\S.*)$"
)
_KNOWN_TOKENS = re.compile(
    r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|hf_[A-Za-z0-9]{20,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
)
_KEY_ASSIGNMENT = re.compile(
    r"(?i)(?P<head>\b(?:api[\s_-]?key|cl[ée]\s+(?:d'\s*)?api|access[\s_-]?key|secret[\s_-]?key|token|jeton"
    r"|bearer|authorization)\b\s*[:=]?\s*)(?P<value>[A-Za-z0-9_\-./+=]{12,})"
)
# Long strings mixing letters and digits look like keys whatever their prefix.
_RANDOM = re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}\b")
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_PHONE = re.compile(
    r"(?<![\w+])(?:(?:\+|00)\d{1,3}[\s.-]?(?:\(0\)\s?)?\d(?:[\s.-]?\d){7,11}|0[1-9](?:[\s.-]?\d{2}){4})(?!\d)"
)


@dataclass
class Redacted:
    text: str
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def redact(text: str) -> Redacted:
    """``text`` with every secret replaced by its placeholder, and how many of each were found."""
    result = Redacted(text)
    for name, step in _STEPS:
        result.text, found = step(result.text)
        if found:
            result.counts[name] += found
    return result


def redact_text(text: str) -> str:
    return redact(text).text


def redact_secrets(text: str) -> str:
    """``text`` without its credentials and payment numbers (keys and tokens, passwords, IBANs, cards): what
    every prompt loses before a model reads it. E-mail addresses and phone numbers stay — a user asks their
    vault for them — and only memory's consolidation, which keeps facts for good, hides them too."""
    for name, step in _STEPS:
        if name not in PERSONAL:
            text, _found = step(text)
    return text


def _password_lines(text: str) -> tuple[str, int]:
    return _PASSWORD_LINE.subn(lambda m: m["head"] + PASSWORD if m["value"] != PASSWORD else m[0], text)


def _keys(text: str) -> tuple[str, int]:
    text, known = _KNOWN_TOKENS.subn(API_KEY, text)
    text, assigned = _KEY_ASSIGNMENT.subn(lambda m: m["head"] + API_KEY, text)
    text, random = _RANDOM.subn(API_KEY, text)
    return text, known + assigned + random


def _checked(
    pattern: re.Pattern[str], valid: Callable[[str], bool], placeholder: str
) -> Callable[[str], tuple[str, int]]:
    def step(text: str) -> tuple[str, int]:
        count = 0

        def replace(match: re.Match[str]) -> str:
            nonlocal count
            if not valid(match[0]):
                return match[0]
            count += 1
            return placeholder

        return pattern.sub(replace, text), count

    return step


def iban_valid(candidate: str) -> bool:
    """ISO 13616 mod-97 check."""
    compact = candidate.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    digits = "".join(str(int(c, 36)) for c in moved)
    return int(digits) % 97 == 1


def luhn_valid(candidate: str) -> bool:
    digits = [int(c) for c in candidate if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, digit in enumerate(reversed(digits)):
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _plain(pattern: re.Pattern[str], placeholder: str) -> Callable[[str], tuple[str, int]]:
    return lambda text: pattern.subn(placeholder, text)


PERSONAL = frozenset({"email", "phone"})  # personal data rather than secrets (see ``redact_secrets``)
# Order matters: password lines first (their value may be anything), IBAN and cards before phones.
_STEPS: list[tuple[str, Callable[[str], tuple[str, int]]]] = [
    ("password", _password_lines),
    ("email", _plain(_EMAIL, EMAIL)),
    ("iban", _checked(_IBAN, iban_valid, IBAN)),
    ("card", _checked(_CARD, luhn_valid, CARD)),
    ("api_key", _keys),
    ("phone", _plain(_PHONE, PHONE)),
]
