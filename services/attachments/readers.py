"""One reader per format, each returning the document's pages in order (libraries chosen in docs/performance.md).

PDF pages go through ``pdf.read_pdf`` (text layer, else OCR); this module holds the formats without pages
to render: Office files (python-docx, python-pptx, odfpy) and EPUB (the spine's XHTML through lxml).
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path

from lxml import etree, html

from services.attachments.models import PageText

_OPF = "{http://www.idpf.org/2007/opf}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"


def read_docx(file: Path) -> list[PageText]:
    """A Word document has no stable pages: one "page" of its paragraphs and table cells, in order."""
    import docx

    document = docx.Document(str(file))
    parts = [p.text for p in document.paragraphs if p.text.strip()]
    for table in document.tables:
        parts.extend(" | ".join(cell.text.strip() for cell in row.cells) for row in table.rows)
    return [PageText(number=1, text="\n\n".join(parts))]


def read_pptx(file: Path) -> list[PageText]:
    """One page per slide, numbered as PowerPoint numbers them; text frames, tables and speaker notes."""
    from pptx import Presentation

    pages = []
    for number, slide in enumerate(Presentation(str(file)).slides, start=1):
        parts = [
            shape.text_frame.text for shape in slide.shapes if shape.has_text_frame and shape.text_frame.text.strip()
        ]
        for shape in slide.shapes:
            if shape.has_table:
                parts.extend(" | ".join(c.text for c in row.cells) for row in shape.table.rows)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            parts.append(slide.notes_slide.notes_text_frame.text)
        pages.append(PageText(number=number, text="\n\n".join(p for p in parts if p.strip())))
    return pages


def read_odf(file: Path) -> list[PageText]:
    """ODT: one page of its headings and paragraphs; ODP: one page per slide."""
    from odf import draw, teletype, text
    from odf.opendocument import load

    document = load(str(file))
    slides = document.getElementsByType(draw.Page)
    if not slides:
        blocks = [
            teletype.extractText(e) for e in document.text.childNodes if e.qname[1] in ("h", "p", "list", "table")
        ]
        return [PageText(number=1, text="\n\n".join(b for b in blocks if b.strip()))]
    pages = []
    for number, slide in enumerate(slides, start=1):
        lines = [teletype.extractText(p) for p in slide.getElementsByType(text.P)]
        pages.append(PageText(number=number, text="\n\n".join(line for line in lines if line.strip())))
    return pages


def read_epub(file: Path) -> list[PageText]:
    """One page per chapter of the spine, in reading order."""
    with zipfile.ZipFile(file) as archive:
        chapters = _spine(archive)
        pages = []
        for number, name in enumerate(chapters, start=1):
            root = html.fromstring(archive.read(name))
            blocks = [" ".join(e.text_content().split()) for e in root.iter("p", "h1", "h2", "h3", "h4", "li", "td")]
            text = "\n\n".join(b for b in blocks if b) or " ".join(root.text_content().split())
            pages.append(PageText(number=number, text=text))
    return pages


def _spine(archive: zipfile.ZipFile) -> list[str]:
    parser = etree.XMLParser(resolve_entities=False, no_network=True)  # never an external entity
    container = etree.fromstring(archive.read("META-INF/container.xml"), parser)
    opf_path = container.find(f".//{_CONTAINER}rootfile").get("full-path")
    package = etree.fromstring(archive.read(opf_path), parser)
    folder = posixpath.dirname(opf_path)
    manifest = {item.get("id"): item.get("href") for item in package.iter(f"{_OPF}item")}
    refs = [ref.get("idref") for ref in package.iter(f"{_OPF}itemref")]
    return [posixpath.normpath(posixpath.join(folder, manifest[r])) for r in refs if r in manifest]
