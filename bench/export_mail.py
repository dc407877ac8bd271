#!/usr/bin/env python3
"""Mail export benchmark: a generated Gmail-Takeout-like mbox loaded as a collection.

    python bench/export_mail.py [--runs N] [--scale S] [--workdir DIR]   (timed by bench/exports.py)

The mbox has the shapes real mailboxes hold: Gmail's X-GM-THRID and X-Gmail-Labels,
Received/DKIM header blocks, multipart/alternative bodies (text and HTML),
quoted-printable and base64 parts, RFC 2047 encoded names and subjects, threads of
replies that quote their parent (References / In-Reply-To, "On ... wrote:" blocks),
Outlook-style "-----Original Message-----" replies, PDF attachments and mboxrd
">From " escapes. Loading is timed in a fresh process per run (median of 3), with its
peak RSS, and printed as ``format, messages, records, seconds, peak RSS`` (then the
loader's CPU seconds and its warning count).
"""

from __future__ import annotations

import base64
import random
import re
import sys
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = """the of and to in is was for on that with as it at by from this be have are not or an they which
you one had were all we there can her has been if more when will would who so no about out up them some could
meeting budget project plan travel train hotel flight dinner invoice payment account contract draft review
launch deadline release server database backup laptop password update agenda decision risk cost price ticket
report quarter figures slides customer supplier order delivery warehouse shipment schedule offer proposal""".split()
PEOPLE = [("Ana Lima", "ana@example.com"), ("Ben Okafor", "ben.okafor@example.org"), ("Chloé Martin", "chloe@example.fr"),
          ("Dmitri Ivanov", "dmitri@example.net"), ("Eli Cohen", "eli@example.com"), ("Fatima Zahra", "fz@example.ma"),
          ("Gus Berg", "gus@example.se"), ("Hana Sato", "hana@example.jp"), ("Ivy Chen", "ivy@example.com"),
          ("José Núñez", "jose@example.es"), ("Kai Müller", "kai@example.de"), ("Lena Novak", "lena@example.cz")]
LABELS = ["Inbox", "Important", "Opened", "Sent", "Category Updates", "Category Personal", "Work", "Travel",
          '"Receipts, 2024"']


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."


def _paragraphs(rng: random.Random) -> list[str]:
    paragraphs = []
    for _ in range(rng.randint(1, 4)):
        text = " ".join(_sentence(rng) for _ in range(rng.randint(1, 5)))
        lines, line = [], ""
        for word in text.split():
            if len(line) + len(word) > 72:
                lines.append(line)
                line = ""
            line = f"{line} {word}".strip()
        paragraphs.append("\n".join(lines + [line]))
    if rng.random() < 0.05:
        paragraphs.append("From what I heard the plan is fine.")  # an mboxrd ">From " escape
    return paragraphs


def _encoded(name: str) -> str:
    """RFC 2047 for names and subjects that are not ASCII."""
    if name.isascii():
        return name
    return "=?UTF-8?B?" + base64.b64encode(name.encode()).decode() + "?="


def _message(rng: random.Random, number: int, when: datetime, parent: dict | None, root: dict | None) -> dict:
    sender = rng.choice(PEOPLE)
    to = rng.sample([p for p in PEOPLE if p != sender], rng.randint(1, 3))
    cc = rng.sample(PEOPLE, rng.randint(0, 2))
    subject = ("Re: " + root["subject"]) if root else rng.choice(
        ["Quarterly figures", "Trip to Lisboa", "Contract draft v2", "Déjeuner vendredi?", "Server backup plan",
         "Invoice 2024-0" + str(rng.randint(10, 99)), "Slides for Monday", "Über die Lieferung"])
    body = "\n\n".join(_paragraphs(rng))
    if parent:
        quoted = "\n".join("> " + line if line else ">" for line in parent["body"].split("\n"))
        if rng.random() < 0.8:
            attribution = f"On {format_datetime(parent['when'])}, {parent['sender'][0]} <{parent['sender'][1]}> wrote:"
            body = f"{body}\n\n{attribution}\n{quoted}"
        else:
            body = (f"{body}\n\n-----Original Message-----\nFrom: {parent['sender'][0]}\n"
                    f"Sent: {format_datetime(parent['when'])}\nSubject: {parent['subject']}\n\n{parent['body']}")
    mid = f"<{number:08d}.{rng.getrandbits(40):010x}@mail.example.com>"
    return {"number": number, "when": when, "sender": sender, "to": to, "cc": cc, "subject": subject, "body": body,
            "mid": mid, "parent": parent, "root": root or None, "thrid": (root or {}).get("thrid", rng.getrandbits(62))}


def _render(rng: random.Random, m: dict) -> str:
    def people(items: list[tuple[str, str]]) -> str:
        return ", ".join(f"{_encoded(n)} <{a}>" for n, a in items)

    labels = ",".join(rng.sample(LABELS, rng.randint(1, 3)))
    headers = [
        f"From {m['thrid']}@xxx {m['when'].strftime('%a %b %d %H:%M:%S +0000 %Y')}",
        f"X-GM-THRID: {m['thrid']}", f"X-Gmail-Labels: {labels}", "Delivered-To: me@example.com",
        f"Received: by 2002:a05:6a10:{rng.getrandbits(16):x} with SMTP id {rng.getrandbits(48):x};\n"
        f"        {format_datetime(m['when'])}",
        f"ARC-Seal: i=1; a=rsa-sha256; t={int(m['when'].timestamp())}; cv=none; d=google.com; s=arc-20160816;\n"
        f"        b={base64.b64encode(rng.randbytes(60)).decode()}",
        f"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.com; s=20230601;\n"
        f"        h=to:subject:message-id:date:from:mime-version:from:to:cc:subject;\n"
        f"        bh={base64.b64encode(rng.randbytes(32)).decode()};\n"
        f"        b={base64.b64encode(rng.randbytes(90)).decode()}",
        "MIME-Version: 1.0", f"Date: {format_datetime(m['when'])}", f"Message-ID: {m['mid']}",
        f"Subject: {_encoded(m['subject'])}", f"From: {people([m['sender']])}", f"To: {people(m['to'])}",
    ]
    if m["cc"]:
        headers.append(f"Cc: {people(m['cc'])}")
    if m["parent"]:
        refs = " ".join(dict.fromkeys([m["root"]["mid"], m["parent"]["mid"]]))
        headers += [f"In-Reply-To: {m['parent']['mid']}", f"References: {refs}"]
    body = re.sub(r"(?m)^(>*From )", r">\1", m["body"])  # mboxrd: a body line starting "From " is escaped
    kind = rng.random()
    boundary = f"000000000000{rng.getrandbits(48):012x}"
    if kind < 0.35:  # plain text only
        headers.append('Content-Type: text/plain; charset="UTF-8"')
        text = body
    else:
        html = "<div dir=\"ltr\">" + "".join(f"<p>{p.replace(chr(10), ' ')}</p>" for p in body.split("\n\n")) + "</div>"
        alternative = (f"--{boundary}\nContent-Type: text/plain; charset=\"UTF-8\"\n"
                       f"Content-Transfer-Encoding: quoted-printable\n\n{body}\n\n"
                       f"--{boundary}\nContent-Type: text/html; charset=\"UTF-8\"\n\n{html}\n\n--{boundary}--")
        if kind < 0.85:
            headers.append(f'Content-Type: multipart/alternative; boundary="{boundary}"')
            text = alternative
        else:  # with a PDF attachment
            outer = "mixed" + boundary
            pdf = base64.encodebytes(b"%PDF-1.4\n" + rng.randbytes(rng.randint(600, 3000))).decode()
            headers.append(f'Content-Type: multipart/mixed; boundary="{outer}"')
            text = (f"--{outer}\nContent-Type: multipart/alternative; boundary=\"{boundary}\"\n\n{alternative}\n"
                    f"--{outer}\nContent-Type: application/pdf; name=\"invoice-{m['number']}.pdf\"\n"
                    f"Content-Disposition: attachment; filename=\"invoice-{m['number']}.pdf\"\n"
                    f"Content-Transfer-Encoding: base64\n\n{pdf}\n--{outer}--")
    return "\n".join(headers) + "\n\n" + text + "\n\n"


def generate(folder: Path, messages: int, seed: int = 0) -> Path:
    """Write ``folder/All mail Including Spam and Trash.mbox`` holding ``messages`` messages."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "All mail Including Spam and Trash.mbox"
    when = datetime(2021, 1, 4, 8, 0, tzinfo=timezone.utc)
    open_threads: list[tuple[dict, dict]] = []  # (root, last message)
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for number in range(messages):
            when += timedelta(minutes=rng.randint(1, 40))
            if open_threads and rng.random() < 0.55:
                index = rng.randrange(len(open_threads))
                root, last = open_threads[index]
                message = _message(rng, number, when, last, root)
                open_threads[index] = (root, message)
                if rng.random() < 0.3:
                    open_threads.pop(index)
            else:
                message = _message(rng, number, when, None, None)
                open_threads.append((message, message))
                open_threads = open_threads[-50:]
            out.write(_render(rng, message))
            message["parent"] = None  # a thread keeps its root and last message, not every message
    return path


if __name__ == "__main__":
    import exports  # bench/exports.py: every format generated and timed the same way

    exports.main(["--only", "mbox", *sys.argv[1:]])
