"""The real web app on a copy of the sample vault, with the catalog filled from it (no embedding needed:
pages read the catalog and the vault only). One app and one client for the whole session."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from litestar.testing import TestClient

from services import vault
from services.catalog import Catalog
from services.catalog.models import NoteRecord, NoteStatus
from services.config import Settings
from services.vault.models import ParsedNote
from tests.conftest import copy_sample_vault
from web.app import CSRF_COOKIE, create_app

RECORD_FIELDS = set(NoteRecord.model_fields) & set(ParsedNote.model_fields)  # what a note says of itself
# Extra notes the pages and the security tests rely on (the sample vault stays untouched).
EXTRA_NOTES = {
    "Sécurité/Note piégée.md": (
        "# Note piégée\n\n<script>document.title = 'pwned'</script>\n\n"
        '<img src="x" onerror="alert(1)">\n\n<a href="javascript:alert(2)">lien</a>\n\n'
        '[clic](javascript:alert(3)) <svg onload="alert(4)"></svg>\n'
    ),
    "Archives/Accueil.md": "# Accueil\n\nUne ancienne page d'accueil, homonyme de celle de la racine.\n",
    "obsirag/synapses/Atlas et Docker.md": (
        "---\ntype: synapse\ntags: [synapse]\n---\n# Atlas et Docker\n\n"
        "[[Projet Atlas]] s'appuie sur [[Docker Compose cheatsheet]] pour la base locale.\n"
    ),
    "obsirag/conversations/2026-11/Objectifs_Atlas_20261128_1000.md": (
        "---\ntitle: Objectifs Atlas\ntype: conversation\ntags: [conversation, obsirag]\n---\n"
        "# Objectifs Atlas\n\n## Quels sont les objectifs du projet Atlas ?\n\n"
        "Publier une carte des îlots de chaleur [1].\n\n*Provenance : Coffre*\n\n"
        "Sources :\n- [1] [[Projets/Projet Atlas#Objectifs|Projet Atlas]] (note principale)\n"
    ),
}


def fill_catalog(settings: Settings) -> Catalog:
    """What the indexer writes to the catalog (notes, links, resolution), without the vector store."""
    catalog = Catalog(settings.catalog_path)
    now = datetime.now(UTC)
    for path in vault.iter_vault_paths(settings.vault, []):
        note = vault.read_note(settings.vault, path, settings.max_file_bytes)
        fields = note.model_dump(include=RECORD_FIELDS)
        catalog.upsert_note(NoteRecord(**fields, status=NoteStatus.INDEXED, chunk_count=1, indexed_at=now))
        catalog.replace_links(note.path, note.links)
    root = settings.vault
    attachments = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.suffix != ".md"]
    catalog.resolve_links(attachments)
    return catalog


@pytest.fixture(scope="session")
def web_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("web")
    target = root / "vault"
    copy_sample_vault(target)
    for rel, text in EXTRA_NOTES.items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_text(text, encoding="utf-8")
    (root / "outside").mkdir()
    (root / "outside" / "secret.md").write_text("# Secret\n\nhors du coffre\n", encoding="utf-8")
    (root / "outside" / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (target / "Lien sortant.md").symlink_to(root / "outside" / "secret.md")
    (target / "Dehors").symlink_to(root / "outside", target_is_directory=True)
    # A Redis URL nobody listens on: the pages must cope with the system being down.
    return Settings(vault=target, data_dir=root / "data", redis_url=f"unix://{root}/no-redis.sock")


@pytest.fixture(scope="session")
def web_catalog(web_settings: Settings) -> Iterator[Catalog]:
    catalog = fill_catalog(web_settings)
    yield catalog
    catalog.close()


@pytest.fixture(scope="session")
def client(web_settings: Settings, web_catalog: Catalog) -> Iterator[TestClient]:
    with TestClient(create_app(web_settings)) as test_client:
        yield test_client


@pytest.fixture
def csrf(client: TestClient) -> dict[str, str]:
    """Headers a page's htmx requests carry: the CSRF token matching the cookie."""
    client.get("/")
    return {"x-csrftoken": client.cookies[CSRF_COOKIE]}


def html(client: TestClient, url: str, status: int = 200) -> str:
    response = client.get(url, headers={"accept": "text/html"})
    assert response.status_code == status, (url, response.status_code, response.text[:500])
    return response.text
