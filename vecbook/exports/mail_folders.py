"""The names of mail folders as their mail apps show them (``conversation``): an mbox file's (Thunderbird's
``Archives.sbd/2023`` is Archives/2023, Apple Mail's ``Inbox.mbox/mbox`` is Inbox), a Maildir's and an
``.eml`` folder's, and a folder's path from its account's top, where its Trash and Junk are (``mail_bins``)."""

from __future__ import annotations

import re

from .base import ExportFile
from .mail_bins import BIN_MAILBOXES, NAMESPACES


def mbox_name(file: ExportFile) -> str:
    """The mailbox's name: the file's name without .mbox; Apple Mail's ``Inbox.mbox/mbox`` is Inbox,
    and a mailbox exported inside another's bundle, ``Archive.mbox/Sub.mbox/mbox``, is its path, Archive/Sub
    (``_apple_bundles``); a Thunderbird subfolder, ``Archives.sbd/2023``, is its path, Archives/2023."""
    parts = file.rel.replace("!/", "/").split("/")
    name = parts[-1]
    if name == "mbox" and (bundles := _apple_bundles(file, parts)):
        return "/".join(re.sub(r"\.mbox$", "", bundle, flags=re.I) or bundle for bundle in bundles)
    if name == "mbox" and len(parts) > 1:
        name = parts.pop(-2)
    name = re.sub(r"\.(mbox|mbx|mbs)$", "", name, flags=re.I) or name
    parents: list[str] = []
    for folder in reversed(parts[:-1]):  # Thunderbird's "<folder>.sbd/" holds that folder's subfolders
        if not folder.lower().endswith(".sbd") or len(folder) == 4:
            break
        parents.insert(0, folder[:-4])
    return "/".join(parents + [name])


def _apple_bundles(file: ExportFile, parts: list[str]) -> list[str]:
    """The ``.mbox`` bundles an Apple Mail export's ``mbox`` file is in, outermost first: those of its path
    on disk (the collection may be a bundle inside another), else of its path in the zip; none for a plain
    ``~/mbox`` file."""
    folders = [p.name for p in file.path.parents] if file.path is not None else parts[-2::-1]
    bundles = []
    for folder in folders:
        if not folder.lower().endswith(".mbox") or len(folder) == 5:
            break
        bundles.insert(0, folder)
    return bundles


def folders_of(file: ExportFile) -> list[str]:
    """The folders a file is in, below the collection's path (a zip's members' too)."""
    return file.rel.replace("!/", "/").split("/")[:-1]


def mailbox_path(file: ExportFile) -> list[str]:
    """The folders of a message's mailbox, as its mail app names them (``folder_names``): a Maildir's
    without its ``cur/`` or ``new/``."""
    folders = folders_of(file)
    return folder_names(folders[:-1] if folders and folders[-1] in ("cur", "new") else folders)


def folder_names(folders: list[str]) -> list[str]:
    """Maildir folders as the mailboxes they hold: a Maildir++ folder (``.Clients.Spam``: Dovecot's,
    Courier's, mbsync's) is its path, Clients/Spam, and so is one under an IMAP server's namespace that
    offlineimap writes with dots (``[Gmail].Spam``, ``INBOX.Trash``); Thunderbird's ``<folder>.sbd``, which
    holds that folder's subfolders in its store of one file a message too, is that folder (``Inbox.sbd/Sub``
    is Inbox/Sub); another name keeps its dots."""
    names: list[str] = []
    for folder in folders:
        if folder.lower().endswith(".sbd") and len(folder) > 4:
            names.append(folder[:-4])
        elif folder.startswith(".") and len(folder) > 1:
            names += [part for part in folder[1:].split(".") if part] or [folder[1:]]
        elif "." in folder and folder.split(".", 1)[0].lower() in NAMESPACES:
            first, rest = folder.split(".", 1)
            names += [first] + [part for part in rest.split(".") if part]
        else:
            names.append(folder)
    return names


def account_roots(files: list[ExportFile]) -> set[tuple[str, ...]]:
    """The Maildirs that hold Maildir++ folders (``work/`` beside ``work/.Trash``): each an account's
    INBOX, whose folders start their account's top."""
    roots: set[tuple[str, ...]] = set()
    for file in files:
        folders = folders_of(file)
        roots.update(tuple(folder_names(folders[:i])) for i, f in enumerate(folders) if f.startswith(".") and i)
    return roots


def in_maildir(file: ExportFile) -> bool:
    """A file in a Maildir's ``cur/``, ``new/`` or ``tmp/``."""
    folders = folders_of(file)
    return bool(folders) and folders[-1] in ("cur", "new", "tmp")


def account_mailbox(folders: list[str], mailboxes: set[tuple[str, ...]], roots: set[tuple[str, ...]]) -> str:
    """A Maildir folder's path from its account's top (``work/Clients/Spam`` is ``Clients/Spam``): the
    folders above it that hold no mail of their own (not in ``mailboxes``: an account's folder in a tree
    of several, as mbsync and offlineimap write them) are left out, unless a bin's name says it is one
    (an empty ``Trash`` holding a deleted folder); below an account's Maildir++ INBOX (``roots``) is its top."""
    start = 0
    while (start < len(folders) - 1 and tuple(folders[:start + 1]) not in mailboxes | roots
           and folders[start].strip().lower() not in BIN_MAILBOXES | NAMESPACES):
        start += 1
    if tuple(folders[:start + 1]) in roots and start < len(folders) - 1:
        start += 1
    return "/".join(folders[start:])
