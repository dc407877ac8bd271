"""Mail in Spam or Trash, which a mail app's search leaves out unless asked, and so does VecBook's
(a collection's ``include_spam_and_trash`` reads it): the messages Gmail labels so (Takeout's
``X-Gmail-Labels``), and the mailboxes that are a Trash or Junk folder (Thunderbird's, Apple
Mail's, Outlook's, an IMAP server's)."""

from __future__ import annotations

import re

from .base import Export, ExportFile
from .left_out import keep_setting, leave_out
from .mime import decoded_header, find_header_end

# Gmail's labels as Takeout writes them, in the account's language ("Posteingang,Wichtig"; a value
# past ASCII as one encoded word, commas and all); a message labelled Trash or Spam, here in the
# languages Gmail's own names were found in, lower case, is in Gmail's bin, whatever its other labels
# (one in Trash that was Important is still trash), which its search leaves out unless asked
# (``in:anywhere``). Gmail's IMAP folders bear the same names ("[Gmail]/Papierkorb").
GMAIL_LABELS = re.compile(rb"^X-Gmail-Labels:[ \t]*([^\n]*(?:\n[ \t][^\n]*)*)", re.M | re.I)
GMAIL_BINS = frozenset({
    "trash", "bin", "spam", "papierkorb", "corbeille", "papelera", "cestino", "lixeira", "lixo", "prullenbak", "kosz",
    "papperskorgen", "papirkurv", "roskakori", "roskaposti", "skräppost", "koš", "çöp kutusu", "корзина", "спам",
    "кошик", "ゴミ箱", "迷惑メール", "已删除邮件", "垃圾邮件", "垃圾桶", "垃圾郵件", "휴지통", "스팸함", "אשפה", "ספאם",
    "المهملات"})
# The names mail apps give their Trash and Junk folders on disk, lower case, besides Gmail's: Thunderbird's
# "Trash" and "Junk" (in English whatever its language), Apple Mail's "Deleted Messages" and "Junk",
# Outlook's and Exchange's "Deleted Items" and "Junk E-mail" (and in German, French, Spanish, Italian,
# Dutch, Portuguese and Russian), Dovecot's and most servers' "Trash", "Junk" and "Spam", GMX's and
# WEB.DE's "Spamverdacht", Yahoo's "Bulk Mail".
BIN_MAILBOXES = GMAIL_BINS | {
    "junk", "deleted items", "deleted messages", "junk e-mail", "junk email", "bulk mail", "spamverdacht",
    "gelöschte elemente", "gelöschte objekte", "junk-e-mail", "éléments supprimés", "courrier indésirable",
    "elementos eliminados", "correo no deseado", "posta eliminata", "posta indesiderata", "verwijderde items",
    "ongewenste e-mail", "itens excluídos", "lixo eletrônico", "удаленные", "нежелательная почта"}


# "Bin" is Gmail's Trash in British English alone: an American account names a label of its user's so.
# Its Takeout says which it is: the American file's name ends "Spam and Trash.mbox", and a message in its
# bin is labelled Trash.
BRITISH_BIN = "bin"
AMERICAN_TAKEOUT = re.compile(r"spam and trash\.mbox$", re.I)
# What ``GmailBins.verdict`` says of a message: Gmail's bin holds it; it is labelled Bin alone, which
# the account's other messages decide.
IN_BIN, LABELLED_BIN = "bin", "labelled Bin"


class GmailBins:
    """Which of Gmail's labels put a message in its bin, as one account names them: Bin is a label of
    the user's where the account names its bin Trash (``AMERICAN_TAKEOUT``; a message labelled Trash
    says so too, so what came before it, labelled Bin, waits for the end: ``american``)."""

    def __init__(self, name: str = "") -> None:
        self.american = bool(AMERICAN_TAKEOUT.search(name))

    def verdict(self, data: bytes) -> str | None:
        """``IN_BIN``, ``LABELLED_BIN`` (read as the user's label where ``american`` is so at the
        export's end), or None: no bin's label."""
        labels = {label.lower() for label in _labels(data)}
        self.american = self.american or "trash" in labels
        bins = labels & GMAIL_BINS
        if not bins or (self.american and bins == {BRITISH_BIN}):
            return None
        return LABELLED_BIN if bins == {BRITISH_BIN} else IN_BIN


def gmail_labels(value: str) -> list[str] | None:
    """Gmail's X-Gmail-Labels: comma-separated, a label holding a comma in quotes."""
    labels = [(quoted or plain).strip() for quoted, plain in re.findall(r'"([^"]*)"|([^,]+)', value or "")]
    return [label for label in labels if label] or None


def _labels(data: bytes) -> list[str]:
    """A message's X-Gmail-Labels, decoded before they are split: Takeout encodes a value past ASCII
    whole, its commas inside the encoded word ("=?UTF-8?Q?Corbeille,Envoy=C3=A9?=")."""
    found = GMAIL_LABELS.search(data, 0, find_header_end(data))
    if found is None:
        return []
    return gmail_labels(decoded_header(found.group(1).decode("ascii", "surrogateescape"))) or []


# The folders an IMAP server keeps an account's mailboxes under (Courier's and Cyrus' INBOX, Gmail's
# [Gmail] and, in Germany and the UK, [Google Mail]), lower case: its Trash and Spam are one level down.
NAMESPACES = frozenset({"inbox", "[gmail]", "[google mail]"})


def bin_mailbox(mailbox: str) -> bool:
    """A mailbox that is the account's Trash or Junk folder (``Trash``, ``[Gmail]/Spam``, ``INBOX/Trash``)
    or inside one (a folder deleted in Thunderbird goes on as ``Trash/<its name>``). Only one at the
    account's top is: a user's own folder that holds the word (``Spam research``) or is named so inside
    another of theirs (``Clients/Spam``) is their mail."""
    parts = [part.strip().lower() for part in mailbox.split("/")]
    if len(parts) > 1 and parts[0] in NAMESPACES:
        parts = parts[1:]
    return parts[0] in BIN_MAILBOXES


def warn_left_out(export: Export, file: ExportFile, line: int | None, count: int, what: str) -> None:
    """What says how many messages in Gmail's Spam or Trash were left out, and how to read them."""
    them = "them" if count > 1 else "it"
    leave_out(export, file, line, f"{count} message{'s' if count > 1 else ''} labelled Spam or Trash in Gmail, "
                f"as Gmail's search leaves {them} out; to search {them}, "
                f"{keep_setting(export, what)}")


def warn_bin_mailbox(export: Export, file: ExportFile, mailbox: str, count: int, what: str) -> None:
    """What says a Trash or Junk mailbox was left out, with its count and how to read it."""
    leave_out(export, file, None, f"the mailbox '{mailbox}' ({count} message{'s' if count > 1 else ''}), a Trash or "
                "Junk folder, as mail apps' search leaves them out; to search it, "
                f"{keep_setting(export, what)}")
