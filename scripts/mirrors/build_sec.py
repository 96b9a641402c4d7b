"""Build the offline SEC EDGAR mirror (``mirrors/www.sec.gov/``) for the "SEC contract" task.

Two pages are mirrored, both reconstructions (the real pages could not be fetched offline),
plus the stylesheet and the two chrome images the index page loads (stand-ins of our own):

- the EDGAR filing index of accession 0001193125-14-305083 (Oncothyreon Inc., Form 10-Q
  for the period ending 2014-06-30), in EDGAR's filing-detail markup (see
  shared/facts/source-structures.md), generated here in code;
- Exhibit 10.1 of that filing, the Celldex/Oncothyreon "PHASE I CO-DEVELOPMENT AGREEMENT",
  rendered in the 2014 EDGAR exhibit style (one HTML file of ``<P>`` paragraphs with inline
  font styles, centred article headings, ``[***]`` redactions) from the hand-written text in
  ``src/sec/d769262dex101.part{1,2,3}.txt``.

Evidence quotes are matched against the pages' visible text, so the renderer keeps every
tag boundary inside a paragraph next to whitespace (a run-in heading is ``<U>Term.</U>``
followed by a space) and never splits a sentence across a page break. The index page
follows real saved index pages instead: a label's colon sits outside its acronym
(``<acronym>CIK</acronym>: <a>...``), as the public index parsers expect.

Run from the project root: ``.venv/bin/python scripts/mirrors/build_sec.py [--out DIR]``.
The output is byte-for-byte the same on every run; the generator first removes the entries
and bodies it wrote before, so a renamed body never lingers.
"""

from __future__ import annotations

import argparse
import html
from dataclasses import dataclass
from pathlib import Path

from toolserver.contract.mirrors import reconstructed, remove_entries, write_entry

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIR = Path(__file__).resolve().parent / "src" / "sec"
DEFAULT_OUT = PROJECT_ROOT / "mirrors" / "www.sec.gov"

CIK = "1412067"
ACCESSION = "0001193125-14-305083"
FOLDER_PATH = f"/Archives/edgar/data/{CIK}/{ACCESSION.replace('-', '')}"
BASE_URL = f"https://www.sec.gov{FOLDER_PATH}"
INDEX_URL = f"{BASE_URL}/{ACCESSION}-index.html"
EXHIBIT_FILE = "d769262dex101.htm"
EXHIBIT_URL = f"{BASE_URL}/{EXHIBIT_FILE}"

INDEX_TYPE = "text/html; charset=utf-8"
EXHIBIT_TYPE = "text/html"  # EDGAR serves .htm documents without a charset; the body is pure ASCII

PROVENANCE_INDEX = (
    "Reconstruction of the EDGAR filing index page for accession 0001193125-14-305083 (the real "
    "page could not be fetched offline). Basis: the EDGAR filing-detail markup in "
    "shared/facts/source-structures.md, and the structure of real saved index pages of the same "
    "template (mwaldstein/edgarWebR tests/cache/920760/000162828017000327/"
    "0001628280-17-000327-index.htm.html @1b0fc6e6ee845435734d52d2caeb89062776adac; the index "
    "page embedded in a public course lab), read by the edgarWebR parsers (R/filing_filers.R, "
    "R/filing_documents.R, R/filing_information.R): head with Content-Type and Last-Modified "
    "metas and the /include/interactive.css link; body margin 0; the noscript warning; "
    "#headerTop (#Nav with Home, Latest Filings, Previous Page; #seal and #secWordGraphic "
    "images), #headerBottom (#searchHome, #PageTitle 'Filing Detail'), #breadCrumbs list, no "
    "footer; #contentDiv with the filing #formDiv (#formHeader/#formName/#secNum, .formGrouping "
    ".infoHead/.info pairs), the Interactive Data button in a boxed #seriesDiv before the "
    "tables, then one #formDiv per table.tableFile (Document Format Files, Data Files); "
    "#filerDiv with .mailer spans (the last address line starting with a line break) and "
    ".companyInfo, where each label's colon sits outside its acronym ('<acronym>IRS No."
    "</acronym>: <strong>', '<acronym>CIK</acronym>: <a>', '<acronym>SIC</acronym>: <b><a>') and "
    "company-search links have the real query shapes (?CIK=...&action=getcompany, "
    "?filenum=...&action=getcompany, ?action=getcompany&SIC=...&owner=include). Facts from the "
    "benchmark: Form 10-Q filed 2014-08-11 for the period 2014-06-30 by Oncothyreon Inc. (CIK "
    "0001412067, 2601 Fourth Avenue, Suite 500, Seattle WA 98121, DE, fiscal year end 1231, SIC "
    "8731, file no. 001-33882) with Exhibit 10.1 d769262dex101.htm. IRS no. 26-0868560 and "
    "telephone (206) 801-2100 are from Oncothyreon's other public filings. Invented or not "
    "confirmed: the Accepted timestamp (and the Last-Modified meta derived from it), the film "
    "number, the main-document and certification file names (d747209*), the XBRL file names "
    "(onty-20140630*), the set of exhibits besides EX-10.1, every Size value except the "
    "exhibit's (which is the byte size of the reconstructed exhibit), and the row descriptions. "
    "Left out: the analytics script and its noscript iframe (they would leave the mirror) and "
    "the 'Office of ...' line after the SIC description (the office assigned to SIC 8731 is not "
    "confirmed). The stylesheet and the two chrome images are mirrored with bodies of our own "
    "(see their entries)."
)
PROVENANCE_STYLESHEET = (
    "Stand-in for EDGAR's /include/interactive.css, which the filing index page links: our own "
    "rules for the page's ids and classes (#headerTop, #formDiv, .tableFile, .mailer ...), not "
    "the real stylesheet (not captured). Mirrored so that the link resolves inside the mirror."
)
PROVENANCE_IMAGE = (
    "Stand-in for an EDGAR page-chrome image that the filing index page loads (the real image "
    "was not captured): a 1x1 transparent GIF; the page's stand-in stylesheet sizes and colours "
    "it. Mirrored so that the image request resolves inside the mirror."
)
PROVENANCE_EXHIBIT = (
    "Reconstruction of Exhibit 10.1 (d769262dex101.htm), the Phase I Co-Development Agreement "
    "between Celldex Therapeutics, Inc. and Oncothyreon Inc.; the real exhibit text was not "
    "available offline. Basis: shared/facts/source-structures.md (2014 EDGAR exhibit style, "
    "Rule 24b-2 legend, title, 'entered into as of May 28, 2014 (the \"Effective Date\")', "
    "Celldex named first, both Delaware, BACKGROUND on CDX-1127 (varlilumab) and ONT-10, "
    "ARTICLE 1 DEFINITIONS with 1.1 Affiliate and 1.2 Applicable Law, ten articles), the "
    "benchmark's expected record (1.4 Claims including reasonable attorneys' fees; 1.8 "
    "Confidential Information pointing to 7.1, which has a reasonable-person override; expiry "
    "upon Completion of the Trial; 8.1 Celldex Indemnitees and 8.2 Oncothyreon Indemnitees, each "
    "sending Claims from injuries not solely caused by one Party to 8.3, which makes the Parties "
    "jointly and severally liable; 9.2 cure period of ninety (90) days; 9.3 thirty (30) days' "
    "notice for convenience; survival of Articles 4, 5, 7, 8, 9 and 10; Delaware law; 10.5 "
    "assignment needs consent with Affiliate/successor exceptions; amendment 'in writing signed "
    "by all Parties hereto'; no termination fee, no aggregate liability cap, no arbitration) and "
    "the public May 2014 announcement of the collaboration (Oncothyreon sponsors and funds the "
    "trial; open-label phase 1b in advanced breast or ovarian cancer; jointly owned data; no "
    "license granted). Invented: all other wording, every other section and its numbering, "
    "Articles 2-6 in full, the consequential-damages exclusion in 8.5, the placement of every "
    "[***] redaction, Exhibit A, Celldex's address (53 Frontage Road, Suite 220, Hampton, New "
    "Jersey 08827, from Celldex's later filings), the signatories (the companies' chief "
    "executive officers in 2014, assumed) and the page breaks and page numbers."
)

# The reconstructed agreement's signatories (assumed: each company's CEO in May 2014).
SIGNATORIES = (
    ("CELLDEX THERAPEUTICS, INC.", "Anthony S. Marucci", "President and Chief Executive Officer"),
    ("ONCOTHYREON INC.", "Robert L. Kirkman", "President and Chief Executive Officer"),
)

# ---------------------------------------------------------------- exhibit source parsing


@dataclass(frozen=True)
class Block:
    """One paragraph-level unit of the exhibit source (see the markup notes in part 1)."""

    kind: str
    text: str = ""
    number: str = ""
    heading: str = ""


_KINDS = {
    "right",
    "legend",
    "title",
    "article",
    "center",
    "sec",
    "def",
    "p",
    "flush",
    "sub",
    "subsub",
    "caps",
    "signatures",
    "break",
}


def parse_exhibit_source(text: str, name: str) -> list[Block]:
    """Turn the line-based source into blocks; fail loudly on an unknown directive."""
    blocks: list[Block] = []
    chunks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            chunks.append([])
        else:
            chunks[-1].append(line.strip())
    for lines in filter(None, chunks):
        head, _, rest = lines[0].partition(" ")
        kind = head.removeprefix("@")
        if not head.startswith("@") or kind not in _KINDS:
            raise ValueError(f"{name}: block must start with one of @{', @'.join(sorted(_KINDS))}: {lines[0]!r}")
        body = " ".join([rest, *lines[1:]]).strip()
        if kind == "article":
            number, heading = (part.strip() for part in body.split("|", 1))
            blocks.append(Block(kind, number=number, heading=heading))
        elif kind == "sec":
            number, heading, section_text = (part.strip() for part in body.split("|", 2))
            blocks.append(Block(kind, text=section_text, number=number, heading=heading))
        elif kind == "def":
            number, definition = (part.strip() for part in body.split("|", 1))
            blocks.append(Block(kind, text=definition, number=number))
        else:
            blocks.append(Block(kind, text=body))
    return blocks


def load_exhibit_blocks() -> list[Block]:
    blocks: list[Block] = []
    for part in sorted(SOURCE_DIR.glob("d769262dex101.part*.txt")):
        blocks.extend(parse_exhibit_source(part.read_text(encoding="utf-8"), part.name))
    return blocks


# ---------------------------------------------------------------- exhibit rendering

# 2014 filer-agent (RR Donnelley) habits: Windows-1252 character references for typographic
# quotes, upper-case tags, one inline style per paragraph, an 8.5in wide page column.
_OPENING_BEFORE = set(" ([/\u2014")


def typeset(text: str) -> str:
    """Escape for HTML and write typographic quotes as 2014 EDGAR exhibits did (&#147; ...)."""
    out: list[str] = []
    for index, char in enumerate(text):
        if char == '"':
            opening = index == 0 or text[index - 1] in _OPENING_BEFORE
            out.append("&#147;" if opening else "&#148;")
        elif char == "'":
            out.append("&#146;")
        elif char in "&<>":
            out.append(html.escape(char))
        elif ord(char) > 127:
            out.append(f"&#{ord(char)};")
        else:
            out.append(char)
    return "".join(out)


_FONT = "font-size:10pt; font-family:Times New Roman"
_STYLES = {
    "right": ("margin-top:0pt; margin-bottom:0pt", "right"),
    "legend": ("margin-top:12pt; margin-bottom:0pt", "justify"),
    "title": ("margin-top:18pt; margin-bottom:0pt", "center"),
    "center": ("margin-top:12pt; margin-bottom:0pt", "center"),
    "article": ("margin-top:18pt; margin-bottom:0pt", "center"),
    "p": ("margin-top:12pt; margin-bottom:0pt; text-indent:4%", "justify"),
    "sec": ("margin-top:12pt; margin-bottom:0pt; text-indent:4%", "justify"),
    "def": ("margin-top:12pt; margin-bottom:0pt; text-indent:4%", "justify"),
    "flush": ("margin-top:12pt; margin-bottom:0pt", "justify"),
    "caps": ("margin-top:12pt; margin-bottom:0pt; margin-left:4%", "justify"),
    "sub": ("margin-top:6pt; margin-bottom:0pt; margin-left:8%", "justify"),
    "subsub": ("margin-top:6pt; margin-bottom:0pt; margin-left:12%", "justify"),
}


def _paragraph(kind: str, inner: str) -> str:
    margins, align = _STYLES[kind]
    return f'<P STYLE="{margins}; {_FONT}" ALIGN="{align}">{inner}</P>'


def _signature_table() -> str:
    cells = []
    for company, name, title in SIGNATORIES:
        lines = [
            f"<B>{typeset(company)}</B>",
            "&nbsp;",
            f"By: /s/ {typeset(name)}",
            f"Name: {typeset(name)}",
            f"Title: {typeset(title)}",
        ]
        rows = "".join(
            f'<P STYLE="margin-top:{6 if i else 0}pt; margin-bottom:0pt; {_FONT}">{line}</P>\n'
            for i, line in enumerate(lines)
        )
        cells.append(f'<TD WIDTH="46%" VALIGN="top">\n{rows}</TD>')
    return (
        '<P STYLE="font-size:12pt;margin-top:0pt;margin-bottom:0pt">&nbsp;</P>\n'
        '<TABLE CELLSPACING="0" CELLPADDING="0" WIDTH="100%" BORDER="0" '
        'STYLE="BORDER-COLLAPSE:COLLAPSE; font-family:Times New Roman; font-size:10pt">\n'
        f'<TR>\n{cells[0]}\n<TD WIDTH="8%">&nbsp;</TD>\n{cells[1]}\n</TR>\n</TABLE>'
    )


def render_block(block: Block) -> str:
    if block.kind == "signatures":
        return _signature_table()
    if block.kind == "article":
        return (
            _paragraph("article", f"<B>ARTICLE {typeset(block.number)}</B>")
            + "\n"
            + _paragraph("center", f"<B>{typeset(block.heading)}</B>")
        )
    if block.kind in ("right", "title", "center"):
        return _paragraph(block.kind, f"<B>{typeset(block.text)}</B>")
    if block.kind == "sec":
        # The heading's closing tag is followed by a space, so text extraction with or without
        # separators yields "9.2 Termination for Cause. Either Party ...".
        body = f" {typeset(block.text)}" if block.text else ""
        return _paragraph(
            "sec", f"{typeset(block.number)}&nbsp;&nbsp;&nbsp;&nbsp;<U>{typeset(block.heading)}</U>{body}"
        )
    if block.kind == "def":
        return _paragraph("def", f"{typeset(block.number)}&nbsp;&nbsp;&nbsp;&nbsp;{typeset(block.text)}")
    return _paragraph(block.kind, typeset(block.text))


_PAGE_CHARS = 3600  # about one printed page of 10pt Times in an 8.5in column


def _page_break(page: int) -> str:
    return (
        '<P STYLE="font-size:18pt;margin-top:0pt;margin-bottom:0pt">&nbsp;</P>\n'
        f'<P STYLE="margin-top:0pt; margin-bottom:0pt; {_FONT}" ALIGN="center">{page}</P>\n'
        '<p style="page-break-before:always"></p>\n'
        '<HR SIZE="3" ALIGN="CENTER" STYLE="COLOR:#999999">\n'
    )


def render_exhibit(blocks: list[Block]) -> bytes:
    """The exhibit as one 2014-style EDGAR HTML document (pure ASCII bytes)."""
    parts = [
        '<HTML><HEAD>\n<TITLE>EX-10.1</TITLE>\n</HEAD>\n <BODY BGCOLOR="WHITE">\n'
        '<Center><DIV STYLE="width:8.5in" align="left">\n'
    ]
    page, page_chars = 1, 0
    for block in blocks:
        if block.kind == "break" or page_chars >= _PAGE_CHARS:
            # Page breaks fall only between paragraphs, never inside one, and never right
            # before the first block of the document.
            if page_chars:
                parts.append(_page_break(page))
                page, page_chars = page + 1, 0
            if block.kind == "break":
                continue
        parts.append(render_block(block) + "\n")
        page_chars += len(block.text) + len(block.heading) + (300 if block.kind == "signatures" else 0)
    parts.append(
        '<P STYLE="font-size:18pt;margin-top:0pt;margin-bottom:0pt">&nbsp;</P>\n'
        f'<P STYLE="margin-top:0pt; margin-bottom:0pt; {_FONT}" ALIGN="center">{page}</P>\n'
        "</DIV></Center>\n</BODY></HTML>\n"
    )
    document = "".join(parts)
    return document.encode("ascii")


# ---------------------------------------------------------------- filing index rendering


@dataclass(frozen=True)
class FilingDocument:
    seq: str
    description: str
    file_name: str
    doc_type: str
    size: int


def filing_documents(exhibit_size: int) -> tuple[list[FilingDocument], list[FilingDocument]]:
    """The two tables of the index. Only the exhibit's row and size are known to be real."""
    document_format_files = [
        FilingDocument("1", "10-Q", "d747209d10q.htm", "10-Q", 1018406),
        FilingDocument("2", "EX-10.1", EXHIBIT_FILE, "EX-10.1", exhibit_size),
        FilingDocument("3", "EX-31.1", "d747209dex311.htm", "EX-31.1", 10214),
        FilingDocument("4", "EX-31.2", "d747209dex312.htm", "EX-31.2", 10198),
        FilingDocument("5", "EX-32.1", "d747209dex321.htm", "EX-32.1", 5126),
        FilingDocument("6", "EX-32.2", "d747209dex322.htm", "EX-32.2", 5113),
        FilingDocument("", "Complete submission text file", f"{ACCESSION}.txt", "", 4187630),
    ]
    data_files = [
        FilingDocument("7", "XBRL INSTANCE DOCUMENT", "onty-20140630.xml", "EX-101.INS", 802411),
        FilingDocument("8", "XBRL TAXONOMY EXTENSION SCHEMA", "onty-20140630.xsd", "EX-101.SCH", 14872),
        FilingDocument(
            "9", "XBRL TAXONOMY EXTENSION CALCULATION LINKBASE", "onty-20140630_cal.xml", "EX-101.CAL", 27305
        ),
        FilingDocument(
            "10", "XBRL TAXONOMY EXTENSION DEFINITION LINKBASE", "onty-20140630_def.xml", "EX-101.DEF", 46118
        ),
        FilingDocument("11", "XBRL TAXONOMY EXTENSION LABEL LINKBASE", "onty-20140630_lab.xml", "EX-101.LAB", 163027),
        FilingDocument(
            "12", "XBRL TAXONOMY EXTENSION PRESENTATION LINKBASE", "onty-20140630_pre.xml", "EX-101.PRE", 109864
        ),
    ]
    return document_format_files, data_files


# The stylesheet and the two chrome images the real page loads (/include/interactive.css,
# /images/sealTop.gif, /images/bannerTitle.gif) are mirrored under the same URLs with bodies of
# our own, so the page requests nothing the mirror does not hold.
STYLESHEET_URL = "https://www.sec.gov/include/interactive.css"
SEAL_URL = "https://www.sec.gov/images/sealTop.gif"
BANNER_URL = "https://www.sec.gov/images/bannerTitle.gif"

INDEX_CSS = """\
body { font-family: Arial, Helvetica, sans-serif; font-size: 12px; color: #000; }
a { color: #0000cc; }
#headerTop { background: #ffffff; padding: 6px 10px; overflow: hidden; }
#Nav { float: right; font-size: 11px; padding-top: 4px; }
#seal { float: left; margin-right: 8px; }
#seal img { width: 54px; height: 54px; background: #1c3f6e; border-radius: 27px; }
#secWordGraphic img { width: 320px; height: 24px; margin-top: 14px; background: #e8eef6; }
#headerBottom { background: #1c3f6e; color: #fff; padding: 6px 10px; overflow: hidden; }
#headerBottom a { color: #fff; }
#searchHome { float: right; font-size: 11px; padding-top: 4px; }
#PageTitle { font-size: 18px; font-weight: bold; }
#breadCrumbs ul { list-style: none; margin: 6px 10px; padding: 0; font-size: 11px; }
#breadCrumbs li { display: inline; margin-right: 4px; }
#contentDiv { padding: 10px 10px 20px 10px; }
#formDiv { border: 1px solid #b6c9e0; margin-bottom: 12px; }
#formHeader { background: #e8eef6; padding: 8px; border-bottom: 1px solid #b6c9e0; overflow: hidden; }
#formName { float: left; font-size: 14px; }
#secNum { float: right; font-size: 13px; }
.formContent { padding: 8px; overflow: hidden; }
.formGrouping { float: left; margin-right: 40px; }
.infoHead { font-weight: bold; color: #1c3f6e; margin-top: 4px; }
.info { margin-bottom: 6px; }
.tableFile { border-collapse: collapse; width: 100%; margin-bottom: 14px; }
.tableFile th { background: #e8eef6; text-align: left; padding: 3px 5px; border: 1px solid #b6c9e0; }
.tableFile td { padding: 3px 5px; border: 1px solid #d3dfee; }
.tableFile tr.blueRow td { background: #f3f6fa; }
#filerDiv { border-top: 1px solid #b6c9e0; padding-top: 10px; overflow: hidden; }
.mailer { float: left; width: 210px; margin-right: 14px; font-weight: bold; }
.mailerAddress { display: block; font-weight: normal; }
.companyInfo { float: left; }
.companyName { font-size: 14px; font-weight: bold; }
.identInfo { margin-top: 6px; line-height: 1.5; }
.clear { clear: both; }
"""


def stand_in_gif() -> bytes:
    """A 1x1 transparent GIF: the stand-in for each chrome image (the real ones were not captured)."""
    return (
        b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff"
        b"!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
    )


def _file_rows(documents: list[FilingDocument]) -> str:
    rows = []
    for index, doc in enumerate(documents):
        css = ' class="blueRow"' if index % 2 else ""
        seq = doc.seq or "&nbsp;"
        doc_type = doc.doc_type or "&nbsp;"
        rows.append(
            f"         <tr{css}>\n"
            f'            <td scope="row">{seq}</td>\n'
            f'            <td scope="row">{html.escape(doc.description)}</td>\n'
            f'            <td scope="row"><a href="{FOLDER_PATH}/{doc.file_name}">{doc.file_name}</a></td>\n'
            f'            <td scope="row">{doc_type}</td>\n'
            f'            <td scope="row">{doc.size}</td>\n'
            "         </tr>"
        )
    return "\n".join(rows)


def _file_table_div(summary: str, documents: list[FilingDocument]) -> str:
    """One ``#formDiv`` holding one ``table.tableFile`` (the real page gives each table its own)."""
    return (
        '<div id="formDiv">\n'
        '   <div style="padding: 0px 0px 4px 0px; font-size: 12px; margin: 0px 2px 0px 5px; width: 100%; overflow:hidden">\n'
        f"      <p>{summary}</p>\n"
        f'      <table class="tableFile" summary="{summary}">\n'
        "         <tr>\n"
        '            <th scope="col" style="width: 5%;"><acronym title="Sequence Number">Seq</acronym></th>\n'
        '            <th scope="col" style="width: 40%;">Description</th>\n'
        '            <th scope="col" style="width: 20%;">Document</th>\n'
        '            <th scope="col" style="width: 10%;">Type</th>\n'
        '            <th scope="col">Size</th>\n'
        "         </tr>\n"
        f"{_file_rows(documents)}\n"
        "      </table>\n"
        "   </div>\n"
        "</div>"
    )


def render_index(exhibit_size: int) -> bytes:
    document_format_files, data_files = filing_documents(exhibit_size)
    document_count = sum(1 for doc in document_format_files + data_files if doc.seq)
    # The last address line carries a line break before it and trailing spaces, as on real pages.
    address = (
        '      <span class="mailerAddress">2601 FOURTH AVENUE</span>\n'
        '      <span class="mailerAddress">SUITE 500</span>\n'
        '      <span class="mailerAddress">\nSEATTLE WA 98121      </span>\n'
    )
    page = f"""\
<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" "http://www.w3.org/TR/html4/loose.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8" />
<meta http-equiv="Last-Modified" content="Mon, 11 Aug 2014 20:07:38 GMT" />
<title>EDGAR Filing Documents for {ACCESSION}</title>
<link rel="stylesheet" type="text/css" href="/include/interactive.css" />
<!-- Offline mirror: an empty data: icon keeps the browser from requesting /favicon.ico. -->
<link rel="icon" href="data:," />
</head>
<body style="margin: 0">
<noscript><div style="color:red; font-weight:bold; text-align:center;">This page uses Javascript. Your browser either doesn't support Javascript or you have it turned off. To see this page as it is meant to appear please use a Javascript enabled browser.</div></noscript>
<!-- BEGIN BANNER -->
<div id="headerTop">
   <div id="Nav"><a href="/index.htm">Home</a> | <a href="/cgi-bin/browse-edgar?action=getcurrent">Latest Filings</a> | <a href="javascript:history.back()">Previous Page</a></div>
   <div id="seal"><a href="/index.htm"><img src="/images/sealTop.gif" alt="SEC Seal" border="0" /></a></div>
   <div id="secWordGraphic"><img src="/images/bannerTitle.gif" alt="SEC Banner" /></div>
</div>
<div id="headerBottom">
   <div id="searchHome"><a href="/edgar/searchedgar/webusers.htm">Search the Next-Generation EDGAR System</a></div>
   <div id="PageTitle">Filing Detail</div>
</div>
<!-- END BANNER -->


<!-- BEGIN BREADCRUMBS -->
<div id="breadCrumbs">
   <ul>
      <li><a href="/index.htm">SEC Home</a> &#187;</li>
      <li><a href="/edgar/searchedgar/webusers.htm">Search the Next-Generation EDGAR System</a> &#187;</li>
      <li><a href="/edgar/searchedgar/companysearch.html">Company Search</a> &#187;</li>
      <li class="last">Current Page</li>
   </ul>
</div>
<!-- END BREADCRUMBS -->

<div id="contentDiv">
<!-- START FILING DIV -->
<div id="formDiv">
   <div id="formHeader">
      <div id="formName">
         <strong>Form 10-Q</strong> - Quarterly report [Sections 13 or 15(d)]:{" "}
      </div>
      <div id="secNum">
         <strong><acronym title="Securities and Exchange Commission">SEC</acronym> Accession <acronym title="Number">No.</acronym></strong> {ACCESSION}
      </div>
   </div>
   <div class="formContent">
      <div class="formGrouping">
         <div class="infoHead">Filing Date</div>
         <div class="info">2014-08-11</div>
         <div class="infoHead">Accepted</div>
         <div class="info">2014-08-11 16:07:38</div>
         <div class="infoHead">Documents</div>
         <div class="info">{document_count}</div>
      </div>
      <div class="formGrouping">
         <div class="infoHead">Period of Report</div>
         <div class="info">2014-06-30</div>
      </div>
      <div style="clear:both"></div>
   </div>
</div>
<!-- END FILING DIV -->
<!-- START DOCUMENT DIV -->
<div style="margin: 10px 0px 10px 0px; border: solid 1px #3F509D; background-color: #F5F5EB;">
   <div style="padding: 4px 0px 4px 0px; font-size: 12px; margin: 0px 2px 0px 5px; width: 100%; overflow:hidden" id="seriesDiv">
      <a href="/cgi-bin/viewer?action=view&amp;cik={CIK}&amp;accession_number={ACCESSION}&amp;xbrl_type=v" id="interactiveDataBtn">&nbsp;Interactive Data</a>
   </div>
</div>
{_file_table_div("Document Format Files", document_format_files)}
{_file_table_div("Data Files", data_files)}
<!-- END DOCUMENT DIV -->
<!-- START FILER DIV -->
<div id="filerDiv">
   <div class="mailer">Mailing Address
{address}   </div>
   <div class="mailer">Business Address
{address}      <span class="mailerAddress">2068012100</span>
   </div>
<div class="companyInfo">
  <span class="companyName">Oncothyreon Inc. (Filer)
 <acronym title="Central Index Key">CIK</acronym>: <a href="/cgi-bin/browse-edgar?CIK=000{CIK}&amp;action=getcompany">000{CIK} (see all company filings)</a></span>
<p class="identInfo"><acronym title="Internal Revenue Service Number">IRS No.</acronym>: <strong>260868560</strong> | State of Incorp.: <strong>DE</strong> | Fiscal Year End: <strong>1231</strong><br />Type: <strong>10-Q</strong> | Act: <strong>34</strong> | File No.: <a href="/cgi-bin/browse-edgar?filenum=001-33882&amp;action=getcompany"><strong>001-33882</strong></a> | Film No.: <strong>141029346</strong><br /><acronym title="Standard Industrial Code">SIC</acronym>: <b><a href="/cgi-bin/browse-edgar?action=getcompany&amp;SIC=8731&amp;owner=include">8731</a></b> Services-Commercial Physical &amp; Biological Research</p>
</div>
<div class="clear"></div>
</div>
<!-- END FILER DIV -->
</div>
</body>
</html>
"""
    return page.encode("ascii")


# ---------------------------------------------------------------- build


def _body_path(url: str) -> str:
    return url.removeprefix("https://www.sec.gov/")


def build(out: Path = DEFAULT_OUT) -> list[str]:
    """(Re)write the SEC mirror into ``out``; return the mirrored URLs."""
    out = Path(out)
    remove_entries(out)
    exhibit = render_exhibit(load_exhibit_blocks())
    write_entry(
        out, EXHIBIT_URL, exhibit, EXHIBIT_TYPE, reconstructed(PROVENANCE_EXHIBIT), body_path=_body_path(EXHIBIT_URL)
    )
    write_entry(
        out,
        INDEX_URL,
        render_index(len(exhibit)),
        INDEX_TYPE,
        reconstructed(PROVENANCE_INDEX),
        body_path=_body_path(INDEX_URL),
    )
    write_entry(
        out,
        STYLESHEET_URL,
        INDEX_CSS.encode("ascii"),
        "text/css",
        reconstructed(PROVENANCE_STYLESHEET),
        body_path=_body_path(STYLESHEET_URL),
    )
    for image_url in (SEAL_URL, BANNER_URL):
        write_entry(
            out,
            image_url,
            stand_in_gif(),
            "image/gif",
            reconstructed(PROVENANCE_IMAGE),
            body_path=_body_path(image_url),
        )
    return [INDEX_URL, EXHIBIT_URL, STYLESHEET_URL, SEAL_URL, BANNER_URL]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="mirror folder to (re)write (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    for url in build(args.out):
        print(f"wrote {url}")


if __name__ == "__main__":
    main()
