"""``obsirag clip URL``: a web page clipped into the vault by the running system, searchable when it returns."""

from __future__ import annotations

import json
import time
from datetime import datetime

import click

from services.config import Settings
from workers.cli_options import common_options
from workers.cli_text import JSON_HELP, Command, example, tr

INDEX_WAIT_SECONDS = 120.0


@click.command(
    cls=Command,
    help=tr(
        "Importe une page web dans le coffre (obsirag/clips/AAAA-MM/) : son texte en Markdown, ses images à côté ; "
        "rend la main une fois la page indexée. La même adresse met à jour son clip.",
        "Clip a web page into the vault (obsirag/clips/YYYY-MM/): its text as Markdown, its images beside it; "
        "returns once it is indexed. The same URL updates its clip.",
    ),
    epilog=example("obsirag clip https://fr.wikipedia.org/wiki/Lombricompostage"),
)
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@common_options
def clip(settings: Settings, url: str, as_json: bool) -> None:
    from services.clipping.clip import ClipError, clip_url

    try:
        clipped = clip_url(settings, url.strip(), datetime.now().astimezone())
    except ClipError as exc:
        raise click.ClickException(str(exc)) from None
    indexed = _wait_indexed(settings, clipped.relative)
    if as_json:
        data = {
            "path": clipped.relative,
            "title": clipped.title,
            "updated": clipped.updated,
            "images": clipped.images,
            "failed_images": clipped.failed_images,
            "indexed": indexed,
        }
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    verb = tr("mis à jour", "updated") if clipped.updated else tr("importé", "clipped")
    images = tr(f"{clipped.images} image(s)", f"{clipped.images} image(s)")
    if clipped.failed_images:
        images += tr(
            f", {len(clipped.failed_images)} gardée(s) en lien", f", {len(clipped.failed_images)} kept as links"
        )
    click.echo(f"{verb} : {clipped.relative} ({images})")
    if not indexed:
        click.echo(tr("pas encore indexé : `obsirag up` l'indexera.", "not indexed yet: `obsirag up` will index it."))


def _wait_indexed(settings: Settings, relative: str) -> bool:
    """True once the running system indexed this version of the file; False at once when it is not running."""
    from services.catalog import Catalog
    from services.catalog.models import NoteStatus
    from services.system import SystemClient

    if not SystemClient(settings).running():
        return False
    mtime = (settings.vault / relative).stat().st_mtime
    catalog = Catalog(settings.catalog_path)
    deadline = time.monotonic() + INDEX_WAIT_SECONDS
    while time.monotonic() < deadline:
        record = catalog.get_note(relative)
        if record is not None and record.status == NoteStatus.INDEXED and abs(record.mtime - mtime) < 1e-3:
            return True
        time.sleep(0.2)  # the watcher's debounce and the indexer's batch: the catalog is the only word on it
    return False
