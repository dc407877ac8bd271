"""Mail: mbox files (Gmail Takeout, Thunderbird, Apple Mail) and Maildir folders, one record a message.

Both formats share one parser (the standard library's ``email`` package: ``Message``
objects for headers, ``email.header`` and ``email.utils`` to decode them; MIME parts are
split on their boundaries here, so attachments are never walked line by line) and differ
only in how messages are found: an mbox is streamed in blocks and split at its ``From ``
lines (never held whole), a Maildir's messages are the files of its ``cur/`` and ``new/``
folders, read and never renamed, moved or flagged.

A record's ``text`` is the whole body; what is embedded and keyword-indexed
(``content``) is the subject, the sender and the message's own new part, without the
quoted history a reply carries, so a reply does not match everything it quotes.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Iterable, Iterator

from ..records import Record
from .base import Export, ExportFile, clean_text, export_record, iso
from .left_out import leave_out
from .mail_bins import IN_BIN, GmailBins, bin_mailbox, gmail_labels, warn_bin_mailbox, warn_left_out
from .mail_dates import mail_date
from .mail_folders import account_mailbox, account_roots, folders_of, in_maildir, mailbox_path, mbox_name
from .mail_headers import addresses, declared_charset, first_value, header_text, ids_of, message_id_of, person
from .mail_lines import normal_blocks, normal_line_ends
from .mail_quotes import new_part
from .mime import ENCRYPTED_BODY, collect_body, decoded_header, find_header_end, parse_headers
from .outlook_files import warn_outlook_files
from .tnef import UNREAD

MBOXRD_ESCAPE = re.compile(rb"(?m)^>(>*From )")
# An mbox message starts at a "From " line at the start of the file or after a blank
# line, and its headers follow that line: mboxrd writers escape body lines that start with
# "From " as ">From ", but old mboxo files and mailboxes joined by hand do not ("From the
# station we take the bus" after a blank line is still the body).
# Some writers leave out the blank line (mblaze's mexport, scripts that join messages) or the From line's
# sender and date (GYB, some Thunderbird stores: "From " alone): a From line with the sender and asctime's
# date ("Fri Jul  8 14:08:34"), or with nothing but perhaps a "-", followed by a header, starts a message
# after any line.
ASCTIME = rb"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) +(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} +\d\d?:\d\d"
BARE_FROM_LINE = rb"From(?:[ \t]+-?)?[ \t]*\r?"
MBOX_SEPARATOR = re.compile(rb"\n\r?\n(?=From \S+ +\S[^\n]*\n[!-9;-~]+:)"
                            rb"|\n(?=(?:From \S+ +" + ASCTIME + rb"[^\n]*|" + BARE_FROM_LINE + rb")\n[!-9;-~]+:)")
# The date an mbox's From line gives its message, when the mail app stored it: asctime's, perhaps with an
# offset before the year (Takeout's "Mon Mar 04 10:00:00 +0000 2024").
FROM_LINE_DATE = re.compile(rb"From \S+ +(" + ASCTIME + rb"[^\n]*?\d{4})\s*$")
MBOX_SEPARATOR_REACH = 1024  # bytes a separator with its From line and next header's name may span
# An mbox is read in blocks of this size: Gmail's Takeout mbox can be tens of gigabytes.
MBOX_BLOCK_BYTES = 8 << 20
# Thunderbird's message flags, in hex; 0x0008 (MSG_FLAG_EXPUNGED) marks a deleted message.
MOZILLA_STATUS = re.compile(rb"^X-Mozilla-Status:[ \t]*([0-9A-Fa-f]{1,4})[ \t]*\r?$", re.M | re.I)
MOZILLA_EXPUNGED = 0x0008
# UW-IMAP, Pine/Alpine and Dovecot keep an mbox's UIDs in a first message of their own, marked by
# its X-IMAP header (a real first message carries X-IMAPbase instead) and its subject.
FOLDER_DATA = (re.compile(rb"^X-IMAP:", re.M | re.I),
               re.compile(rb"^Subject:[ \t]*DON'T DELETE THIS MESSAGE -- FOLDER INTERNAL DATA", re.M | re.I))
# (a byte order mark or blank lines before it, as Windows tools and mailboxes joined by hand write them)
MBOX_HEAD = re.compile(rb"\A(?:\xef\xbb\xbf)?\n*(?:From \S+ +\S[^\n]*|" + BARE_FROM_LINE + rb")\r?\n[!-9;-~]+:")
MBOX_LEAD = re.compile(rb"(?:\xef\xbb\xbf)?[\r\n]*")
# UTF-16's byte order marks: a message Windows PowerShell saved with Out-File or ">" (its default there)
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# A file looks like a mail message when its first line is a header and its header
# block names a sender, a date, a subject or a message id.
FIRST_HEADER = re.compile(rb"\A(?:From \S+ +\S[^\n]*\n)?[!-9;-~]+:")
MAIL_HEADERS = re.compile(rb"^(?:from|date|subject|message-id):", re.I | re.M)
# A link no Message-ID can be (no angle brackets hold a space): Gmail's conversation, by its X-GM-THRID.
GMAIL_THREAD = "gmail thread "
# And Outlook's and Exchange's conversation: the first 22 bytes of Thread-Index (a reply adds 5 of its own).
OUTLOOK_THREAD, OUTLOOK_THREAD_BYTES = "outlook thread ", 22
# Headers a message has at most once (RFC 5322 3.6); a second one is read too, with a WARN.
SINGLE_HEADERS = ("from", "to", "cc", "subject", "date", "message-id", "in-reply-to")
# The subject an encrypted mail shows in place of its own, which it carries inside (protected headers):
# Thunderbird's, mutt's and Delta Chat's "...", the IETF draft's "[...]", K-9's and Enigmail's "Encrypted
# Message" in their user's language, pEp's "p≡p", notmuch's test mail's "Subject Unavailable"; after a
# reply's or a forward's prefix too. Only an encrypted mail's subject is a stand-in: "..." on a mail
# anyone can read is its subject.
HIDDEN_SUBJECT = re.compile(r"^(?:(?:re|aw|sv|vs|fwd?|wg|tr)\s?:\s*)*(?:\.\.\.|…|\[(?:\.\.\.|…)\]|p≡p|pEp|"
                            r"encrypted message|subject unavailable|verschlüsselte nachricht|message chiffré|"
                            r"mensaje cifrado|messaggio cifrato|versleuteld bericht|mensagem (?:encriptada|criptografada)|"
                            r"зашифрованное сообщение)$", re.I)
HIDDEN_SUBJECT_BODY = "[encrypted message: its subject and text not decrypted]"
# A Maildir file name ends in ":2," and its flags (";" "!" or "," where ":" is not allowed).
MAILDIR_INFO = re.compile(r"[:;!,]2,([A-Za-z]*)$")
MAILDIR_FLAGS = {"D": "draft", "F": "flagged", "P": "passed", "R": "replied", "S": "seen", "T": "trashed"}
# Apple Mail's own store (~/Library/Mail/V10/...): an .emlx file is the message's length in
# bytes on a line of its own, the message, then a property list of Apple's flags.
EMLX_LENGTH = re.compile(rb"\A[ \t]*(\d{1,12})[ \t]*\r?\n")


class Reader:
    """One format of this module, as ``FORMATS`` names it (``mail:mbox``)."""

    def __init__(self, detect: Callable[[Export], bool], read: Callable[[Export], list[Record]]) -> None:
        self.detect = detect
        self.read = read


# -- mbox --


def detect_mbox(export: Export) -> bool:
    """A file that starts with an mbox ``From `` line followed by a header; a folder holding
    a Maildir is a Maildir (its single-message files may start with ``From `` lines too)."""
    return any(True for _ in _mbox_files(export)) and not detect_maildir(export)


def read_mbox(export: Export) -> list[Record]:
    """Every message of every mbox file."""
    mails = export.read_each(list(_mbox_files(export)), lambda f: _mbox_mails(export, f))
    warn_outlook_files(export)
    return _records(export, mails)


def _mbox_files(export: Export) -> Iterator[ExportFile]:
    for file in export.files():
        if not in_maildir(file) and not _is_eml(file) and MBOX_HEAD.match(
                normal_line_ends(file.head(4096)).replace(b"\r\n", b"\n")):
            yield file


def _mbox_mails(export: Export, file: ExportFile) -> Iterator[_Mail]:
    """Each message of the mbox, parsed on its own as the file streams past; those
    Thunderbird deleted (``_expunged``) are counted, as left out on purpose, not read."""
    conversation = mbox_name(file)
    if not export.include_spam_and_trash and bin_mailbox(conversation):
        count = sum(1 for line, data in mbox_messages(file)
                    if data.strip() and not _expunged(data) and not (line == 1 and _folder_data(data)))
        warn_bin_mailbox(export, file, conversation, count, "the mbox")
        return
    deleted: list[int] = []
    binned: list[int] = []
    gmail = GmailBins(file.name)
    # labelled Bin: the user's label, read once a message labelled Trash says so, else British Gmail's bin
    waiting: list[tuple[int, bytes]] = []
    for line, data in mbox_messages(file):
        if (line == 1 and _folder_data(data)) or not data.strip():
            continue
        verdict = None if export.include_spam_and_trash else gmail.verdict(data)
        if gmail.american and waiting:  # (a message labelled Trash said whose Bin it is: the user's)
            for earlier, held in waiting:
                yield from _parse_one(export, file, held, earlier, conversation)
            waiting = []
        if _expunged(data):
            deleted.append(line)
        elif verdict == IN_BIN:
            binned.append(line)
        elif verdict is None:
            yield from _parse_one(export, file, data, line, conversation, cut=not data.endswith(b"\n"))
        else:
            waiting.append((line, data))
    binned = sorted(binned + [line for line, _ in waiting])  # (no Trash came: Bin was the bin)
    if deleted:
        many = len(deleted) > 1
        leave_out(export, file, deleted[0], f"{len(deleted)} message{'s' if many else ''} Thunderbird marked deleted "
                  f"(X-Mozilla-Status); {'they leave' if many else 'it leaves'} the file when the folder is compacted")
    if binned:
        warn_left_out(export, file, binned[0], len(binned), "the mbox")


def _folder_data(data: bytes) -> bool:
    """The first message UW-IMAP, Pine/Alpine and Dovecot keep an mbox's UIDs in: no one's mail."""
    end = find_header_end(data)
    return all(pattern.search(data, 0, end) for pattern in FOLDER_DATA)


def _expunged(data: bytes) -> bool:
    """Thunderbird deletes a message by setting the expunged bit of its X-Mozilla-Status
    header; the bytes stay in the mbox until the folder is compacted, unseen in the app."""
    found = MOZILLA_STATUS.search(data, 0, find_header_end(data))
    return bool(found) and int(found.group(1), 16) & MOZILLA_EXPUNGED != 0


def mbox_messages(file: ExportFile) -> Iterator[tuple[int, bytes]]:
    """(first line, bytes) of each message: split at ``From `` lines that follow a blank
    line, reading the file in blocks, so memory holds one block and one message."""
    line, search_from = 1, 1
    buffer = b""
    for block in normal_blocks(_blocks(file)):
        if not buffer and line == 1 and (lead := MBOX_LEAD.match(block).end()):  # (before the first From line)
            block, line = block[lead:], line + block.count(b"\n", 0, lead)
        buffer += block
        start = 0
        for found in MBOX_SEPARATOR.finditer(buffer, search_from):
            end = found.end()
            yield line, buffer[start:end]
            line += buffer.count(b"\n", start, end)
            start = end
        buffer = buffer[start:]
        search_from = max(1, len(buffer) - 2 - MBOX_SEPARATOR_REACH)  # a separator cut by the block's end
    if buffer.strip():
        yield line, buffer


def _blocks(file: ExportFile) -> Iterator[bytes]:
    """The file in blocks, from disk (a zip member is in memory already)."""
    if file.path is None:
        yield file.read_bytes()
        return
    with open(file.path, "rb") as handle:
        while block := handle.read(MBOX_BLOCK_BYTES):
            yield block


# -- Maildir --


def detect_maildir(export: Export) -> bool:
    """A folder with ``cur/`` or ``new/`` folders holding mail messages, or ``.eml`` files
    (one message a file, as mail apps save and export them: read as a Maildir's are)."""
    return any((_is_eml(f) or (in_maildir(f) and export.path.is_dir())) and _looks_like_mail(_head(f))
               for f in export.files())


def _is_eml(file: ExportFile) -> bool:
    """A single message saved by a mail app; one that starts with an mbox ``From `` line
    (Thunderbird's ImportExportTools) is still one message, not an mbox. Apple Mail's
    ``.emlx`` (``.partial.emlx``: attachments stored beside it) is one message too."""
    return file.name.lower().endswith((".eml", ".emlx"))


def _head(file: ExportFile) -> bytes:
    """The first 8 KB of a message file, an .emlx's length line left out."""
    head = file.head(8192)
    return _emlx_message(head)[0] if file.name.lower().endswith(".emlx") else _message_bytes(head)[0]


def _message_bytes(data: bytes) -> tuple[bytes, int]:
    """A message file's bytes as mail, and the line its headers start at: without a byte order mark
    (a Windows script's .eml; UTF-16 read as its text) and the blank lines scripts and web forms leave
    before the headers."""
    if data.startswith(UTF16_BOMS):  # (a head cut in a character's middle loses that character alone)
        data = data.decode("utf-16", "ignore").encode("utf-8", "surrogatepass")
    data = normal_line_ends(data)  # (old Mac's "\r", a twice converted "\r\r\n": ``mail_lines``)
    lead = MBOX_LEAD.match(data).end()  # (a UTF-8 byte order mark, then blank lines)
    return data[lead:], 1 + data.count(b"\n", 0, lead)


def _emlx_message(data: bytes) -> tuple[bytes, int]:
    """An .emlx file's message (its length line and trailing property list cut off) and
    the line it starts at; a file without the length line is read whole."""
    found = EMLX_LENGTH.match(data)
    if found is None:
        return normal_line_ends(data), 1
    return normal_line_ends(data[found.end():found.end() + int(found.group(1))]), 2


def read_maildir(export: Export) -> list[Record]:
    """Every message file: those of ``cur/`` and ``new/`` (``tmp/`` holds deliveries not yet
    finished), and in folders without them (notmuch or MH trees) the files that are mail."""
    files = [f for f in export.files() if _maildir_message(f)]
    warn_outlook_files(export)  # (their mail is not read; a folder of them alone is no Maildir: its error names them)
    aside = _SetAside()
    mailboxes = {tuple(mailbox_path(f)) for f in files}  # (the folders that hold mail of their own)
    roots = account_roots(files)
    mails = export.read_each(files, lambda f: _maildir_mails(export, f, aside, (mailboxes, roots)))
    if aside.gmail.american:  # (the collection said by its end which the account's Bin is: read now)
        mails += export.read_each(aside.waiting, lambda f: _maildir_mails(export, f, aside, (mailboxes, roots)))
    else:
        aside.binned += [(file, None) for file in aside.waiting]
    records, binned = _records(export, mails), aside.binned
    labelled = [file for file, mailbox in binned if mailbox is None]
    if labelled:
        warn_left_out(export, labelled[0], None, len(labelled), "the folder")
    for mailbox in dict.fromkeys(mailbox for _, mailbox in binned if mailbox is not None):
        files_of = [file for file, other in binned if other == mailbox]
        warn_bin_mailbox(export, files_of[0], mailbox, len(files_of), "the folder")
    return records


@dataclass
class _SetAside:
    """What a Maildir's reading sets aside: the files in a bin (with their Trash or Junk mailbox; None:
    Gmail's label), and those Gmail labels Bin, read or not (unread till then) as ``gmail`` says at the end."""

    binned: list[tuple[ExportFile, str | None]] = field(default_factory=list)
    gmail: GmailBins = field(default_factory=GmailBins)
    waiting: list[ExportFile] = field(default_factory=list)


def _maildir_message(file: ExportFile) -> bool:
    folders = folders_of(file)
    if file.name.startswith(".") or (folders and folders[-1] == "tmp"):
        return False
    return (bool(folders) and folders[-1] in ("cur", "new")) or _is_eml(file) or _looks_like_mail(_head(file))


def _looks_like_mail(head: bytes) -> bool:
    head = head.replace(b"\r\n", b"\n")
    header = head.split(b"\n\n", 1)[0]
    return bool(FIRST_HEADER.match(head)) and bool(MAIL_HEADERS.search(header))


def _maildir_mails(export: Export, file: ExportFile, aside: _SetAside,
                   tree: tuple[set[tuple[str, ...]], set[tuple[str, ...]]]) -> Iterator[_Mail]:
    """The message of one file; one in a Trash or Junk mailbox (from its account's top: ``tree`` holds the
    folders with mail of their own and the accounts' Maildir++ INBOXes, ``account_mailbox``) or that Gmail
    labels Spam or Trash is set ``aside`` unread, unless asked for, and one it labels Bin waits there."""
    data, start = file.read_bytes(), 1
    data, start = _emlx_message(data) if file.name.lower().endswith(".emlx") else _message_bytes(data)
    folders = folders_of(file)
    if not in_maildir(file) and not _looks_like_mail(data[:8192]):
        if _is_eml(file):  # (named as mail, so said; a file of an MH tree that is none is passed over)
            export.warn(file, start, "not a mail message (no header at its start); skipped")
        return
    path = mailbox_path(file)
    conversation = "/".join(path) or "INBOX"
    in_bin = bool(path) and bin_mailbox(account_mailbox(path, *tree))
    apple = [f[:-5] for f in folders if f.lower().endswith(".mbox") and len(f) > 5]
    if start == 2 and apple:  # Apple Mail: Work.mbox/Clients.mbox/<uuid>/Data/Messages is Work/Clients
        conversation = "/".join(apple)
        in_bin = bin_mailbox(conversation)
    verdict = None if export.include_spam_and_trash or in_bin else aside.gmail.verdict(data)
    if not export.include_spam_and_trash and (in_bin or verdict == IN_BIN):
        aside.binned.append((file, conversation if in_bin else None))
        return
    if verdict is not None:  # (labelled Bin: the user's label or British Gmail's bin, told at the end)
        aside.waiting.append(file)
        return
    info = MAILDIR_INFO.search(file.name)
    flags = [MAILDIR_FLAGS[f] for f in info.group(1) if f in MAILDIR_FLAGS] if info else []
    for mail in _parse_one(export, file, data, start, conversation):
        mail.metadata["flags"] = flags or None
        # the file's name changes when a client flags it and new/ moves to cur/: the id
        # rests on the folder and the message id instead
        mail.folder_id, mail.unique = conversation, file.name[:info.start()] if info else file.name
        yield mail


# -- one message --


@dataclass
class _Mail:
    """A parsed message, waiting for its thread to be resolved across the collection."""

    file: ExportFile
    line: int
    end_line: int
    body_line: int
    text: str
    new_part: str
    message_id: str | None
    links: list[str]  # the ids of References and In-Reply-To
    key: str
    metadata: dict[str, Any] = field(default_factory=dict)
    folder_id: str | None = None  # Maildir: ids rest on the folder, not on the file's changing name
    unique: str = ""  # Maildir: the file's name without its flags, to tell duplicates apart


def _parse_one(export: Export, file: ExportFile, data: bytes, start: int, conversation: str,
               cut: bool = False) -> list[_Mail]:
    """``_parse``, where a message no rule foresaw is a WARN at its line and the file goes on."""
    try:
        return list(_parse(export, file, data, start, conversation, cut))
    except Exception as exc:  # noqa: BLE001 - one strange message must not cost the mailbox
        export.warn(file, start, f"message skipped: {type(exc).__name__}: {exc}")
        return []


def _parse(export: Export, file: ExportFile, data: bytes, start: int, conversation: str,
           cut: bool = False) -> Iterator[_Mail]:
    """One message's record data; ``cut``: the file ends inside it (a truncated mbox)."""
    end = start + data.rstrip().count(b"\n")
    if b"\n>From " in data:  # mboxrd escapes body "From " lines: unescape one level
        data = MBOXRD_ESCAPE.sub(rb"\1", data)
    header_end = find_header_end(data)
    headers, fields = parse_headers(data[:header_end])
    body = data[header_end:]
    if not (fields.keys() & {"from", "date", "subject", "message-id"}):
        export.warn(file, start, "not a mail message (no From, Date, Subject or Message-ID header); skipped")
        return
    warn = _Warner(export, file, start, data[:header_end])
    for name in SINGLE_HEADERS:
        if len(fields.get(name, ())) > 1:
            which = "all are read" if name in ("to", "cc") else "the first is read"
            warn(name, f"the message has {len(fields[name])} '{name.title()}' headers; {which}", 1)
    charset = None if data[:header_end].isascii() else declared_charset(headers, body)
    text = header_text(fields, charset)
    date, stored = _date(fields, warn, data[:data.find(b"\n")] if data.startswith(b"From ") else b"")
    author, to, cc = (addresses(fields, name, charset) for name in ("from", "to", "cc"))
    subject = text("subject")
    message_id = message_id_of(first_value(fields, "message-id"))
    links = ids_of(first_value(fields, "references")) + ids_of(first_value(fields, "in-reply-to"))
    texts: list[str] = []
    names: list[str] = []
    damage: set[str] = set() if header_end < len(data) or data.endswith(b"\n\n") else {"no body after the headers"}
    collect_body(headers, body, texts, names, damage, 0)
    if cut:
        damage.add("the file ends in the middle of its last line")
    if ENCRYPTED_BODY in texts and HIDDEN_SUBJECT.match(subject.strip()):  # (no subject: what it hides is no words)
        subject, texts = "", [HIDDEN_SUBJECT_BODY if t == ENCRYPTED_BODY else t for t in texts]
    if UNREAD in texts:
        warn(None, f"the text of '{subject or '(no subject)'}' is only in its winmail.dat (Outlook's TNEF), which "
             "holds none that could be read; its subject and attachments are searchable")
    if damage:
        warn(None, f"the message is damaged ({', '.join(sorted(damage))}); what could be read is kept")
    parts = [clean_text(t) for t in texts] + ["\n".join(f"[attachment: {n}]" for n in names)]
    body_text = "\n\n".join(p for p in parts if p)
    if not body_text and not subject:
        export.warn(file, start, "a message without subject or text; skipped")
        return
    people = author + to + cc
    metadata: dict[str, Any] = {
        "date": iso(date), "author": person(author[0]) if author else None,
        "participants": list(dict.fromkeys(p for pair in people for p in pair if p)) or None,
        "to": [person(p) for p in to] or None, "cc": [person(p) for p in cc] or None,
        "subject": subject or None, "conversation": conversation, "thread": (links or [message_id])[0],
        "tags": gmail_labels(text("x-gmail-labels")), "message_id": message_id,
        "gmail_thread": first_value(fields, "x-gm-thrid").strip() or None,
    }
    # (a date read from the From line is left out of the key: the record keeps the id it had undated)
    keyed = f"{None if stored else metadata['date']}|{metadata['author']}|{subject}|{body_text[:500]}"
    key = message_id or hashlib.sha1(keyed.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    body_line = start + data.count(b"\n", 0, header_end)
    if metadata["gmail_thread"]:  # Gmail's conversation joins its messages as it shows them (_set_threads)
        links = links + [GMAIL_THREAD + metadata["gmail_thread"]]
    if conversation_id := _outlook_conversation(first_value(fields, "thread-index")):  # (and Outlook's)
        links = links + [OUTLOOK_THREAD + conversation_id]
    yield _Mail(file, start, max(end, start), body_line, body_text, new_part(body_text, subject or ""), message_id,
                links, key, metadata)


def _outlook_conversation(thread_index: str) -> str | None:
    """The conversation an Outlook Thread-Index names (its first 22 bytes), as hex; None without one."""
    try:
        data = base64.b64decode("".join(thread_index.split()), validate=True)
    except ValueError:  # (binascii.Error: not base64)
        return None
    return data[:OUTLOOK_THREAD_BYTES].hex() if len(data) >= OUTLOOK_THREAD_BYTES else None


class _Warner:
    """WARNs about one message, at the line of the header at fault (else its first line)."""

    def __init__(self, export: Export, file: ExportFile, start: int, header: bytes) -> None:
        self.export, self.file, self.start, self.header = export, file, start, header

    def __call__(self, name: str | None, reason: str, nth: int = 0, skipped: bool = False) -> None:
        line = self.start
        if name is not None:
            found = list(re.finditer(rb"(?im)^" + re.escape(name.encode()) + rb":", self.header))
            if found:
                line += self.header.count(b"\n", 0, found[min(nth, len(found) - 1)].start())
        self.export.warn(self.file, line, reason, skipped=skipped)


def _date(fields: dict[str, list[str]], warn: _Warner, from_line: bytes = b"") -> tuple[datetime | None, bool]:
    """The Date header (in English, else in a European language); without a readable one, when the
    message arrived (``_received``), else when its mail app stored it (an mbox ``from_line``'s date:
    then True), as mail apps show it, with a WARN either way."""
    # decoded as any header is: raw 8-bit bytes (a month name in UTF-8) read, not quoted as surrogates
    raw = decoded_header((fields.get("date") or [""])[0])
    if raw and (date := mail_date(raw)):
        return date, False
    arrived, by = _received(fields), "its Received header"
    if arrived is None and (found := FROM_LINE_DATE.match(from_line)):
        arrived, by = mail_date(found.group(1).decode("ascii", "replace")), "its mbox From line"
    fallback = f"dated by {by}, {arrived.isoformat()}" if arrived else "kept undated"
    if not raw:
        warn(None, f"the message has no Date header; {fallback}")
    else:
        warn("date", f"the Date header '{raw[:60]}' is not a date; {fallback}")
    return arrived, arrived is not None and by == "its mbox From line"


def _received(fields: dict[str, list[str]]) -> datetime | None:
    """The date the newest Received header (the top one, the last server's) stamps after its ';'."""
    for value in fields.get("received") or ():
        stamp = " ".join(value.rpartition(";")[2].split())
        try:
            if stamp:
                return parsedate_to_datetime(stamp)
        except (TypeError, ValueError, IndexError, OverflowError):
            continue
    return None


# -- the body --


# -- records --


def _records(export: Export, mails: Iterable[_Mail]) -> list[Record]:
    mails = list(mails)
    _set_threads(mails)
    seen: dict[str, int] = {}
    return [_record(export, mail, seen) for mail in mails]


def _set_threads(mails: list[_Mail]) -> None:
    """A thread is every message linked by Message-ID, References or In-Reply-To (as
    notmuch and mutt thread) or by Gmail's conversation (X-GM-THRID), across the collection,
    so a reply whose References are wrong, cut or missing still joins its conversation; it
    is named by its earliest message present (the first References id when the thread's
    start is not in the mailbox)."""
    parent: dict[str, str] = {}

    def find(item: str) -> str:
        root = item
        while parent.get(root, root) != root:
            root = parent[root]
        while item != root:  # compress the path for the next look-up
            parent[item], item = root, parent[item]
        return root

    for mail in mails:
        ids = ([mail.message_id] if mail.message_id else []) + mail.links
        for other in ids[1:]:
            first, second = find(ids[0]), find(other)
            if first != second:
                parent[second] = first
    earliest: dict[str, tuple[tuple[bool, str, str], str]] = {}
    for mail in mails:
        if mail.message_id:
            root, date = find(mail.message_id), mail.metadata.get("date")
            rank = (date is None, date or "", mail.message_id)
            if root not in earliest or rank < earliest[root][0]:
                earliest[root] = (rank, mail.message_id)
    for mail in mails:
        ids = ([mail.message_id] if mail.message_id else []) + mail.links
        if ids:
            root = find(ids[0])
            mail.metadata["thread"] = earliest[root][1] if root in earliest else mail.metadata["thread"] or mail.key
        else:
            mail.metadata["thread"] = mail.key


def _record(export: Export, mail: _Mail, seen: dict[str, int]) -> Record:
    metadata = {k: v for k, v in mail.metadata.items() if v is not None}
    metadata["format"] = export.format
    scope = mail.folder_id or mail.file.rel
    count = seen[f"{scope}#{mail.key}"] = seen.get(f"{scope}#{mail.key}", 0) + 1
    key = mail.key
    if count > 1:  # the same message twice in one mailbox or folder
        key += f"~{mail.unique}" if mail.folder_id else f"~{count}"
    head = f"Subject: {metadata.get('subject', '')}\nFrom: {metadata.get('author', '')}\n\n"
    content = head + (mail.new_part or mail.text)
    # the header lines of the content come from the message's headers, its words from the body
    segments = ((0, mail.line, max(mail.line, mail.body_line - 1)),
                (len(head), min(mail.body_line, mail.end_line), mail.end_line))
    record = export_record(export, mail.file, mail.text, mail.line, mail.end_line, metadata, key,
                           anchor=mail.message_id, content=content, segments=segments)
    if mail.folder_id:
        record = record.replace(id=f"{export.name}:{mail.folder_id}#{key}")
    return record


mbox = Reader(detect_mbox, read_mbox)
maildir = Reader(detect_maildir, read_maildir)
