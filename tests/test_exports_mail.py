"""Mail export collections: mbox files and Maildir folders, one record a message, read in place."""

from __future__ import annotations

import base64
import os
import re
import shutil
import struct
import textwrap
import time
from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import FORMATS, detect_format, load_export, open_export, reader
from vecbook.exports.mail_quotes import new_part
from vecbook.exports.mime import decoded_header, html_to_text

from conftest import EXPORTS, FakeEmbedder, cited_lines

EMAIL = EXPORTS / "email"
MBOX = EMAIL / "mbox"
MAILPILE = EMAIL / "maildir_mailpile"
NOTMUCH = EMAIL / "maildir_notmuch-test-corpora"


def collection(path: Path, name: str = "mail", fmt: str | None = None) -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path), format=fmt)


def load(path: Path, name: str = "mail", fmt: str | None = None) -> tuple[list[vecbook.Record], list[str]]:
    records, problems, _ = load_export(collection(path, name, fmt))
    return records, [str(p) for p in problems]


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file's bytes and every file's and folder's mtime under root."""
    found = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder, name)
            found[str(path.relative_to(root))] = (path.read_bytes() if path.is_file() else None,
                                                  path.stat().st_mtime_ns)
    return found


def message(headers: str, body: str | bytes, encoding: str = "utf-8") -> bytes:
    """A message file from header lines and a body (bytes kept as they are)."""
    raw = body if isinstance(body, bytes) else body.encode(encoding)
    return headers.strip().encode("utf-8") + b"\n\n" + raw + b"\n"


MAIL_HEAD = "From: Ana <ana@example.org>\nTo: bo@example.org\nSubject: Zählerstand März\nDate: Mon, 4 Mar 2024 10:00:00 +0100"


@pytest.mark.parametrize("ending", ["\r\r\n", "\r"])
def test_a_message_with_double_cr_or_old_mac_line_endings_reads_as_any_other(tmp_path: Path, ending: str) -> None:
    # a Windows tool that converted line endings twice writes "\r\r\n": the subject was lost and the mail called
    # damaged; old Mac mail apps (Eudora, Claris Emailer) end lines with "\r" alone: the file was no mail at all
    text = "Hallo Bo,\n\nder Zähler zeigt 4711 kWh.\n\nAna\n"
    (tmp_path / "a.eml").write_bytes(message(MAIL_HEAD, text).replace(b"\n", ending.encode()))
    records, problems = load(tmp_path)
    assert problems == [] and [(r.metadata["subject"], r.text) for r in records] == [
        ("Zählerstand März", "Hallo Bo,\n\nder Zähler zeigt 4711 kWh.\n\nAna")]
    # lines as grep, less and vim count them, at "\n"; in a file with none, at "\r" (as every editor does)
    assert records[0].citation == "mail/a.eml:1-10"


def test_line_endings_cut_between_an_mboxs_blocks_are_read_as_one() -> None:
    from vecbook.exports.mail_lines import normal_blocks

    assert b"".join(normal_blocks([b"To: a\r\r\nCc: b\r\r", b"\nFrom: c\r\r\n\r", b"\r\nHi\r"])) == b"To: a\nCc: b\nFrom: c\n\nHi\r"
    assert b"".join(normal_blocks([b"Subject: a\rFrom: b\r", b"\rHi\r"])) == b"Subject: a\nFrom: b\n\nHi\n"


def test_an_old_mac_mbox_is_read_message_by_message_with_its_lines(tmp_path: Path) -> None:
    mbox = b"\n".join([b"From ana@example.org Mon Mar  4 10:00:00 2024",
                       message(MAIL_HEAD, "Erste.\n"), b"From bo@example.org Tue Mar  5 10:00:00 2024",
                       message(MAIL_HEAD.replace("März", "April"), "Zweite.\n")])
    (tmp_path / "old.mbox").write_bytes(mbox.replace(b"\n", b"\r"))
    records, problems = load(tmp_path)
    assert problems == [] and [(r.metadata["subject"], r.text, r.citation) for r in records] == [
        ("Zählerstand März", "Erste.", "mail/old.mbox:1-7"), ("Zählerstand April", "Zweite.", "mail/old.mbox:10-16")]
    assert [cited_lines(tmp_path, r)[-1] for r in records] == ["Erste.", "Zweite."]


# -- mbox: the fixture, message by message --

MBOX_EXPECTED = [  # citation (From line to last line), subject, author, date
    ("mail/mailpile_tests.mbx:1-183", "Moderation request [kde-isl] <bang>",
     "test&test <kde-isl+askrift@example.com>", "2013-09-16T00:27:03+00:00"),
    ("mail/mailpile_tests.mbx:185-2383", "✈ Northern Lights Extravaganza: Iceland from DKK599/£69/€96",
     "Bjarni Rúnar Einarsson <no-reply@example.com>", "2013-09-16T11:54:18+00:00"),
    ("mail/mailpile_tests.mbx:2385-2432", "Testing encryption, raw ISO-8859-1: áéíóúýþæöðÁÉÍÓÚÝÞÆÖÐ",
     "Bjarni Runar Einarsson <bre@slinky>", "2014-01-10T15:32:15+00:00"),
    ("mail/mailpile_tests.mbx:2434-2476", "Testing signatures, raw UTF-8: áéíóúýþæöðÁÉÍÓÚÝÞÆÖÐ",
     "Bjarni Runar Einarsson <bre@slinky>", "2014-01-10T15:32:54+00:00"),
    ("mail/mailpile_tests.mbx:2478-2563", "Email That Is Encrypted", "Brennan Novak <hi@brennannovak.com>",
     "2014-01-10T15:36:04+00:00"),
    ("mail/mailpile_tests.mbx:2565-2695", "Email That Is Signed", "Brennan Novak <hi@brennannovak.com>",
     "2014-01-10T15:35:29+00:00"),
    ("mail/mailpile_tests.mbx:2697-2729", "Inline encryption test", "Bjarni Runar Einarsson <bre@slinky>",
     "2014-01-10T15:53:35+00:00"),
    ("mail/mailpile_tests.mbx:2732-2813", "PGP Testing Email", "Barnaby Walters <barnaby@woots>",
     "2014-01-17T17:19:50+00:00"),
    ("mail/mailpile_tests.mbx:2815-2898", "RE: [PATCH v3 00/11] usbip: features to USB over WebSocket",
     "ATA NOO <Noa@fujihamfist>", "2015-04-28T09:35:25+00:00"),
]


def test_the_mbox_fixture_is_one_record_a_message() -> None:
    records, problems = load(MBOX)
    assert problems == []
    assert [(r.citation.split("#")[0], r.metadata["subject"], r.metadata["author"], r.metadata["date"])
            for r in records] == MBOX_EXPECTED
    signed = records[3]  # multipart/signed: the text part, the signature left out
    assert signed.text == "This should be a signed message, hello world!\n\nLa la la."
    assert signed.content == ("Subject: Testing signatures, raw UTF-8: áéíóúýþæöðÁÉÍÓÚÝÞÆÖÐ\n"
                              "From: Bjarni Runar Einarsson <bre@slinky>\n\n" + signed.text)
    assert signed.metadata == {
        "date": "2014-01-10T15:32:54+00:00", "author": "Bjarni Runar Einarsson <bre@slinky>",
        "participants": ["Bjarni Runar Einarsson", "bre@slinky"], "to": ["Bjarni Runar Einarsson <bre@slinky>"],
        "subject": "Testing signatures, raw UTF-8: áéíóúýþæöðÁÉÍÓÚÝÞÆÖÐ", "conversation": "mailpile_tests",
        "thread": "20140110153254.GB12247@slinky", "message_id": "20140110153254.GB12247@slinky", "format": "mbox"}
    assert (signed.id, signed.citation) == ("mail:mailpile_tests.mbx#20140110153254.GB12247@slinky",
                                            "mail/mailpile_tests.mbx:2434-2476#20140110153254.GB12247@slinky")
    # the header lines of the content map to the message's headers, its words to the body
    assert signed.lines_of(0, 10) == (2434, 2453)
    assert signed.lines_of(len(signed.content) - 5, len(signed.content)) == (2454, 2476)
    assert records[4].text == "[encrypted message: not decrypted]"  # PGP/MIME
    assert records[1].metadata["thread"] == records[0].metadata["message_id"]  # its In-Reply-To


def test_mbox_cited_lines_read_back_to_their_message() -> None:
    records, _ = load(MBOX)
    for record in records:
        lines = cited_lines(MBOX, record)
        assert lines[0].startswith("From ") and lines[-1].strip(), record.citation
        assert sum(line.startswith("From ") for line in lines) == 1  # one message, not two
        assert any(record.metadata["message_id"] in line for line in lines if re.match(r"(?i)message-id:", line))


def test_a_reply_keeps_its_quotes_in_text_but_embeds_only_its_own_words() -> None:
    records, _ = load(MBOX)
    reply = records[8]
    quoted = "> I don't see what are the benefits of such kernel driver?"
    assert quoted in reply.text
    assert "kernel driver?" not in reply.content and "Yes.\n\nSorry repeating comment" in reply.content


# What Gmail, Thunderbird and Apple Mail write above a quote, in the user's language; Gmail
# wraps its plain text near 78 columns, so a long one goes on in a second line.
ATTRIBUTIONS = [
    "On Mon, Mar 4, 2024 at 11:15 AM Zoë Müller <zoe@example.fr>\nwrote:",
    "Le lun. 4 mars 2024 à 11:15, Zoë Müller <zoe@example.fr> a\nécrit :",
    "Am Mo., 4. März 2024 um 11:15 Uhr schrieb Zoë Müller <zoe@example.fr>:",
    "Am Mo., 4. März 2024 um 11:15 Uhr schrieb Zoë Müller <\nzoe@example.fr>:",
    "El lun, 4 mar 2024 a las 11:15, Zoë Müller (<zoe@example.fr>)\nescribió:",
    "Il giorno lun 4 mar 2024 alle ore 11:15 Zoë Müller <zoe@example.fr> ha\nscritto:",
    "Em seg., 4 de mar. de 2024 às 11:15, Zoë Müller <zoe@example.fr>\nescreveu:",
    "Op ma 4 mrt 2024 om 11:15 schreef Zoë Müller <zoe@example.fr>:",
    "Den mån 4 mars 2024 kl 11:15 skrev Zoë Müller <zoe@example.fr>:",
    "pon., 4 mar 2024 o 11:15 Zoë Müller <zoe@example.fr> napisał(a):",
    "пн, 4 мар. 2024 г. в 11:15, Zoë Müller <zoe@example.fr>:",
    "2024年3月4日(月) 11:15 Zoë Müller <zoe@example.fr>:",
    "Zoë Müller <zoe@example.fr> 于2024年3月4日周一 11:15写道：",
    "2024년 3월 4일 (월) 오전 11:15, Zoë Müller <zoe@example.fr>님이 작성:",
    "Am 04.03.24 um 11:15 schrieb Zoë Müller:",
    "04.03.2024 11:15, Zoë Müller пишет:",  # Thunderbird's, in its user's language
    "Dne 04. 03. 24 v 11:15 Zoë Müller napsal(a):",
    "Zoë Müller napsal(a) dne 04. 03. 24 v 11:15:",
    "Zoë Müller kirjoitti 4.3.2024 klo 11.15:",
    "2024/03/04 11:15 に Zoë Müller さんは書きました:",
    "W dniu 4.03.2024 o 11:15, Zoë Müller pisze:",
    "Zoë Müller wrote on 04/03/2024 11:15:",
    "Excerpts from Zoë Müller's message of Mon Mar 04 11:15:00 +0100 2024:",
    "Le 04/03/2024 à 11:15, Zoë Müller a écrit :",
    "Zoë writes:",
    # right-to-left: Gmail wraps the line and the name in bidi controls (U+202B...U+202C, U+200F), and
    # Thunderbird and Apple Mail write the verb (Hebrew "כתב/ה", Arabic "كتب", Persian "نوشت")
    "\u202bבתאריך יום ב׳, 4 במרץ 2024 ב-11:15 מאת \u202aZoë Müller\u202c\u200f <\u202azoe@example.fr\u202c\u200f>:\u202c",
    "\u202bفي الاثنين، 4 مارس 2024 في 11:15 ص تمت كتابة ما يلي بواسطة \u202aZoë Müller\u202c\u200f "
    "<\u202azoe@example.fr\u202c\u200f>:\u202c",
    "ב-04/03/2024 בשעה 11:15, Zoë Müller כתב/ה:",
    "في 04/03/2024 11:15، كتب Zoë Müller:",
    "Zoë Müller در 04/03/2024 11:15 نوشت:",
]


@pytest.mark.parametrize("attribution", ATTRIBUTIONS, ids=range(len(ATTRIBUTIONS)))
def test_the_line_that_says_who_wrote_a_quote_is_not_embedded_in_any_language(attribution: str) -> None:
    body = f"Sounds good, see you there.\n\n{attribution}\n\n> The quoted word is zanzibar.\n> More."
    assert new_part(body, "Re: Dinner") == "Sounds good, see you there."


def test_words_above_a_quote_that_are_no_attribution_stay() -> None:
    body = "Thanks\nOn Mon, Mar 4, 2024 at 11:15 AM Zoë <zoe@example.fr> wrote:\n> hi"
    assert new_part(body) == "Thanks"
    body = "My answers are below, see the second point:\n\n> 1. rooms\n> 2. dates\nMarch works."
    assert new_part(body) == "My answers are below, see the second point:\n\nMarch works."
    body = "Please send it to ana@example.com and tell her this:\n> the quote"
    assert new_part(body) == "Please send it to ana@example.com and tell her this:"
    body = "Thanks, I wrote to bob@example.com\nand here is what he answered:\n> the quote"
    assert new_part(body) == "Thanks, I wrote to bob@example.com\nand here is what he answered:"
    # a date and a time are no attribution without a verb or an address: a person's own words
    body = "The 2024 budget meeting moved to 14:00, notes below:\n> 1. rooms\n> 2. dates"
    assert new_part(body) == "The 2024 budget meeting moved to 14:00, notes below:"
    body = "Flight 12/03/2024 leaves 07:10 from gate B, as booked:\n> Seat 14C"
    assert new_part(body) == "Flight 12/03/2024 leaves 07:10 from gate B, as booked:"


def test_a_long_line_above_a_quote_is_read_in_linear_time() -> None:
    # one 200 KB line (a pasted log, an HTML mail with no breaks) with a '>' in it, and a long
    # line above a quote: each once took seconds to minutes, quadratic in the line's length
    started = time.perf_counter()
    assert new_part("x " * 100_000 + "->") == ("x " * 100_000 + "->").strip()
    assert new_part("word " * 20_000 + "\n> quoted").startswith("word word")
    assert time.perf_counter() - started < 1


# The history Outlook writes under a reply, unquoted, in its user's language
OUTLOOK_HISTORIES = [
    "Von: Zoë Müller <zoe@example.fr>\nGesendet: Montag, 4. März 2024 11:15\nAn: Me\nBetreff: Dinner",
    "De : Zoë Müller <zoe@example.fr>\nEnvoyé : lundi 4 mars 2024 11:15\nÀ : Me\nObjet : Dinner",
    "De: Zoë Müller <zoe@example.fr>\nEnviado: lunes, 4 de marzo de 2024 11:15\nPara: Me\nAsunto: Dinner",
    "Van: Zoë Müller <zoe@example.fr>\nVerzonden: maandag 4 maart 2024 11:15\nAan: Me\nOnderwerp: Dinner",
    "Da: Zoë Müller <zoe@example.fr>\nInviato: lunedì 4 marzo 2024 11:15\nA: Me\nOggetto: Dinner",
    "От: Zoë Müller <zoe@example.fr>\nОтправлено: 4 марта 2024 г. 11:15\nКому: Me\nТема: Dinner",
    "发件人: Zoë Müller <zoe@example.fr>\n发送时间: 2024年3月4日 11:15\n收件人: Me\n主题: Dinner",
    "差出人: Zoë Müller <zoe@example.fr>\n送信日時: 2024年3月4日 11:15\n宛先: Me\n件名: Dinner",
    "Od: Zoë Müller <zoe@example.fr>\nWysłane: poniedziałek, 4 marca 2024 11:15\nDo: Me\nTemat: Dinner",
    "Från: Zoë Müller <zoe@example.fr>\nSkickat: den 4 mars 2024 11:15\nTill: Me\nÄmne: Dinner",
    "Von: Zoë Müller <zoe@example.fr>\nDatum: Montag, 4. März 2024 um 11:15\nAn: Me\nBetreff: Dinner",
    "*From:* Zoë Müller <zoe@example.fr>\n*Sent:* Monday, March 4, 2024 11:15 AM\n*To:* Me\n*Subject:* Dinner",
    "Από: Zoë Müller <zoe@example.fr>\nΣτάλθηκε: Δευτέρα, 4 Μαρτίου 2024 11:15 πμ\nΠρος: Me\nΘέμα: Dinner",
    "Від: Zoë Müller <zoe@example.fr>\nНадіслано: 4 березня 2024 р. 11:15\nКому: Me\nТема: Dinner",
    "מאת: Zoë Müller <zoe@example.fr>\nנשלח: יום שני 04 מרץ 2024 11:15\nאל: Me\nנושא: Dinner",
    "من: Zoë Müller <zoe@example.fr>\nتم الإرسال: الاثنين، 4 مارس، 2024 11:15 ص\nإلى: Me\nالموضوع: Dinner",
    "-----Ursprüngliche Nachricht-----\nVon: Zoë\nGesendet: Montag",
    "-----Message d'origine-----\nDe : Zoë\nEnvoyé : lundi",
    "-----Mensaje original-----\nDe: Zoë",
    "-----Исходное сообщение-----\nОт: Zoë",
]


@pytest.mark.parametrize("history", OUTLOOK_HISTORIES, ids=range(len(OUTLOOK_HISTORIES)))
def test_outlooks_unquoted_history_is_not_embedded_in_any_language(history: str) -> None:
    body = f"Sounds good, see you there.\n\n{history}\n\nThe quoted word is zanzibar."
    assert new_part(body, "AW: Dinner") == "Sounds good, see you there."


# The line Apple Mail and Gmail write above a forwarded mail in their user's language, and the
# subject prefixes Chinese Outlook writes
FORWARDED = [
    ("Booking", "Anfang der weitergeleiteten Nachricht:\n\n> Von: SkyAir <a@b.c>\n> \n> Ref QX7RTZ."),
    ("Booking", "Début du message réexpédié :\n\n> De: SkyAir <a@b.c>\n> \n> Ref QX7RTZ."),
    ("Booking", "Inicio del mensaje reenviado:\n\n> De: SkyAir <a@b.c>\n> \n> Ref QX7RTZ."),
    ("Booking", "Inizio messaggio inoltrato:\n\n> Da: SkyAir <a@b.c>\n> \n> Ref QX7RTZ."),
    ("Booking", "転送されたメッセージ:\n\n> 差出人: SkyAir <a@b.c>\n> \n> Ref QX7RTZ."),
    ("Booking", "---------- Пересылаемое сообщение ---------\nОт: SkyAir <a@b.c>\nDate: пн, 4 мар. 2024 г.\n\n"
                "Ref QX7RTZ."),
    ("转发: 机票", "发件人: SkyAir <a@b.c>\n发送时间: 2024年3月4日 8:00\n\nRef QX7RTZ."),
    ("轉寄: 機票", "寄件者: SkyAir <a@b.c>\n寄件日期: 2024年3月4日 8:00\n\nRef QX7RTZ."),
]


@pytest.mark.parametrize(("subject", "forwarded"), FORWARDED, ids=range(len(FORWARDED)))
def test_a_forward_in_another_language_is_searched_by_what_it_forwards(subject: str, forwarded: str) -> None:
    assert "Ref QX7RTZ." in new_part(f"FYI\n\n{forwarded}", subject)


def test_a_mail_that_names_a_sender_in_its_text_is_not_cut_there() -> None:
    body = "Der Brief kam heute.\nVon: der Bank\nBetreff: Kontoauszug\nBitte prüfen."
    assert new_part(body) == body


@pytest.mark.parametrize("itinerary", [
    "Da: Milano Centrale\nData: 12 marzo 2024, 09:10\nA: Roma Termini\nCarrozza 5, posto 12A",
    "From: London Heathrow\nDate: 4 March 2024\nTo: Lisbon\nFlight BA500, seat 14C",
])
def test_an_itinerary_shaped_like_a_header_stays_searchable(itinerary: str) -> None:
    # a sender and a date label alone are a journey's as well: Outlook's history has its subject line too
    body = f"Here is the booking.\n\n{itinerary}\n\nSee you there."
    assert new_part(body) == body


FORWARDS = """From ana@example.com Tue Apr 02 09:00:00 2024
Message-ID: <fwd-gmail@example.com>
Date: Tue, 2 Apr 2024 09:00:00 +0000
From: Ana <ana@example.com>
Subject: Fwd: Your flight booking

Here are the flight details.

---------- Forwarded message ---------
From: SkyAir <noreply@skyair.example>
Date: Mon, Apr 1, 2024 at 8:00 AM

Booking reference QX7RTZ, Lisbon to Oslo.

From ana@example.com Tue Apr 02 10:00:00 2024
Message-ID: <fwd-apple@example.com>
Date: Tue, 2 Apr 2024 10:00:00 +0000
From: Ana <ana@example.com>
Subject: Vet appointment

Begin forwarded message:

> From: Happy Paws Clinic <desk@happypaws.example>
>
> Rex is booked for his rabies vaccination on 9 April.

From eero@example.fi Tue Apr 02 10:30:00 2024
Message-ID: <finnish-reply@example.fi>
Date: Tue, 2 Apr 2024 10:30:00 +0000
From: Eero <eero@example.fi>
Subject: VS: Tapaaminen

Sopii, nähdään.

On Tue, 2 Apr 2024, Ana wrote:
> Booking reference QX7RTZ, Lisbon to Oslo.

From bo@example.com Tue Apr 02 11:00:00 2024
Message-ID: <reply@example.com>
Date: Tue, 2 Apr 2024 11:00:00 +0000
From: Bo <bo@example.com>
Subject: Re: Fwd: Your flight booking

Thanks, noted.

On Tue, 2 Apr 2024, Ana wrote:
> ---------- Forwarded message ---------
> Booking reference QX7RTZ, Lisbon to Oslo.
"""


def test_a_forward_is_searched_by_what_it_forwards_and_a_reply_to_it_is_not(tmp_path: Path) -> None:
    # Gmail writes the forwarded mail's headers unquoted (as Outlook's history looks), Apple Mail
    # quotes it: either way it is the forward's content; the reply quoting it is still a reply
    path = tmp_path / "forwards.mbox"
    path.write_text(FORWARDS, encoding="utf-8")
    gmail, apple, finnish, reply = load(path)[0]
    assert "QX7RTZ" in gmail.content and "rabies vaccination" in apple.content
    assert "QX7RTZ" not in reply.content and "Thanks, noted." in reply.content
    assert "QX7RTZ" not in finnish.content  # VS: is a Finnish reply


def test_a_body_line_starting_with_from_that_no_writer_escaped_stays_in_its_message(tmp_path: Path) -> None:
    # old mboxo files and mailboxes joined by hand leave "From " body lines unescaped
    path = tmp_path / "cabin.mbox"
    path.write_text("From ola@example.no Fri Jul 08 14:08:34 2011\nFrom: Ola <ola@example.no>\nSubject: Cabin\n"
                    "Date: Fri, 8 Jul 2011 14:08:34 +0200\n\n"
                    "We leave on 12 August.\n\nFrom the station we take the bus; bring your sleeping bag.\n\n"
                    "From bo@example.com Sat Jul 09 10:00:00 2011\nFrom: Bo <bo@example.com>\nSubject: Re: Cabin\n"
                    "Date: Sat, 9 Jul 2011 10:00:00 +0200\n\n"
                    "Great.\n", encoding="utf-8")
    (cabin, reply), problems = load(path)
    assert problems == [] and "sleeping bag" in cabin.text and reply.text == "Great."
    assert (cabin.line_number, cabin.end_line, reply.line_number) == (1, 8, 10)


@pytest.mark.parametrize("separator", ["From ola@example.no Fri Jul  8 14:08:34 2011", "From ", "From -"],
                         ids=["mexport", "bare", "dash"])
def test_messages_an_mbox_writer_joined_without_a_blank_line_are_each_read(tmp_path: Path, separator: str) -> None:
    # mblaze's mexport and scripts that cat messages together write no blank line between them; GYB's and
    # some Thunderbird stores' From lines are bare, "From " alone: each message was read into the one above
    def mail(n: int) -> str:
        return (f"{separator}\nFrom: Ola <ola@example.no>\nSubject: Note {n}\nDate: Fri, 8 Jul 2011 14:0{n}:00 +0200"
                f"\n\nLine {n}.\n")
    path = tmp_path / "joined.mbox"
    path.write_bytes((mail(1) + mail(2) + "\n" + mail(3)).replace("\n", "\r\n").encode())
    records, problems = load(path)
    assert problems == [] and [(r.metadata["subject"], r.text, r.line_number) for r in records] == [
        ("Note 1", "Line 1.", 1), ("Note 2", "Line 2.", 7), ("Note 3", "Line 3.", 14)]
    # a body line that is only shaped like one, no header after it, stays in its message
    path.write_text(mail(1).replace("Line 1.", "Line 1.\nFrom ola@example.no Fri Jul  8 14:08:34 2011\nwas the date"),
                    encoding="utf-8")
    assert [r.text for r in load(path)[0]] == ["Line 1.\nFrom ola@example.no Fri Jul  8 14:08:34 2011\nwas the date"]


# -- Maildir --

MAILPILE_EXPECTED = [  # citation, id, subject, flags
    ("mail/cur/1379857166.25979_1.hottie,2,S:1-748", "mail:INBOX#C8.E0.59218.EAA66325@spruce-goose.twitter.com",
     "Bjarni R. Einarsson, you have new followers on Twitter!", ["seen"]),
    ("mail/cur/1379857166.25979_3.hottie,2,S:1-954", "mail:INBOX#017101ceb2cb$f956bec0$ec043c40$@is",
     "[Feministinn] Á fimmtudaginn: Konurnar flykkjast í fjarnámið - staða og rými háskólamenntaðra kvenna í "
     "dreifbýli", ["seen"]),
    ("mail/cur/1379857166.25979_5.hottie,2,S:1-1000", "mail:INBOX#D2.79.59218.FB8E6325@spruce-goose.twitter.com",
     "Brennan Novak (@brennannovak) mentioned you on Twitter!", ["seen"]),
    ("mail/cur/1379857166.25979_7.hottie,2,S:1-886", "mail:INBOX#1B.55.54750.5EDB7325@spring-chicken.twitter.com",
     "Bjarni R. Einarsson, you have new followers on Twitter!", ["seen"]),
    ("mail/cur/1379857166.25979_9.hottie,2,S:1-6966", "mail:INBOX#00e001ceb390$e573ff10$b05bfd30$@is",
     "[Feministinn] Emerging ideas in masculinity research - Second call", ["seen"]),
    ("mail/cur/1379857166.25980_9.hottie,2,S:1-35", "mail:INBOX#518e7b74090a", "Test message", ["seen"]),
    ("mail/cur/1379857166.25981_10.hottie,2,S:1-45", "mail:INBOX#5c948b14ac19", "Encrypted test message", ["seen"]),
    ("mail/cur/broken_email_1396694612:1-857", 
     "mail:INBOX#73ed86d918cf26bfbf6cc6c1d3e3df2695d.20140405023914@mail351.us3.mcdlv.net",
     "Verb. Target. Outcome.", None),
    ("mail/cur/encrypted-empty-content-w-key.eml:1-60", "mail:INBOX#569ACDC4.2020300@example.com",
     "my key", None),
    ("mail/cur/fw-question-1443197278.mbx:1-8", "mail:INBOX#6368e2080b51", "Fw: About shrubberies", None),
    ("mail/cur/mailpile-1398950855.mbx:1-820", "mail:INBOX#48d72c96395882ac2883572e25a47827@anarchism.is", "My key", None),
    ("mail/cur/mailpile-1400069992.mbx:1-643", 
     "mail:INBOX#f38s7nk064or5h7pjjwzsj4kt-a881f968-36a7-4af7-b027-a12d6b686326@square.com",
     "Re: Here's $1", None),
    ("mail/cur/no-subject-1400067892.mbx:1-7", "mail:INBOX#f62d9a4d6a2f", None, None),
]


def test_the_mailpile_maildir_is_one_record_a_file() -> None:
    records, problems = load(MAILPILE)
    assert [(r.citation.split("#")[0], r.id, r.metadata.get("subject"), r.metadata.get("flags"))
            for r in records] == MAILPILE_EXPECTED
    # (each starts with an mbox From line, "From nobody Fri Mar  7 15:17:43 2014": dated by it)
    assert problems == [f"mail/cur/{name}:1: collection 'mail': the message has no Date header; dated by its mbox "
                        f"From line, 2014-03-07T{time}" for name, time in (
                            ("1379857166.25980_9.hottie,2,S", "15:17:43"), ("1379857166.25981_10.hottie,2,S", "17:36:01"),
                            ("fw-question-1443197278.mbx", "15:17:43"), ("no-subject-1400067892.mbx", "15:17:43"))]
    latin = records[1]  # declared ISO-8859-1, written in Windows-1252: its dash is read as one
    assert latin.metadata["date"] == "2013-09-16T11:00:37"  # "-0000": no zone known, kept naive
    assert "fjarnámið – staða" in latin.text
    assert {r.metadata["conversation"] for r in records} == {"INBOX"}


def test_maildir_cited_lines_are_the_whole_message_file() -> None:
    for root in (MAILPILE, NOTMUCH):
        records, _ = load(root)
        for record in records:
            lines = cited_lines(root, record)
            whole = (root / record.file_path.split("/", 1)[1]).read_bytes().decode("utf-8", "replace")
            assert record.line_number == 1 and record.end_line == len(whole.rstrip().splitlines()), record.citation
            mid = record.metadata.get("message_id")
            assert mid is None or any(mid in line for line in lines), record.citation


def notmuch_with(separator: str, tmp_path: Path) -> Path:
    """The notmuch tree with its Maildir info separator as given: stored with ``;`` (as mbsync
    writes it on Windows, whose file names cannot hold ``:``, so a Windows clone checks out),
    copied with the corpus's own ``:`` elsewhere."""
    if separator == ";":
        return NOTMUCH
    if os.name == "nt":
        pytest.skip("Windows file names cannot hold ':'")
    copy = tmp_path / "notmuch"
    shutil.copytree(NOTMUCH, copy, symlinks=True)
    for path in sorted(copy.rglob("*;2,*")):
        path.rename(path.with_name(path.name.replace(";2,", ":2,")))
    return copy


@pytest.mark.parametrize("sep", [";", ":"])
def test_the_notmuch_tree_loads_with_warnings_for_its_broken_messages(tmp_path: Path, sep: str) -> None:
    records, problems = load(notmuch_with(sep, tmp_path))
    assert len(records) == 320
    assert problems == [
        "mail/attachment/text-calendar.eml:4: collection 'mail': the Date header 'Thu Jan 01 00:00:10 +0000' "
        "is not a date; kept undated",
        "mail/broken/broken-cc:5: collection 'mail': the message has 2 'Cc' headers; all are read",
    ]
    by_file = {r.file_path.split("/", 1)[1]: r for r in records}
    broken_cc = by_file["broken/broken-cc"]
    assert broken_cc.metadata["cc"] == ["Bob <bob@example.org>", "Charles <charles@example.org>"]
    loop = by_file["broken/loop/loop-12"].metadata["thread"], by_file["broken/loop/loop-21"].metadata["thread"]
    assert loop == ("mid-loop-12@example.org", "mid-loop-12@example.org")  # a reply loop is one thread
    assert by_file["html/attribute-text"].text == "hunter2"  # HTML as text; attribute values are not text
    assert by_file["attachment/x-gtar-compressed.eml"].text.endswith("[attachment: zendesk-email-loop2.tgz]")
    # (its subject, "encrypted message", is as K-9 writes one it hides)
    assert by_file["crypto/simple-encrypted"].text == "[encrypted message: its subject and text not decrypted]"
    assert by_file[f"default/bar/17{sep}2,"].metadata["conversation"] == "default/bar"
    assert by_file[f"default/cur/29{sep}2,"].metadata["conversation"] == "default"
    # the To header "unlisted-recipients:; (no To-header on input)" is an empty group
    lkml = by_file[f"lkml/cur/1382298770.002930{sep}2,"]
    assert "linux-kernel-u79uwXL29TY76Z2rM5mHXA@public.gmane.org" in lkml.metadata["participants"]


def test_a_thread_is_found_whole_even_where_replies_name_only_their_parent() -> None:
    records, _ = load(NOTMUCH / "threading" / "parent-priority")
    assert {r.file_path.rsplit("/", 1)[1]: r.metadata["thread"] for r in records} == {
        "child": "B00-root@example.org", "grand-child": "B00-root@example.org", "root": "B00-root@example.org"}
    # (the child's References names "B00--root", a typo; its In-Reply-To names the root)


def test_a_gmail_conversation_is_one_thread_as_gmail_shows_it(tmp_path: Path) -> None:
    # Takeout marks each message with its Gmail conversation (X-GM-THRID): a reply whose client
    # left out References and In-Reply-To (some phones, web forms, ticket systems) was a thread
    # of its own, apart from the conversation Gmail shows it in
    mails = [("a1", "1790000000000000001", ""), ("a2", "1790000000000000001", ""),
             ("a3", "1790000000000000001", "<a2@example.com>"), ("b1", "1790000000000000002", "")]
    (tmp_path / "All mail Including Spam and Trash.mbox").write_bytes(b"\n".join(
        b"From 1790000000000000001@xxx Mon Mar 04 10:00:00 +0000 2024\n" + message(
            f"X-GM-THRID: {thread}\nFrom: ana@example.com\nSubject: Re: Dinner\nMessage-ID: <{name}@example.com>\n"
            f"Date: Mon, {4 + i} Mar 2024 10:00:00 +0000" + (f"\nIn-Reply-To: {parent}" if parent else ""), "Hi.")
        for i, (name, thread, parent) in enumerate(mails)))
    records, problems = load(tmp_path)
    assert problems == []
    assert [(r.metadata["message_id"], r.metadata["thread"]) for r in records] == [
        ("a1@example.com", "a1@example.com"), ("a2@example.com", "a1@example.com"),
        ("a3@example.com", "a1@example.com"), ("b1@example.com", "b1@example.com")]


def test_an_outlook_conversation_is_one_thread_by_its_thread_index(tmp_path: Path) -> None:
    # Outlook and Exchange mark each message with its conversation (Thread-Index: 22 bytes for the
    # conversation, 5 more a reply) and mail saved from them often has no References or In-Reply-To:
    # each reply was a thread of its own
    root, other = bytes([1]) + bytes(range(5)) + bytes(range(16)), bytes([1]) + bytes(range(5)) + bytes(16)
    mails = [("o1", root), ("o2", root + b"\x00\x00\x01\x02\x03"), ("o3", root + b"\x00\x00\x01\x02\x03" * 2),
             ("p1", other)]
    for i, (name, index) in enumerate(mails):
        (tmp_path / f"{name}.eml").write_bytes(message(
            f"From: ana@example.com\nSubject: RE: Budget\nMessage-ID: <{name}@example.com>\nThread-Topic: Budget\n"
            f"Thread-Index: {base64.b64encode(index).decode()}\nDate: Mon, {4 + i} Mar 2024 10:00:00 +0000", "Ok."))
    records, problems = load(tmp_path)
    assert problems == [] and [(r.metadata["message_id"], r.metadata["thread"]) for r in records] == [
        ("o1@example.com", "o1@example.com"), ("o2@example.com", "o1@example.com"),
        ("o3@example.com", "o1@example.com"), ("p1@example.com", "p1@example.com")]


# -- decoding: headers, charsets, MIME, HTML --

def test_encoded_headers_charsets_html_and_attachments(tmp_path: Path) -> None:
    cur = tmp_path / "cur"
    cur.mkdir()
    (cur / "1.host:2,S").write_bytes(message(
        "From: =?UTF-8?Q?Bj=C3=B6rk=2C_Gu=C3=B0mundsd=C3=B3ttir?= <bjork@example.is>\n"
        "To: Ana <ana@example.com>, =?ISO-8859-1?Q?Jos=E9?= <jose@example.es>\n"
        "Subject: =?UTF-8?B?w5xiZXIgZGllIExpZWZlcnVuZw==?=\nDate: Tue, 5 Mar 2024 09:15:00 +0100\n"
        "Message-ID: <enc@example.is>\nX-Gmail-Labels: Inbox,\"Receipts, 2024\",Work\n"
        "Content-Type: multipart/mixed; boundary=\"outer\"",
        "--outer\nContent-Type: multipart/alternative; boundary=\"alt\"\n\n"
        "--alt\nContent-Type: text/html; charset=utf-8\n\n<p>not this one</p>\n"
        "--alt\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"
        "Gr=C3=BC=C3=9Fe aus Reykjav=C3=ADk\n--alt--\n"
        "--outer\nContent-Type: application/pdf\nContent-Disposition: attachment;"
        " filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf\nContent-Transfer-Encoding: base64\n\nJVBERi0xLjQK\n--outer--"))
    (cur / "2.host:2,").write_bytes(message(  # 8-bit Latin-1 under a UTF-8 label, and an undeclared part
        "From: x@example.com\nSubject: charsets\nDate: Wed, 6 Mar 2024 10:00:00 +0000\n"
        "Content-Type: multipart/mixed; boundary=b",
        b"--b\nContent-Type: text/plain; charset=utf-8\n\ncaf\xe9 cr\xe8me\n"
        b"--b\nContent-Type: text/plain; charset=x-unknown-charset\n\nna\xc3\xafve\n--b--"))
    (cur / "3.host:2,").write_bytes(message(
        "From: news@example.com\nSubject: HTML only\nDate: Thu, 7 Mar 2024 10:00:00 +0000\n"
        "Content-Type: text/html; charset=utf-8",
        "<html><head><style>p {color: red}</style><title>t</title></head><body><h1>Spring&nbsp;sale</h1>"
        "<p>Up to <b>50%</b> off<br>this week</p><script>track()</script><ul><li>tea</li><li>cake</li></ul>"
        "</body></html>"))
    records, problems = load(tmp_path)
    assert problems == []
    first, second, third = records
    assert first.metadata["author"] == "Björk, Guðmundsdóttir <bjork@example.is>"  # an encoded comma is no split
    assert first.metadata["participants"] == ["Björk, Guðmundsdóttir", "bjork@example.is", "Ana", "ana@example.com",
                                              "José", "jose@example.es"]
    assert first.metadata["subject"] == "Über die Lieferung"
    assert first.metadata["tags"] == ["Inbox", "Receipts, 2024", "Work"]
    assert first.metadata["date"] == "2024-03-05T09:15:00+01:00"
    assert first.text == "Grüße aus Reykjavík\n\n[attachment: Rechnung März.pdf]"
    assert second.text == "café crème\n\nnaïve"
    assert third.text == "Spring sale\n\nUp to 50% off\nthis week\n\n- tea\n- cake"


def test_people_are_named_as_mail_apps_show_them_whatever_quotes_their_mailer_wrote(tmp_path: Path) -> None:
    # Outlook puts names it was given in single quotes ('Ana Lima'), and many mailers write an address as
    # its own name (bo@example.org <bo@example.org>): the quotes stayed in the name (a filter on
    # participants=Ana Lima missed the mail) and the address was read as two people
    (tmp_path / "m.eml").write_bytes(message(
        "From: 'Ana Lima' <ana@example.org>\nTo: bo@example.org <bo@example.org>, 'Cy Diaz' <cy@example.org>\n"
        "Cc: \"'Dee'\" <dee@example.org>, O'Neil <ed@example.org>\nSubject: Plan\nDate: Mon, 4 Mar 2024 10:00:00 +0000",
        "Hi."))
    (record,), problems = load(tmp_path)
    assert problems == [] and (record.metadata["author"], record.metadata["to"], record.metadata["cc"]) == (
        "Ana Lima <ana@example.org>", ["bo@example.org", "Cy Diaz <cy@example.org>"],
        ["Dee <dee@example.org>", "O'Neil <ed@example.org>"])
    assert record.metadata["participants"] == ["Ana Lima", "ana@example.org", "bo@example.org", "Cy Diaz",
                                               "cy@example.org", "Dee", "dee@example.org", "O'Neil", "ed@example.org"]


@pytest.mark.parametrize(("name", "encoding"), [("Rechnung März.pdf", "utf-8"), ("Счёт №5.pdf", "utf-8"),
                                              ("Rechnung März.pdf", "cp1252"), ("請求書.pdf", "utf-8")])
def test_an_attachment_named_in_raw_8_bit_bytes_is_named_and_its_mail_read(tmp_path: Path, name: str,
                                                                              encoding: str) -> None:
    # webmail, PHP mailers and phones write a file's name unencoded (RFC 6532 allows UTF-8): the whole
    # message was skipped with "AttributeError: 'Header' object has no attribute 'split'"
    part = f'Content-Type: application/pdf; name="{name}"\nContent-Disposition: attachment; filename="{name}"'
    (tmp_path / "a.eml").write_bytes(message(
        "From: a@example.org\nSubject: Anbei\nDate: Mon, 4 Mar 2024 10:00:00 +0000\nMIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="b"',
        f"--b\nContent-Type: text/plain\n\nSiehe Anhang.\n--b\n{part}\nContent-Transfer-Encoding: base64\n\n"
        "JVBERi0=\n--b--", encoding))
    (tmp_path / "b.eml").write_bytes(message(
        f'From: a@example.org\nSubject: Notiz\nDate: Mon, 4 Mar 2024 10:00:00 +0000\nContent-Type: text/plain; '
        f'name="{name}.txt"\nContent-Disposition: inline; filename="{name}.txt"', "Hallo.", encoding))
    (tmp_path / "c.eml").write_bytes(message(  # (and a boundary so written still splits its parts)
        'From: a@example.org\nSubject: Teile\nDate: Mon, 4 Mar 2024 10:00:00 +0000\nContent-Type: multipart/mixed; '
        f'boundary="{name}"', f"--{name}\nContent-Type: text/plain\n\nTeil eins.\n--{name}--", encoding))
    records, problems = load(tmp_path)
    assert problems == [] and [r.text for r in records] == [f"Siehe Anhang.\n\n[attachment: {name}]", "Hallo.",
                                                            "Teil eins."]


def test_a_bad_date_written_in_8_bit_is_quoted_readably_in_its_warning(tmp_path: Path) -> None:
    # an old German client wrote its month name in UTF-8, undeclared (and no year: no date)
    path = tmp_path / "old.eml"
    path.write_bytes(message("From: a@example.de\nSubject: Termin\nDate: Mo, 04 Mär 10:00:00 +0100", "Hallo"))
    records, problems = load(path)
    assert records[0].text == "Hallo" and "date" not in records[0].metadata
    assert problems == ["mail/old.eml:3: collection 'mail': the Date header 'Mo, 04 Mär 10:00:00 +0100' is not "
                        "a date; kept undated"]


def test_a_message_without_a_good_date_is_dated_when_it_arrived(tmp_path: Path) -> None:
    # as mail apps show it: the newest Received header (the top one) says when the mail arrived
    received = ("Received: from mx.example.org (mx.example.org [192.0.2.1])\n\tby mail.example.com with ESMTPS;"
                "\n\tTue, 5 Mar 2024 09:12:44 -0800 (PST)\nReceived: by relay.example.org; Tue, 5 Mar 2024 17:12:40 +0000")
    (tmp_path / "no-date.eml").write_bytes(message(f"{received}\nFrom: a@example.org\nSubject: Minutes", "Attached."))
    (tmp_path / "bad-date.eml").write_bytes(message(f"{received}\nFrom: a@example.org\nSubject: Agenda\n"
                                                    "Date: 32/13/2024 25:61", "Item one."))
    (tmp_path / "draft.eml").write_bytes(message("From: a@example.org\nSubject: Draft", "Unsent."))
    records, problems = load(tmp_path)
    assert [(r.metadata["subject"], r.metadata.get("date")) for r in records] == [
        ("Agenda", "2024-03-05T09:12:44-08:00"), ("Draft", None), ("Minutes", "2024-03-05T09:12:44-08:00")]
    assert problems == [
        "mail/bad-date.eml:7: collection 'mail': the Date header '32/13/2024 25:61' is not a date; dated by its "
        "Received header, 2024-03-05T09:12:44-08:00",
        "mail/draft.eml:1: collection 'mail': the message has no Date header; kept undated",
        "mail/no-date.eml:1: collection 'mail': the message has no Date header; dated by its Received header, "
        "2024-03-05T09:12:44-08:00"]


def test_an_mbox_message_without_a_date_or_received_header_is_dated_by_its_from_line(tmp_path: Path) -> None:
    # a draft, an outbox copy or a note filed in Thunderbird, mutt or Apple Mail has neither: the From line the
    # mail app wrote when it stored the message says when, as the app shows it; it was kept undated
    (tmp_path / "Drafts").write_bytes(
        b"From - Mon Mar 11 10:00:00 2024\nFrom: a@example.org\nSubject: Draft\n\nUnsent.\n\n"
        b"From 1790@xxx Tue Mar 12 08:15:00 +0000 2024\nFrom: a@example.org\nSubject: Takeout\n\nHi.\n\n"
        b"From -\nFrom: a@example.org\nSubject: Bare\n\nNo date at all.\n")
    records, problems = load(tmp_path)
    assert [(r.metadata["subject"], r.metadata.get("date")) for r in records] == [
        ("Draft", "2024-03-11T10:00:00"), ("Takeout", "2024-03-12T08:15:00+00:00"), ("Bare", None)]
    assert problems == [
        "mail/Drafts:1: collection 'mail': the message has no Date header; dated by its mbox From line, "
        "2024-03-11T10:00:00",
        "mail/Drafts:7: collection 'mail': the message has no Date header; dated by its mbox From line, "
        "2024-03-12T08:15:00+00:00", "mail/Drafts:13: collection 'mail': the message has no Date header; kept undated"]


# Date headers that mail clients and scripts write in their user's language, or as ISO 8601, not as RFC 5322
LOCALIZED_DATES = [
    ("Di, 12 Mär 2024 14:05:00 +0100", "2024-03-12T14:05:00+01:00"),
    ("Dienstag, 12. März 2024 14:05 +0100", "2024-03-12T14:05:00+01:00"),
    ("12 mars 2024 14:05", "2024-03-12T14:05:00"),
    ("mar., 12 mars 2024 14:05:00 +0100", "2024-03-12T14:05:00+01:00"),
    ("mer. 7 févr. 2024 09:30:00 +0100", "2024-02-07T09:30:00+01:00"),
    ("mar, 12 mar 2024 14:05:00 +0100", "2024-03-12T14:05:00+01:00"),
    ("martes, 12 de marzo de 2024 14:05", "2024-03-12T14:05:00"),
    ("sáb, 3 ago 2024 08:00:00 -0300", "2024-08-03T08:00:00-03:00"),
    ("gio, 12 dic 2024 14:05:00 +0100", "2024-12-12T14:05:00+01:00"),
    ("ter, 12 de out de 2024 14:05:00 -0300", "2024-10-12T14:05:00-03:00"),
    ("di 12 mrt 2024 14:05:00 +0100", "2024-03-12T14:05:00+01:00"),
    ("tis 12 maj 2024 14:05:00 +0200", "2024-05-12T14:05:00+02:00"),
    ("2024-03-12 14:05:00", "2024-03-12T14:05:00"),  # ISO 8601, as scripts and some gateways write it
    ("2024-03-12T14:05:00Z", "2024-03-12T14:05:00+00:00"),
    ("2024-03-12T14:05:00.250+0100", "2024-03-12T14:05:00+01:00"),
    ("2024/03/12 14:05:00 +0900", "2024-03-12T14:05:00+09:00"),  # year first with slashes: Japanese scripts
    ("2024/3/5 8:05", "2024-03-05T08:05:00"),
    # month first, as American-style locales write the month in the user's language
    ("Dezember 3, 2024", "2024-12-03T00:00:00"),
    ("Dienstag, Dezember 3, 2024 14:05 +0100", "2024-12-03T14:05:00+01:00"),
    ("martes, diciembre 3, 2024 14:05", "2024-12-03T14:05:00"),
    ("mar., décembre 3, 2024 à 14:05:00 +0100", "2024-12-03T14:05:00+01:00"),
    ("maart 12, 2024 09:30:00 +0100", "2024-03-12T09:30:00+01:00"),
    ("Mär. 12, 2024, 14:05", "2024-03-12T14:05:00"),
    ("febrero 7 2024 09:30 -0300", "2024-02-07T09:30:00-03:00"),
    # an offset written with a colon or after GMT/UTC, as some scripts and Java mailers write it
    ("Tue, 5 Mar 2024 08:15:29 +01:00", "2024-03-05T08:15:29+01:00"),
    ("Tue, 05 Mar 2024 08:15:29 GMT+01:00", "2024-03-05T08:15:29+01:00"),
    ("Tue, 5 Mar 2024 08:15:29 UTC-0530", "2024-03-05T08:15:29-05:30"),
    ("Tue, 5 Mar 2024 08:15:29 GMT+8", "2024-03-05T08:15:29+08:00"),  # the hours alone, as PHP scripts write it
    ("Tue, 5 Mar 2024 08:15:29 UTC-5", "2024-03-05T08:15:29-05:00"),
    ("2024-03-05 08:15:29 GMT+8", "2024-03-05T08:15:29+08:00"),
    ("Di, 5 Mär 2024 08:15:29 +01:00", "2024-03-05T08:15:29+01:00"),
    # a 12-hour clock, as mail converted from Outlook by export tools writes it
    ("Tuesday, March 5, 2024 8:15 PM", "2024-03-05T20:15:00"),
    ("Tue, 5 Mar 2024 12:05:09 a.m. -0500", "2024-03-05T00:05:09-05:00"),
    ("Dezember 3, 2024 12:30 PM", "2024-12-03T12:30:00"),
    # an English ordinal, as text headers write it (one table of month names and day forms for both)
    ("Tuesday, March 5th, 2024 8:15 PM", "2024-03-05T20:15:00"),
    ("5th March 2024 08:15", "2024-03-05T08:15:00"),
    # numbers with dots, day first everywhere (German, Russian, Finnish, Czech, Polish clients)
    ("05.03.2024 08:15", "2024-03-05T08:15:00"),
    ("Di, 05.03.2024, 08:15:00 +0100", "2024-03-05T08:15:00+01:00"),
    ("ti 5.3.2024 klo 8.15", "2024-03-05T08:15:00"),
    # numbers with slashes, where a field past 12 says which is the day
    ("25/03/2024 08:15", "2024-03-25T08:15:00"),
    ("03/25/2024 8:15 PM", "2024-03-25T20:15:00"),
    # year first, in Japanese, Chinese and Korean, with the weekday and the half of the day as they write them
    ("2024年3月5日 8:15", "2024-03-05T08:15:00"),
    ("2024年3月5日(火) 8:15", "2024-03-05T08:15:00"),
    ("2024年3月5日（火）午後3:05", "2024-03-05T15:05:00"),
    ("2024年3月5日 星期二 上午8:15 +0800", "2024-03-05T08:15:00+08:00"),
    ("2024年3月5日 周二 下午12:30", "2024-03-05T12:30:00"),
    ("2024年3月5日", "2024-03-05T00:00:00"),
    ("2024년 3월 5일 (화) 오후 3:05", "2024-03-05T15:05:00"),
    ("2024. 3. 5. 오전 8:15", "2024-03-05T08:15:00"),
    # month names of more languages, and the words they write around the year and the time
    ("5 марта 2024 г. 08:15", "2024-03-05T08:15:00"),
    ("вт, 5 мар 2024 08:15:00 +0300", "2024-03-05T08:15:00+03:00"),
    ("5 марта 2024 г. в 08:15", "2024-03-05T08:15:00"),
    ("5 березня 2024 р. о 08:15", "2024-03-05T08:15:00"),
    ("wt., 5 marca 2024 08:15", "2024-03-05T08:15:00"),
    ("5 marca 2024 r. o 08:15", "2024-03-05T08:15:00"),
    ("út 5. března 2024 v 8:15", "2024-03-05T08:15:00"),
    ("5 Şubat 2024 08:15", "2024-02-05T08:15:00"),
    ("5 Μαρτίου 2024 08:15", "2024-03-05T08:15:00"),
    ("dt., 5 de març de 2024 8:15", "2024-03-05T08:15:00"),
    ("5. maaliskuuta 2024 klo 8.15", "2024-03-05T08:15:00"),
    ("5 de março de 2024 08:15", "2024-03-05T08:15:00"),
    # RFC 5322's form as a script under a Chinese, Japanese or Korean locale writes it (strftime's %a and %b)
    ("周二, 05 3月 2024 08:15:00 +0800", "2024-03-05T08:15:00+08:00"),
    ("火, 05 3月 2024 08:15:00 +0900", "2024-03-05T08:15:00+09:00"),
    ("화, 05 12월 2024 08:15:00 +0900", "2024-12-05T08:15:00+09:00"),
    # a two-digit year, a time in Japanese, a weekday after slashes, an ISO date with its zone's name
    ("05.03.24 08:15", "2024-03-05T08:15:00"),
    ("2024年3月5日 15時05分", "2024-03-05T15:05:00"),
    ("2024/03/05 (火) 08:15", "2024-03-05T08:15:00"),
    ("2024-03-05T08:15:00+01:00 (CET)", "2024-03-05T08:15:00+01:00"),
    # a zone's name the email package does not know (it knows only North America's), as old clients
    # and scripts write it: its offset, not a date without one
    ("Tue, 5 Mar 2024 08:15:00 CET", "2024-03-05T08:15:00+01:00"),
    ("Tue, 5 Jul 2024 08:15:00 MESZ", "2024-07-05T08:15:00+02:00"),
    ("Tue, 5 Mar 2024 08:15:00 JST", "2024-03-05T08:15:00+09:00"),
    ("Tue, 5 Mar 2024 08:15:00 msk", "2024-03-05T08:15:00+03:00"),
    ("Dienstag, 5. März 2024 08:15 MEZ", "2024-03-05T08:15:00+01:00"),
    ("Tue, 5 Mar 2024 08:15:00 EST", "2024-03-05T08:15:00-05:00"),
    # daylight time after a zone's name, as old Unix mailers wrote it; a zone by its IANA or Windows name, as
    # scripts and Windows tools write it, at the offset it keeps on that day (each was a time without a zone)
    ("Fri, 5 Jul 1996 08:15:00 MET DST", "1996-07-05T08:15:00+02:00"),
    ("Tue, 5 Mar 2024 08:15:00 Europe/Berlin", "2024-03-05T08:15:00+01:00"),
    ("Fri, 5 Jul 2024 08:15:00 (Europe/Berlin)", "2024-07-05T08:15:00+02:00"),
    ("Tue Mar 05 08:15:30 America/New_York 2024", "2024-03-05T08:15:30-05:00"),
    ("Fri, 5 Jul 2024 08:15:00 W. Europe Standard Time", "2024-07-05T08:15:00+02:00"),
    ("Fri, 5 Jul 2024 08:15:00 Pacific Daylight Time", "2024-07-05T08:15:00-07:00"),
    ("05.03.2024 08:15 Tokyo Standard Time", "2024-03-05T08:15:00+09:00"),
    # Hungarian writes the year first, with the month's name; Spanish locales write "p. m."
    ("2024. március 5. 8:15", "2024-03-05T08:15:00"),
    ("2024. márc. 5., kedd, 20:15 +0100", "2024-03-05T20:15:00+01:00"),
    ("martes, 5 de marzo de 2024 8:15 p. m.", "2024-03-05T20:15:00"),
    ("2024-03-05", "2024-03-05T00:00:00"),  # a day alone, as scripts write it
    # a fraction of a second, as .NET, Java and PHP mailers write it (the email package read the date
    # without its offset)
    ("Tue, 5 Mar 2024 08:15:30.123 +0100", "2024-03-05T08:15:30+01:00"),
    ("Tue, 5 Mar 2024 08:15:30,5 -0500", "2024-03-05T08:15:30-05:00"),
    ("Tue, 5 Mar 2024 08:15:30.123456789+0100", "2024-03-05T08:15:30+01:00"),
    # an offset of hours alone, or with GMT or UTC in front (the email package read "+8" as 8 minutes)
    ("Tue, 5 Mar 2024 08:15:30 +8", "2024-03-05T08:15:30+08:00"),
    ("Tue, 5 Mar 2024 08:15:30 +08", "2024-03-05T08:15:30+08:00"),
    ("Tue, 5 Mar 2024 08:15:30 -5", "2024-03-05T08:15:30-05:00"),
    ("Tue, 5 Mar 2024 08:15:30 UTC+8", "2024-03-05T08:15:30+08:00"),
    ("Tue, 5 Mar 2024 08:15:30 GMT+0800", "2024-03-05T08:15:30+08:00"),
    ("Tue, 5 Mar 2024 08:15:30 GMT +0100", "2024-03-05T08:15:30+01:00"),
    ("Tue, 5 Mar 2024 08:15:30 UTC+5:30", "2024-03-05T08:15:30+05:30"),
    ("Tue, 5 Mar 2024 08:15:30 GMT-0", "2024-03-05T08:15:30+00:00"),
    ("2024-03-05T08:15:30-04", "2024-03-05T08:15:30-04:00"),
    # Java's Date.toString(), as scripts that write "Date: " + new Date() send it: the zone's name before the year
    ("Tue Mar 05 08:15:30 CET 2024", "2024-03-05T08:15:30+01:00"),
    ("Mon Mar 04 10:00:00 GMT+01:00 2024", "2024-03-04T10:00:00+01:00"),  # (a zone Java knows by no name)
    ("Mon Mar 04 10:00:00 GMT-05:30 2024", "2024-03-04T10:00:00-05:30"),
    ("Mon Mar 04 10:00:00 GMT 2024", "2024-03-04T10:00:00+00:00"),
    # an offset without its sign after GMT, as some Windows mailers write it (east of Greenwich), or with seconds
    ("Mon, 4 Mar 2024 10:00:00 GMT0100", "2024-03-04T10:00:00+01:00"),
    ("Mon, 4 Mar 2024 10:00:00 UTC0530 (IST)", "2024-03-04T10:00:00+05:30"),
    ("Mon, 4 Mar 2024 10:00:00 +01:00:00", "2024-03-04T10:00:00+01:00"),
    ("2024-03-04 10:00:00 -05:00:00", "2024-03-04T10:00:00-05:00"),
    # a leap second, which RFC 5322 allows and Python's clock has none of: its second before
    ("Sat, 31 Dec 2016 23:59:60 +0000", "2016-12-31T23:59:59+00:00"),
    ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59+00:00"),
    # Go's time.String(), as Go programs write "Date: " + time.Now().String(): the zone's name after the offset
    ("2014-11-18 15:57:11 +0000 UTC", "2014-11-18T15:57:11+00:00"),
    ("2024-03-04 10:00:00.123456789 +0100 CET m=+0.001234567", "2024-03-04T10:00:00+01:00"),
    ("2024-03-04 10:00:00 +0300 +03", "2024-03-04T10:00:00+03:00"),
    # "at" before the time, as Apple's and Outlook's English long dates write it (the time was lost: midnight)
    ("Tuesday, November 18, 2014 at 3:57:11 PM", "2014-11-18T15:57:11"),
    ("18 November 2014 at 15:57 +0100", "2014-11-18T15:57:00+01:00"),
    ("Tue, 18 Nov 2014 at 15:57:11 EST", "2014-11-18T15:57:11-05:00"),
    # a year counted from 1900, as mailers with the Y2K bug wrote it (C's and Perl's tm_year: 100 is 2000), or
    # with "19" before it (19100): the year it counts to, not the year 100 or 1910
    ("Sat, 01 Jan 100 10:00:00 -0500", "2000-01-01T10:00:00-05:00"),
    ("Tue, 18 Nov 114 15:57:11 +0000", "2014-11-18T15:57:11+00:00"),
    ("Sat, 1 Jan 19100 10:00:00 -0500", "2000-01-01T10:00:00-05:00"),
    ("Mon, 4 Mar 19124 10:00:00 +0100", "2024-03-04T10:00:00+01:00"),
    # the end of a day, 24:00, as ISO 8601 allows and some scripts write midnight: the next day's 00:00
    ("Mon, 04 Mar 2024 24:00:00 +0000", "2024-03-05T00:00:00+00:00"),
    ("Thu, 29 Feb 2024 24:00 -0500", "2024-03-01T00:00:00-05:00"),
    ("2024-12-31T24:00:00Z", "2025-01-01T00:00:00+00:00"),
    ("31.12.2024 24:00", "2025-01-01T00:00:00"),
]


@pytest.mark.parametrize(("written", "date"), LOCALIZED_DATES, ids=range(len(LOCALIZED_DATES)))
def test_a_date_header_written_in_a_european_language_is_read(tmp_path: Path, written: str, date: str) -> None:
    (tmp_path / "local.eml").write_bytes(message(f"From: a@example.org\nSubject: Termin\nDate: {written}", "Hi."))
    records, problems = load(tmp_path)
    assert [r.metadata.get("date") for r in records] == [date] and problems == []


@pytest.mark.parametrize("written", ["12 Foo 2024 14:05", "Foo 12, 2024 14:05", "Dezember 32, 2024"])
def test_a_date_header_naming_no_month_any_language_knows_stays_undated(tmp_path: Path, written: str) -> None:
    (tmp_path / "odd.eml").write_bytes(message(f"From: a@example.org\nSubject: x\nDate: {written}", "Hi."))
    records, problems = load(tmp_path)
    assert records[0].metadata.get("date") is None and "is not a date" in problems[0]


@pytest.mark.parametrize("written", ["05/03/2024 08:15", "令和6年3月5日 8:15", "2024年13月5日 8:15"])
def test_a_date_that_does_not_say_which_day_is_no_date_and_the_message_is_kept(tmp_path: Path, written: str) -> None:
    # 05/03/2024 is 5 March or 3 May (a Japanese era's year is not read): the message is indexed,
    # dated by its Received header, and the WARN names the file and the Date header's line
    (tmp_path / "odd.eml").write_bytes(message(f"Received: by mx.example.org; Tue, 5 Mar 2024 08:16:00 +0100\n"
                                               f"From: a@example.org\nSubject: Plan\nDate: {written}", "Hi."))
    records, problems = load(tmp_path)
    assert [(r.text, r.metadata.get("date")) for r in records] == [("Hi.", "2024-03-05T08:16:00+01:00")]
    assert problems == [f"mail/odd.eml:4: collection 'mail': the Date header '{written}' is not a date; dated by its "
                        "Received header, 2024-03-05T08:16:00+01:00"]


def test_a_date_with_a_year_too_long_for_any_clock_is_no_date_and_the_message_is_kept(tmp_path: Path) -> None:
    # spam writes such years; Python's date parser overflows on them rather than saying "no date"
    huge = "Mon, 4 Mar 99999999999999999999 10:00:00 +0000"
    (tmp_path / "spam.eml").write_bytes(message(f"Received: by mx.example.org; {huge}\nFrom: a@example.org\n"
                                                f"Subject: Offer\nDate: {huge}", "Buy now."))
    records, problems = load(tmp_path)
    assert [(r.text, r.metadata.get("date")) for r in records] == [("Buy now.", None)]
    assert problems == [f"mail/spam.eml:4: collection 'mail': the Date header '{huge}' is not a date; kept undated"]


def test_an_html_mail_whose_charset_only_its_meta_tag_names_is_read_in_it(tmp_path: Path) -> None:
    # bulk mailers send "Content-Type: text/html" bare and name the charset in the page, as browsers read it
    head = "From: shop@example.com\nSubject: Sale\nDate: Mon, 4 Mar 2024 10:00:00 +0300\nContent-Type: text/html"
    (tmp_path / "ru.eml").write_bytes(message(head, (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251"></head>'
        "<body><p>Привет! Скидки до 50%.</p></body></html>").encode("cp1251")))
    (tmp_path / "ja.eml").write_bytes(message(head, (
        "<!DOCTYPE html><html><head><meta charset='Shift_JIS'></head><body>セール開催中①</body></html>").encode("cp932")))
    (tmp_path / "wrong.eml").write_bytes(message(head.replace("text/html", "text/html; charset=utf-8"), (
        '<meta charset="iso-8859-5"><p>Grüße, naïve café</p>').encode("utf-8")))  # the header wins
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.text for r in records] == ["セール開催中①", "Привет! Скидки до 50%.", "Grüße, naïve café"]


def test_a_meta_tag_that_says_utf_16_is_read_as_utf_8_as_browsers_read_it(tmp_path: Path) -> None:
    # .NET writes charset=utf-16 into pages it then sends as UTF-8; read as UTF-16, an even
    # number of bytes decodes without an error, into CJK-looking noise
    head = "From: shop@example.com\nSubject: Sale\nDate: Mon, 4 Mar 2024 10:00:00 +0300\nContent-Type: text/html"
    for name, pad in (("even.eml", ""), ("odd.eml", " ")):
        (tmp_path / name).write_bytes(message(head, (
            f'<html><head><meta charset="utf-16"></head><body><p>Grüße, the kayak leaks.{pad}</p></body></html>'
        ).encode("utf-8")))
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.text for r in records] == ["Grüße, the kayak leaks.", "Grüße, the kayak leaks."]


def test_legacy_charset_labels_read_as_the_windows_code_pages_mail_apps_write(tmp_path: Path) -> None:
    # Japanese Windows mail says Shift_JIS and writes CP932 (①), Chinese says GB2312 and writes
    # GBK (镕), Korean says EUC-KR or ks_c_5601-1987 and writes CP949 (갂): read strictly as
    # labelled, one such character turned the whole text into Latin-1 mojibake, and the
    # encoded subject stayed as its =?...?= words
    cur = tmp_path / "cur"
    cur.mkdir()
    (cur / "1.host:2,S").write_bytes(message(
        "From: =?shift_jis?B?h0CJ74tj?= <tanaka@example.jp>\nSubject: =?gb2312?B?1uzpRrv5pM68/g==?=\n"
        "Date: Tue, 5 Mar 2024 09:15:00 +0900\nContent-Type: text/plain; charset=Shift_JIS",
        "①会議の件です。".encode("cp932")))
    (cur / "2.host:2,S").write_bytes(message(
        "From: kim@example.kr\nSubject: hangul\nDate: Tue, 5 Mar 2024 09:15:00 +0900\n"
        "Content-Type: text/plain; charset=ks_c_5601-1987",
        "갂똠 회의".encode("cp949")))
    records, problems = load(tmp_path)
    assert problems == []
    japanese, korean = records
    assert japanese.metadata["author"] == "①会議 <tanaka@example.jp>"
    assert japanese.metadata["subject"] == "朱镕基の件"
    assert japanese.text == "①会議の件です。"
    assert korean.text == "갂똠 회의"


def test_charset_labels_python_has_no_codec_of_are_read_as_browsers_read_them(tmp_path: Path) -> None:
    # old Mac mail (x-mac-cyrillic, x-mac-ce), Netscape's x-euc-jp, Microsoft's x-cp1250: as WHATWG's
    # labels name them; without a codec such a part read as Windows-1252 mojibake, an encoded word raw
    head = "From: a@example.org\nDate: Mon, 4 Mar 2024 10:00:00 +0100\nContent-Type: text/plain; charset="
    for name, label, codec, text in (("1.eml", "x-mac-cyrillic", "mac_cyrillic", "Привет из Москвы"),
                                     ("2.eml", "x-mac-ce", "mac_latin2", "Dobrý den, Łódź"),
                                     ("3.eml", "x-euc-jp", "euc_jp", "会議の件"),
                                     ("4.eml", "x-cp1250", "cp1250", "Zażółć gęślą jaźń")):
        (tmp_path / name).write_bytes(message(f"Subject: {name}\n{head}{label}", text.encode(codec)))
    (tmp_path / "5.eml").write_bytes(message("Subject: =?x-mac-cyrillic?Q?=8F=F0=E8=E2=E5=F2?=\n" + head + "utf-8",
                                             "x"))
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.text for r in records[:4]] == ["Привет из Москвы", "Dobrý den, Łódź", "会議の件", "Zażółć gęślą jaźń"]
    assert records[4].metadata["subject"] == "Привет"


def test_8_bit_text_in_no_charset_reads_as_windows_1252(tmp_path: Path) -> None:
    # mail written on Windows with no charset (or "unknown-8bit", a gateway's): its ’ € “ ” read as
    # Latin-1's invisible C1 controls, "It\x92s \x80 5"; bytes Windows-1252 lacks still read as Latin-1
    for name, kind, body in (("none.eml", "text/plain", b"It\x92s \x80 5 at the caf\xe9"),
                             ("unknown.eml", "text/plain; charset=unknown-8bit", b"Na\xefve \x96 ok"),
                             ("odd.eml", "text/plain", b"byte \x81 caf\xe9")):
        (tmp_path / name).write_bytes(b"From: a@example.org\nSubject: Caf\xe9 \x93Rosa\x94\n"  # (raw bytes here too)
                                      b"Date: Mon, 4 Mar 2024 10:00:00 +0100\nContent-Type: " + kind.encode()
                                      + b"\n\n" + body + b"\n")
    records, problems = load(tmp_path)
    assert problems == []
    assert {r.text for r in records} == {"It’s € 5 at the café", "Naïve – ok", "byte \x81 café"}
    assert {r.metadata["subject"] for r in records} == {"Café “Rosa”"}


@pytest.mark.parametrize(("charset", "subject", "name"), [
    ("gb2312", "会议通知", "张伟"), ("shift_jis", "会議のお知らせ①", "山田太郎"), ("koi8-r", "Привет", "Дмитрий"),
    ("euc-kr", "회의 자료", "김민준"), ("big5", "會議通知", "陳大文"), ("windows-1251", "Счёт", "Иван")])
@pytest.mark.parametrize("multipart", [False, True], ids=["text", "multipart"])
def test_8_bit_headers_read_in_the_charset_the_message_declares(tmp_path: Path, charset: str, subject: str, name: str,
                                                                 multipart: bool) -> None:
    # old Chinese, Japanese, Korean and Russian clients (Foxmail, Becky!, The Bat!) wrote their headers
    # unencoded in the body's charset, as Thunderbird reads them: they read as Windows-1252, "»áÒéÍ¨Öª"
    codec = {"shift_jis": "cp932", "gb2312": "gbk", "euc-kr": "cp949"}.get(charset, charset)
    kind = f'text/plain; charset="{charset}"'
    head = f"From: {name} <a@example.org>\nSubject: {subject}\nDate: Mon, 4 Mar 2024 10:00:00 +0800\n".encode(codec)
    body = f"Content-Type: {kind}\n\n".encode() + subject.encode(codec) + b"\n"
    if multipart:
        body = (b'MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary="b"\n\n--b\nContent-Type: '
                + kind.encode() + b"\n\n" + subject.encode(codec) + b"\n--b--\n")
    (tmp_path / "old.eml").write_bytes(head + body)
    records, problems = load(tmp_path)
    assert problems == [] and [(r.metadata["subject"], r.metadata["author"], r.text) for r in records] == [
        (subject, f"{name} <a@example.org>", subject)]


def test_quoted_printable_soft_breaks_that_gained_trailing_spaces_are_still_joined(tmp_path: Path) -> None:
    # RFC 2045: whitespace at a quoted-printable line's end was added in transport (Exchange, Lotus
    # Notes, mbox tools that pad lines) and is dropped; kept, "=  " ended no line and the body read
    # "für M=" and "ärz" on two lines
    (tmp_path / "qp.eml").write_bytes(message(
        "From: a@example.org\nSubject: x\nDate: Mon, 4 Mar 2024 10:00:00 +0100\n"
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable",
        "Die Rechnung f=C3=BCr M=  \r\n=C3=A4rz liegt bei: 20 =E2=82=AC.=\t\r\n Gr=C3=BC=C3=9Fe   \r\nJ=C3=BCrgen"))
    records, problems = load(tmp_path)
    assert problems == [] and records[0].text == "Die Rechnung für März liegt bei: 20 €. Grüße\nJürgen"


@pytest.mark.parametrize("encoding", ["quoted-printable; charset=utf-8", "Base64 (encoded by a script)", "base64;"])
def test_a_transfer_encoding_written_with_parameters_is_still_decoded(tmp_path: Path, encoding: str) -> None:
    # some scripts and gateways copy Content-Type's parameters onto it (RFC 2045 gives it none): the body
    # was read as it was sent, "Gr=C3=BC=C3=9Fe" or its base64
    body = "Gr=C3=BC=C3=9Fe aus K=C3=B6ln" if encoding.startswith("quoted") else base64.b64encode(
        "Grüße aus Köln".encode()).decode()
    (tmp_path / "te.eml").write_bytes(message(
        "From: a@example.org\nSubject: x\nDate: Mon, 4 Mar 2024 10:00:00 +0100\n"
        f"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: {encoding}", body))
    records, problems = load(tmp_path)
    assert problems == [] and records[0].text == "Grüße aus Köln"


def test_text_labelled_ascii_that_holds_utf_8_is_read_as_utf_8(tmp_path: Path) -> None:
    # mailers that label every part us-ascii (old scripts, misconfigured list servers) send UTF-8
    # under it: read as Windows-1252, as browsers read an ASCII label, it was "GrÃ¼ÃŸe aus KÃ¶ln";
    # bytes that are no UTF-8 still read as Windows-1252
    head = "From: a@example.org\nSubject: x\nDate: Mon, 4 Mar 2024 10:00:00 +0100\nContent-Type: text/plain; charset="
    (tmp_path / "utf8.eml").write_bytes(message(head + "us-ascii", "Grüße aus Köln, café ✓"))
    (tmp_path / "cp1252.eml").write_bytes(message(head + '"US-ASCII"', "Façade – 20 €".encode("cp1252")))
    (tmp_path / "plain.eml").write_bytes(message(head + "ascii", "plain words"))
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.text for r in records] == ["Façade – 20 €", "plain words", "Grüße aus Köln, café ✓"]


def test_text_labelled_latin_1_that_holds_utf_8_is_read_as_utf_8(tmp_path: Path) -> None:
    # mailers and list servers that label every part iso-8859-1 or windows-1252 send UTF-8 under it:
    # read as labelled it was "JosÃ© MÃ¼ller, 20 â‚¬"; real Latin-1 (a lone é, never a valid UTF-8
    # sequence in text) still reads as labelled
    head = "From: a@example.org\nSubject: x\nDate: Mon, 4 Mar 2024 10:00:00 +0100\nContent-Type: text/plain; charset="
    (tmp_path / "1.eml").write_bytes(message(head + "iso-8859-1", "José Müller, 20 €"))
    (tmp_path / "2.eml").write_bytes(message(head + '"Windows-1252"', "Grüße aus Köln ✓"))
    (tmp_path / "3.eml").write_bytes(message(head + "iso-8859-1", "Façade, Ærø, 20 °C".encode("latin-1")))
    (tmp_path / "4.eml").write_bytes(message(head + "windows-1252", "It’s “café” – 5 €".encode("cp1252")))
    (tmp_path / "5.eml").write_bytes(message(
        "From: =?iso-8859-1?Q?Jos=C3=A9?= <jose@example.es>\nSubject: =?windows-1252?Q?Caf=E9_=96?= und =?windows-1252?Q?ma=C3=B1ana?=\n"
        "Date: Mon, 4 Mar 2024 10:00:00 +0100\nContent-Type: text/html",
        '<meta charset="iso-8859-1"><p>Mañana, señor</p>'))
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.text for r in records] == ["José Müller, 20 €", "Grüße aus Köln ✓", "Façade, Ærø, 20 °C",
                                         "It’s “café” – 5 €", "Mañana, señor"]
    assert (records[4].metadata["author"], records[4].metadata["subject"]) == ("José <jose@example.es>",
                                                                               "Café – und mañana")


def jis(text: str) -> bytes:
    """ISO-2022-JP as Windows mail apps write it (CP50221): NEC's ① and ㈱ in JIS row 13,
    half-width katakana after ESC ( I."""
    out, mode = b"", b"\x1b(B"
    for char in text:
        code = char.encode("cp932")
        if len(code) == 1:
            wanted, code = (b"\x1b(B", code) if char.isascii() else (b"\x1b(I", bytes([code[0] - 0x80]))
        else:
            high, low = code[0] - (0x40 if code[0] >= 0xE0 else 0), code[1]
            row = (high - 0x81) * 2 + 0x21 + (1 if low >= 0x9F else 0)
            cell = low - 0x7E if low >= 0x9F else low - 0x1F - (1 if low >= 0x80 else 0)
            wanted, code = b"\x1b$B", bytes([row, cell])
        out += (wanted if wanted != mode else b"") + code
        mode = wanted
    return out + (b"\x1b(B" if mode != b"\x1b(B" else b"")


def test_iso_2022_jp_mail_with_windows_characters_reads_as_japanese(tmp_path: Path) -> None:
    # Outlook, Thunderbird and Becky! on Windows write ① and ㈱ into ISO-2022-JP mail; read
    # strictly, one such character turned the whole mail into escape codes and Latin-1
    subject = base64.b64encode(jis("㈱山田商事①")).decode()
    (tmp_path / "jis.eml").write_bytes(message(
        f"From: yamada@example.jp\nSubject: =?ISO-2022-JP?B?{subject}?=\nDate: Tue, 5 Mar 2024 09:15:00 +0900\n"
        "Content-Type: text/plain; charset=ISO-2022-JP\nContent-Transfer-Encoding: 7bit",
        jis("①会議は水曜日です。\n㈱山田商事 (Yamada) ｶﾀｶﾅ")))
    records, problems = load(tmp_path)
    assert problems == []
    assert records[0].metadata["subject"] == "㈱山田商事①"
    assert records[0].text == "①会議は水曜日です。\n㈱山田商事 (Yamada) ｶﾀｶﾅ"


def test_euc_jp_mail_with_windows_characters_reads_as_japanese(tmp_path: Path) -> None:
    # Japanese mail labelled EUC-JP carries NEC's ① and ㈱ (CP51932, as Windows and browsers read it): Python's
    # euc_jp has none of them, so one such character turned the whole mail into Windows-1252 mojibake
    text = "①会議は水曜日です。\n㈱山田商事 ｶﾀｶﾅ ¦"  # (half-width katakana after 0x8E, ¦ from JIS X 0212 after 0x8F)
    raw = b"".join({"①": b"\xad\xa1", "㈱": b"\xad\xea"}.get(c) or c.encode("euc_jp") for c in text)
    subject = base64.b64encode("㈱山田商事①".encode("euc_jis_2004")).decode()
    (tmp_path / "euc.eml").write_bytes(message(
        f"From: yamada@example.jp\nSubject: =?EUC-JP?B?{subject}?=\nDate: Tue, 5 Mar 2024 09:15:00 +0900\n"
        "Content-Type: text/plain; charset=EUC-JP", raw))
    records, problems = load(tmp_path)
    assert problems == [] and [(r.metadata["subject"], r.text) for r in records] == [("㈱山田商事①", text)]


@pytest.mark.parametrize("label", ["", "Content-Type: text/plain\n", "Content-Type: text/plain; charset=us-ascii\n"],
                         ids=["none", "no-charset", "ascii"])
def test_iso_2022_jp_written_without_mime_labels_reads_as_japanese(tmp_path: Path, label: str) -> None:
    # old Japanese mailers and list servers wrote ISO-2022-JP, 7-bit escape codes, into headers without
    # encoded words and into bodies with no charset (or us-ascii): they read as "\x1b$B2q5D..."
    head = b"From: " + jis("山田") + b" <yamada@example.jp>\nSubject: " + jis("会議のお知らせ") + b"\n"
    (tmp_path / "jis.eml").write_bytes(head + b"Date: Tue, 5 Mar 2024 09:15:00 +0900\n" + label.encode() + b"\n"
                                       + jis("会議は水曜日です。") + b"\n")
    records, problems = load(tmp_path)
    assert problems == [] and [(r.metadata["author"], r.metadata["subject"], r.text) for r in records] == [
        ("山田 <yamada@example.jp>", "会議のお知らせ", "会議は水曜日です。")]


def test_html_to_text_drops_markup_scripts_and_keeps_blocks() -> None:
    assert html_to_text("<div>a &amp; b</div><div>c<br/>d</div><script>x()</script>") == "a & b\n\nc\nd"


# A newsletter's preheader (the inbox preview line) and its spacer, hidden from the reader by
# inline styles, as ESPs write them (Mailchimp, Litmus, hand-written templates)
NEWSLETTER = (
    '<body><div style="display:none; max-height:0; overflow:hidden; mso-hide:all">Last chance: 40% off ends '
    'tonight</div><div style="display: none !important;">&zwnj;&nbsp;&zwnj;&nbsp;&#847;</div>'
    '<span class="mcnPreviewText" style="font-size:0px; line-height:0px; max-height:0px; opacity:0">Open me</span>'
    '<span style="visibility:hidden">ghost <b style="visibility:visible">Hello Ana,</b></span>'
    '<div style="MAX-HEIGHT: 0px; OVERFLOW: hidden">mobile-only copy</div><img src="x.png" style="display:none">'
    '<table><tr><td style="font-size:0"><div style="display:inline-block; font-size:16px">Your spring '
    'order shipped: two linen shirts and a straw hat, arriving Thursday.</div></td></tr></table>'
    '<p style="mso-hide:all">Track it online.</p></body>')


def test_an_emoji_that_html_shows_as_an_image_is_read_as_its_character() -> None:
    # Gmail sends an emoji as an image whose alt is the emoji: "Happy birthday !" lost the cake, and
    # a search for 🎂 the mail; an image's words (a logo's alt) stay out, as before
    assert html_to_text('<div dir="ltr">Happy birthday <img data-emoji="🎂" class="an1" alt="🎂" aria-label="🎂" '
                        'src="https://fonts.gstatic.com/s/e/notoemoji/15.0/1f382/72.png" loading="lazy">!</div>'
                        '<p><img alt="👍🏽" src="cid:e1"> Sounds good <img src="cid:logo" alt="ACME logo"></p>'
                        '<p><img alt="|" src="spacer.gif">next</p>') == "Happy birthday 🎂!\n\n👍🏽 Sounds good\n\nnext"


def test_preformatted_html_keeps_its_lines_and_so_its_quote_is_told_apart() -> None:
    # systems and some clients send plain text as HTML in <pre>: its lines were run into one, and a
    # reply's "> " history in it was indexed as the writer's own words
    text = html_to_text("<html><body><pre>Sounds good, see you at 10.\n\nOn Tue, 5 Mar 2024, Ana wrote:\n"
                        "&gt; Shall we meet   at the caf&eacute;?\n&gt; Ana</pre><p>Sent from my phone</p></body></html>")
    assert text == ("Sounds good, see you at 10.\n\nOn Tue, 5 Mar 2024, Ana wrote:\n> Shall we meet at the café?\n"
                    "> Ana\n\nSent from my phone")
    assert new_part(text) == "Sounds good, see you at 10.\n\nSent from my phone"


def test_preformatted_html_keeps_the_spaces_around_a_link_or_bold_word() -> None:
    # a <pre> body's URLs come as links, its emphasis as <b>: the words beside them were run into
    # them ("http://ci.example.org/42for", "andmorehere") and no search found them
    text = html_to_text('<pre>Logs at <a href="http://ci.example.org/42">http://ci.example.org/42</a> for\n'
                        'the build and <b>more</b> here\n<i>ok</i>\n</pre>')
    assert text == "Logs at http://ci.example.org/42 for\nthe build and more here\nok"


def test_text_a_mail_app_hides_from_its_reader_is_not_read_from_html() -> None:
    # font-size:0 on a layout cell that its children reset is how fluid templates remove gaps;
    # mso-hide:all alone hides only from Outlook on Windows, every other app shows it
    assert html_to_text(NEWSLETTER) == ("Hello Ana,\n\nYour spring order shipped: two linen shirts and a straw hat, "
                                       "arriving Thursday.\n\nTrack it online.")


# The same preheaders hidden by the template's <style> sheet, as Litmus's, Campaign Monitor's and
# Stripo's templates write them: a class or id rule, not a style on the element
STYLED_NEWSLETTER = (
    '<html><head><style type="text/css"><!-- /* preheader */ .preheader { display: none !important; '
    'visibility: hidden; mso-hide: all; font-size: 1px; max-height: 0; overflow: hidden; opacity: 0 } '
    'span.es-preview, #preview-text{font-size:0;line-height:0} td.tiny,.hidden-tail{max-height:0px;overflow:hidden}'
    ' .ghost{visibility:hidden} .outlook-only{mso-hide:all} .wide { display:none } '
    '@media only screen and (min-width:600px) { .wide { display:block !important } .desk-hide { display:none } }'
    ' --></style><!--[if mso]><style>.for-outlook{display:none}</style><![endif]--></head><body>'
    '<span class="preheader">Last chance: 40% off ends tonight</span>'
    '<span class="es-preview">Open me</span><div id="preview-text">&zwnj;&nbsp;Inside: spring picks</div>'
    '<div class="ghost">ghost <b style="visibility:visible">Hello Ana,</b></div>'
    '<p class="for-outlook desk-hide">Your spring order shipped.</p><p class="outlook-only">Track it online.</p>'
    '<p class="wide">Desktop banner: free returns.</p><table><tr><td class="tiny">tiny</td></tr></table>'
    '<p class="hidden-tail" style="max-height:none">Reply to this mail with questions.</p></body></html>')


def test_text_a_mail_apps_style_sheet_hides_by_class_or_id_is_not_read_from_html() -> None:
    # a rule of the <style> sheet hides as an inline style does; a rule inside a media query
    # (one screen size) or an Outlook-only conditional comment does not hide, and one a media
    # query undoes, or that the element's inline style overrides, hides nothing
    assert html_to_text(STYLED_NEWSLETTER) == (
        "Hello Ana,\n\nYour spring order shipped.\n\nTrack it online.\n\nDesktop banner: free returns.\n\n"
        "Reply to this mail with questions.")


def test_an_html_mail_hidden_by_its_style_sheet_does_not_start_with_its_preheader(tmp_path: Path) -> None:
    (tmp_path / "news.eml").write_bytes(message(
        "From: news@example.com\nSubject: Spring\nDate: Mon, 5 Feb 2024 12:00:00 +0000\n"
        "Content-Type: text/html; charset=utf-8", STYLED_NEWSLETTER))
    records, problems = load(tmp_path)
    assert problems == [] and records[0].text.startswith("Hello Ana,")


def test_html_with_thousands_of_unclosed_and_stray_tags_is_read_in_linear_time() -> None:
    # each stray end tag once searched every element left open: minutes for a broken 500 KB mail
    started = time.perf_counter()
    assert html_to_text("<p>x" * 6000 + "</span>" * 6000).count("x") == 6000
    assert time.perf_counter() - started < 3


def test_css_comments_never_closed_are_read_in_linear_time() -> None:
    # '/*' opened thousands of times and never closed (a damaged or hostile 60 KB sheet or style
    # attribute) once took 12 s, each opening searched to the end; CSS ends such a comment at the
    # sheet's end, and so does the reader
    started = time.perf_counter()
    sheet = "<style>.a{display:none}" + "/*a" * 20_000 + "</style>"
    assert html_to_text(sheet + "<p class=a>hid</p><p>shown</p>") == "shown"
    assert html_to_text("<p style='" + "/*a" * 20_000 + "'>hi</p>") == "hi"
    assert time.perf_counter() - started < 1
    assert html_to_text("<style>.a{display:none} /* .b{display:none}</style><p class=b>b</p><p class=a>a</p>") == "b"


# An HTML-only reply as each mail app writes its quoted history
HTML_REPLIES = [  # Gmail, Apple Mail, Thunderbird, Yahoo, Outlook on the web, Outlook for Windows, Proton
    '<div dir="ltr">Sounds good, see you there.</div><br><div class="gmail_quote"><div dir="ltr" '
    'class="gmail_attr">On Tue, Mar 12, 2024 at 10:00\u202fAM Ana &lt;<a href="mailto:ana@example.com">'
    'ana@example.com</a>&gt; wrote:<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex">'
    '<div dir="ltr">The quoted word is zanzibar.<div><br></div><div>More.</div></div></blockquote></div>',
    '<html><body dir="auto">Sounds good, see you there.<br><div dir="ltr"><br><blockquote type="cite">On 12 Mar '
    '2024, at 10:00, Ana &lt;ana@example.com&gt; wrote:<br><br></blockquote></div><blockquote type="cite">'
    '<div dir="ltr">The quoted word is zanzibar.</div></blockquote></body></html>',
    '<p>Sounds good, see you there.</p><div class="moz-cite-prefix">Le 12/03/2024 à 10:00, Ana a écrit&nbsp;:'
    '<br></div><blockquote type="cite" cite="mid:a@example.com"><p>The quoted word is zanzibar.</p>'
    '<blockquote type="cite">Older.</blockquote></blockquote>',
    '<div class="ydp1a2yahoo-style-wrap"><div dir="ltr">Sounds good, see you there.</div></div>'
    '<div id="ydp1a2yahoo_quoted_123" class="ydp1a2yahoo_quoted"><div>On Tuesday, March 12, 2024 at 10:00:00 AM '
    'GMT+1, Ana &lt;ana@example.com&gt; wrote:</div><div><br></div><div>The quoted word is zanzibar.</div></div>',
    '<div dir="ltr">Sounds good, see you there.</div><div id="appendonsend"></div><hr style="display:inline-block">'
    '<div id="divRplyFwdMsg" dir="ltr"><font><b>Από:</b> Ana &lt;ana@example.com&gt;<br><b>Στάλθηκε:</b> Τρίτη, '
    '12 Μαρτίου 2024 10:00 πμ<br><b>Θέμα:</b> Dinner</font><div>&nbsp;</div></div>'
    '<div><div dir="ltr">The quoted word is zanzibar.</div></div>',
    '<div class="WordSection1"><p class="MsoNormal">Sounds good, see you there.<o:p></o:p></p><div style="border:'
    'none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm"><p class="MsoNormal"><b>Von:</b> Ana '
    '&lt;ana@example.com&gt;<br><b>Gesendet:</b> Dienstag, 12. März 2024 10:00<br><b>An:</b> Bo<br><b>Betreff:</b>'
    ' Dinner</p></div><p class="MsoNormal">The quoted word is zanzibar.</p></div>',
    '<p class="MsoNormal">Sounds good, see you there.</p><div><div style="border:none;border-top:solid #E1E1E1 '
    '1.0pt;padding:3.0pt 0in 0in 0in"><p class="MsoNormal"><b>Από:</b> Ana &lt;ana@example.com&gt;<br><b>Στάλθηκε:'
    '</b> Τρίτη, 12 Μαρτίου 2024 10:00 πμ<br><b>Θέμα:</b> Dinner</p></div></div><p class="MsoNormal">The quoted '
    'word is zanzibar.</p>',  # Outlook for Windows and Windows Mail, its labels in a language not listed
    '<div>Sounds good, see you there.</div><div class="protonmail_quote">On Tuesday, March 12th, 2024 at 10:00, '
    'Ana &lt;ana@example.com&gt; wrote:<br><blockquote class="protonmail_quote" type="cite">The quoted word is '
    'zanzibar.</blockquote></div>',
]


@pytest.mark.parametrize("html", HTML_REPLIES, ids=range(len(HTML_REPLIES)))
def test_an_html_reply_embeds_only_its_own_words_and_shows_its_quote(html: str) -> None:
    text = html_to_text(html)
    assert "zanzibar" in text and new_part(text, "Re: Dinner") == "Sounds good, see you there."


def test_an_html_mail_keeps_what_its_writer_indented_or_forwarded() -> None:
    # Gmail's "indent" is a blockquote too, with no quote class: the writer's own words
    indented = '<div>Agenda:</div><blockquote style="margin:0 0 0 40px;border:none;padding:0px">zanzibar</blockquote>'
    assert new_part(html_to_text(indented)) == "Agenda:\n\nzanzibar"
    forward = ('<div>FYI</div><div>Begin forwarded message:</div><br><blockquote type="cite"><div><b>From:</b> '
               'SkyAir</div><div>Booking reference QX7RTZ.</div></blockquote>')
    assert "QX7RTZ" in new_part(html_to_text(forward), "Booking")
    gmail = ('<div dir="ltr">FYI</div><div class="gmail_quote"><div dir="ltr" class="gmail_attr">---------- '
             'Forwarded message ---------<br>From: SkyAir<br></div><br><div>Booking reference QX7RTZ.</div></div>')
    assert "QX7RTZ" in new_part(html_to_text(gmail), "Booking")
    # a template copied from Outlook on the web keeps its empty marker above new text
    template = '<div id="appendonsend"></div><hr tabindex="-1"><div><h2>De: Ana</h2><p>Mensaje: zanzibar</p></div>'
    assert new_part(html_to_text(template)) == "De: Ana\n\nMensaje: zanzibar"


def test_an_html_mail_whose_content_is_all_hidden_until_its_css_shows_it_is_read_whole() -> None:
    # a hidden wrapper a <style> rule reveals (interactive mail, a mobile-only layout): dropping
    # what is hidden would leave next to nothing, so nothing is dropped
    html = ('<style>@media screen { .full { display:block !important } }</style>'
            '<div class="full" style="display:none">Your booking QX7RTZ, Lisbon to Oslo on 4 March, seat 14C.</div>'
            '<p>Hi</p>')
    assert html_to_text(html) == "Your booking QX7RTZ, Lisbon to Oslo on 4 March, seat 14C.\n\nHi"


@pytest.mark.parametrize(("html", "expected"), [
    # Gmail, Apple Mail, Yahoo and Outlook on the web write a <div> a line (<div><br></div> a blank one), which a
    # browser shows as lines: each read as a paragraph, a reply was double-spaced
    ('<div dir="ltr">Hi Ana,<div><br></div><div>the flat is free from Friday.</div><div>Keys are with Bo.</div>'
     '<div><br></div><div>Lena</div></div>', "Hi Ana,\n\nthe flat is free from Friday.\nKeys are with Bo.\n\nLena"),
    ('<div class="">Hi Ana,</div><div class=""><br class=""></div><div class="">see you at 8.</div>',
     "Hi Ana,\n\nsee you at 8."),
    ('<div class="elementToProof" style="font-family: Aptos; font-size: 12pt">Hi Ana,</div>'
     '<div class="elementToProof" style="font-size: 12pt">see you at 8.</div>', "Hi Ana,\nsee you at 8."),
    # a template's boxes, spaced by their padding or their style sheet's classes, and paragraphs stay apart
    ('<div style="padding:20px">Your order shipped.</div><div style="margin:0 0 16px">Track it here.</div>'
     '<div class="footer">Unsubscribe</div><p>Thanks</p><p>Shop</p>',
     "Your order shipped.\n\nTrack it here.\n\nUnsubscribe\n\nThanks\n\nShop"),
])
def test_an_html_mails_lines_read_as_its_app_shows_them(tmp_path: Path, html: str, expected: str) -> None:
    (tmp_path / "a.eml").write_bytes(message(
        "From: lena@example.org\nSubject: Flat\nDate: Mon, 4 Mar 2024 10:00:00 +0000\n"
        "Content-Type: text/html; charset=utf-8", html))
    records, problems = load(tmp_path)
    assert problems == [] and records[0].text == expected


def test_a_newsletter_whose_text_part_only_says_to_view_it_as_html_is_read_from_its_html(tmp_path: Path) -> None:
    # bulk mailers send a placeholder text part; every mail app shows the HTML, which holds the content
    html = "<p>" + "Spring issue: the allotment opens on 4 May, seedlings swap at the shed. " * 12 + "</p>"
    for name, plain in (("news", "To view this email as a web page, go here: https://news.example/v/1"),
                        ("reply", "Thanks, see you at the allotment on 4 May!")):
        (tmp_path / f"{name}.eml").write_bytes(message(
            f"From: news@example.com\nSubject: {name}\nDate: Mon, 5 Feb 2024 12:00:00 +0000\n"
            "Content-Type: multipart/alternative; boundary=a",
            f"--a\nContent-Type: text/plain; charset=utf-8\n\n{plain}\n--a\nContent-Type: text/html; charset=utf-8\n\n"
            f"{html if name == 'news' else '<p>Thanks, see you at the allotment on 4 May!</p>'}\n--a--"))
    news, reply = load(tmp_path)[0]
    assert news.text.startswith("Spring issue: the allotment opens on 4 May") and "web page" not in news.text
    assert reply.text == "Thanks, see you at the allotment on 4 May!"


def test_an_empty_text_part_beside_a_short_html_one_is_read_from_the_html(tmp_path: Path) -> None:
    # some phone apps and mass mailers send the text alternative empty: the mail read as no text at all
    for name, plain in (("blank", " \n"), ("none", "")):
        (tmp_path / f"{name}.eml").write_bytes(message(
            "From: a@example.org\nSubject: Treffen\nDate: Mon, 4 Mar 2024 10:00:00 +0100\n"
            "Content-Type: multipart/alternative; boundary=b",
            f"--b\nContent-Type: text/plain; charset=utf-8\n\n{plain}\n--b\nContent-Type: text/html; charset=utf-8\n\n"
            "<p>Hi Bo, bis um 5.</p>\n--b--"))
    records, problems = load(tmp_path)
    assert problems == [] and [r.text for r in records] == ["Hi Bo, bis um 5.", "Hi Bo, bis um 5."]


def test_a_damaged_html_twin_of_a_text_part_read_instead_is_not_warned_of(tmp_path: Path) -> None:
    # telling a placeholder text part decodes its HTML twin: a fault in that part, which is not
    # read, was a WARN about the message as if its text were incomplete
    import base64

    markup = '<div style="font-family:Arial,Helvetica,sans-serif;font-size:14px;color:#222222">' * 8
    html = base64.b64encode(f"{markup}Thanks, see you on 4 May!{'</div>' * 8}".encode()).decode()
    (tmp_path / "reply.eml").write_bytes(message(
        "From: ana@example.com\nSubject: Re: allotment\nDate: Mon, 5 Feb 2024 12:00:00 +0000\n"
        "Content-Type: multipart/alternative; boundary=a",
        "--a\nContent-Type: text/plain; charset=utf-8\n\nThanks, see you on 4 May!\n--a\n"
        f"Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: base64\n\n{html[:-3]}\n--a--"))
    records, problems = load(tmp_path)
    assert [r.text for r in records] == ["Thanks, see you on 4 May!"] and problems == []


def test_an_invitation_sent_as_its_calendar_part_alone_is_searched_by_its_event(tmp_path: Path) -> None:
    # some calendar servers and scripts send the invitation with no text part: its place and
    # description are what the mail says
    (tmp_path / "invite.eml").write_bytes(message(
        "From: Carla <carla@example.com>\nSubject: Invitation: Dinner\nDate: Mon, 5 Feb 2024 12:00:00 +0000\n"
        "Content-Type: multipart/mixed; boundary=m",
        "--m\nContent-Type: text/calendar; charset=UTF-8; method=REQUEST\n\nBEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\n"
        "BEGIN:VEVENT\r\nUID:d1@example.com\r\nDTSTART:20240305T180000Z\r\nDTEND:20240305T200000Z\r\n"
        "SUMMARY:Dinner\r\nLOCATION:Trattoria Da Enzo\\, Roma\r\nORGANIZER;CN=Carla:mailto:carla@example.com\r\n"
        "DESCRIPTION:Bring the photos\\nfrom Lisbon\r\n  too\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n--m--"))
    records, problems = load(tmp_path)
    assert problems == []
    assert records[0].text == ("Dinner\nWhen: 2024-03-05 18:00 to 20:00 (UTC)\nWhere: Trattoria Da Enzo, Roma\n"
                               "Organizer: Carla\n\nBring the photos\nfrom Lisbon too")


def test_a_mail_forwarded_as_an_attachment_is_read_with_its_forward(tmp_path: Path) -> None:
    # Outlook's and Gmail's "Forward as attachment" attach the mail (message/rfc822, disposition
    # attachment), as Thunderbird's default forward does: it was only named, its booking unfound
    (tmp_path / "fwd.eml").write_bytes(message(
        "From: Bo <bo@example.com>\nSubject: WG: Buchung\nDate: Mon, 4 Mar 2024 10:00:00 +0100\n"
        "Content-Type: multipart/mixed; boundary=m",
        "--m\nContent-Type: text/plain; charset=utf-8\n\nSiehe unten.\n--m\n"
        'Content-Type: message/rfc822; name="Ihre Buchung.eml"\nContent-Disposition: attachment; filename="Ihre Buchung.eml"\n\n'
        "From: SkyAir <noreply@skyair.example>\nSubject: Ihre Buchung\nDate: Sun, 3 Mar 2024 09:00:00 +0100\n"
        "Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n"
        "Buchungsnummer QX7RTZ, Abflug M=FCnchen 7:10.\n--m--"))
    records, problems = load(tmp_path)
    assert problems == [] and records[0].text == "Siehe unten.\n\nBuchungsnummer QX7RTZ, Abflug München 7:10."


def test_a_long_text_file_sent_inline_is_read_only_to_a_bound_and_a_short_one_whole(tmp_path: Path) -> None:
    # scripts and some clients send a log as "Content-Disposition: inline; filename=server.log": Thunderbird
    # shows it below the mail, and it was read whole into the mail's text, a 19 MB log drowning its words
    log = "".join(f"2024-03-04 10:00:{i % 60:02d} INFO request {i} served\n" for i in range(2000))
    (tmp_path / "a.eml").write_bytes(message(
        "From: cron@example.org\nSubject: Nightly job failed\nDate: Mon, 4 Mar 2024 10:00:00 +0000\n"
        'Content-Type: multipart/mixed; boundary="b"',
        "--b\nContent-Type: text/plain\n\nThe nightly job failed; its log is below.\n--b\nContent-Type: text/plain\n"
        f"Content-Disposition: inline; filename=server.log\n\n{log}--b\nContent-Type: text/plain\n"
        'Content-Disposition: inline; filename="note.txt"\n\nCall Ana about the backup disk.\n--b--'))
    records, problems = load(tmp_path)
    text = records[0].text
    assert problems == [] and text.startswith("The nightly job failed; its log is below.\n\n2024-03-04 10:00:00 INFO")
    assert 10_000 < len(text) < 11_000 and "request 1999" not in text
    assert text.endswith(" INFO request 228 served\n[… rest of server.log not read]\n\nCall Ana about the backup disk.")


def test_outlooks_signature_logo_is_neither_text_nor_an_attachment(tmp_path: Path) -> None:
    # Outlook sends its HTML's images (a signature logo) in multipart/related and writes
    # "[cid:image001.png@...]" where they stand in the text part: every mail of a sender with a
    # logo read "[attachment: image001.png]" and the code; a file sent beside it is still named
    (tmp_path / "logo.eml").write_bytes(message(
        "From: Jürgen <j@example.de>\nSubject: Termin\nDate: Tue, 5 Mar 2024 08:15:29 +0000\n"
        'Content-Type: multipart/mixed; boundary="mix"',
        '--mix\nContent-Type: multipart/related; boundary="rel"; type="multipart/alternative"\n\n'
        '--rel\nContent-Type: multipart/alternative; boundary="alt"\n\n'
        "--alt\nContent-Type: text/plain; charset=utf-8\n\nHallo Bo, der Termin steht.\n\nJürgen Schröder\n"
        "[cid:image001.png@01DA6E1B.12345670]\nTel. [cid:image002.jpg@01DA6E1B.12345670] +49 30 1234\n\n"
        '--alt\nContent-Type: text/html; charset=utf-8\n\n<p>Hallo Bo, der Termin steht.</p><img src="cid:image001.png'
        '@01DA6E1B.12345670">\n--alt--\n\n--rel\nContent-Type: image/png; name="image001.png"\n'
        'Content-Disposition: inline; filename="image001.png"; size=4096\nContent-ID: <image001.png@01DA6E1B.12345670>'
        "\nContent-Transfer-Encoding: base64\n\niVBORw0KGgo=\n--rel--\n\n--mix\n"
        'Content-Type: application/pdf; name="Angebot.pdf"\nContent-Disposition: attachment; filename="Angebot.pdf"'
        "\nContent-Transfer-Encoding: base64\n\nJVBERi0=\n--mix--"))
    records, problems = load(tmp_path)
    assert problems == []
    assert records[0].text == "Hallo Bo, der Termin steht.\n\nJürgen Schröder\nTel. +49 30 1234\n\n[attachment: Angebot.pdf]"


def test_an_s_mime_encrypted_mail_says_it_is_encrypted_as_a_pgp_one_does(tmp_path: Path) -> None:
    # Outlook's and Apple Mail's encrypted mail (S/MIME) is one application/pkcs7-mime part: it
    # read as an attachment named smime.p7m, as if the mail had no text but a file
    # (a gateway's, sent as application/octet-stream: RFC 8551 has its .p7m name say what it is)
    for name, kind in (("outlook.eml", "application/pkcs7-mime; smime-type=enveloped-data"),
                       ("apple.eml", "application/pkcs7-mime; smime-type=authEnveloped-data"),
                       ("old.eml", "application/x-pkcs7-mime"), ("gateway.eml", "application/octet-stream")):
        (tmp_path / name).write_bytes(message(
            f"From: a@example.org\nSubject: Vertrag\nDate: Mon, 4 Mar 2024 10:00:00 +0100\nMIME-Version: 1.0\n"
            f'Content-Type: {kind}; name="smime.p7m"\nContent-Disposition: attachment; filename="smime.p7m"\n'
            "Content-Transfer-Encoding: base64", "MIAGCSqGSIb3DQEHA6CAMIACAQAxggFAMIIBPAIBADAkMBcxFTATBgNVBAMMDA=="))
    records, problems = load(tmp_path)
    assert problems == [] and [r.text for r in records] == ["[encrypted message: not decrypted]"] * 4


# A mail signed opaquely with S/MIME (smime-type=signed-data: Outlook without "send clear text signed"): its
# text part inside the signature, "Die Zahlen für März liegen bei.", as openssl smime -sign -nodetach writes it
# (DER) and as a streaming signer writes it (BER: lengths left open, the text in chunks)
PGP_MIME = ('Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="enig"',
            "This is an OpenPGP/MIME encrypted message (RFC 4880 and 3156)\n--enig\nContent-Type: application/pgp-"
            'encrypted\n\nVersion: 1\n\n--enig\nContent-Type: application/octet-stream; name="encrypted.asc"\n'
            f'Content-Disposition: inline; filename="encrypted.asc"\n\n{"-----BEGIN PGP MESSAGE-----"}\n\nwV4DR2b2\n'
            "-----END PGP MESSAGE-----\n\n--enig--")


@pytest.mark.parametrize("subject", ["...", "Re: ...", "…", "[...]", "Encrypted Message", "Verschlüsselte Nachricht",
                                     "p≡p", "Subject Unavailable"])
def test_an_encrypted_mail_whose_subject_is_hidden_in_it_says_so_not_its_stand_in(tmp_path: Path, subject: str) -> None:
    # protected headers (Thunderbird, mutt, Delta Chat write "...", K-9 and Enigmail "Encrypted Message" in
    # the user's language, the IETF's draft "[...]", pEp "p≡p"): the real subject is inside the encrypted
    # part; the stand-in was read as the subject, "Subject: ..." embedded
    kind, body = PGP_MIME
    (tmp_path / "tb.eml").write_bytes(message(f"From: Ana <ana@example.org>\nSubject: {subject}\nDate: Mon, 4 Mar "
                                              f"2024 10:00:00 +0100\nMIME-Version: 1.0\n{kind}", body))
    (tmp_path / "plain.eml").write_bytes(message(f"From: Ana <ana@example.org>\nSubject: {subject}\nDate: Mon, 4 Mar "
                                                 "2024 10:00:00 +0100", "Well."))
    records, problems = load(tmp_path)
    assert problems == [] and [(r.metadata.get("subject"), r.text) for r in records] == [
        (subject, "Well."), (None, "[encrypted message: its subject and text not decrypted]")]
    assert records[1].content == ("Subject: \nFrom: Ana <ana@example.org>\n\n"
                                  "[encrypted message: its subject and text not decrypted]")


OPAQUE_SIGNED = {"der": (
    "MIICMAYJKoZIhvcNAQcCoIICITCCAh0CAQExDzANBglghkgBZQMEAgEFADB+BgkqhkiG9w0BBwGgcQRvQ29udGVudC1UeXBlOiB0ZXh0L3BsYWlu"
    "OyBjaGFyc2V0PXV0Zi04DQpDb250ZW50LVRyYW5zZmVyLUVuY29kaW5nOiA4Yml0DQoNCkRpZSBaYWhsZW4gZsO8ciBNw6RyeiBsaWVnZW4gYmVp"
    "Lg0KMYIBhTCCAYECAQEwMTAZMRcwFQYDVQQDDA5ib0BleGFtcGxlLm9yZwIUHOGzDJqLDUvyrI3m5o1LgZhotAswDQYJYIZIAWUDBAIBBQCggeQw"
    "GAYJKoZIhvcNAQkDMQsGCSqGSIb3DQEHATAcBgkqhkiG9w0BCQUxDxcNMjYxMTI4MDg1OTU0WjAvBgkqhkiG9w0BCQQxIgQgG9gkwUeNj5M7AtiW"
    "5yU84sm7sHPOYTYQS6npV8mAO4gweQYJKoZIhvcNAQkPMWwwajALBglghkgBZQMEASowCwYJYIZIAWUDBAEWMAsGCWCGSAFlAwQBAjAKBggqhkiG"
    "9w0DBzAOBggqhkiG9w0DAgICAIAwDQYIKoZIhvcNAwICAUAwBwYFKw4DAgcwDQYIKoZIhvcNAwICASgwCgYIKoZIzj0EAwIERzBFAiB8iDh8abC0"
    "qklsrcXTYRbxce3BEZATB5Rot06kQ7lUQQIhANH71WLO+/NnA2U6yPlxdpn+rR5QTJ6HDUhKn5wAi2os"), "ber": (
    "MIAGCSqGSIb3DQEHAqCAMIACAQExDTALBglghkgBZQMEAgEwgAYJKoZIhvcNAQcBoIAkgARvQ29udGVudC1UeXBlOiB0ZXh0L3BsYWluOyBjaGFy"
    "c2V0PXV0Zi04DQpDb250ZW50LVRyYW5zZmVyLUVuY29kaW5nOiA4Yml0DQoNCkRpZSBaYWhsZW4gZsO8ciBNw6RyeiBsaWVnZW4gYmVpLg0KAAAA"
    "AAAAMYIBgzCCAX8CAQEwMTAZMRcwFQYDVQQDDA5ib0BleGFtcGxlLm9yZwIUHOGzDJqLDUvyrI3m5o1LgZhotAswCwYJYIZIAWUDBAIBoIHkMBgG"
    "CSqGSIb3DQEJAzELBgkqhkiG9w0BBwEwHAYJKoZIhvcNAQkFMQ8XDTI2MTEyODA4NTk1NFowLwYJKoZIhvcNAQkEMSIEIBvYJMFHjY+TOwLYlucl"
    "POLJu7BzzmE2EEup6VfJgDuIMHkGCSqGSIb3DQEJDzFsMGowCwYJYIZIAWUDBAEqMAsGCWCGSAFlAwQBFjALBglghkgBZQMEAQIwCgYIKoZIhvcN"
    "AwcwDgYIKoZIhvcNAwICAgCAMA0GCCqGSIb3DQMCAgFAMAcGBSsOAwIHMA0GCCqGSIb3DQMCAgEoMAoGCCqGSM49BAMCBEcwRQIhALWIImE2ddGt"
    "QzkzYirFoCViG+ZYQ4o7S02MaVdElzeYAiBkYPusZI1oAM6e8oNU8BukHrZKolk5ZUk4n/LIL4UelwAAAAAAAA==")}


@pytest.mark.parametrize("encoding", ["der", "ber"])
def test_a_mail_signed_opaquely_with_s_mime_reads_as_the_text_it_signs(tmp_path: Path, encoding: str) -> None:
    # it read as an attachment named smime.p7m, as if the mail had no text
    (tmp_path / "signed.eml").write_bytes(message(
        "From: a@example.org\nSubject: Zahlen\nDate: Mon, 4 Mar 2024 10:00:00 +0100\nMIME-Version: 1.0\n"
        'Content-Type: application/pkcs7-mime; smime-type=signed-data; name="smime.p7m"\n'
        'Content-Disposition: attachment; filename="smime.p7m"\nContent-Transfer-Encoding: base64',
        "\n".join(textwrap.wrap(OPAQUE_SIGNED[encoding], 76))))
    records, problems = load(tmp_path)
    assert problems == [] and [r.text for r in records] == ["Die Zahlen für März liegen bei."]


def test_a_signed_document_attached_as_p7m_is_an_attachment_not_an_encrypted_mail(tmp_path: Path) -> None:
    # an Italian e-invoice (FatturaPA) and other documents signed with CAdES travel as <name>.p7m: the
    # mail that carries one said it was encrypted, and its text and the file's name were lost
    for n, kind in enumerate(("application/pkcs7-mime", "application/octet-stream")):
        (tmp_path / f"{n}.eml").write_bytes(message(
            "From: sdi@pec.example.it\nSubject: Fattura 42\nDate: Mon, 4 Mar 2024 10:00:00 +0100\nMIME-Version: 1.0\n"
            'Content-Type: multipart/mixed; boundary="b"',
            "--b\nContent-Type: text/plain; charset=utf-8\n\nIn allegato la fattura n. 42.\n--b\n"
            f'Content-Type: {kind}; name="IT01234567890_FPR42.xml.p7m"\nContent-Disposition: attachment; '
            'filename="IT01234567890_FPR42.xml.p7m"\nContent-Transfer-Encoding: base64\n\nMIAGCSqGSIb3DQEHAqCAMIA=\n'
            "--b--"))
    records, problems = load(tmp_path)
    assert problems == [] and [r.text for r in records] == [
        "In allegato la fattura n. 42.\n\n[attachment: IT01234567890_FPR42.xml.p7m]"] * 2
    # and a gateway's signature sent as application/octet-stream is a signature, by its name, not a file
    (tmp_path / "signed.eml").write_bytes(message(
        "From: a@example.org\nSubject: Signed\nDate: Mon, 4 Mar 2024 10:00:00 +0100\nMIME-Version: 1.0\n"
        'Content-Type: multipart/signed; protocol="application/pkcs7-signature"; boundary="s"',
        '--s\nContent-Type: text/plain\n\nSee you.\n--s\nContent-Type: application/octet-stream; name="smime.p7s"\n'
        "Content-Transfer-Encoding: base64\n\nMIAGCSqGSIb3DQEHAqCAMIA=\n--s--"))
    assert [r.text for r in load(tmp_path)[0] if r.metadata["subject"] == "Signed"] == ["See you."]


ARMOR = ("-----BEGIN PGP MESSAGE-----\nVersion: GnuPG v2\n\nhQEMAyx3pxxZI/uNAQf/QXuuaSpKQo++LV6+EBvfNe7BRf2FpuzgGcMLFRLWqKHg\n"
         "8miLpP7t1uI5hunqu66fJxlQKCn0UszwtAIQf7DSqS2xuArsiut8g/4bjoVckZhv\n=tKWd\n-----END PGP MESSAGE-----")


@pytest.mark.parametrize(("body", "kind", "text"), [
    (f"Hi Ana,\n\n{ARMOR}\n\nCheers, Bo", "text/plain", "Hi Ana,\n\n[encrypted message: not decrypted]\n\nCheers, Bo"),
    (ARMOR.replace("\n", "\r\n"), "text/plain", "[encrypted message: not decrypted]"),
    (f"<html><body><pre>{ARMOR}</pre></body></html>", "text/html", "[encrypted message: not decrypted]"),
    (ARMOR.rsplit("\n", 2)[0], "text/plain", "[encrypted message: not decrypted]"),  # cut before its end line
], ids=["text", "crlf", "html", "cut"])
def test_a_mail_encrypted_inline_with_pgp_says_so_and_keeps_its_headers_searchable(
        tmp_path: Path, body: str, kind: str, text: str) -> None:
    # inline PGP (Mailvelope in webmail, old Enigmail, a message pasted from gpg): its armored base64 was
    # shown and embedded as the mail's text
    (tmp_path / "pgp.eml").write_bytes(message(f"From: Bo <bo@example.org>\nSubject: Zugangsdaten\nDate: Mon, 4 Mar "
                                               f"2024 10:00:00 +0100\nContent-Type: {kind}; charset=utf-8", body))
    records, problems = load(tmp_path)
    assert problems == [] and [r.text for r in records] == [text]
    assert records[0].content.startswith("Subject: Zugangsdaten\nFrom: Bo <bo@example.org>")
    assert "hQEMA" not in records[0].content


def test_a_file_uuencoded_into_the_text_is_named_as_an_attachment(tmp_path: Path) -> None:
    # mail from before MIME and old gateways send a file uuencoded in the text: its lines were read, and
    # embedded, as the mail's words
    import binascii
    data = b"quarterly numbers: 42, 17, 99\n" * 3
    uu = "".join(binascii.b2a_uu(data[i:i + 45]).decode() for i in range(0, len(data), 45))
    (tmp_path / "uu.eml").write_bytes(message("From: a@example.org\nSubject: Numbers\nDate: Mon, 4 Mar 1996 10:00:00 "
                                              "+0000", f"Here they are.\n\nbegin 644 q1 report.txt\n{uu}`\nend\n\nBye."))
    records, problems = load(tmp_path)
    assert problems == [] and [r.text for r in records] == ["Here they are.\n\nBye.\n\n[attachment: q1 report.txt]"]


def test_a_mail_signed_inline_with_pgp_reads_as_its_words_without_the_signature(tmp_path: Path) -> None:
    # clear-signed mail (mailing lists, gpg --clearsign): its armor lines and base64 signature were shown
    # and embedded; a line starting with "-" is written "- -" by the signer (RFC 4880 7.1)
    signed = ("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nThe release is tagged.\n- -- \nBo\n"
              "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEEx7m1lK7ATmcFTxG0e7aW6sPKiY0FAmXlxyAACgkQe7aW6sPKiY2\n"
              "=tHXr\n-----END PGP SIGNATURE-----")
    (tmp_path / "signed.eml").write_bytes(message("From: Bo <bo@example.org>\nSubject: Release 2.1\nDate: Mon, 4 Mar "
                                                  "2024 10:00:00 +0100", f"> quoted first\n\n{signed}\n"))
    records, problems = load(tmp_path)
    assert problems == [] and [r.text for r in records] == ["> quoted first\n\nThe release is tagged.\n--\nBo"]
    assert "iQEz" not in records[0].content and "BEGIN PGP" not in records[0].content


# -- Outlook's winmail.dat (TNEF) --

# An Outlook "rich text" body as Exchange stores it: HTML wrapped in RTF (\fromhtml), LZFu-compressed
GERMAN_RTF = base64.b64decode(
    "fgEAAMYCAABMWkZ1LjrFmAMACgByY3BnMTI1gjIDQ2h0bWwxAzH4YmlkBAADMAEDAfcKgCcCpAPjAgBjaArAc2X4dDAgBxMCgwBQBFYIVVsHsgKA"
    "fRCCCO9lCgY7mwlvDjA1AoAKgXVjAFAzCwkBZDM2EeALpTQgORCCKlwOsgGQDhA5INo8DrI+ApEaBzMZoBrA+GVhZBsbDvEKshdhGekDGZAO8DxzdHls"
    "ZTg+LnAJcBwiE5FceyMPUQtReTpuAiBlXLh9PC8e1BsqHpIvHC/KNRHgPAbgZHkbEBoTlwAhAzALYG4OEDAzDvHXJDUR4BnLNhvxcCQJAAAdJWdIB0AJ"
    "ABHwbmEs/yQnJBcR4BnpAcAiQScBJf83Jw8llA9QZQfwBZBobsJ1JOAgZlwnEWAFwYEu4GU0cnogbAiQQmcFQGJlaToZ6ThxGaAmbmIgIAKAJCgnLmEB"
    "QCVnDGA4GPA0P3g0Mi4pHyovKz8jcDh3IkEjxB3aNyJCGuMXYQABOVA=")
# Outlook's own rich text (no HTML inside), Russian in its Windows code page, stored uncompressed ("MELA")
RUSSIAN_RTF = (rb"{\rtf1\ansi\ansicpg1251\deff0{\fonttbl{\f0\fswiss\fcharset204 Arial;}}{\*\generator Riched20 "
               rb"15.0.4599;}\viewkind4\uc1\pard\f0\fs20\'cf\'f0\'e8\'e2\'e5\'f2, \'c0\'ed\'ff!\par\pard\par "
               rb"\u1057?\'f7\'b8\'f2 \'e2\'ee \'e2\'eb\'EE\'e6\'e5\'ed\'e8\'e8.\par}")


def tnef_attribute(level: int, name: int, kind: int, data: bytes) -> bytes:
    return struct.pack("<BII", level, kind << 16 | name, len(data)) + data + struct.pack("<H", sum(data) & 0xFFFF)


def mapi_props(*props: tuple[int, int, bytes]) -> bytes:
    """An attMAPIProps block: (type, id, value) each, variable-length values counted and padded."""
    out = struct.pack("<I", len(props))
    for kind, prop, value in props:
        if kind in (0x001E, 0x001F, 0x0102):
            value = struct.pack("<I", 1) + struct.pack("<I", len(value)) + value + b"\0" * (-len(value) % 4)
        out += struct.pack("<HH", kind, prop) + value
    return out


def winmail(*props: tuple[int, int, bytes], body: bytes = b"", attachments: tuple[str, ...] = ()) -> bytes:
    """A winmail.dat as Outlook writes it: signature, key, version, code page, the message's
    MAPI properties (with a named one and a multi-valued one to walk past), then each attachment."""
    data = struct.pack("<IH", 0x223E9F78, 0x1234) + tnef_attribute(1, 0x9006, 8, b"\0\0\1\0")
    data += tnef_attribute(1, 0x9007, 6, struct.pack("<II", 1252, 0))
    data += tnef_attribute(1, 0x8008, 7, b"IPM.Microsoft Mail.Note\0")
    if body:
        data += tnef_attribute(1, 0x800C, 2, body)
    named = struct.pack("<HH", 0x0003, 0x8005) + bytes(16) + struct.pack("<III", 0, 0x8554, 7)
    multi = struct.pack("<HHII", 0x1003, 0x0E2B, 2, 1) + struct.pack("<I", 2)
    block = mapi_props(*props)
    count = struct.unpack("<I", block[:4])[0] + 2
    data += tnef_attribute(1, 0x9003, 6, struct.pack("<I", count) + named + multi + block[4:])
    for name in attachments:
        data += tnef_attribute(2, 0x9002, 6, bytes(14)) + tnef_attribute(2, 0x8010, 1, b"ATTACH~1.PDF\0")
        data += tnef_attribute(2, 0x800F, 6, b"%PDF-1.4 not read")
        data += tnef_attribute(2, 0x9005, 6, mapi_props((0x001F, 0x3707, (name + "\0").encode("utf-16-le"))))
    return data


def mela(rtf: bytes) -> bytes:
    """An RTF body stored uncompressed, as compressed RTF allows."""
    return struct.pack("<IIII", len(rtf) + 12, len(rtf), 0x414C454D, 0) + rtf


WINMAIL_BODIES = [  # (the winmail.dat, the text the mail is read as)
    (winmail((0x0102, 0x1009, GERMAN_RTF)), "Hallo Ana,\n\ndie Rechnung für März liegt bei: €42."),
    (winmail((0x0102, 0x1009, mela(RUSSIAN_RTF))), "Привет, Аня!\n\nСчёт во вложении."),
    (winmail((0x0003, 0x3FDE, struct.pack("<I", 65001)), (0x0102, 0x1013, "<p>会議は水曜日です。</p>".encode())),
     "会議は水曜日です。"),
    (winmail((0x001F, 0x1000, "Ciao Luca, ci vediamo giovedì.\0".encode("utf-16-le"))), "Ciao Luca, ci vediamo giovedì."),
    (winmail(body="Hej Åsa, mötet är på torsdag.".encode("cp1252")), "Hej Åsa, mötet är på torsdag."),
]


@pytest.mark.parametrize(("dat", "text"), WINMAIL_BODIES, ids=range(len(WINMAIL_BODIES)))
def test_a_mail_whose_text_is_only_in_outlooks_winmail_dat_is_read_from_it(tmp_path: Path, dat: bytes,
                                                                            text: str) -> None:
    # Exchange sends "rich text" mail as a TNEF attachment alone: its body (compressed RTF, HTML
    # wrapped in RTF, HTML or plain text) was unread, the mail found by its subject only
    (tmp_path / "rich.eml").write_bytes(message(
        "From: Ana <ana@example.com>\nSubject: Rechnung\nDate: Mon, 5 Feb 2024 12:00:00 +0100\nMIME-Version: 1.0\n"
        'Content-Type: application/ms-tnef; name="winmail.dat"\nContent-Transfer-Encoding: base64\n'
        'Content-Disposition: attachment; filename="winmail.dat"', base64.encodebytes(dat)))
    records, problems = load(tmp_path)
    assert problems == [] and records[0].text == text


def test_outlooks_text_part_is_read_once_and_its_winmail_dat_names_the_attachments_it_holds(tmp_path: Path) -> None:
    # Outlook sends its text part first: the same words in RTF are not read twice, and the files
    # packed in winmail.dat are named rather than winmail.dat itself
    dat = base64.encodebytes(winmail((0x0102, 0x1009, mela(RUSSIAN_RTF)), attachments=("Счёт март.pdf", "plan.xlsx")))
    (tmp_path / "outlook.eml").write_bytes(message(
        "From: Anya <anya@example.ru>\nSubject: Счёт\nDate: Mon, 5 Feb 2024 12:00:00 +0300\n"
        "Content-Type: multipart/mixed; boundary=b",
        "--b\nContent-Type: text/plain; charset=koi8-r\n\n".encode() + "Привет, Аня! Счёт во вложении.".encode("koi8-r")
        + b'\n--b\nContent-Type: application/ms-tnef; name="winmail.dat"\nContent-Transfer-Encoding: base64\n\n'
        + dat + b"--b--"))
    records, problems = load(tmp_path)
    assert problems == []
    assert records[0].text == "Привет, Аня! Счёт во вложении.\n\n[attachment: Счёт март.pdf]\n[attachment: plan.xlsx]"


def test_a_winmail_dat_holding_no_readable_text_is_warned_of_by_the_mails_subject(tmp_path: Path) -> None:
    dat = winmail((0x0102, 0x1009, b"\0" * 16), attachments=("plan.xlsx",))  # an RTF stream of no known kind
    (tmp_path / "rich.eml").write_bytes(message(
        "From: Ana <ana@example.com>\nSubject: Plan Q3\nDate: Mon, 5 Feb 2024 12:00:00 +0100\n"
        'Content-Type: application/ms-tnef; name="winmail.dat"\nContent-Transfer-Encoding: base64',
        base64.encodebytes(dat)))
    records, problems = load(tmp_path)
    assert records[0].text == "[Outlook's winmail.dat: no text could be read from it]\n\n[attachment: plan.xlsx]"
    assert problems == ["mail/rich.eml:1: collection 'mail': the text of 'Plan Q3' is only in its winmail.dat "
                        "(Outlook's TNEF), which holds none that could be read; its subject and attachments are "
                        "searchable"]


def test_a_winmail_dat_claiming_billions_of_values_is_read_at_the_cost_of_its_bytes() -> None:
    # a damaged or hostile count (4 billion fixed-size values in a 100-byte block) ends the walk
    # where the bytes end, not after billions of empty values
    from vecbook.exports.tnef import read_tnef

    block = struct.pack("<I", 1) + struct.pack("<HHI", 0x1003, 0x0E2B, 0xFFFFFFFF) + bytes(64)
    dat = struct.pack("<IH", 0x223E9F78, 0x1234) + tnef_attribute(1, 0x9003, 6, block)
    dat += tnef_attribute(1, 0x800C, 2, "Hej Åsa".encode("cp1252"))
    started = time.perf_counter()
    assert read_tnef(dat).text == "Hej Åsa"
    assert time.perf_counter() - started < 1


# -- bad input --

def test_a_truncated_mbox_warns_at_the_cut_message_and_keeps_the_rest(tmp_path: Path) -> None:
    data = (MBOX / "mailpile_tests.mbx").read_bytes()
    cut = data.index(b"b25zIGFzIGxpYnVzYiBpcw0K") + 10  # mid-line in the last message's base64 body
    (tmp_path / "Inbox.mbox").write_bytes(data[:cut])
    records, problems = load(tmp_path)
    assert len(records) == 9 and records[-1].text.endswith("compatible with most kernel versions as")
    assert problems == ["mail/Inbox.mbox:2815: collection 'mail': the message is damaged (InvalidBase64Defect, "
                        "the file ends in the middle of its last line); what could be read is kept"]
    assert records[-1].metadata["conversation"] == "Inbox"


def test_an_mbox_cut_inside_the_headers_warns(tmp_path: Path) -> None:
    data = (MBOX / "mailpile_tests.mbx").read_bytes()
    (tmp_path / "x.mbox").write_bytes(data[:data.index(b"Message-ID: <HKNPR")])
    records, problems = load(tmp_path)
    assert len(records) == 9
    assert problems == ["mail/x.mbox:2815: collection 'mail': the message is damaged "
                        "(no body after the headers); what could be read is kept"]


def test_unreadable_and_non_mail_files_warn_and_the_rest_loads(tmp_path: Path) -> None:
    shutil.copytree(MAILPILE, tmp_path / "box")
    (tmp_path / "box" / "cur" / "gone:2,S").symlink_to(tmp_path / "nowhere")
    (tmp_path / "box" / "new" / "junk:2,").write_bytes(b"\x00\x01 not mail at all\n")
    records, problems = load(tmp_path / "box")
    assert len(records) == len(MAILPILE_EXPECTED)
    assert "mail/cur/gone:2,S: collection 'mail': broken symbolic link skipped" in problems
    assert ("mail/new/junk:2,:1: collection 'mail': not a mail message (no From, Date, Subject or Message-ID "
            "header); skipped") in problems


def test_loading_never_writes_to_the_mail_folders(tmp_path: Path) -> None:
    shutil.copytree(NOTMUCH, tmp_path / "notmuch", symlinks=True)
    shutil.copytree(MAILPILE, tmp_path / "mailpile", symlinks=True)
    shutil.copytree(MBOX, tmp_path / "mbox", symlinks=True)
    before = snapshot(tmp_path)
    for name in ("notmuch", "mailpile", "mbox"):
        records, _ = load(tmp_path / name)
        assert records
    assert snapshot(tmp_path) == before  # same files, same bytes, same mtimes: no flag set, nothing moved


# -- ids --

def test_ids_survive_new_messages_and_maildir_flag_changes(tmp_path: Path) -> None:
    data = (MBOX / "mailpile_tests.mbx").read_bytes()
    (tmp_path / "a.mbox").write_bytes(data)
    before = [r.id for r in load(tmp_path)[0]]
    (tmp_path / "a.mbox").write_bytes(data + b"\n" + data.split(b"\n\nFrom ")[0] + b"\n")  # a copy appended
    after = [r.id for r in load(tmp_path)[0]]
    assert after[:9] == before and after[9] == before[0] + "~2"

    box = tmp_path / "box"
    shutil.copytree(MAILPILE, box)
    ids = {r.id for r in load(box)[0]}
    (box / "cur" / "1379857166.25979_1.hottie,2,S").rename(box / "new" / "1379857166.25979_1.hottie")
    (box / "cur" / "mailpile-1398950855.mbx").rename(box / "cur" / "mailpile-1398950855.mbx:2,RS")
    assert {r.id for r in load(box)[0]} == ids


# -- detection --

@pytest.mark.parametrize("path, fmt", [(MBOX, "mbox"), (MBOX / "mailpile_tests.mbx", "mbox"),
                                       (MAILPILE, "maildir"), (NOTMUCH, "maildir")])
def test_each_mail_fixture_is_detected_as_its_format(path: Path, fmt: str) -> None:
    assert detect_format(collection(path)) == fmt


def test_messages_thunderbird_marked_deleted_are_not_read_and_said_so(tmp_path: Path) -> None:
    # Thunderbird deletes a message from its mbox by setting X-Mozilla-Status' expunged bit
    # (0x0008); the bytes stay until the folder is compacted, and Thunderbird no longer shows it
    def mail(n: int, status: str) -> bytes:
        return (f"From - Mon Mar 11 1{n}:00:00 2024\nX-Mozilla-Status: {status}\nX-Mozilla-Status2: 00000000\n"
                f"From: A <a@example.com>\nSubject: message {n}\nDate: Mon, 11 Mar 2024 1{n}:00:00 +0000\n"
                f"Message-ID: <m{n}@example.com>\n\nBody {n}.\n").encode()
    (tmp_path / "Inbox").write_bytes(b"\n".join([mail(1, "0001"), mail(2, "0009"), mail(3, "0000"), mail(4, "000b")]))
    records, problems = load(tmp_path)
    assert [r.metadata["subject"] for r in records] == ["message 1", "message 3"]
    assert problems == ["mail/Inbox:11: collection 'mail': 2 messages Thunderbird marked deleted (X-Mozilla-Status); "
                        "they leave the file when the folder is compacted"]
    # no fault of the mbox: said apart from its problems, as what it leaves out (`vecbook sources`)
    _, found, _ = load_export(collection(tmp_path))
    assert [p.left_out for p in found] == [True]


def takeout(path: Path, labels: list[str]) -> Path:
    """A Takeout mbox of one message a label list (X-Gmail-Labels, folded where it is long)."""
    path.write_bytes(b"\n".join(
        f"From 17900000000000000{n:02d}@xxx Mon Mar 04 10:00:00 +0000 2024\nX-GM-THRID: 17900000000000000{n:02d}\n"
        f"X-Gmail-Labels: {label}\nFrom: ana@example.com\nSubject: message {n}\nMessage-ID: <m{n}@example.com>\n"
        f"Date: Mon, {4 + n} Mar 2024 10:00:00 +0000\n\nBody {n}.\n".encode() for n, label in enumerate(labels)))
    return path


GMAIL_LABELS = ["Inbox,Important,Opened", "Spam,Category Promotions,Unread", "Trash,Important,Opened",
                "Archived,Category Updates,\n Trash", '"Spam, not",Opened', "Sent,Opened"]


def test_gmail_spam_and_trash_are_left_out_as_gmail_search_leaves_them_out(tmp_path: Path) -> None:
    # Takeout's one mbox holds Spam and Trash too ("All mail Including Spam and Trash"): searched,
    # a person's mail answered with spam; a message in Trash is trash whatever else it is labelled
    path = takeout(tmp_path / "All mail Including Spam and Trash.mbox", GMAIL_LABELS)
    records, problems = load(path)
    assert [(r.metadata["subject"], r.metadata["tags"]) for r in records] == [
        ("message 0", ["Inbox", "Important", "Opened"]), ("message 4", ["Spam, not", "Opened"]),
        ("message 5", ["Sent", "Opened"])]
    assert problems == ["mail/All mail Including Spam and Trash.mbox:11: collection 'mail': 3 messages labelled "
                        "Spam or Trash in Gmail, as Gmail's search leaves them out; to search them, "
                        "set include_spam_and_trash = true in this collection's table"]


def test_gmail_spam_and_trash_are_known_by_their_names_in_the_accounts_language(tmp_path: Path) -> None:
    # Takeout and Gmail's IMAP folders name the labels in the account's language ("Posteingang,Wichtig"):
    # a German account's Trash is Papierkorb, a Russian one's Корзина (an encoded word), a British one's Bin
    # (Takeout encodes a value past ASCII whole, its commas inside: "Корзина,Важное", "Corbeille,Envoyé")
    path = takeout(tmp_path / "Alle E-Mails einschließlich Spam und Papierkorb.mbox", [
        "Posteingang,Wichtig", "Papierkorb,Wichtig", "=?UTF-8?B?0JrQvtGA0LfQuNC90LA=?=", "Bin", "Corbeille",
        "=?UTF-8?B?44K044Of566x?=", "Spam", "=?UTF-8?B?0JrQvtGA0LfQuNC90LAs0JLQsNC20L3QvtC1?=",
        "=?UTF-8?Q?Corbeille,Envoy=C3=A9?=", "=?UTF-8?Q?Archiv=C3=A9s,Envoy=C3=A9?="])
    records, problems = load(path)
    assert [r.metadata["tags"] for r in records] == [["Posteingang", "Wichtig"], ["Archivés", "Envoyé"]]
    assert "8 messages labelled Spam or Trash in Gmail, as" in problems[0]
    profile = tmp_path / "ImapMail" / "imap.gmail.com"
    for folder in ("INBOX", "[Gmail].sbd/Papierkorb", "[Gmail].sbd/Wichtig", "Gelöschte Elemente", "Junk-E-Mail",
                   "Courrier indésirable", "Корзина"):
        (profile / folder).parent.mkdir(parents=True, exist_ok=True)
        (profile / folder).write_bytes(f"From - Mon Mar 11 10:00:00 2024\nFrom: a@example.com\nSubject: {folder}\n"
                                       "Date: Mon, 11 Mar 2024 10:00:00 +0000\n\nBody.\n".encode())
    records, problems = load(profile)
    assert sorted(r.metadata["subject"] for r in records) == ["INBOX", "[Gmail].sbd/Wichtig"]
    assert len(problems) == 5


def test_a_label_of_the_users_named_bin_is_read_where_gmail_names_its_bin_trash(tmp_path: Path) -> None:
    # Bin is Gmail's Trash in British English only: an American account's Takeout (its file "... Spam and
    # Trash.mbox", or a message of it labelled Trash, even a later one) names a label of the user's so
    (tmp_path / "us").mkdir(), (tmp_path / "uk").mkdir()
    takeout(tmp_path / "us" / "All mail Including Spam and Trash.mbox", ["Bin,Opened", "Inbox", "Bin"])
    takeout(tmp_path / "us" / "Receipts.mbox", ["Bin,Opened", "Inbox", "Trash,Opened", "Bin"])
    british = takeout(tmp_path / "uk" / "All mail Including Spam and Bin.mbox", ["Bin,Opened", "Inbox", "Spam"])
    records, problems = load(tmp_path / "us")
    assert sorted((r.metadata["conversation"], r.metadata["subject"]) for r in records) == [
        ("All mail Including Spam and Trash", f"message {n}") for n in range(3)] + [
        ("Receipts", "message 0"), ("Receipts", "message 1"), ("Receipts", "message 3")]
    assert [r.metadata["tags"] for r in records if r.metadata["subject"] == "message 0"] == [["Bin", "Opened"]] * 2
    assert problems == ["mail/Receipts.mbox:21: collection 'mail': 1 message labelled Spam or Trash in Gmail, as "
                        "Gmail's search leaves it out; to search it, set include_spam_and_trash = true in this "
                        "collection's table"]
    with british.open("ab") as mbox:  # (a message left out says nothing of its own faults: no Date here)
        mbox.write(b"\nFrom 1@xxx Mon Mar 04 10:00:00 +0000 2024\nX-Gmail-Labels: Bin\nSubject: no date\n\nOld.\n")
    records, problems = load(british)
    assert [r.metadata["subject"] for r in records] == ["message 1"] and len(problems) == 1
    assert "3 messages labelled" in problems[0]
    for n, labels in enumerate(["Bin", "Trash,Opened", "Inbox"]):  # (.eml files: one account a folder)
        (tmp_path / "eml" / f"{n}.eml").parent.mkdir(exist_ok=True)
        (tmp_path / "eml" / f"{n}.eml").write_bytes(message(f"X-Gmail-Labels: {labels}\nFrom: a@example.org\n"
                                                            f"Subject: message {n}\nDate: Mon, 4 Mar 2024 10:00:00 +0000",
                                                            "Hi."))
    records, problems = load(tmp_path / "eml")
    assert sorted(r.metadata["subject"] for r in records) == ["message 0", "message 2"] and len(problems) == 1
    (tmp_path / "eml" / "1.eml").unlink()
    records, problems = load(tmp_path / "eml")
    assert [r.metadata["subject"] for r in records] == ["message 2"] and len(problems) == 1


def test_gmail_spam_and_trash_saved_as_eml_files_are_left_out_too(tmp_path: Path) -> None:
    for n, labels in enumerate(["Inbox", "Trash,Opened", "Spam"]):
        (tmp_path / f"{n}.eml").write_bytes(message(f"X-Gmail-Labels: {labels}\nFrom: a@example.org\n"
                                                    f"Subject: message {n}\nDate: Mon, 4 Mar 2024 10:00:00 +0000", "Hi."))
    records, problems = load(tmp_path)
    assert [r.metadata["subject"] for r in records] == ["message 0"]
    assert problems == ["mail/1.eml: collection 'mail': 2 messages labelled Spam or Trash in Gmail, as "
                        "Gmail's search leaves them out; to search them, set include_spam_and_trash = true in this "
                        "collection's table"]


def test_trash_and_junk_mailboxes_are_left_out_as_mail_apps_search_leaves_them_out(tmp_path: Path) -> None:
    # Thunderbird keeps deleted mail and junk in its Trash and Junk folders (a deleted folder in
    # Trash.sbd/), Gmail over IMAP in [Gmail]/Trash and [Gmail]/Spam, Dovecot in .Trash and .Junk,
    # Apple Mail in Deleted Messages.mbox: searched, they answered with spam and what was thrown away
    def mbox(path: Path, *subjects: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join(f"From - Mon Mar 11 10:00:00 2024\nFrom: a@example.com\nSubject: {s}\n"
                                     f"Date: Mon, 11 Mar 2024 10:00:00 +0000\n\nBody.\n".encode() for s in subjects))
    profile = tmp_path / "profile"
    mbox(profile / "Inbox", "kept")
    mbox(profile / "Trash", "thrown away", "also thrown away")
    mbox(profile / "Junk", "pills")
    mbox(profile / "Trash.sbd" / "Old project", "deleted folder")
    mbox(profile / "[Gmail].sbd" / "Spam", "lottery")
    mbox(profile / "Archives.sbd" / "Binders", "kept too")
    records, problems = load(profile)
    assert [r.metadata["subject"] for r in records] == ["kept", "kept too"]
    fix = "to search it, set include_spam_and_trash = true in this collection's table"
    assert problems == [
        f"mail/Junk: collection 'mail': the mailbox 'Junk' (1 message), a Trash or Junk folder, as "
        f"mail apps' search leaves them out; {fix}",
        f"mail/Trash: collection 'mail': the mailbox 'Trash' (2 messages), a Trash or Junk folder, "
        f"as mail apps' search leaves them out; {fix}",
        f"mail/Trash.sbd/Old project: collection 'mail': the mailbox 'Trash/Old project' (1 message), a Trash or "
        f"Junk folder, as mail apps' search leaves them out; {fix}",
        f"mail/[Gmail].sbd/Spam: collection 'mail': the mailbox '[Gmail]/Spam' (1 message), a Trash or Junk folder, "
        f"as mail apps' search leaves them out; {fix}"]
    maildir = tmp_path / "Maildir"
    for folder, name in ((maildir / "cur", "1.host:2,S"), (maildir / ".Trash" / "cur", "2.host:2,ST"),
                         (maildir / ".Junk" / "new", "3.host"), (maildir / ".Junk" / "cur", "4.host:2,S")):
        folder.mkdir(parents=True)
        (folder / name).write_bytes(message(f"From: a@example.com\nSubject: {name}\n"
                                            "Date: Mon, 11 Mar 2024 10:00:00 +0000", "Body."))
    records, problems = load(maildir)
    assert [r.metadata["subject"] for r in records] == ["1.host:2,S"]
    assert [p.split(": ", 2)[0] + ": " + p.split(": ", 2)[2].split(", a ")[0] for p in problems] == [
        "mail/.Junk/cur/4.host:2,S: the mailbox 'Junk' (2 messages)",
        "mail/.Trash/cur/2.host:2,ST: the mailbox 'Trash' (1 message)"]
    apple = tmp_path / "Mail" / "V10" / "ABCD" / "Deleted Messages.mbox" / "EF01" / "Data" / "Messages"
    apple.mkdir(parents=True)
    mail = message("From: a@example.com\nSubject: gone\nDate: Mon, 11 Mar 2024 10:00:00 +0000", "Body.")
    (apple / "1.emlx").write_bytes(f"{len(mail)}\n".encode() + mail + b"<?xml version=\"1.0\"?><plist/>")
    records, problems = load(tmp_path / "Mail", fmt="maildir")
    assert records == [] and "the mailbox 'Deleted Messages' (1 message), a Trash or Junk folder" in problems[0]
    records, problems, _ = load_export(CollectionConfig(name="mail", path=profile, database_label="mail",
                                                        include_spam_and_trash=True))
    assert problems == [] and len(records) == 7


def test_a_users_own_folders_and_labels_named_like_a_bin_are_read(tmp_path: Path) -> None:
    # only a mail app's own Trash and Junk are bins: at the top of the account, under its server's
    # INBOX or [Gmail] (IMAP's namespaces), and what is inside them; a user's folder that holds the word
    # (Spam research, Junk Removal Co) or is named so inside their own folder (Clients/Spam) is their mail
    def mbox(path: Path, subject: str, labels: str = "Inbox") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"From - Mon Mar 11 10:00:00 2024\nX-Gmail-Labels: {labels}\nFrom: a@example.com\n"
                         f"Subject: {subject}\nDate: Mon, 11 Mar 2024 10:00:00 +0000\n\nBody.\n".encode())
    profile = tmp_path / "profile"
    for folder in ("Projects.sbd/Spam research", "Clients.sbd/Junk Removal Co", "Anti-Spam", "Clients.sbd/Spam",
                   "Trash Talk", "INBOX.sbd/Trash", "Trash.sbd/Clients.sbd/Spam research", "[Gmail].sbd/Trash"):
        mbox(profile / folder, folder)
    mbox(profile / "Takeout.mbox", "labelled", "Anti-Spam,Spam research,Projects/Trash")
    records, problems = load(profile)
    assert sorted((r.metadata["subject"], r.metadata["conversation"]) for r in records) == [
        ("Anti-Spam", "Anti-Spam"), ("Clients.sbd/Junk Removal Co", "Clients/Junk Removal Co"),
        ("Clients.sbd/Spam", "Clients/Spam"), ("Projects.sbd/Spam research", "Projects/Spam research"),
        ("Trash Talk", "Trash Talk"), ("labelled", "Takeout")]
    assert sorted(re.findall(r"the mailbox '([^']+)'", " ".join(problems))) == [
        "INBOX/Trash", "Trash/Clients/Spam research", "[Gmail]/Trash"]
    # Maildir trees of several accounts (mbsync, offlineimap): an account's folder holds no mail of its own
    maildir = tmp_path / "Mail"
    for n, folder in enumerate(("work/INBOX", "work/Trash", "work/Clients", "work/Clients/Spam",
                                "work/Clients/Junk Removal Co", "home/Junk")):
        (maildir / folder / "cur").mkdir(parents=True)
        (maildir / folder / "cur" / f"{n}.host:2,S").write_bytes(message(
            f"From: a@example.com\nSubject: {folder}\nDate: Mon, 11 Mar 2024 10:00:00 +0000", "Body."))
    records, problems = load(maildir)
    assert sorted(r.metadata["conversation"] for r in records) == [
        "work/Clients", "work/Clients/Junk Removal Co", "work/Clients/Spam", "work/INBOX"]
    assert sorted(re.findall(r"the mailbox '([^']+)'", " ".join(problems))) == ["home/Junk", "work/Trash"]


def test_maildir_folders_named_with_dots_are_read_as_their_paths(tmp_path: Path) -> None:
    # Maildir++ (Dovecot, Courier, mbsync) writes Clients/Spam research as .Clients.Spam research beside the
    # account's INBOX, a folder deleted into Trash as .Trash.<name>; offlineimap writes [Gmail]/Spam as
    # [Gmail].Spam: shown with dots, their Trash and Spam were read
    def mail(folder: Path, n: int) -> None:
        (folder / "cur").mkdir(parents=True)
        (folder / "cur" / f"{n}.host:2,S").write_bytes(message(
            f"From: a@example.com\nSubject: {n}\nDate: Mon, 11 Mar 2024 10:00:00 +0000", "Body."))
    for n, folder in enumerate(("Maildir", "Maildir/.Clients.Spam research", "Maildir/.Trash.Old project",
                                "Maildir/.Junk", "Mail/gmail/INBOX", "Mail/gmail/[Gmail].All Mail",
                                "Mail/gmail/[Gmail].Spam", "Mail/courier/INBOX", "Mail/courier/INBOX.Clients",
                                "Mail/courier/INBOX.Trash", "Mail/work", "Mail/work/.Clients.Spam", "Mail/work/.Trash")):
        mail(tmp_path / folder, n)
    records, problems = load(tmp_path / "Maildir")
    assert sorted(r.metadata["conversation"] for r in records) == ["Clients/Spam research", "INBOX"]
    assert sorted(re.findall(r"the mailbox '([^']+)'", " ".join(problems))) == ["Junk", "Trash/Old project"]
    records, problems = load(tmp_path / "Mail")
    assert sorted(r.metadata["conversation"] for r in records) == [
        "courier/INBOX", "courier/INBOX/Clients", "gmail/INBOX", "gmail/[Gmail]/All Mail", "work", "work/Clients/Spam"]
    assert sorted(re.findall(r"the mailbox '([^']+)'", " ".join(problems))) == [
        "courier/INBOX/Trash", "gmail/[Gmail]/Spam", "work/Trash"]


def test_thunderbirds_maildir_store_is_named_by_its_folders_paths(tmp_path: Path) -> None:
    # Thunderbird set to store one file a message keeps a folder's subfolders in <folder>.sbd/, as its
    # mbox store does: they showed as Inbox.sbd/Projects, and a folder deleted into Trash.sbd/ was read
    for n, folder in enumerate(("Inbox", "Inbox.sbd/Projects", "Trash", "Trash.sbd/Old project")):
        (tmp_path / folder / "cur").mkdir(parents=True)
        (tmp_path / folder / "cur" / f"{n}.eml").write_bytes(message(
            f"From: a@example.com\nSubject: {n}\nDate: Mon, 11 Mar 2024 10:00:00 +0000", "Body."))
    records, problems = load(tmp_path)
    assert sorted(r.metadata["conversation"] for r in records) == ["Inbox", "Inbox/Projects"]
    assert sorted(re.findall(r"the mailbox '([^']+)'", " ".join(problems))) == ["Trash", "Trash/Old project"]


def test_a_collection_can_include_gmail_spam_and_trash(tmp_path: Path) -> None:
    from vecbook.config import ConfigError, load_config

    path = takeout(tmp_path / "All mail Including Spam and Trash.mbox", GMAIL_LABELS)
    toml = tmp_path / "vecbook.toml"
    toml.write_text(f'[[collections]]\nname = "gmail"\npath = "{path.name}"\ninclude_spam_and_trash = true\n',
                    encoding="utf-8")
    (config,) = load_config(toml).collections
    assert config.include_spam_and_trash is True
    records, problems, _ = load_export(config)
    assert problems == [] and len(records) == 6
    assert records[2].metadata["tags"] == ["Trash", "Important", "Opened"]  # the label shows where it is
    toml.write_text(f'[[collections]]\nname = "gmail"\npath = "{path.name}"\ninclude_spam_and_trash = "yes"\n',
                    encoding="utf-8")
    with pytest.raises(ConfigError, match="'include_spam_and_trash' in .* must be true or false, got 'yes'"):
        load_config(toml)
    toml.write_text('[[collections]]\nname = "db"\ndatabase = "x.db"\ninclude_spam_and_trash = true\n',
                    encoding="utf-8")
    with pytest.raises(ConfigError, match="'include_spam_and_trash' applies to exports"):
        load_config(toml)


def test_gmail_spam_in_the_data_folder_says_to_add_the_mbox_as_a_source(tmp_path: Path) -> None:
    path = takeout(tmp_path / "Takeout.mbox", ["Spam,Unread"])
    records, problems = vecbook.sources.load_file(path.name, path)
    assert records == []
    assert [p.reason for p in problems] == [
        "1 message labelled Spam or Trash in Gmail, as Gmail's search leaves it out; to search "
        "it, add the mbox as a source of its own (vecbook add PATH) and set include_spam_and_trash = true in "
        "its table"]


def test_an_mbox_that_starts_with_a_byte_order_mark_or_blank_lines_is_an_mbox(tmp_path: Path) -> None:
    # Windows tools write a BOM first, mailboxes joined by hand a blank line: "no format recognises it"
    mail = (b"From a@example.com Tue Mar  5 09:00:00 2024\nFrom: Ana <ana@example.com>\nSubject: Kayak\n"
            b"Date: Tue, 5 Mar 2024 09:00:00 +0100\n\nThe kayak leaks.\n")
    for name, lead, lines in (("bom", b"\xef\xbb\xbf", "1-6"), ("blank", b"\n\n", "3-8"), ("crlf", b"\r\n", "2-7")):
        (tmp_path / f"{name}.mbox").write_bytes(lead + mail)
        records, problems = load(tmp_path / f"{name}.mbox")
        assert [(r.citation, r.metadata["subject"], r.text) for r in records] == [
            (f"mail/{name}.mbox:{lines}", "Kayak", "The kayak leaks.")] and not problems


def test_an_eml_file_that_starts_with_a_byte_order_mark_is_read_whole(tmp_path: Path) -> None:
    # a message saved by a Windows script (Windows PowerShell's -Encoding UTF8 writes a BOM): it was no mail at all
    (tmp_path / "Angebot.eml").write_bytes(b"\xef\xbb\xbf" + message(
        "From: Ana <ana@example.com>\nSubject: Angebot\nDate: Tue, 5 Mar 2024 09:00:00 +0100", "Anbei das Angebot."))
    records, problems = load(tmp_path)
    assert [(r.metadata["author"], r.metadata["subject"], r.text) for r in records] == [
        ("Ana <ana@example.com>", "Angebot", "Anbei das Angebot.")] and problems == []


def test_an_eml_file_in_utf_16_or_after_blank_lines_is_read_and_one_that_is_no_mail_is_said(tmp_path: Path) -> None:
    # Windows PowerShell's Out-File and ">" write UTF-16 with a byte order mark; scripts and web forms leave
    # blank lines before the headers: such files were passed over without a word, as was a .eml that is no mail
    mail = "From: Ana <ana@example.com>\r\nSubject: {}\r\nDate: Tue, 5 Mar 2024 09:00:00 +0100\r\n\r\nText of {}.\r\n"
    (tmp_path / "utf16.eml").write_bytes(b"\xff\xfe" + mail.format("Angebot", "utf16").encode("utf-16-le"))
    (tmp_path / "utf16be.eml").write_bytes(b"\xfe\xff" + mail.format("Anfrage", "utf16be").encode("utf-16-be"))
    (tmp_path / "blank.eml").write_bytes(("\r\n\r\n" + mail.format("Termin", "blank")).encode())
    (tmp_path / "notes.eml").write_bytes(b"Just some notes I saved with the wrong extension.\n")
    records, problems = load(tmp_path)
    assert [(r.metadata["subject"], r.text, r.line_number) for r in records] == [
        ("Termin", "Text of blank.", 3), ("Angebot", "Text of utf16.", 1), ("Anfrage", "Text of utf16be.", 1)]
    assert problems == ["mail/notes.eml:1: collection 'mail': not a mail message (no header at its start); skipped"]


def test_the_folder_data_that_pine_and_dovecot_keep_first_in_an_mbox_is_no_message(tmp_path: Path) -> None:
    # UW-IMAP, Pine/Alpine and Dovecot keep an mbox's UIDs in a first message of their own; it was a
    # record, "This text is part of the internal format of your mail folder", in every search for "mail"
    (tmp_path / "INBOX").write_bytes(
        b"From MAILER-DAEMON Tue Mar  5 08:00:00 2024\nDate: 05 Mar 2024 08:00:00 +0100\n"
        b"From: Mail System Internal Data <MAILER-DAEMON@host.example.com>\n"
        b"Subject: DON'T DELETE THIS MESSAGE -- FOLDER INTERNAL DATA\nMessage-ID: <1709622000@host.example.com>\n"
        b"X-IMAP: 1709622000 0000000002\nStatus: RO\n\nThis text is part of the internal format of your mail "
        b"folder, and is not\na real message.  It is created automatically by the mail system software.\n\n"
        b"From ana@example.com Tue Mar  5 09:00:00 2024\nFrom: Ana <ana@example.com>\nSubject: Kayak\n"
        b"Date: Tue, 5 Mar 2024 09:00:00 +0100\nX-IMAPbase: 1709622000 2\nStatus: RO\nX-UID: 1\n\n"
        b"The kayak leaks.\n")
    records, problems = load(tmp_path)
    assert [(r.citation, r.text) for r in records] == [("mail/INBOX:12-20", "The kayak leaks.")] and problems == []
    (tmp_path / "INBOX").rename(tmp_path / "Trash")  # (nor is it counted among the messages left out)
    records, problems = load(tmp_path)
    assert records == [] and "the mailbox 'Trash' (1 message), a Trash or Junk folder" in problems[0]


def test_a_folder_of_eml_files_and_one_eml_file_are_read_as_mail(tmp_path: Path) -> None:
    # Outlook and Apple Mail save a message dragged out as .eml, Thunderbird's ImportExportTools
    # exports a folder as .eml files (with an mbox "From " line first); no cur/ or new/ around them
    box = tmp_path / "Exported"
    box.mkdir()
    (box / "Flight booking.eml").write_bytes(message(
        "From: Airline <noreply@airline.example>\nSubject: Booking\nDate: Fri, 8 Mar 2024 01:30:00 +0100\n"
        "Message-ID: <eml1@airline.example>", "Your flight to Trondheim is confirmed."))
    (box / "Lunch.eml").write_bytes(b"From - Sat Mar 09 10:00:00 2024\n" + message(
        "From: Bob <bob@example.com>\nSubject: Lunch\nDate: Sat, 9 Mar 2024 10:00:00 -0500", "At noon?"))
    assert detect_format(collection(box)) == "maildir"
    assert detect_format(collection(box / "Lunch.eml")) == "maildir"
    records, problems = load(box)
    assert problems == []
    assert [(r.citation, r.text) for r in records] == [
        ("mail/Flight booking.eml:1-6#eml1@airline.example", "Your flight to Trondheim is confirmed."),
        ("mail/Lunch.eml:1-6", "At noon?")]
    assert records[1].metadata["author"] == "Bob <bob@example.com>"


def emlx(mail: bytes) -> bytes:
    """Apple Mail's stored message: its length in bytes on a line, the message, a property list."""
    plist = (b'<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n\t<key>flags</key>\n'
             b"\t<integer>8590195713</integer>\n</dict>\n</plist>\n")
    return str(len(mail)).encode() + b"        \n" + mail + plist


def test_apple_mails_own_store_of_emlx_files_is_read_in_place(tmp_path: Path) -> None:
    # ~/Library/Mail/V10/<account>/<mailbox>.mbox/<uuid>/Data/<n>/Messages/<id>.emlx; a message
    # whose attachments are stored beside it is <id>.partial.emlx
    library = tmp_path / "Mail"
    inbox = library / "V10" / "4F1C-88AA" / "INBOX.mbox" / "9D3E-11F0" / "Data" / "1" / "Messages"
    clients = library / "V10" / "4F1C-88AA" / "Work.mbox" / "Clients.mbox" / "77AB-0001" / "Data" / "Messages"
    inbox.mkdir(parents=True)
    clients.mkdir(parents=True)
    (inbox / "4711.emlx").write_bytes(emlx(message(
        "From: Ana <ana@example.com>\nSubject: Picnic\nDate: Mon, 11 Mar 2024 08:00:00 +0000\n"
        "Message-Id: <picnic@example.com>", "Bring the blue blanket.")))
    (clients / "4712.partial.emlx").write_bytes(emlx(message(
        "From: Bo <bo@example.com>\nSubject: Contract\nDate: Tue, 12 Mar 2024 08:00:00 +0000", "Signed copy attached.")))
    (library / "V10" / "MailData").mkdir()
    (library / "V10" / "MailData" / "Envelope Index").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    before = snapshot(library)
    assert detect_format(collection(library)) == "maildir"
    records, problems = load(library)
    assert problems == []
    assert [(r.text, r.metadata["conversation"], r.metadata["subject"]) for r in records] == [
        ("Bring the blue blanket.", "INBOX", "Picnic"), ("Signed copy attached.", "Work/Clients", "Contract")]
    assert records[0].citation.endswith("Messages/4711.emlx:2-7#picnic@example.com")
    assert cited_lines(library, records[0])[0] == "From: Ana <ana@example.com>"
    assert cited_lines(library, records[0])[-1] == "Bring the blue blanket."
    assert snapshot(library) == before


@pytest.mark.parametrize("folder", sorted(p.name for p in EXPORTS.iterdir() if p.is_dir() and p.name != "email"))
def test_the_mail_detectors_say_no_to_other_exports(folder: str) -> None:
    export = open_export(collection(EXPORTS / folder))
    assert not reader("mbox").detect(export) and not reader("maildir").detect(export)


def test_no_other_reader_claims_the_mail_fixtures() -> None:
    for path in (MBOX, MAILPILE, NOTMUCH):
        export = open_export(collection(path))
        assert [n for n in FORMATS if n not in ("mbox", "maildir") and reader(n).detect(export)] == []


# -- search and filters --

def test_mail_is_searched_and_filtered_by_date_people_thread_tags_and_source(tmp_path: Path) -> None:
    from bench.export_mail import WORDS, generate

    generate(tmp_path / "takeout", 120, seed=3)
    every = " ".join(sorted(set(WORDS)))  # every word the generated mail is made of
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("a note about the budget\n")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n'
        f'[[collections]]\nname = "gmail"\npath = "{tmp_path / "takeout"}"\n'
        f'[[collections]]\nname = "box"\npath = "{NOTMUCH / "default"}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    records, _ = load(tmp_path / "takeout", name="gmail")
    assert len(records) == 120 and book.stats()["collections"]["gmail"]["format"] == "mbox"

    hits = book.search("budget", mode="keyword", max_results=200, dedupe=False, filters={"source": "gmail"})
    assert hits and all(h.source == "gmail" for h in hits)
    reply = next(r for r in records if r.metadata["subject"].startswith("Re: "))
    thread = book.search(every, mode="keyword", max_results=200, dedupe=False, filters={"thread": reply.metadata["thread"]})
    expected = {r.id for r in records if r.metadata["thread"] == reply.metadata["thread"]}
    assert {h.id for h in thread} == expected and len(expected) > 1
    assert any(not r.metadata["subject"].startswith("Re: ") for r in records if r.id in expected)  # its root
    tagged = book.search(every, mode="keyword", max_results=200, dedupe=False, filters={"tags__contains": "Receipts, 2024"})
    assert tagged and all("Receipts, 2024" in h.metadata["tags"] for h in tagged)
    ana = book.search(every, mode="keyword", max_results=200, dedupe=False,
                      filters={"participants__contains": "ana@example.com", "date__gte": "2021-01-05"})
    assert ana and all("ana@example.com" in h.metadata["participants"] and h.metadata["date"] >= "2021-01-05"
                       for h in ana)
    carl = book.search("notmuch", mode="keyword", filters={"source": "box", "participants__contains": "Carl Worth"})
    assert carl and all(h.citation.startswith("box/") and "Carl Worth" in h.metadata["participants"] for h in carl)


def test_the_benchmark_mbox_loads_without_warnings(tmp_path: Path) -> None:
    from bench.export_mail import generate

    path = generate(tmp_path, 300, seed=1)
    records, problems = load(tmp_path)
    assert problems == [] and len(records) == 300
    assert path.name == "All mail Including Spam and Trash.mbox"
    assert {r.metadata["conversation"] for r in records} == {"All mail Including Spam and Trash"}
    for record in records[:50]:
        assert cited_lines(tmp_path, record)[0].startswith("From ")


def test_a_message_no_rule_foresaw_is_a_warning_and_the_mailbox_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import vecbook.exports.mail as mail

    real = mail.new_part

    def choke(body: str, subject: str = "") -> str:
        if "hello world" in body:
            raise RecursionError("too deep")
        return real(body, subject)

    monkeypatch.setattr(mail, "new_part", choke)
    records, problems = load(MBOX)
    assert len(records) == 8
    assert problems == ["mail/mailpile_tests.mbx:2434: collection 'mail': message skipped: RecursionError: too deep"]


def test_an_apple_mail_export_is_named_by_its_mailbox(tmp_path: Path) -> None:
    box = tmp_path / "Inbox.mbox"
    box.mkdir()
    shutil.copy(MBOX / "mailpile_tests.mbx", box / "mbox")
    (box / "table_of_contents").write_bytes(b"\x00\x01binary index")
    records, problems = load(tmp_path)
    assert problems == [] and len(records) == 9
    assert {r.metadata["conversation"] for r in records} == {"Inbox"}
    assert records[0].citation.startswith("mail/Inbox.mbox/mbox:1-183#")
    alone, _ = load(box)  # the bundle itself
    assert {r.metadata["conversation"] for r in alone} == {"Inbox"}
    plain = tmp_path / "ana"  # a plain ~/mbox keeps its own name
    plain.mkdir()
    shutil.copy(MBOX / "mailpile_tests.mbx", plain / "mbox")
    assert {r.metadata["conversation"] for r in load(plain / "mbox")[0]} == {"mbox"}


def test_an_apple_mail_export_of_nested_mailboxes_is_named_by_their_path(tmp_path: Path) -> None:
    # Export Mailbox... of a mailbox with mailboxes inside writes them inside its bundle, as Apple Mail's
    # own store keeps them (Work.mbox/Clients.mbox is Work/Clients there): a user's Archive/Junk is theirs
    for bundle in ("Archive.mbox", "Archive.mbox/Sub.mbox", "Archive.mbox/Junk.mbox", "Junk.mbox"):
        (tmp_path / bundle).mkdir()
        (tmp_path / bundle / "mbox").write_bytes(
            f"From a@example.com Mon Mar 11 10:00:00 2024\nFrom: a@example.com\nSubject: {bundle}\n"
            f"Date: Mon, 11 Mar 2024 10:00:00 +0000\n\nBody.\n".encode())
    records, problems = load(tmp_path)
    assert sorted(r.metadata["conversation"] for r in records) == ["Archive", "Archive/Junk", "Archive/Sub"]
    assert [re.findall(r"the mailbox '([^']+)'", p) for p in problems] == [["Junk"]]
    alone, _ = load(tmp_path / "Archive.mbox" / "Sub.mbox")  # the inner bundle itself
    assert {r.metadata["conversation"] for r in alone} == {"Archive/Sub"}


def test_outlook_msg_files_beside_eml_files_are_counted_in_a_warning(tmp_path: Path) -> None:
    # a folder of saved mail where classic Outlook saved some as .msg: they were passed over in silence
    (tmp_path / "Angebot.eml").write_bytes(message("From: a@example.org\nSubject: Angebot\nDate: Mon, 4 Mar 2024 "
                                                   "10:00:00 +0100", "Hi."))
    for name in ("AW Angebot.msg", "Rechnung.MSG"):
        (tmp_path / name).write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    (tmp_path / "notes.msg").write_text("not Outlook's", encoding="utf-8")
    records, problems = load(tmp_path)
    assert [r.metadata["subject"] for r in records] == ["Angebot"]
    assert problems == ["mail/AW Angebot.msg: collection 'mail': 2 Outlook .msg files are not read (VecBook reads "
                        "none): save the messages as .eml instead (new Outlook for Windows: Save as; Outlook for Mac: "
                        "drag them to a folder), or export the mailbox as a .pst and convert that with readpst -o "
                        "<folder> <file>.pst (libpst: apt install pst-utils, brew install libpst), which writes an "
                        "mbox file a mail folder"]


OUTLOOK_BESIDE = [  # a mail folder, and Outlook's own file in it: its name, first bytes, and what the WARN says
    ("Inbox", "Archiv 2019.pst", b"!BDN", "1 Outlook data file (.pst) is not read (VecBook reads none): convert it "
     "with readpst"),
    ("Inbox", "old/AW Angebot.msg", b"\xd0\xcf\x11\xe0", "1 Outlook .msg file is not read (VecBook reads none): save"),
    ("a.eml", "Outlook.ost", b"!BDN", "1 Outlook offline cache (.ost) is not read (VecBook reads none): export"),
    ("cur/1.host:2,S", "Outlook for Mac Archive.olm", b"PK\x03\x04", "1 Outlook for Mac archive (.olm) is not "
     "read (VecBook reads none): drag the messages"),
]


@pytest.mark.parametrize(("mail", "name", "head", "said"), OUTLOOK_BESIDE, ids=["mbox-pst", "mbox-msg", "eml-ost", "olm"])
def test_outlooks_own_files_beside_mail_that_is_read_are_named_with_what_to_do(
        tmp_path: Path, mail: str, name: str, head: bytes, said: str) -> None:
    # an old Outlook archive left in the mail folder was passed over in silence: its mail was not searched
    (tmp_path / mail).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / mail).write_bytes((b"From - Mon Mar 11 10:00:00 2024\n" if "." not in mail and "/" not in mail else b"")
                                  + message("From: a@example.org\nSubject: Hi\nDate: Mon, 4 Mar 2024 10:00:00 +0100",
                                            "Hi."))
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_bytes(head + bytes(508))
    records, problems = load(tmp_path)
    assert len(records) == 1 and len(problems) == 1
    assert problems[0].startswith(f"mail/{name}: collection 'mail': {said}")


def test_a_thunderbird_subfolder_is_named_by_its_path_as_thunderbird_shows_it(tmp_path: Path) -> None:
    # Thunderbird keeps a folder's subfolders in "<folder>.sbd/": Archives/2023 and Sent/2023 were
    # both the conversation "2023"
    for path in ("Inbox", "Archives.sbd/2023", "Sent.sbd/2023", "Archives.sbd/2023.sbd/Q1", "Inbox.msf"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(b"From - Mon Mar  4 10:00:00 2024\n" + message(
            f"From: ana@example.com\nSubject: in {path}\nDate: Mon, 4 Mar 2024 10:00:00 +0100", "Hi.")
            if not path.endswith(".msf") else b"// <!-- <mdb:mork:z v=\"1.4\"/> -->\n")
    records, problems = load(tmp_path)
    assert problems == []
    assert sorted((r.metadata["subject"], r.metadata["conversation"]) for r in records) == [
        ("in Archives.sbd/2023", "Archives/2023"), ("in Archives.sbd/2023.sbd/Q1", "Archives/2023/Q1"),
        ("in Inbox", "Inbox"), ("in Sent.sbd/2023", "Sent/2023")]


def test_format_flowed_mail_reads_as_its_paragraphs(tmp_path: Path) -> None:
    # RFC 3676, as Thunderbird and Apple Mail send it: a line ending in a space goes on in the
    # next one (DelSp=yes: that space was added to break the line, and is dropped), quoted
    # lines join only with lines of the same depth, a space-stuffed line loses its first
    # space, and "-- " (the signature separator) is never joined.
    cur = tmp_path / "cur"
    cur.mkdir()
    (cur / "1.host:2,S").write_bytes(message(
        "From: Zoë <zoe@example.com>\nSubject: Reise\nDate: Tue, 5 Mar 2024 09:15:00 +0100\n"
        "Content-Type: text/plain; charset=utf-8; format=flowed",
        "Wir fahren am Freitag nach Kraków und bleiben bis \nSonntag. Das Hotel ist \nschon gebucht.\n"
        "\n"
        " From the station it is a short walk.\n"
        "\n"
        "Am 04.03.24 um 18:00 schrieb Ana:\n"
        "> Fahrt ihr mit dem Zug \n"
        "> oder mit dem Auto?\n"
        ">> Ich nehme \n"
        ">> den Bus.\n"
        "\n"
        "-- \n"
        "Zoë \n"
        "Berlin\n"))
    (cur / "2.host:2,S").write_bytes(message(
        "From: Ken <ken@example.jp>\nSubject: 予定\nDate: Tue, 5 Mar 2024 10:00:00 +0900\n"
        "Content-Type: text/plain; charset=UTF-8; format=flowed; delsp=yes",
        "明日の会議は十時から \n始まります。\n"))
    (cur / "3.host:2,S").write_bytes(message(  # not flowed: a trailing space is only a space
        "From: Bo <bo@example.com>\nSubject: Plain\nDate: Tue, 5 Mar 2024 11:00:00 +0000",
        "one line \nanother line\n"))
    records, problems = load(tmp_path)
    assert problems == []
    texts = {r.metadata["subject"]: r.text for r in records}
    assert texts["Reise"] == (
        "Wir fahren am Freitag nach Kraków und bleiben bis Sonntag. Das Hotel ist schon gebucht.\n"
        "\n"
        "From the station it is a short walk.\n"
        "\n"
        "Am 04.03.24 um 18:00 schrieb Ana:\n"
        "> Fahrt ihr mit dem Zug oder mit dem Auto?\n"
        ">> Ich nehme den Bus.\n"
        "\n"
        "--\n"  # (a line's trailing spaces are trimmed in every text)
        "Zoë Berlin")
    assert texts["予定"] == "明日の会議は十時から始まります。"
    assert texts["Plain"] == "one line\nanother line"
    # the cited lines are still the whole message
    assert records[0].citation.startswith("mail/cur/1.host:2,S:1-")


def test_an_encoded_word_of_an_unknown_charset_reads_as_utf8_or_windows_1252() -> None:
    # gateways and list servers label bytes they cannot name "unknown-8bit"
    assert decoded_header("=?unknown-8bit?Q?Gr=FC=DFe?= aus Berlin") == "Grüße aus Berlin"
    assert decoded_header("=?unknown-8bit?Q?Gr=C3=BC=C3=9Fe?=") == "Grüße"
    assert decoded_header("=?x-unknown?B?4oCcaGnigJ0=?=") == "“hi”"


@pytest.mark.parametrize(("raw", "text"), [
    ("=?UTF-8?Q?Caf=E9?=", "Café"), ("Re: =?utf-8?Q?R=E9union_d=E9plac=E9e?= demain", "Re: Réunion déplacée demain"),
    ("=?us-ascii?Q?Caf=E9?=", "Café"), ("=?UTF-8?B?u+HS6c2o1qo=?=", "»áÒéÍ¨Öª"),
    ("=?gb2312?B?u+HS6c2o1qo=?= =?UTF-8?Q?Caf=E9?=", "会议通知 Café")])
def test_an_encoded_word_whose_bytes_its_charset_cannot_read_is_still_decoded(raw: str, text: str) -> None:
    # scripts and old mailers label Latin-1 bytes UTF-8 or US-ASCII: the whole header was shown as its
    # =?...?= code; such a word reads as UTF-8 where it is that, else as Windows-1252, the others as labelled
    assert decoded_header(raw) == text


def test_an_encoded_word_naming_its_language_is_decoded() -> None:
    # RFC 2231 lets an encoded word name its language after its charset ("UTF-8*de"), as Mutt and
    # some list servers write it: the word was left as its =?...?= code
    assert decoded_header("=?UTF-8*de?Q?Gr=C3=BC=C3=9Fe?= aus =?iso-8859-1*fr-CA?q?Qu=E9bec?=") == "Grüße aus Québec"
    assert decoded_header("=?utf-8*ja?B?5p2x5Lqs?=") == "東京"


@pytest.mark.parametrize(("raw", "text"), [
    ("=?UTF-8?B?5pel5pys\n 6Kqe?= Bericht", "日本語 Bericht"), ("=?utf-8?Q?Gr=C3=BC\r\n\t=C3=9Fe_aus?=\n Berlin", "Grüße aus Berlin"),
    ("=?UTF-8?Q?Gr=C3=BC?=\n =?UTF-8?Q?=C3=9Fe?=", "Grüße"), ("=?UTF-8?Q?Hello World?=", "Hello World")])
def test_an_encoded_word_a_mailer_folded_in_its_middle_is_decoded(raw: str, text: str) -> None:
    # mailers that fold long headers at any point (go-message before 2019, gateways) break a line inside an
    # encoded word: the word was shown as its =?...?= code
    assert decoded_header(raw) == text
