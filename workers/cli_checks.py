"""Arguments the CLI refuses before any work: blank text, an out-of-range ``-k``, an empty date range, an
unknown conversation."""

from __future__ import annotations

from datetime import datetime

import click

from services.config import Settings

# Notes a search returns at most: its 100 candidate chunks per list rarely hold more distinct notes, and the
# MCP tools cap there too; more was cut silently.
MAX_K = 30
K_RANGE = click.IntRange(1, MAX_K)


class Refusal(click.ClickException):
    """A refusal said in French, like the rest of what the memory commands print (click says ``Error:``)."""

    def show(self, file: object = None) -> None:
        click.echo(f"Erreur : {self.format_message()}", err=True)


class UnknownThread(click.ClickException):
    exit_code = 2  # a usage mistake, as click's own; one line, no usage text


def not_blank(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """Callback of a text argument: a blank one (``search ""``) is a usage error, not a search for nothing."""
    if not " ".join(value).strip():
        raise click.BadParameter("is blank", ctx=ctx, param=param)
    return value


def day(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    """Callback of a ``YYYY-MM-DD`` option."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).astimezone()
    except ValueError:
        raise click.BadParameter(f"expected YYYY-MM-DD, got {value!r}", ctx=ctx, param=param) from None


def check_range(since: datetime | None, until: datetime | None) -> None:
    """``--until`` is exclusive: a range that does not end after it starts holds no day."""
    if since is not None and until is not None and until <= since:
        raise click.UsageError(
            f"empty date range: --since {since.date()} is not before --until {until.date()}",
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
            f"Conversation inconnue : {thread_id} (l'identifiant s'affiche après chaque réponse ; "
            "sans --thread, une nouvelle conversation commence)"
        )
