"""Arguments the CLI refuses before any work: blank text, an out-of-range ``-k``, an empty date range, an
unknown conversation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click

from services.config import Settings
from workers.cli_text import LANG, tr

# Notes a search returns at most: its 100 candidate chunks per list rarely hold more distinct notes, and the
# MCP tools cap there too; more was cut silently.
MAX_K = 30


class _Range(click.IntRange):
    """click's ``IntRange``, its refusal worded in the CLI's language."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            if LANG == "en":
                raise
            self.fail(f"{value!r} n'est pas un nombre de {self.min} à {self.max}", param, ctx)


K_RANGE = _Range(1, MAX_K)


class UnknownThread(click.ClickException):
    exit_code = 2  # a usage mistake, as click's own; one line, no usage text


def not_blank(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """Callback of a text argument: a blank one (``search ""``) is a usage error, not a search for nothing."""
    if not " ".join(value).strip():
        raise click.BadParameter(tr("vide", "is blank"), ctx=ctx, param=param)
    return value


def day(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    """Callback of a ``YYYY-MM-DD`` option."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).astimezone()
    except ValueError:
        expected = tr(f"attendu AAAA-MM-JJ, reçu {value!r}", f"expected YYYY-MM-DD, got {value!r}")
        raise click.BadParameter(expected, ctx=ctx, param=param) from None


def check_range(since: datetime | None, until: datetime | None) -> None:
    """``--until`` is exclusive: a range that does not end after it starts holds no day."""
    if since is not None and until is not None and until <= since:
        raise click.UsageError(
            tr(
                f"période vide : --since {since.date()} n'est pas avant --until {until.date()}",
                f"empty date range: --since {since.date()} is not before --until {until.date()}",
            ),
            ctx=click.get_current_context(silent=True),
        )


def check_thread(settings: Settings, thread_id: str | None) -> None:
    """Refuse an unknown ``--thread`` before the system is asked anything (it was a traceback)."""
    if not thread_id:
        return
    from services.catalog import Catalog

    with Catalog(settings.catalog_path) as catalog:
        known = catalog.get_thread(thread_id) is not None
    if not known:
        raise UnknownThread(
            tr(
                f"Conversation inconnue : {thread_id} (l'identifiant s'affiche après chaque réponse ; "
                "sans --thread, une nouvelle conversation commence)",
                f"Unknown conversation: {thread_id} (its id is printed after each answer; without --thread, "
                "a new conversation starts)",
            )
        )
