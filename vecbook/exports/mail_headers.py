"""A mail's header values as text (``header_text``; 8-bit ones in the charset it declares,
``declared_charset``), its people (``addresses``, ``person``) and
its ids (``message_id_of``, ``ids_of``), as ``mail`` reads them into a record's metadata."""

from __future__ import annotations

import re
from email.message import Message
from email.utils import getaddresses
from typing import Callable

from .mime import decoded_header, unescaped_jis

# One address in the common forms: "Name" <a@b>, Name <a@b>, <a@b>, a@b, and a@b <a@b>, as many mailers
# write an address without a name (email.utils reads it as two people). Anything else (groups, comments,
# routes) goes to email.utils.getaddresses, which is exact but slow.
FAST_ADDRESS = re.compile(r'[ \t]*(?:"((?:[^"\\]|\\.)*)"|([^",<>();:\\]*?))[ \t]*<([^<>,\s"]+)>[ \t]*(?:,|$)'
                          r'|[ \t]*([^",<>()\s;:\\]+@[^",<>()\s;:\\]+)[ \t]*(?:,|$)')
MESSAGE_IDS = re.compile(r"<([^<>]+)>")
# A text part's Content-Type, folded lines and all, and the charset it names: the one a multipart message's
# unencoded 8-bit headers are read in (``declared_charset``).
TEXT_PART_TYPE = re.compile(rb"^Content-Type:[ \t]*text/[^\n]*(?:\n[ \t][^\n]*)*", re.I | re.M)
CHARSET_PARAMETER = re.compile(rb"charset[ \t]*=[ \t]*\"?([A-Za-z0-9_.:-]+)", re.I)


def declared_charset(headers: Message, body: bytes) -> str | None:
    """The charset the message's text declares (its first text part's, where it is multipart), which
    old clients (Foxmail, Becky!, The Bat!) wrote its headers in unencoded, as Thunderbird reads them."""
    charset = headers.get_content_charset()
    if charset is None and (part := TEXT_PART_TYPE.search(body, 0, 1 << 16)):
        found = CHARSET_PARAMETER.search(part.group(0))
        charset = found.group(1).decode("ascii") if found else None
    return charset


def header_text(fields: dict[str, list[str]], charset: str | None = None) -> Callable[[str], str]:
    """The first value of a header as text ('' when absent; raw 8-bit bytes that are no UTF-8 read
    in ``charset``)."""
    def text(name: str) -> str:
        values = fields.get(name)
        return decoded_header(values[0], charset) if values else ""
    return text


def first_value(fields: dict[str, list[str]], name: str) -> str:
    """A header's first raw value (ids and numbers: nothing to decode)."""
    values = fields.get(name)
    return values[0] if values else ""


def addresses(fields: dict[str, list[str]], name: str, charset: str | None = None) -> list[tuple[str, str]]:
    """(display name, address) pairs of every such header (a repeated Cc is read whole);
    names are decoded after the split (raw 8-bit bytes that are no UTF-8 in ``charset``), so an
    encoded comma does not split a name."""
    pairs: list[tuple[str, str]] = []
    for value in fields.get(name) or ():
        value = unescaped_jis(value.replace("\r", " ").replace("\n", " ").strip())  # (its ";" is no group's end)
        pairs += _fast_addresses(value) or getaddresses([value])
    pairs = [(decoded_header(n, charset) if n else n, a if a.isascii() else decoded_header(a, charset))
             for n, a in pairs]
    pairs = [(_unquoted(n), a) for n, a in pairs]
    return [(n, a if "@" in a or not n else "") for n, a in pairs if n or a]


def _unquoted(name: str) -> str:
    """A name without the single quotes Outlook puts around a name it was given ('Ana Lima')."""
    return name[1:-1].strip() if len(name) > 2 and name[0] == name[-1] == "'" else name


def _fast_addresses(value: str) -> list[tuple[str, str]] | None:
    """The addresses of a header in the common forms; None when it holds anything else."""
    pairs, at = [], 0
    while at < len(value):
        found = FAST_ADDRESS.match(value, at)
        if found is None or found.end() == at:
            return None
        quoted, plain, bracketed, bare = found.groups()
        if bare is not None:
            pairs.append(("", bare))
        else:
            name = quoted.replace('\\"', '"') if quoted is not None else (plain or "").strip()
            pairs.append((name, bracketed))
        at = found.end()
    return pairs


def person(pair: tuple[str, str]) -> str:
    """A person as metadata names them: ``Name <address>``, or either alone."""
    name, address = pair
    return f"{name} <{address}>" if name and address and name != address else name or address


def message_id_of(value: str) -> str | None:
    """A Message-ID header's id, without its angle brackets."""
    ids = ids_of(value)
    return ids[0] if ids else (value.strip("<> ") or None)


def ids_of(value: str) -> list[str]:
    """The ids of a References or In-Reply-To header."""
    return [i.strip() for i in MESSAGE_IDS.findall(value) if i.strip()] if "<" in value else []
