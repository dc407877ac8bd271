"""Regenerate samples/chats.db, a small "toolbox-store" SQLite collection.

Schema (collection name: ``messages``)::

    CREATE TABLE messages_documents (
        id TEXT PRIMARY KEY, metadata JSON, source TEXT, content TEXT);

Run from anywhere: ``python samples/make_chats_db.py``. The database is
deleted and recreated every time, so the output is reproducible.
Standard library only.
"""

import json
import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
DB_PATH = os.path.join(HERE, "chats.db")

# (id, source, metadata, content)
MESSAGES = [
    ("wa-001", "whatsapp",
     {"sender": "Ana", "channel": "family", "date": "2024-05-03", "tags": ["holiday"]},
     "Found a villa near Faro for the last week of August, sleeps 8, pool "
     "and 10 minutes from the beach. €2,400 for the week. Shall I book it?"),
    ("wa-002", "whatsapp",
     {"sender": "Priya", "channel": "family", "date": "2024-05-03", "tags": ["holiday"]},
     "Yes please! Count us in, we can pay our share by Friday."),
    ("wa-003", "whatsapp",
     {"sender": "Dad", "channel": "family", "date": "2024-05-06", "tags": ["health"]},
     "Blood test results came back fine, cholesterol is down to 4.9. "
     "The doctor says keep walking every day, so no more excuses from me."),
    ("wa-004", "whatsapp",
     {"sender": "Mum", "channel": "family", "date": "2024-05-12", "tags": ["food"]},
     "Sunday lunch at ours next week, I'm making the roast lamb. "
     "Can someone bring a dessert? Not the lemon cake again, we had it twice."),
    ("wa-005", "whatsapp",
     {"sender": "Ana", "channel": "family", "date": "2024-05-18", "tags": ["pets"]},
     "Biscuit ate a whole sock this morning 🙈 vet says just watch him for "
     "48 hours, it should pass on its own."),
    ("wa-006", "whatsapp",
     {"sender": "Priya", "channel": "family", "date": "2024-06-01", "tags": ["kids", "school"]},
     "Maya got into the school orchestra on violin! First concert is "
     "on 2024-07-05 at 6pm in the school hall, everyone's invited."),
    ("wa-007", "whatsapp",
     {"sender": "Dad", "channel": "family", "date": "2024-06-09", "tags": ["car"]},
     "Selling the old Volvo estate, 142,000 miles, new tyres last year. "
     "Asking £1,800. Tell your friends if anyone needs a reliable car."),
    ("wa-008", "whatsapp",
     {"sender": "Mum", "channel": "family", "date": "2024-06-15", "tags": ["garden"]},
     "The roses by the front door finally bloomed, photo attached. "
     "The coffee grounds trick from the café really works."),
    ("sl-001", "slack",
     {"sender": "Dev Patel", "channel": "#data-eng", "date": "2024-04-20", "tags": ["incident"]},
     "Heads up: sales dashboard numbers look doubled since this morning's "
     "load. Pausing the nightly job until we know what happened."),
    ("sl-002", "slack",
     {"sender": "Lena Vogel", "channel": "#data-eng", "date": "2024-05-08", "tags": ["release"]},
     "New finance dashboards are live in staging. Please click around and "
     "report anything broken before Thursday's demo."),
    ("sl-003", "slack",
     {"sender": "Sofia Marin", "channel": "#general", "date": "2024-05-10", "tags": ["announcement", "hiring"]},
     "Please welcome Camille Dubois, who joins as senior analyst in June "
     "and will be based in our Zürich office!"),
    ("sl-004", "slack",
     {"sender": "Aisha Rahman", "channel": "#data-eng", "date": "2024-05-22", "tags": ["on-call"]},
     "Can anyone swap on-call with me for the week of 2024-06-17? "
     "I'm at a wedding in Karachi. Happy to cover two weeks in July in return."),
    ("sl-005", "slack",
     {"sender": "Marcus Hale", "channel": "#cloud-costs", "date": "2024-05-29", "tags": ["budget"]},
     "Auto-shutdown for dev clusters is on: everything tagged env=dev stops "
     "at 8pm and at weekends. Should save around $3,000 a month."),
    ("sl-006", "slack",
     {"sender": "Tom Briggs", "channel": "#random", "date": "2024-06-03", "tags": ["social"]},
     "Who's in for the pub quiz on Wednesday? We need a sixth person who "
     "knows anything about football."),
    ("sl-007", "slack",
     {"sender": "Jonas Weber", "channel": "#general", "date": "2024-06-12", "tags": ["it", "security"]},
     "Reminder: laptops must be on the new VPN client by Monday. Old "
     "client stops working at midnight on 2024-06-17."),
    ("sl-008", "slack",
     {"sender": "Aisha Rahman", "channel": "#offsite", "date": "2024-06-20", "tags": ["offsite"]},
     "Hostel in Keswick is booked for 11-12 July. Vegetarian and gluten-free "
     "options confirmed, let me know about any other allergies."),
]


def main():
    if os.path.exists(DB_PATH):
        os.remove(DB_PATH)
    con = sqlite3.connect(DB_PATH)
    try:
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute(
            "CREATE TABLE messages_documents "
            "(id TEXT PRIMARY KEY, metadata JSON, source TEXT, content TEXT)"
        )
        con.executemany(
            "INSERT INTO messages_documents (id, metadata, source, content) "
            "VALUES (?, ?, ?, ?)",
            [
                (mid, json.dumps(meta, ensure_ascii=False), source, content)
                for mid, source, meta, content in MESSAGES
            ],
        )
        con.commit()
    finally:
        con.close()
    print(f"wrote {len(MESSAGES)} rows to {DB_PATH}")


if __name__ == "__main__":
    main()
