"""Which vault files are attachments, of which kind, and how large each kind may be."""

from __future__ import annotations

from services.config import DEFAULT_ATTACHMENT_MB, Settings

KINDS = {
    "pdf": "pdf",
    "docx": "docx",
    "pptx": "pptx",
    "odt": "odf",
    "odp": "odf",
    "epub": "epub",
    **dict.fromkeys(("png", "jpg", "jpeg", "webp", "tif", "tiff"), "image"),
}
# The size caps are per family (``OBSIRAG_ATTACHMENT_MAX_MB``): Office files share one.
SIZE_FAMILY = {"pdf": "pdf", "docx": "office", "pptx": "office", "odf": "office", "epub": "epub", "image": "image"}


def extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def attachment_kind(path: str, extensions: list[str]) -> str | None:
    """The reader's kind for ``path`` when its extension is configured and known, else None."""
    ext = extension(path)
    return KINDS.get(ext) if ext in extensions else None


def max_bytes(kind: str, settings: Settings) -> int:
    family = SIZE_FAMILY[kind]
    return int(settings.attachment_max_mb.get(family, DEFAULT_ATTACHMENT_MB[family]) * 1024 * 1024)
