"""Render a slip-opinion PDF from a small text source (default: the Groff v. DeJoy reconstruction).

The real slip opinion cannot be fetched offline, so the mirror serves a PDF generated here
from `scripts/mirrors/src/court/groff-opinion.txt` (the markup is described at the top of
that file). The layout imitates a Supreme Court slip opinion: Letter pages, a first-page head
("(Slip Opinion)  OCTOBER TERM, 2022  1"), alternating running heads ("2  GROFF v. DeJOY" /
"Cite as: 600 U. S. ____ (2023)  3"), a section label under every head, and body text that is
justified and hyphenated at line ends, so that text extraction shows "accom-\\nmodation"
breaks the way the real file does.

Fonts are reportlab's built-in Times faces (WinAnsi covers – — ’ “ ” §), so nothing depends
on the fonts installed on the machine. `invariant=1` fixes the dates and document ID: the same
source always gives the same bytes.

Usage: python scripts/make_opinion_pdf.py [--source FILE] --out FILE.pdf
Imports reportlab only; no Playwright, no aiohttp.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from reportlab.lib.pagesizes import letter
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

DEFAULT_SOURCE = Path(__file__).resolve().parent / "mirrors" / "src" / "court" / "groff-opinion.txt"

PAGE_WIDTH, PAGE_HEIGHT = letter
TEXT_WIDTH = 336.0  # a slip opinion's narrow column (about 4.7 in)
LEFT = (PAGE_WIDTH - TEXT_WIDTH) / 2
HEAD_Y = PAGE_HEIGHT - 72
LABEL_Y = HEAD_Y - 15
BODY_TOP = LABEL_Y - 24
BODY_BOTTOM = 84
INDENT = 14.0

ROMAN, ITALIC, BOLD = "Times-Roman", "Times-Italic", "Times-Bold"


@dataclass(frozen=True)
class Style:
    size: float
    leading: float
    roman: str = ROMAN
    italic: str = ITALIC


BODY = Style(12.0, 15.0)
NOTE = Style(10.0, 12.0)
CENTER = Style(12.0, 15.0)
CENTER_BOLD = Style(12.0, 15.0, roman=BOLD, italic="Times-BoldItalic")
CENTER_SMALL = Style(10.5, 13.0)
HEAD = Style(11.0, 13.0)


# ---------------------------------------------------------------- source model


@dataclass
class Block:
    kind: str  # paragraph | note | center | rule | space
    text: str = ""
    style: Style = BODY
    indent: bool = True
    keep: bool = False
    points: float = 0.0


@dataclass
class Part:
    label: str
    first_head_left: str = ""
    first_head_center: str = ""
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Document:
    meta: dict[str, str] = field(default_factory=dict)
    even_head: str = ""
    odd_head: str = ""
    parts: list[Part] = field(default_factory=list)


DIRECTIVE = re.compile(r"^\.[a-z]")


def parse_source(text: str) -> Document:
    """Read the directive markup (see the source file's header) into a Document."""
    doc = Document()
    part: Part | None = None
    pending: Block | None = None  # a paragraph collecting its text lines

    def close_pending() -> None:
        nonlocal pending
        if pending is not None:
            if not pending.text.strip():
                raise ValueError(f"empty .{pending.kind} paragraph in part {part.label if part else '?'}")
            pending.text = " ".join(pending.text.split())
            pending = None

    def current_part(directive: str) -> Part:
        if part is None:
            raise ValueError(f"{directive} before the first .part")
        return part

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if line.startswith("#"):
            continue
        if not line.strip():
            close_pending()
            continue
        if not DIRECTIVE.match(line):  # ". . ." (an ellipsis) may start a text line
            if pending is None:
                raise ValueError(f"line {number}: text outside a paragraph: {line!r}")
            pending.text += " " + line
            continue
        close_pending()
        directive, _, rest = line.partition(" ")
        rest = rest.strip()
        if directive == ".meta":
            key, _, value = rest.partition(" ")
            doc.meta[key] = value.strip()
        elif directive == ".even-head":
            doc.even_head = rest
        elif directive == ".odd-head":
            doc.odd_head = rest
        elif directive == ".part":
            part = Part(label=rest)
            doc.parts.append(part)
        elif directive == ".first-head":
            left, _, center = rest.partition("|")
            current_part(directive).first_head_left = left.strip()
            current_part(directive).first_head_center = center.strip()
        elif directive in (".center", ".center-bold", ".center-small"):
            style = {".center": CENTER, ".center-bold": CENTER_BOLD, ".center-small": CENTER_SMALL}[directive]
            current_part(directive).blocks.append(Block("center", rest, style))
        elif directive == ".rule":
            current_part(directive).blocks.append(Block("rule"))
        elif directive == ".space":
            current_part(directive).blocks.append(Block("space", points=float(rest)))
        elif directive == ".note":
            pending = Block("note", "", NOTE, indent=False)
            current_part(directive).blocks.append(pending)
        elif directive == ".p":
            options = set(rest.split())
            unknown = options - {"noindent", "keep"}
            if unknown:
                raise ValueError(f"line {number}: unknown .p option(s) {sorted(unknown)}")
            pending = Block("paragraph", "", BODY, indent="noindent" not in options, keep="keep" in options)
            current_part(directive).blocks.append(pending)
        else:
            raise ValueError(f"line {number}: unknown directive {directive!r}")
    close_pending()
    if not doc.parts:
        raise ValueError("the source has no .part")
    return doc


# ---------------------------------------------------------------- words and hyphenation


@dataclass(frozen=True)
class Piece:
    text: str
    italic: bool


Word = tuple[Piece, ...]


def split_words(text: str) -> list[Word]:
    """Split marked-up text into words; `*...*` toggles italic, possibly across spaces."""
    words: list[Word] = []
    italic = False
    current: list[Piece] = []
    buffer = ""

    def flush_piece() -> None:
        nonlocal buffer
        if buffer:
            current.append(Piece(buffer, italic))
            buffer = ""

    for char in text:
        if char == "*":
            flush_piece()
            italic = not italic
        elif char == " ":
            flush_piece()
            if current:
                words.append(tuple(current))
                current = []
        else:
            buffer += char
    flush_piece()
    if current:
        words.append(tuple(current))
    if italic:
        raise ValueError(f"unbalanced '*' in: {text[:60]!r}")
    return words


def font_of(piece: Piece, style: Style) -> str:
    return style.italic if piece.italic else style.roman


def word_width(word: Word, style: Style) -> float:
    return sum(stringWidth(p.text, font_of(p, style), style.size) for p in word)


VOWELS = set("aeiouy")
# Conservative rules (a wrong break reads worse than a loose line): the word list first,
# then a break before a few reliable suffixes and between doubled consonants.
HYPHENATED_WORDS = {
    "accommodation": "ac-com-mo-da-tion",
    "accommodations": "ac-com-mo-da-tions",
    "accommodate": "ac-com-mo-date",
    "accommodated": "ac-com-mo-dated",
    "accommodating": "ac-com-mo-dat-ing",
    "religious": "re-li-gious",
    "religion": "re-li-gion",
    "business": "busi-ness",
    "businesses": "busi-nesses",
    "particular": "par-tic-u-lar",
    "substantial": "sub-stan-tial",
    "substantially": "sub-stan-tially",
    "increased": "in-creased",
    "relation": "re-la-tion",
    "employer": "em-ployer",
    "employers": "em-ployers",
    "employee": "em-ployee",
    "employees": "em-ployees",
    "employment": "em-ploy-ment",
    "conduct": "con-duct",
    "granting": "grant-ing",
    "requires": "re-quires",
    "required": "re-quired",
    "hardship": "hard-ship",
    "certiorari": "cer-tio-rari",
    "deliveries": "de-liv-er-ies",
    "coworkers": "co-work-ers",
    "discipline": "dis-ci-pline",
    "discrimination": "dis-crim-i-na-tion",
    "opportunity": "op-por-tu-nity",
    "reasonable": "rea-son-able",
    "reasonableness": "rea-son-able-ness",
    "reasonably": "rea-son-ably",
    "understanding": "un-der-stand-ing",
    "understood": "un-der-stood",
    "consideration": "con-sid-er-a-tion",
    "considered": "con-sid-ered",
    "consider": "con-sider",
    "ordinary": "or-di-nary",
    "seniority": "se-nior-ity",
    "concluding": "con-clud-ing",
    "concluded": "con-cluded",
    "arrangements": "ar-range-ments",
    "opinion": "opin-ion",
    "resigned": "re-signed",
    "asserting": "as-sert-ing",
    "amended": "amend-ed",
    "progressive": "pro-gres-sive",
    "assessment": "as-sess-ment",
    "precedent": "prec-e-dent",
    "statutory": "stat-u-tory",
    "management": "man-age-ment",
    "performance": "per-for-mance",
    "unjustifiable": "un-jus-ti-fi-able",
    "collective": "col-lec-tive",
    "animosity": "an-i-mos-ity",
    "appropriate": "ap-pro-pri-ate",
    "established": "es-tab-lished",
    "establish": "es-tab-lish",
    "codified": "cod-i-fied",
    "formulation": "for-mu-la-tion",
    "observance": "ob-ser-vance",
    "demonstrates": "dem-on-strates",
    "guidelines": "guide-lines",
    "inconvenience": "in-con-ve-nience",
    "expenditures": "ex-pen-di-tures",
    "principally": "prin-ci-pally",
    "contractual": "con-trac-tual",
    "interpreted": "in-ter-preted",
    "clarified": "clar-i-fied",
    "clarification": "clar-i-fi-ca-tion",
    "practical": "prac-ti-cal",
    "application": "ap-pli-ca-tion",
    "available": "avail-able",
    "irrelevant": "ir-rel-e-vant",
    "separately": "sep-a-rately",
    "facilitate": "fa-cil-i-tate",
    "facilitating": "fa-cil-i-tat-ing",
    "redistributed": "re-dis-trib-uted",
    "agreement": "agree-ment",
    "requirement": "re-quire-ment",
    "conversion": "con-ver-sion",
}
SUFFIXES = ("tion", "tions", "sion", "sions", "ment", "ments", "ness", "able", "ible", "ful", "less")
DOUBLED = {c * 2 for c in "bcdfgklmnprstz"}


def hyphenation_points(core: str) -> list[int]:
    """Positions inside an all-letter word where a hyphen may go."""
    lower = core.lower()
    if lower in HYPHENATED_WORDS:
        points, position = [], 0
        for syllable in HYPHENATED_WORDS[lower].split("-")[:-1]:
            position += len(syllable)
            points.append(position)
    else:
        points = []
        for suffix in SUFFIXES:
            if lower.endswith(suffix):
                points.append(len(lower) - len(suffix))
        if lower.endswith("ing") and len(lower) >= 7:
            stem = len(lower) - 3
            # swap-ping, but grant-ing
            points.append(stem - 1 if lower[stem - 2 : stem] in DOUBLED else stem)
        for i in range(2, len(lower) - 2):
            if lower[i - 1 : i + 1] in DOUBLED and lower[i - 2] in VOWELS and lower[i + 1] in VOWELS:
                points.append(i)  # com-mon, pos-sible
    return sorted(p for p in set(points) if p >= 2 and len(core) - p >= 3)


# A word of at least six letters, capitalised or not (never all capitals), with punctuation around it.
WORD_CORE = re.compile(r"^(?P<lead>[^A-Za-z]*)(?P<core>[A-Za-z][a-z]{5,})(?P<tail>[^A-Za-z]*)$")


def hyphenate(word: Word, style: Style, room: float) -> tuple[Word, Word] | None:
    """Split `word` as `head-` + `tail` with the longest head that fits in `room` points."""
    if len(word) != 1:
        return None  # mixed-font words are never split
    piece = word[0]
    match = WORD_CORE.match(piece.text)
    if not match:
        return None  # capitals, numbers, compounds with hyphens or dashes stay whole
    lead, core = match["lead"], match["core"]
    font = font_of(piece, style)
    for point in reversed(hyphenation_points(core)):
        head = lead + core[:point] + "-"
        if stringWidth(head, font, style.size) <= room:
            tail = core[point:] + match["tail"]
            return (Piece(head, piece.italic),), (Piece(tail, piece.italic),)
    return None


@dataclass
class Line:
    words: list[Word]
    natural: float  # width with plain spaces
    last: bool = False  # the last line of a paragraph is not stretched
    hyphenated: bool = False  # ends with the head of a split word


def break_lines(words: list[Word], style: Style, width: float, first_indent: float = 0.0) -> list[Line]:
    """Greedy line breaking; an overflowing word is hyphenated when a head of it fits."""
    space = stringWidth(" ", style.roman, style.size)
    lines: list[Line] = []
    current: list[Word] = []
    used = 0.0
    queue = list(words)
    while queue:
        word = queue.pop(0)
        available = width - (first_indent if not lines else 0.0)
        extra = (space if current else 0.0) + word_width(word, style)
        if used + extra <= available:
            current.append(word)
            used += extra
            continue
        room = available - used - (space if current else 0.0)
        split = hyphenate(word, style, room) if room > 0 else None
        if split:
            head, tail = split
            current.append(head)
            used += (space if len(current) > 1 else 0.0) + word_width(head, style)
            queue.insert(0, tail)
        elif not current:  # a word wider than the line: place it alone
            current.append(word)
            used = word_width(word, style)
        else:
            queue.insert(0, word)
        lines.append(Line(current, used, hyphenated=bool(split)))
        current, used = [], 0.0
    if current:
        lines.append(Line(current, used))
    if lines:
        lines[-1].last = True
    return lines


# ---------------------------------------------------------------- page writer


class PageWriter:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.buffer = io.BytesIO()
        self.canvas = canvas.Canvas(self.buffer, pagesize=letter, invariant=1, pageCompression=1)
        self.canvas.setTitle(doc.meta.get("title", ""))
        self.canvas.setSubject(doc.meta.get("subject", ""))
        self.canvas.setAuthor(doc.meta.get("author", ""))
        self.canvas.setCreator("scripts/make_opinion_pdf.py")
        self.part: Part | None = None
        self.page_number = 0
        self.y = BODY_TOP
        self.page_open = False

    @staticmethod
    def _words_out(drawn, words: list[Word], style: Style) -> None:
        """Append words to a text object with real space characters between them."""
        for word_index, word in enumerate(words):
            for piece_index, piece in enumerate(word):
                drawn.setFont(font_of(piece, style), style.size)
                prefix = " " if word_index and piece_index == 0 else ""
                drawn.textOut(prefix + piece.text)

    # heads -----------------------------------------------------------
    def _line_of_segments(self, y: float, segments: list[tuple[float, str]], style: Style) -> None:
        """Draw several pieces of one baseline in a single text object (read as one line)."""
        drawn = self.canvas.beginText()
        for x, text in segments:
            drawn.setTextOrigin(x, y)
            self._words_out(drawn, split_words(text), style)
        self.canvas.drawText(drawn)

    def _width(self, text: str, style: Style) -> float:
        words = split_words(text)
        space = stringWidth(" ", style.roman, style.size)
        return sum(word_width(w, style) for w in words) + space * max(len(words) - 1, 0)

    def _center_x(self, text: str, style: Style) -> float:
        return LEFT + (TEXT_WIDTH - self._width(text, style)) / 2

    def _centered(self, y: float, text: str, style: Style) -> None:
        self._line_of_segments(y, [(self._center_x(text, style), text)], style)

    def new_page(self) -> None:
        assert self.part is not None
        if self.page_open:
            self.canvas.showPage()
        self.page_number += 1
        self.page_open = True
        number = str(self.page_number)
        right = (LEFT + TEXT_WIDTH - stringWidth(number, HEAD.roman, HEAD.size), number)
        if self.page_number == 1:
            left, center = self.part.first_head_left, self.part.first_head_center
            segments = [(LEFT, left)] if left else []
            segments += [(self._center_x(center, HEAD), center), right]
        elif self.page_number % 2 == 0:
            segments = [(LEFT, number), (self._center_x(self.doc.even_head, HEAD), self.doc.even_head)]
        else:
            segments = [(self._center_x(self.doc.odd_head, HEAD), self.doc.odd_head), right]
        self._line_of_segments(HEAD_Y, segments, HEAD)
        self._centered(LABEL_Y, self.part.label, HEAD)
        self.y = BODY_TOP

    def start_part(self, part: Part) -> None:
        self.part = part
        self.page_number = 0
        self.new_page()

    # body ------------------------------------------------------------
    def need(self, height: float) -> None:
        if self.y - height < BODY_BOTTOM:
            self.new_page()

    def justified_line(self, line: Line, style: Style, x: float, width: float) -> None:
        gaps = len(line.words) - 1
        stretch = 0.0 if line.last or gaps == 0 else (width - line.natural) / gaps
        drawn = self.canvas.beginText()
        drawn.setTextOrigin(x, self.y)
        drawn.setWordSpace(stretch)  # Tw widens each space character; the spaces stay in the text
        self._words_out(drawn, line.words, style)
        self.canvas.drawText(drawn)

    def paragraph(self, block: Block) -> None:
        style = block.style
        indent = INDENT if block.indent else 0.0
        lines = break_lines(split_words(block.text), style, TEXT_WIDTH, indent)
        if block.keep:
            self.need(style.leading * len(lines))
        for index, line in enumerate(lines):
            # A word is never hyphenated across a page break: if this line ends with a
            # hyphen and the next one would start a new page, start it here instead.
            self.need(style.leading * (2 if line.hyphenated else 1))
            self.y -= style.leading
            offset = indent if index == 0 else 0.0
            self.justified_line(line, style, LEFT + offset, TEXT_WIDTH - offset)
        self.y -= style.leading * 0.15

    def center(self, block: Block) -> None:
        style = block.style
        for line in _unhyphenated(split_words(block.text), style):
            self.need(style.leading)
            self.y -= style.leading
            self._centered(self.y, line, style)

    def rule(self) -> None:
        self.need(12)
        self.y -= 9
        self.canvas.setLineWidth(0.5)
        self.canvas.line(PAGE_WIDTH / 2 - 54, self.y, PAGE_WIDTH / 2 + 54, self.y)
        self.y -= 3

    def render(self) -> bytes:
        for part in self.doc.parts:
            self.start_part(part)
            for block in part.blocks:
                if block.kind in ("paragraph", "note"):
                    self.paragraph(block)
                elif block.kind == "center":
                    self.center(block)
                elif block.kind == "rule":
                    self.rule()
                elif block.kind == "space":
                    self.y -= block.points
        self.canvas.showPage()
        self.canvas.save()
        return self.buffer.getvalue()


def _unhyphenated(words: list[Word], style: Style) -> list[str]:
    """Greedy wrap of a centred line into strings (markup kept), never splitting a word."""
    space = stringWidth(" ", style.roman, style.size)
    lines: list[list[Word]] = []
    used = 0.0
    for word in words:
        width = word_width(word, style)
        if lines and used + space + width <= TEXT_WIDTH:
            lines[-1].append(word)
            used += space + width
        else:
            lines.append([word])
            used = width
    return [" ".join(_markup(w) for w in line) for line in lines]


def _markup(word: Word) -> str:
    return "".join(f"*{p.text}*" if p.italic else p.text for p in word)


def render_pdf(source_text: str) -> bytes:
    """The PDF bytes for a source text; deterministic."""
    return PageWriter(parse_source(source_text)).render()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="markup source file")
    parser.add_argument("--out", type=Path, required=True, help="PDF file to write")
    args = parser.parse_args(argv)
    pdf = render_pdf(args.source.read_text(encoding="utf-8"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(pdf)
    print(f"wrote {args.out} ({len(pdf)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
