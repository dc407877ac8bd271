"""What a message itself says (``new_part``): its words without a reply's quoted history (">" lines,
the attribution above them in any language, Outlook's unquoted history), a forward kept whole."""

from __future__ import annotations

import re

from .base import clean_text

# A reply's quoted history: ">" lines (dropped wherever they are, so inline and
# bottom-posted answers keep their own words), the attribution just above a quote (one line,
# or two where Gmail wrapped it near 78 columns), and an Outlook-style history that is not
# quoted at all ("-----Original Message-----", or a "From:" line followed by "Sent:"/"Date:"),
# which runs to the end of the message.
# (A line with text is told by a lookahead, which never backtracks: "[^\n]*\S[^\n]*" tried every
# split of a long line, quadratic, minutes for one 1 MB line holding a '>'.)
QUOTE_INTRO = re.compile(r"^(?:(?![ \t]*>)(?=[^\n]*\S)[^\n]*\n)?(?![ \t]*>)[^\n]*\n(?:[ \t]*\n)?(?=[ \t]*>)", re.M)
# An attribution ends in a colon (a full-width one in Chinese) and says who wrote as mail apps
# write it: with a verb ("wrote", "schrieb", "a écrit", "пишет", "写道"...) just before the colon,
# or before or after the date's time (Thunderbird's "Zoë wrote on 4.3.2024 11:15:"), or with
# the quoted person's <address> (in angle brackets, as mail apps write it: Gmail's Japanese and
# Russian name no verb; "write to ana@example.com, she asked:" is a person's own words). A date
# and time alone are no attribution: "The 2024 budget meeting moved to 14:00, notes below:".
ATTRIBUTION_END = re.compile(r"[:：]\s*$")
VERBS = (r"(?:\b(?:wrote|writes|schrieb|schreef|a écrit|escribió|escreveu|scrisse|ha scritto|skrev|kirjoitti|"
         r"napisał|napsal|pisze|пишет|пише|написал[аи]?|написав|írta|έγραψε|yazdı|ha escrit|a scris|"
         r"כתב/ה|כתבה|כתב|كتبت|كتب|نوشت)|写道|寫道|님이 작성|書きました)")
# Bidi controls (LRM, RLM, embeddings, isolates) that Gmail puts around a right-to-left
# attribution and the name and address in it: no text, so not in the way of the colon at its end.
BIDI_CONTROLS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")
CLOCK = r"\b\d{1,2}[:.]\d{2}\b"
ATTRIBUTION_SAYS = re.compile(
    VERBS + r"(?:\(a\))?\s?[:：]|<\s*[^\s<>()@]+@[^\s<>()@]+\.\w[^\s<>]*\s*>|" + CLOCK + ".*" + VERBS + "|" +
    VERBS + ".*" + CLOCK + r"|^Excerpts from .+ message of ", re.I)  # (sup's, verbless)
SENTENCE_END = re.compile(r"[.!?…。！？]\s*$")
# Outlook's history in its user's language: the "-----Original Message-----" line, or a sender
# label line and a sent-date label line (English, German, French, Spanish, Portuguese, Dutch,
# Italian, Russian, Ukrainian, Greek, Hebrew, Arabic, Chinese, Japanese, Korean, Polish, Swedish,
# Danish, Norwegian, Finnish, Czech, Hungarian, Turkish), the labels perhaps bold (*From:*) as
# Outlook's plain text writes them.
ORIGINAL_MESSAGE = (r"Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|Mensagem original|"
                    r"Messaggio originale|Oorspronkelijk bericht|Исходное сообщение|Oryginalna wiadomość|"
                    r"Ursprungligt meddelande|Oprindelig meddelelse|Opprinnelig melding|Alkuperäinen viesti|"
                    r"Původní zpráva|Eredeti üzenet|原始邮件|原始郵件|元のメッセージ")
SENDER_LABEL = r"From|Von|De|Van|Da|От|Від|Από|מאת|من|发件人|寄件者|差出人|보낸 사람|Od|Från|Fra|Lähettäjä|Feladó|Kimden"
SENT_LABEL = (r"Sent|Date|Gesendet|Datum|Envoyé|Enviado|Enviada|Fecha|Verzonden|Inviato|Data|Отправлено|Дата|"
              r"发送时间|日期|寄件日期|送信日時|日付|보낸 날짜|Wysłane|Skickat|Sendt|Dato|Lähetetty|Päivämäärä|"
              r"Odesláno|Elküldve|Dátum|Gönderildi|Tarih|Надіслано|Στάλθηκε|נשלח|تم الإرسال")
# The history's subject line, within the four lines after the date's (To, Cc, Importance
# before it): with it a sender and a date label are a mail's header, not an itinerary's "Da:
# Milano Centrale / Data: 12 marzo" (Italian's "A:" is both a recipient label and "to Rome").
SUBJECT_LABEL = (r"Subject|Betreff|Objet|Asunto|Assunto|Onderwerp|Oggetto|Тема|主题|主旨|件名|제목|Temat|Ämne|Emne|"
                 r"Aihe|Předmět|Tárgy|Konu|Θέμα|נושא|الموضوع")
UNQUOTED_HISTORY = re.compile(rf"^(?:-{{2,}}\s*(?:{ORIGINAL_MESSAGE})\s*-{{2,}}|(?:_{{10,}}\n)?"
                              rf"\*?(?:{SENDER_LABEL})\s?[:：]\*?[ \t][^\n]*\n\*?(?:{SENT_LABEL})\s?[:：]\*?[ \t]"
                              rf"(?=[^\n]*\n(?:[^\n]*\n){{0,3}}\*?(?:{SUBJECT_LABEL})\s?[:：]))",
                              re.M | re.I)
QUOTED_LINE = re.compile(r"^[ \t]*>[^\n]*(?:\n|$)", re.M)
# A forward: its subject's prefix (Fwd:, Fw:, German WG:, French TR:, Spanish RV:, Portuguese
# Enc:, Finnish VL:, Swedish VB:, Dutch Doorst:, Polish PD:, Chinese 转发/轉寄; not VS:, a Finnish reply and a
# Danish forward) or the line mail apps put above the forwarded mail. What it forwards is its
# content (a booking, a receipt), kept whole, not a reply's history.
FORWARD_SUBJECT = re.compile(r"^\s*(?:fwd?|wg|tr|rv|enc|vl|vb|doorst|pd|转发|轉寄)\s*[:：]", re.I)
FORWARD_LINE = re.compile(r"^[ \t]*(?:-{3,}\s*(?:Forwarded message|Weitergeleitete Nachricht|Message transféré|"
                          r"Mensaje reenviado|Messaggio inoltrato|Mensagem encaminhada|Doorgestuurd bericht|"
                          r"Пересылаемое сообщение|Przekazana wiadomość|Vidarebefordrat meddelande|转发的邮件|"
                          r"轉寄的郵件|転送されたメッセージ|전달된 메시지)\s*-{3,}|"
                          r"(?:Begin forwarded message|Anfang der weitergeleiteten (?:Nachricht|E-Mail)|"
                          r"Début du message réexpédié|Inicio del mensaje reenviado|Inizio messaggio inoltrato|"
                          r"Início da mensagem reencaminhada|Begin doorgestuurd bericht|転送されたメッセージ|"
                          r"以下是转发的邮件)\s?[:：])", re.M | re.I)
BLANK_LINES = re.compile(r"\n{3,}")


def new_part(body: str, subject: str = "") -> str:
    """What a message itself says: without quoted lines, their attributions, and an
    unquoted Outlook history; a forward (``FORWARD_SUBJECT``, ``FORWARD_LINE``) whole."""
    found = UNQUOTED_HISTORY.search(body)
    new = body[:found.start()] if found else body
    if FORWARD_SUBJECT.match(subject) or FORWARD_LINE.search(new):  # (not one inside the history)
        return clean_text(BLANK_LINES.sub("\n\n", body))
    if ">" in new:
        new = QUOTED_LINE.sub("", QUOTE_INTRO.sub(_without_attribution, new))
    return clean_text(BLANK_LINES.sub("\n\n", new))


def _without_attribution(found: re.Match[str]) -> str:
    """The line(s) just above a quote, without the attribution among them: the last line
    alone, else the last two joined (a wrapped one; not after a finished sentence)."""
    lines = found.group(0).split("\n")
    text = [i for i, line in enumerate(lines) if line.strip()]
    if not text:
        return found.group(0)
    last = text[-1]
    if len(lines[last].split()) >= 2 and _is_attribution(lines[last]):
        return "\n".join(lines[:last]) + ("\n" if last else "")
    if len(text) > 1 and not SENTENCE_END.search(lines[text[-2]]) and \
            _is_attribution(lines[text[-2]] + " " + lines[last]):
        return "\n".join(lines[:text[-2]]) + ("\n" if text[-2] else "")
    return found.group(0)


def _is_attribution(line: str) -> bool:
    """A line that says who wrote the quote below it (``ATTRIBUTION_SAYS``)."""
    line = BIDI_CONTROLS.sub("", line) if len(line) < 300 else line
    return len(line) < 300 and bool(ATTRIBUTION_END.search(line)) and bool(ATTRIBUTION_SAYS.search(line))
