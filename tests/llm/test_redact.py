"""Secrets become placeholders before any model call; ordinary numbers stay."""

from __future__ import annotations

import pytest

from services.llm.redact import PERSONAL, iban_valid, luhn_valid, redact, redact_secrets

SECRETS = {
    "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12": "[CLÉ_API]",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789": "[CLÉ_API]",
    "AKIAIOSFODNN7EXAMPLE": "[CLÉ_API]",
    "FR76 3000 6000 0112 3456 7890 189": "[IBAN]",
    "DE89370400440532013000": "[IBAN]",
    "4111 1111 1111 1111": "[CARTE_BANCAIRE]",
    "5500-0000-0000-0004": "[CARTE_BANCAIRE]",
    "sophie.martin@example.fr": "[EMAIL]",
    "06 12 34 56 78": "[TÉLÉPHONE]",
    "+33 6 12 34 56 78": "[TÉLÉPHONE]",
}


@pytest.mark.parametrize(("secret", "placeholder"), SECRETS.items())
def test_each_kind_of_secret_becomes_its_placeholder(secret: str, placeholder: str) -> None:
    result = redact(f"Note : {secret} (à garder)")
    assert secret not in result.text and placeholder in result.text and result.total == 1


@pytest.mark.parametrize(
    "line",
    [
        "mot de passe : Tr0ub4dor&3",
        "Mot de passe du wifi: correct horse",
        "password = hunter2!",
        "MDP banque : 1234",
        "mon mot de passe est azerty99",
        "the password is letmein",
    ],
)
def test_password_lines_lose_their_value(line: str) -> None:
    value = line.split()[-1]
    result = redact(f"Courses\n{line}\nPain")
    assert value not in result.text and "[MOT_DE_PASSE]" in result.text
    assert result.text.startswith("Courses\n") and result.text.endswith("\nPain")


def test_key_assignments_and_long_random_strings_are_hidden() -> None:
    text = (
        "api_key=abcd1234efgh5678ijkl et token: Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg et "
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    )
    result = redact(text)
    assert "abcd1234" not in result.text and "Zm9v" not in result.text and "9f86d0" not in result.text


def test_ordinary_numbers_dates_and_words_stay() -> None:
    text = "Réunion le 12/03/2026 à 14h30, budget 12 000 €, commande 2026031412, carte 4970 1012 3456 7890, page 42."
    assert redact(text).text == text and redact(text).total == 0


def test_checksums() -> None:
    assert iban_valid("FR7630006000011234567890189") and not iban_valid("FR7630006000011234567890188")
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")


def test_every_prompt_loses_its_secrets_but_keeps_the_contacts_a_user_asks_for() -> None:
    text = " ; ".join(SECRETS) + "\nmot de passe : Tr0ub4dor&3"
    kept = redact_secrets(text)
    assert "Tr0ub4dor" not in kept and "[MOT_DE_PASSE]" in kept
    for secret, placeholder in SECRETS.items():
        personal = placeholder in {"[EMAIL]", "[TÉLÉPHONE]"}
        assert (secret in kept) == personal, secret
    assert {"email", "phone"} == PERSONAL
