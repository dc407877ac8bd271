"""MIME for the mail readers: a message's header block, its body walked part by part
(text preferred over HTML, attachments named and never decoded; Outlook's winmail.dat read
with ``tnef``), transfer encodings and charsets, and HTML turned into readable text; the quoted
history a reply carries is ``mail_quotes``'."""

from __future__ import annotations

import binascii
import email.policy
import re
from email.header import decode_header, make_header
from email.message import Message

from . import jis
from .html_text import html_to_text
from .rtf_text import codec, decompress_rtf, rtf_text
from .smime import signed_content
from .tnef import TNEF_TYPES, UNREAD, Tnef, read_tnef

# The email package's structure parser with its compat32 policy: the modern policy's
# header registry parses every header it is asked for at about 1 ms each, which alone
# would spend a 50,000-message mbox's time budget; headers are decoded here instead,
# with email.header (RFC 2047) and email.utils (addresses, dates).
POLICY = email.policy.compat32
# One header field: a name, a colon, the value and its folded continuation lines.
HEADER_FIELD = re.compile(r"^([!-9;-~]+)[ \t]*:[ \t]*([^\n]*(?:\n[ \t][^\n]*)*)", re.M)
# MIME nesting deeper than this is not followed (real mail nests three or four levels).
MAX_MIME_DEPTH = 12
SURROGATES = re.compile("[\udc80-\udcff]")
# A text/plain alternative shorter than this (letters and digits) is compared with its HTML twin:
# bulk mail's placeholder text part is a line or two ("To view this email as a web page, go here").
PLACEHOLDER_LETTERS = 300
PLACEHOLDER_BYTES = 4096  # a text part longer than this, encoded, is no placeholder
NOT_LETTER_BYTES = bytes(b for b in range(128) if not chr(b).isalnum())
# What an HTML part holds besides its words: scripts, styles, its head, comments, tags, entities.
MARKUP = re.compile(r"<(style|script|head|title)\b.*?</\1\s*>|<!--.*?-->|<[^>]*>|&#?\w+;", re.S | re.I)
# Where Outlook's text part stands for an image of its HTML (a signature's logo): "[cid:image001.png@01DA...]",
# a line of its own or within one; no words of the mail.
CID_PLACEHOLDER = re.compile(r"^[ \t]*\[cid:[^\]\s]*\][ \t]*(?:\r?\n|$)|\[cid:[^\]\s]*\][ \t]?", re.M)
# A quoted-printable soft line break that gained whitespace in transport (Exchange, Lotus Notes, tools
# that pad lines): still a soft break (RFC 2045 6.7: a line's trailing whitespace is dropped).
QP_SPACED_SOFT_BREAK = re.compile(rb"=[ \t]+(?=\r?\n|$)")
# A Content-Transfer-Encoding's token, before any parameters or comment a sender wrote after it.
TRANSFER_ENCODING = re.compile(r"\s*([^\s;(]*)")
# A mail inside a mail (message/global: one with UTF-8 headers, RFC 6532).
FORWARDED_TYPES = frozenset({"message/rfc822", "message/global"})
# S/MIME's one part for an encrypted (or opaque signed) message: Outlook's and Apple Mail's smime.p7m.
SMIME_TYPES = frozenset({"application/pkcs7-mime", "application/x-pkcs7-mime"})
# S/MIME's names for the parts that hold a message encrypted or signed (RFC 8551 3.2.1), by which one sent
# as application/octet-stream (a gateway's) is known (3.2.2); a part named otherwise, <document>.xml.p7m,
# is a document signed on its own (an Italian e-invoice): an attachment, not the mail encrypted.
SMIME_NAMES = {"smime.p7m": "application/pkcs7-mime", "smime.p7s": "application/pkcs7-signature"}
# What an encrypted body is read as: its headers stay searchable, and a hit says why there is no text.
ENCRYPTED_BODY = "[encrypted message: not decrypted]"
# An OpenPGP message armored into a text part (inline PGP: Mailvelope in webmail, old Enigmail, a message
# pasted from gpg), quoted or not, to its end line or the part's end (cut): its base64 is no one's words.
PGP_ARMOR = re.compile(r"^([> \t]*)-----BEGIN PGP MESSAGE-----[ \t]*\r?$[\s\S]*?(?:^\1-----END PGP MESSAGE-----"
                       r"[ \t]*\r?$|\Z)", re.M)
# A clear-signed OpenPGP message in a text part (RFC 4880 7: mailing lists, gpg --clearsign): read as its
# words, without the armor's lines, its Hash header and its signature, a line the signer escaped
# ("- -- ", ``DASH_ESCAPE``) as it was written.
PGP_SIGNED = re.compile(r"^-----BEGIN PGP SIGNED MESSAGE-----[ \t]*\r?\n(?:[A-Za-z]+:[^\n]*\n)*\r?\n([\s\S]*?)"
                        r"^-----BEGIN PGP SIGNATURE-----[ \t]*\r?$[\s\S]*?(?:^-----END PGP SIGNATURE-----[ \t]*\r?$|\Z)",
                        re.M)
DASH_ESCAPE = re.compile(r"^- ", re.M)
# A file uuencoded into a text part, as mail from before MIME and old gateways send one ("begin 644
# report.pdf", lines of uuencode's characters, "end"): named as an attachment is, its lines no one's words.
UUENCODED = re.compile(r"^begin [0-7]{3,4} (\S[^\n]*?)[ \t]*\r?\n(?:[ -`]{0,62}\r?\n)*?end[ \t]*\r?$\n?", re.M)
# Parts of these types sign or wrap a message; they are not attachments anyone sent.
# A text part sent as a file shown inline ("Content-Disposition: inline; filename=server.log": scripts, cron,
# some clients) is read to this many characters, the rest said left out: Thunderbird and Apple Mail show it
# below the mail, but a 19 MB log read whole drowned the mail's words. A signature or a note so sent is read whole.
INLINE_FILE_CHARS = 10_000
SIGNATURE_TYPES = frozenset({"application/pgp-signature", "application/pkcs7-signature",
                             "application/x-pkcs7-signature", "application/pgp-encrypted"})


# An HTML body's own charset, in its first bytes (<meta charset=...> or the http-equiv form), as
# browsers prescan for it: bulk mail often sends "Content-Type: text/html" without one.
META_CHARSET = re.compile(rb"<meta\s[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.I)
META_PRESCAN_BYTES = 4096
LATIN1_NAMES = frozenset({"iso-8859-1", "latin-1", "latin1", "iso_8859-1", "us-ascii", "ascii"})
# Labels under which UTF-8 is tried first. One that says ASCII promises no 8-bit bytes at all: where
# some come, they are far more often UTF-8 (a mailer that labels every part us-ascii) than
# Windows-1252. Under a Western European one (mailers and list servers that label every part
# iso-8859-1 or windows-1252) text that reads as UTF-8 is UTF-8: real Latin-1 text almost never
# does (its é must be followed by two bytes of 0x80-0xBF, C1 controls and symbols), and read as
# labelled such text was mojibake, "JosÃ©".
ASCII_NAMES = frozenset({"us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "us"})
UTF8_FIRST_NAMES = ASCII_NAMES | {"iso-8859-1", "latin-1", "latin1", "iso_8859-1", "l1", "windows-1252", "cp1252",
                                  "x-cp1252", "iso-8859-15", "iso_8859-15", "latin-9", "latin9"}
# Labels mail apps write for a narrower charset than the bytes they send (as WHATWG's encoding
# standard maps them for browsers): Windows Japanese mail says Shift_JIS and writes CP932 (①,
# Ⅱ), Chinese says GB2312 and writes GBK, Korean says EUC-KR (Outlook: ks_c_5601-1987) and
# writes CP949; Thai says TIS-620 and writes CP874; ISO-2022-JP carries CP932's ① too (``jis``).
# Read strictly as labelled, one such character would fail the whole part. Also labels Python does not know by that name
# (old Mac mail's x-mac-cyrillic, Netscape's x-euc-jp, Microsoft's x-cp1250: as WHATWG's encoding standard names them).
SUPERSETS = {"shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932", "ms_kanji": "cp932",
             "windows-31j": "cp932", "gb2312": "gb18030", "gb_2312-80": "gb18030", "gbk": "gb18030",
             "x-gbk": "gb18030", "euc-cn": "gb18030", "euc-kr": "cp949", "ks_c_5601-1987": "cp949",
             "ks_c_5601": "cp949", "windows-949": "cp949", "big5": "big5hkscs", "tis-620": "cp874",
             "iso-8859-11": "cp874", "windows-874": "cp874", "iso-8859-8-i": "iso8859_8",
             "x-mac-roman": "mac_roman", "macintosh": "mac_roman", "x-mac-cyrillic": "mac_cyrillic",
             "x-mac-ukrainian": "mac_cyrillic", "x-mac-ce": "mac_latin2", "x-mac-centraleurroman": "mac_latin2",
             "x-mac-greek": "mac_greek", "x-mac-turkish": "mac_turkish", "x-mac-icelandic": "mac_iceland",
             "x-mac-arabic": "mac_arabic", "x-x-big5": "big5hkscs", "x-windows-949": "cp949",
             "iso-8859-6-i": "iso8859_6", "iso-8859-6-e": "iso8859_6", "iso-8859-8-e": "iso8859_8",
             **{f"x-cp125{n}": f"cp125{n}" for n in range(9)},
             "iso-2022-jp": jis.NAME, "csiso2022jp": jis.NAME, "iso2022_jp": jis.NAME, "euc-jp": jis.EUC_NAME,
             "euc_jp": jis.EUC_NAME, "eucjp": jis.EUC_NAME, "x-euc-jp": jis.EUC_NAME}


def superset(charset: str | None) -> str | None:
    """The codec to read a declared charset with (``SUPERSETS``; Latin-1 as Windows-1252)."""
    if charset is None:
        return None
    name = charset.strip().lower()
    return "cp1252" if name in LATIN1_NAMES else SUPERSETS.get(name, charset)


def _split(data: bytes) -> tuple[Message, bytes, int]:
    """A MIME part: its Content-* headers, its body's bytes, and where the body starts."""
    header_end = find_header_end(data)
    return parse_headers(data[:header_end])[0], data[header_end:], header_end


def parse_headers(block: bytes) -> tuple[Message, dict[str, list[str]]]:
    """The header block: its Content-* headers as a compat32 Message (for the email
    package's MIME parameter parsing; the other headers would only slow its look-ups),
    and every header's raw values (folding kept) by lower-case name. A line that is no
    header (an mbox ``From `` line) is passed over."""
    message = Message(policy=POLICY)
    fields: dict[str, list[str]] = {}
    for found in HEADER_FIELD.finditer(block.decode("ascii", "surrogateescape")):
        name, value = found.group(1), found.group(2).rstrip("\r\n")
        lower = name.lower()
        fields.setdefault(lower, []).append(value)
        if lower.startswith("content-"):  # (a file's name in raw 8-bit bytes read as text: the email
            # package hands back a Header object for one it holds as surrogates, which no str method takes)
            message.set_raw(name, value if value.isascii() else _undeclared(value.encode("ascii", "surrogateescape")))
    return message, fields


def find_header_end(data: bytes) -> int:
    """The offset after the blank line that ends the header block (the end when there is none)."""
    ends = [(at, at + len(blank)) for blank in (b"\n\n", b"\n\r\n") if (at := data.find(blank)) >= 0]
    return min(ends)[1] if ends else len(data)


def decoded_header(raw: str, charset: str | None = None) -> str:
    """A header value as text: RFC 2047 words decoded, raw 8-bit bytes read as UTF-8 (else in
    ``charset``, the one the message declares, as Thunderbird reads them, else Windows-1252),
    folding undone."""
    if not raw.isascii() and SURROGATES.search(raw):  # undeclared 8-bit bytes, kept by the parser as surrogates
        data = raw.encode("ascii", "surrogateescape")
        raw = _undeclared(data, charset)
    raw = unescaped_jis(raw)
    if "=?" in raw:
        raw = WORD_LANGUAGE.sub("=?\\1?", raw) if "*" in raw else raw
        while "\n" in raw and (unfolded := FOLDED_WORD.sub(r"\1", raw)) != raw:
            raw = unfolded
        words: list[tuple[bytes | str, str | None]] = []
        try:
            words = decode_header(raw)
            raw = str(make_header([(text, _word_charset(text, charset)) for text, charset in words]))
        except (LookupError, UnicodeError):  # (a word its charset cannot read: "=?UTF-8?Q?Caf=E9?=")
            raw = _lenient_words(words) if words else raw
        except (ValueError, AssertionError):
            pass
    return " ".join(raw.split())


def _lenient_words(words: list[tuple[bytes | str, str | None]]) -> str:
    """Decoded words, each read as labelled where it can be, else as UTF-8 or Windows-1252
    (``_undeclared``): scripts and old mailers label Latin-1 bytes UTF-8 or US-ASCII."""
    out = ""
    for text, charset in words:
        if isinstance(text, str) or charset is None:  # (text between the words, as written)
            piece = text if isinstance(text, str) else text.decode("raw-unicode-escape")
        else:
            try:
                piece = text.decode(_word_charset(text, charset) or "ascii")
            except (LookupError, UnicodeError):
                piece = _undeclared(text)
        if out and piece and not out[-1].isspace() and not piece[0].isspace():
            piece = " " + piece  # (as make_header joins an encoded word to its neighbours)
        out += piece
    return out


# An encoded word's language after its charset (RFC 2231: "=?UTF-8*de?Q?...?="), which the email
# package does not expect: left out before the word is decoded.
WORD_LANGUAGE = re.compile(r"=\?([^?*\s]+)\*[A-Za-z0-9-]*\?")
def unescaped_jis(raw: str) -> str:
    """A header's ISO-2022-JP written raw, its escape codes and all, as old Japanese mailers and list
    servers wrote it without encoded words: read as Japanese (else as it was)."""
    if "\x1b$" not in raw or not raw.isascii():
        return raw
    try:
        return raw.encode("ascii").decode(jis.NAME)
    except UnicodeError:
        return raw


# An encoded word with a line folded inside it, as mailers that fold long headers at any point write it
# (go-message before 2019, gateways): its halves joined, as they were before the fold.
FOLDED_WORD = re.compile(r"(=\?[^?\s]+\?[BbQq]\?[^?\s]*)\r?\n[ \t]+(?=[^?\s]*\?=)")
# The charset labels of an encoded word whose sender did not know it (a gateway's, a list
# server's re-encoding): its bytes are read as UTF-8 where they are that, else as Windows-1252.
UNKNOWN_CHARSETS = frozenset({"unknown-8bit", "unknown", "x-unknown"})


def _word_charset(text: bytes | str, charset: str | None) -> str | None:
    """The codec an encoded word's bytes are read with: a label's superset (see SUPERSETS); UTF-8
    where the bytes are that under an unknown label or one UTF-8 hides behind (``UTF8_FIRST_NAMES``),
    and Windows-1252 for an unknown one's other bytes (not U+FFFD for each)."""
    name = charset.lower() if charset else ""
    if (name in UNKNOWN_CHARSETS or name in UTF8_FIRST_NAMES) and _is_utf8(text):
        return "utf-8"
    if name in UNKNOWN_CHARSETS:
        return "cp1252"
    return SUPERSETS.get(charset, charset) if charset else charset


def _is_utf8(text: bytes | str) -> bool:
    """Whether an encoded word's bytes read as UTF-8, some past ASCII among them."""
    data = text.encode("latin-1") if isinstance(text, str) else text
    try:
        return not data.isascii() and bool(data.decode("utf-8"))
    except (UnicodeError, ValueError):
        return False


def collect_body(headers: Message, body: bytes, texts: list[str], names: list[str], damage: set[str],
             depth: int) -> None:
    """Walk a MIME tree: text/plain (else HTML as text) into ``texts``, attachments into
    ``names`` (never decoded). Parts are split on their boundaries here and only their
    headers go through the email parser, so an attachment's megabytes cost a ``find``."""
    kind = _smime_kind(headers)
    if kind in SIGNATURE_TYPES:
        return
    if kind in SMIME_TYPES and _smime_message(headers):
        _smime(headers, body, texts, names, damage, depth)
        return
    if kind == "multipart/encrypted":
        texts.append(ENCRYPTED_BODY)
        return
    if kind in TNEF_TYPES or (kind == "application/octet-stream" and
                              (_filename(headers) or "").lower() == "winmail.dat"):
        _tnef(headers, body, texts, names, damage)
        return
    if _is_attachment(headers, kind):
        names.append(_filename(headers) or kind)
        return
    if kind.startswith("multipart/") and depth < MAX_MIME_DEPTH:
        parts = [_split(p) for p in _multipart(body, headers.get_boundary(), damage)]
        if not parts:
            texts.append(_decode(body, headers))
            return
        if kind == "multipart/alternative":
            parts = [_best_alternative(parts)]
        elif kind == "multipart/related":  # the root and what it shows: its images (a logo) are no attachments
            parts = parts[:1] + [part for part in parts[1:] if not _shown_by_root(part[0])]
        for sub_headers, sub_body, _ in parts:
            collect_body(sub_headers, sub_body, texts, names, damage, depth + 1)
    elif kind in FORWARDED_TYPES and depth < MAX_MIME_DEPTH:  # a forwarded message, inline or attached
        sub_headers, sub_body, _ = _split(_transfer_decoded(body, headers, damage))
        collect_body(sub_headers, sub_body, texts, names, damage, depth + 1)
    elif kind in ("text/plain", "text/html"):
        payload, name = _transfer_decoded(body, headers, damage), _filename(headers)
        if name and len(payload) > INLINE_FILE_CHARS:  # (no 19 MB decoded to keep 10,000 characters of it)
            payload = payload[:payload.rfind(b"\n", 0, 4 * INLINE_FILE_CHARS) + 1 or 4 * INLINE_FILE_CHARS]
        text = _decode(payload, headers, html=kind == "text/html")
        if kind == "text/html":
            text = html_to_text(text, div_lines=True)
        elif str(headers.get_param("format") or "").lower() == "flowed":
            text = unflow(text, str(headers.get_param("delsp") or "").lower() == "yes")
        if "[cid:" in text:
            text = CID_PLACEHOLDER.sub("", text)
        if "-----BEGIN PGP SIGNED MESSAGE-----" in text:
            text = PGP_SIGNED.sub(lambda found: DASH_ESCAPE.sub("", found.group(1)), text)
        if "-----BEGIN PGP MESSAGE-----" in text:
            text = PGP_ARMOR.sub(lambda found: found.group(1) + ENCRYPTED_BODY, text)
        if "begin " in text:
            text = _without_uuencoded(text, names)
        texts.append(_bounded(text, name) if name and len(text) > INLINE_FILE_CHARS else text)
    elif kind == "text/calendar" and not texts and (event := _invitation(body, headers, damage)):
        texts.append(event)  # an invitation sent without text: its event is what it says
    elif _filename(headers):  # an inline attachment (a patch, an invitation): named, not read
        names.append(_filename(headers) or kind)


def _bounded(text: str, name: str) -> str:
    """A file's text shown inline, to its last line break within ``INLINE_FILE_CHARS``, the rest said unread."""
    cut = text.rfind("\n", 0, INLINE_FILE_CHARS) + 1 or INLINE_FILE_CHARS
    return f"{text[:cut]}[… rest of {name} not read]"


def _without_uuencoded(text: str, names: list[str]) -> str:
    """A text part without the files uuencoded into it (``UUENCODED``), their names added to ``names``."""
    files = [found.group(1) for found in UUENCODED.finditer(text)]
    if not files:
        return text
    names += files
    return re.sub(r"\n{3,}", "\n\n", UUENCODED.sub("", text))  # (the blank lines around a file: one)


def _smime_kind(headers: Message) -> str:
    """A part's content type, S/MIME's by its name where a gateway sent it as application/octet-stream
    (``SMIME_NAMES``)."""
    kind = headers.get_content_type()
    if kind == "application/octet-stream" and (name := (_filename(headers) or "").lower()) in SMIME_NAMES:
        return SMIME_NAMES[name]
    return kind


def _smime_message(headers: Message) -> bool:
    """An S/MIME part that is the message encrypted or signed opaquely: named as S/MIME names it, or not
    at all (not a signed document's ``.p7m``, ``SMIME_NAMES``)."""
    return (_filename(headers) or "smime.p7m").lower() == "smime.p7m"


def _smime(headers: Message, body: bytes, texts: list[str], names: list[str], damage: set[str], depth: int) -> None:
    """An S/MIME message: one signed opaquely is read as the message it signs (``signed_content``); one
    encrypted (its smime-type says so, or its content is no signature) is said to be."""
    kind = str(headers.get_param("smime-type") or "").lower()
    inner = None if kind in ("enveloped-data", "authenveloped-data") else signed_content(
        _transfer_decoded(body, headers, damage))
    if inner is None:
        texts.append(ENCRYPTED_BODY)
    elif depth < MAX_MIME_DEPTH:
        sub_headers, sub_body, _ = _split(inner)
        collect_body(sub_headers, sub_body, texts, names, damage, depth + 1)


def _tnef(headers: Message, body: bytes, texts: list[str], names: list[str], damage: set[str]) -> None:
    """Outlook's winmail.dat: the attachments it holds are named, and its body is the mail's text
    where no text part came before it (Exchange's rich text mail; Outlook's own mail sends a
    text part first, saying the same)."""
    try:
        found = read_tnef(_transfer_decoded(body, headers, damage))
    except ValueError:  # (not TNEF after all: an attachment like any other)
        names.append(_filename(headers) or "winmail.dat")
        return
    names.extend(found.attachments)
    if not texts:
        texts.append(_tnef_body(found) or UNREAD)


def _tnef_body(found: Tnef) -> str:
    """A TNEF body as text: its plain text, else its HTML, else its RTF (``rtf_text``)."""
    if found.text.strip():
        return found.text
    if found.html:
        headers = Message(policy=POLICY)
        if found.html_codepage:
            headers.set_raw("Content-Type", f"text/html; charset={codec(found.html_codepage)}")
        return html_to_text(_decode(found.html, headers, html=True))
    try:
        return rtf_text(decompress_rtf(found.rtf), html_to_text) if found.rtf else ""
    except ValueError:
        return ""


def _shown_by_root(headers: Message) -> bool:
    """A multipart/related part the HTML shows by its Content-ID: an image, not a file sent."""
    return bool(headers.get("content-id")) and headers.get_content_type().startswith("image/")


def _invitation(body: bytes, headers: Message, damage: set[str]) -> str:
    """A text/calendar part's events as text ('' where it cannot be read)."""
    from .ics import invitation_text  # (ics reads HTML descriptions with this module)

    return invitation_text(_decode(_transfer_decoded(body, headers, damage), headers))


def unflow(text: str, delsp: bool = False) -> str:
    """A ``format=flowed`` body (RFC 3676) as its paragraphs: a line ending in a space goes on in
    the next line of the same quote depth (without that space where ``delsp``); a space-stuffed
    line loses its first space; the signature separator ``-- `` is never joined."""
    out: list[str] = []
    open_depth: int | None = None  # the quote depth of a paragraph the last line left open
    for raw in text.replace("\r\n", "\n").split("\n"):
        depth = len(raw) - len(raw.lstrip(">"))
        line = raw[depth:]
        line = line[1:] if line.startswith(" ") else line  # space-stuffing (or the space after ">")
        flowed = line.endswith(" ") and line != "-- "
        if flowed and delsp:
            line = line[:-1]
        if open_depth == depth and line != "-- ":
            out[-1] += line
        else:
            out.append((">" * depth + " " if depth else "") + line)
        open_depth = depth if flowed else None
    return "\n".join(out)


def _boundary_marker(body: bytes, boundary: str) -> bytes:
    """``--boundary`` as the body's bytes write it: a boundary past ASCII was read as text with its
    header (``parse_headers``), from UTF-8 or Windows-1252 bytes, whichever the body holds."""
    if boundary.isascii():
        return b"--" + boundary.encode("ascii")
    markers = [b"--" + boundary.encode(codec, "replace") for codec in ("utf-8", "cp1252", "latin-1")]
    return next((marker for marker in markers if marker in body), markers[0])


def _multipart(body: bytes, boundary: str | None, damage: set[str]) -> list[bytes]:
    """The parts of a multipart body, split at its ``--boundary`` lines (``find``, no regex
    per boundary); a missing closing line (a truncated message) is damage."""
    if not boundary:
        damage.add("NoBoundaryInMultipartDefect")
        return []
    marker = _boundary_marker(body, boundary)
    delimiters: list[tuple[int, int]] = []  # (start of the delimiter line, start of the next line)
    closed = False
    at = 0
    while (found := body.find(marker, at)) >= 0:
        at = found + len(marker)
        if found and body[found - 1] != 0x0A:
            continue
        line_end = body.find(b"\n", at)
        line_end = len(body) if line_end < 0 else line_end + 1
        rest = body[at:line_end].strip()
        if rest == b"--":
            delimiters.append((found, line_end))
            closed = True
            break
        if not rest:
            delimiters.append((found, line_end))
    if not delimiters:
        damage.add("StartBoundaryNotFoundDefect")
        return []
    if not closed:
        damage.add("CloseBoundaryNotFoundDefect")
        delimiters.append((len(body), len(body)))
    return [body[begin:_line_break_before(body, end)] for (_, begin), (end, _) in zip(delimiters, delimiters[1:])]


def _line_break_before(body: bytes, at: int) -> int:
    """The delimiter's preceding line break belongs to it, not to the part."""
    if at and body[at - 1:at] == b"\n":
        at -= 1
        if at and body[at - 1:at] == b"\r":
            at -= 1
    return at


def _best_alternative(parts: list[tuple[Message, bytes, int]]) -> tuple[Message, bytes, int]:
    """text/plain (unless a placeholder for its HTML), else HTML, else a nested multipart, else
    the last (the richest, by the MIME rule)."""
    kinds = [part[0].get_content_type() for part in parts]
    texts = {wanted: next((part for part, kind in zip(parts, kinds) if kind == wanted and
                           not _is_attachment(part[0], kind)), None) for wanted in ("text/plain", "text/html")}
    plain, html = texts["text/plain"], texts["text/html"]
    if plain is not None and not (html is not None and _placeholder(plain, html)):
        return plain
    if html is not None:
        return html
    for part, kind in zip(parts, kinds):
        if kind.startswith("multipart/"):
            return part
    return parts[-1]


def _placeholder(plain: tuple[Message, bytes, int], html: tuple[Message, bytes, int]) -> bool:
    """A text part that only stands in for its HTML ("View this email in your browser", bulk
    mail's; or an empty one): short, where the HTML every mail app shows holds many times its words. A fault in
    either part's encoding is said when the part is read (``collect_body``), not of one left unread."""
    if len(plain[1]) > PLACEHOLDER_BYTES:  # (most mail: not decoded and counted twice)
        return False
    # counted in its bytes, not decoded (a charset's look-up is slow): a letter past ASCII counts
    # each of its bytes, so a placeholder in Chinese is taken for text sooner, never the reverse
    letters = len(_transfer_decoded(plain[1], plain[0], set()).translate(None, NOT_LETTER_BYTES))
    wanted = 4 * letters + 200 if letters else 1  # an empty text part stands in for any HTML with words
    if letters >= PLACEHOLDER_LETTERS or len(html[1]) < wanted:  # (its bytes hold at least its letters)
        return False
    # the HTML's words told by a regex, not parsed: every short reply's HTML twin passes here
    shown = MARKUP.sub(" ", _decode(_transfer_decoded(html[1], html[0], set()), html[0], html=True))
    return sum(map(str.isalnum, shown)) >= wanted


def _is_attachment(part: Message, kind: str) -> bool:
    """A file sent with the mail, named, not read; a mail attached ("forward as attachment") is read."""
    if kind in FORWARDED_TYPES:
        return False
    disposition = part.get("content-disposition")
    if disposition and disposition.split(";", 1)[0].strip().lower() == "attachment":
        return True
    return not kind.startswith(("text/", "multipart/", "message/")) and bool(_filename(part))


def _filename(part: Message) -> str | None:
    try:
        name = part.get_filename()
    except Exception:  # noqa: BLE001 - a broken RFC 2231 parameter
        return None
    return decoded_header(name) if name else None  # Outlook writes RFC 2047 words in filenames


def _transfer_decoded(body: bytes, headers: Message, damage: set[str]) -> bytes:
    """The body without its Content-Transfer-Encoding (base64, quoted-printable); parameters or a comment
    after it (``quoted-printable; charset=utf-8``, as some scripts copy Content-Type's onto it) are passed over."""
    encoding = TRANSFER_ENCODING.match(headers.get("content-transfer-encoding") or "").group(1).lower()
    if encoding == "base64":
        try:
            return binascii.a2b_base64(body)
        except binascii.Error:
            damage.add("InvalidBase64Defect")
            clean = re.sub(rb"[^A-Za-z0-9+/]", b"", body)
            return binascii.a2b_base64(clean[:len(clean) // 4 * 4]) if len(clean) >= 4 else b""
    if encoding == "quoted-printable":
        return binascii.a2b_qp(QP_SPACED_SOFT_BREAK.sub(b"=", body) if b"= " in body or b"=\t" in body else body)
    return body


def _decode(payload: bytes, headers: Message, html: bool = False) -> str:
    """Text in its declared charset (an HTML part's <meta> one where its header names none),
    else UTF-8, else Windows-1252 (``_undeclared``); under an ASCII label, UTF-8 first."""
    try:
        declared = headers.get_content_charset()
    except Exception:  # noqa: BLE001 - a broken parameter
        declared = None
    if declared is None and html and (meta := META_CHARSET.search(payload, 0, META_PRESCAN_BYTES)):
        declared = meta.group(1).decode("ascii").lower()
        # a tag read as ASCII is in no UTF-16 (.NET writes "utf-16" into UTF-8 pages): as browsers do, UTF-8
        declared = "utf-8" if declared.startswith(("utf-16", "utf16", "unicode")) else declared
    if (declared is None or declared.strip().lower() in ASCII_NAMES) and b"\x1b$" in payload:
        declared = jis.NAME  # (7-bit ISO-2022-JP under no label, or under ASCII's: old Japanese mailers)
    utf8_first = declared is not None and declared.strip().lower() in UTF8_FIRST_NAMES
    declared = superset(declared)  # as browsers do: mail that says Latin-1 is written in Windows-1252
    for charset in ("utf-8", declared) if utf8_first else (declared, "utf-8"):
        if charset:
            try:
                return payload.decode(charset)
            except (LookupError, UnicodeDecodeError):
                continue
    return _undeclared(payload)


def _undeclared(data: bytes, hint: str | None = None) -> str:
    """8-bit text in no charset that reads: UTF-8, else in ``hint`` (a charset declared nearby), else
    Windows-1252 (what mail written on Windows without a label is: its ’ € “ ” are C1 controls in
    Latin-1), else Latin-1 (which never fails)."""
    for charset in ("utf-8", superset(hint) or "cp1252", "cp1252"):
        try:
            return data.decode(charset)
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode("latin-1")
