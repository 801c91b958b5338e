"""French test documents made on the spot: PDFs (text, scanned, mixed), Office files, EPUB and images.

The tests and ``bench/attachments.py`` share them, so the measured text is the one the tests check. Every
writer knows the exact text it put in, which is what a character error rate is measured against.
"""

from __future__ import annotations

import io
import random
import zipfile
from functools import cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")  # Debian's fonts-dejavu-core (make test installs it)
FONT = FONT_DIR / "DejaVuSans.ttf"
SERIF = FONT_DIR / "DejaVuSerif.ttf"

# Three pages of French with what extractors get wrong: « œ », accents on capitals (« À », « É »),
# « ç », « ï », « ê », guillemets, an apostrophe, numbers with decimal commas.
PAGES = [
    "Le cœur du manuel : la taille des arbres fruitiers. À la fin de l'hiver, on coupe les branches "
    "mortes et l'on éclaircit le centre de l'arbre pour que la lumière atteigne chaque fruit. "
    "Un sécateur propre évite de propager les maladies d'une œuvre à l'autre.",
    "Élevage des abeilles : une ruche produit environ quinze kilogrammes de miel par saison. "
    "Les ouvrières récoltent le nectar des fleurs de tilleul et de châtaignier ; "
    "l'apiculteur vérifie le couvain chaque semaine au printemps, sans fumée excessive.",
    "Budget prévisionnel du comité des fêtes : la location de la salle coûte 450,50 euros, "
    "le traiteur propose un menu végétarien à 18 euros par personne. Noël approche : "
    "il faut réserver l'orchestre avant le 15 décembre, à Besançon.",
]


def french_text() -> str:
    return "\n".join(PAGES)


# --- PDFs ----------------------------------------------------------------------------------------------


def text_pdf(path: Path, pages: list[str] = PAGES) -> Path:
    """A digital PDF, one paragraph a page, in DejaVu Sans (a Unicode TrueType font: « œ » is embedded)."""
    from fpdf import FPDF

    pdf = _fpdf()
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    pdf.output(str(path))
    assert isinstance(pdf, FPDF)
    return path


def scanned_pdf(path: Path, pages: list[str] = PAGES, noisy: bool = False, crop: bool = False) -> Path:
    """An image-only PDF: each page rendered at 200 dpi, as a scanner would make it (no text layer);
    ``crop``: pages only as tall as their text (a strip: the tests' OCR stays quick)."""
    images = [page_image(text, noisy=noisy, crop=crop) for text in pages]
    images[0].save(path, save_all=True, append_images=images[1:], resolution=200.0)
    return path


def mixed_pdf(path: Path, pages: list[str] = PAGES, scanned: int = 1, crop: bool = False) -> Path:
    """Text pages with one scanned page (index ``scanned``) among them (``crop``: a strip-sized page)."""
    pdf = _fpdf()
    for index, text in enumerate(pages):
        image = page_image(text, crop=crop) if index == scanned else None
        pdf.add_page(format=(210, 210 * image.height / image.width) if crop and image else "A4")
        if image is not None:
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
            pdf.image(buffer, x=0, y=0, w=pdf.w, h=pdf.h)
        else:
            pdf.multi_cell(0, 8, text)
    pdf.output(str(path))
    return path


def many_page_pdf(path: Path, count: int) -> Path:
    """A long digital PDF (the page-count cap's test)."""
    pdf = _fpdf()
    for index in range(count):
        pdf.add_page()
        pdf.cell(0, 8, f"Page {index + 1} : relevé de compte.")
    pdf.output(str(path))
    return path


def long_pdf(path: Path, count: int) -> Path:
    """A long digital PDF with a paragraph a page (~3 chunks each): a big document to index."""
    pdf = _fpdf()
    for index in range(count):
        pdf.add_page()
        lines = (
            f"Le relevé {index}-{j} indique une dépense de {j * 3} euros pour la rubrique {j % 17}." for j in range(25)
        )
        pdf.multi_cell(0, 6, f"Page {index + 1}. " + " ".join(lines))
    pdf.output(str(path))
    return path


def _fpdf():
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", fname=str(FONT))
    pdf.set_font("DejaVu", size=12)
    return pdf


# --- Office files and EPUB -----------------------------------------------------------------------------


def docx(path: Path, paragraphs: list[str] = PAGES) -> Path:
    import docx as python_docx

    document = python_docx.Document()
    document.add_heading("Manuel du jardin", level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(str(path))
    return path


def pptx(path: Path, slides: list[str] = PAGES) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for index, text in enumerate(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[5])  # title only
        slide.shapes.title.text = f"Diapositive {index + 1}"
        box = slide.shapes.add_textbox(Inches(0.5), Inches(1.5), Inches(9), Inches(4))
        box.text_frame.word_wrap = True
        box.text_frame.text = text
    deck.save(str(path))
    return path


def odt(path: Path, paragraphs: list[str] = PAGES) -> Path:
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    document = OpenDocumentText()
    for text in paragraphs:
        document.text.addElement(P(text=text))
    document.save(str(path))
    return path


def odp(path: Path, slides: list[str] = PAGES) -> Path:
    from odf.draw import Frame, Page, TextBox
    from odf.opendocument import OpenDocumentPresentation
    from odf.style import MasterPage, PageLayout
    from odf.text import P

    document = OpenDocumentPresentation()
    layout = PageLayout(name="Mise")
    document.automaticstyles.addElement(layout)
    master = MasterPage(name="Standard", pagelayoutname=layout)
    document.masterstyles.addElement(master)
    for index, text in enumerate(slides):
        page = Page(name=f"p{index + 1}", masterpagename=master)
        frame = Frame(width="20cm", height="10cm", x="1cm", y="1cm")
        box = TextBox()
        box.addElement(P(text=text))
        frame.addElement(box)
        page.addElement(frame)
        document.presentation.addElement(page)
    document.save(str(path))
    return path


def epub(path: Path, chapters: list[str] = PAGES) -> Path:
    """A minimal EPUB 3 (mimetype first and stored, container, package, one XHTML a chapter)."""
    items = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>' for i in range(len(chapters))
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Manuel</dc:title>'
            f"<dc:language>fr</dc:language></metadata><manifest>{items}</manifest><spine>{spine}</spine></package>",
        )
        for i, text in enumerate(chapters):
            archive.writestr(
                f"OEBPS/c{i}.xhtml",
                '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body>'
                f"<p>{text}</p></body></html>",
            )
    return path


# --- images: what a scanner or a phone makes -------------------------------------------------------------


@cache
def _font(size: int, serif: bool = False) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(SERIF if serif else FONT), size)


def _wrap(text: str, font: ImageFont.FreeTypeFont, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        candidate = f"{line} {word}".strip()
        if font.getlength(candidate) <= width or not line:
            line = candidate
        else:
            lines.append(line)
            line = word
    return [*lines, line] if line else lines


def page_image(
    text: str, noisy: bool = False, size: tuple[int, int] = (1654, 2339), font_px: int = 36, crop: bool = False
) -> Image.Image:
    """An A4 page at 200 dpi holding ``text`` (12 pt ≈ 33 px), black on white; ``noisy``: a skewed, speckled
    scan; ``crop``: only the strip the text fills."""
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    font = _font(font_px, serif=noisy)
    y = 160
    for line in _wrap(text, font, size[0] - 300):
        draw.text((150, y), line, fill=0, font=font)
        y += int(font_px * 1.5)
    if crop:
        image = image.crop((0, 0, size[0], y + 120))
    if noisy:
        image = _scanned(image)
    return image


def _scanned(image: Image.Image, degrees: float = 1.5, seed: int = 27) -> Image.Image:
    """A slightly rotated page with salt-and-pepper speckles and a grey cast, as a cheap scanner gives."""
    rotated = image.rotate(degrees, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
    rng = random.Random(seed)
    pixels = rotated.load()
    width, height = rotated.size
    for _ in range(width * height // 400):
        pixels[rng.randrange(width), rng.randrange(height)] = rng.choice((0, 90, 200))
    return rotated.point(lambda v: 40 + v * 0.8).filter(ImageFilter.GaussianBlur(0.6))


def two_column_image(left: str, right: str) -> Image.Image:
    image = Image.new("L", (1654, 1400), 255)
    draw = ImageDraw.Draw(image)
    font = _font(34)
    for x, text in ((120, left), (880, right)):
        y = 150
        for line in _wrap(text, font, 650):
            draw.text((x, y), line, fill=0, font=font)
            y += 52
    return image


TABLE = [["Produit", "Quantité", "Prix"], ["Pommes reinettes", "12", "4,50 €"], ["Crème fraîche", "2", "3,20 €"]]


def table_image(rows: list[list[str]] = TABLE) -> Image.Image:
    image = Image.new("L", (1400, 120 + 90 * len(rows)), 255)
    draw = ImageDraw.Draw(image)
    font = _font(36)
    widths = [600, 300, 300]
    for r, row in enumerate(rows):
        y = 60 + r * 90
        x = 100
        for width, cell in zip(widths, row, strict=True):
            draw.rectangle((x, y, x + width, y + 90), outline=0, width=2)
            draw.text((x + 16, y + 24), cell, fill=0, font=font)
            x += width
    return image


def photo_image(text: str) -> Image.Image:
    """A phone photo of a printed sheet: colour, uneven light, a bit of blur, smaller text."""
    base = page_image(text, size=(1600, 900), font_px=34).convert("RGB")
    light = Image.linear_gradient("L").resize(base.size).point(lambda v: 170 + v // 4)
    tinted = Image.merge("RGB", (light, light.point(lambda v: v - 10), light.point(lambda v: v - 30)))
    photo = Image.composite(base, tinted, base.convert("L").point(lambda v: 255 if v > 128 else 0))
    return photo.filter(ImageFilter.GaussianBlur(0.8))


def save_png(image: Image.Image, path: Path) -> Path:
    image.save(path, format="PNG")
    return path


def huge_png(path: Path, side: int = 20_000) -> Path:
    """A white 1-bit PNG of ``side`` × ``side`` pixels (~90 KB on disk, 400 megapixels decoded), written
    row by row with zlib: Pillow would need seconds and 50 MB to make it."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\x00" + b"\xff" * ((side + 7) // 8)  # filter byte "none", then the row's bits
    packer = zlib.compressobj(9)
    data = b"".join(packer.compress(row * 1000) for _ in range(side // 1000)) + packer.flush()
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)  # 1 bit, greyscale
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b""))
    return path


def zip_bomb_docx(path: Path, megabytes: int = 40) -> Path:
    """A DOCX whose document.xml unpacks to ``megabytes`` MB of zeros (~40 KB on disk)."""
    source = docx(path)
    with zipfile.ZipFile(source, "a", zipfile.ZIP_DEFLATED) as archive, archive.open("word/bomb.xml", "w") as member:
        block = b"\x00" * (1 << 20)
        for _ in range(megabytes):
            member.write(block)
    return path


def encrypted_pdf(path: Path, source: Path) -> Path:
    import pypdf

    writer = pypdf.PdfWriter(clone_from=source)
    writer.encrypt(user_password="secret", owner_password="secret", algorithm="RC4-128")
    writer.write(path)
    return path
