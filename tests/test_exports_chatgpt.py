"""ChatGPT conversations.json: the branch ending at current_node, user and assistant turns
with roles, hidden/system/tool nodes skipped, message objects cited, the invalid redacted
sample as a WARN, detection and filters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import detect_format, load_export, reader
from vecbook.exports.base import Export

from conftest import EXPORTS, FakeEmbedder, assert_messages_cited, cited_lines

CHATGPT = EXPORTS / "chatgpt"
SAMPLE = CHATGPT / "chatgpt2graph_conversations.json"
REDACTED = "everything-chatgpt_redacted_template_conversations.json.txt"


def collection(path: Path, name: str = "gpt", fmt: str | None = None) -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path), format=fmt)


def load(path: Path, fmt: str | None = None) -> tuple[list[vecbook.Record], list[str]]:
    records, problems, _ = load_export(collection(path, fmt=fmt))
    return records, [str(p) for p in problems]


def node(node_id: str, parent: str | None, children: list[str], role: str | None = None, parts: list[Any] = (),
         when: float | None = None, **extra: Any) -> tuple[str, dict]:
    message = None
    if role is not None:
        content = extra.pop("content", {"content_type": "text", "parts": list(parts)})
        message = {"id": node_id, "author": {"role": role, "name": None, "metadata": {}}, "create_time": when,
                   "content": content, "metadata": extra.pop("metadata", {}), "recipient": "all"}
    return node_id, {"id": node_id, "message": message, "parent": parent, "children": children}


def conversation() -> dict:
    """An edited prompt: "q1" was rewritten as "q2"; the user last saw the q2 branch."""
    t = 1700000000.0
    mapping = dict([
        node("root", None, ["sys"]),
        node("sys", "root", ["ctx"], "system", [""], metadata={"is_visually_hidden_from_conversation": True}),
        node("ctx", "sys", ["q1", "q2"], "user", content={"content_type": "user_editable_context",
                                                          "user_profile": "I am a cook"}),
        node("q1", "ctx", ["a1"], "user", ["how long to boil an egg?"], t),
        node("a1", "q1", [], "assistant", ["Nine minutes."], t + 5, metadata={"model_slug": "gpt-4"}),
        node("q2", "ctx", ["a2"], "user", ["how long to boil a soft egg?", {"content_type": "image_asset_pointer",
                                                                             "asset_pointer": "file-service://x"}],
             t + 60),
        node("a2", "q2", ["tool"], "assistant", ["Six minutes,\nthen cold water."], t + 65,
             metadata={"model_slug": "gpt-4o"}),
        node("tool", "a2", ["a3"], "tool", ["search results"], t + 66),
        node("a3", "tool", [], "assistant", ["Or seven for jammy."], t + 70, metadata={"model_slug": "gpt-4o"}),
    ])
    return {"title": "Eggs", "create_time": t, "update_time": t + 70, "mapping": mapping, "current_node": "a3",
            "conversation_id": "conv-1", "id": "conv-1", "default_model_slug": "gpt-4o"}


def export(tmp_path: Path, conversations: list[dict], indent: int | None = 2) -> Path:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "conversations.json").write_text(json.dumps(conversations, indent=indent))
    return tmp_path


def test_a_conversation_in_two_exports_is_read_once_in_the_newer(tmp_path: Path) -> None:
    # March's data export and June's unzipped side by side: June's copy of the conversation goes on
    # ("a4"), its messages (the same ids) are read once, in June's file, and March's says so
    march = conversation()
    june = conversation()
    june["mapping"]["a3"]["children"] = ["a4"]
    june["mapping"].update([node("a4", "a3", [], "assistant", ["And salt the water."], 1700000000.0 + 90)])
    june |= {"current_node": "a4", "update_time": 1700000000.0 + 90}
    export(tmp_path / "chatgpt-2023-11", [march])
    export(tmp_path / "chatgpt-2024-06", [june])
    records, problems = load(tmp_path)
    assert {r.file_path for r in records} == {"gpt/chatgpt-2024-06/conversations.json"}
    assert "And salt the water." in records[-1].text
    assert problems == ["gpt/chatgpt-2023-11/conversations.json: collection 'gpt': the same chat as "
                        "'chatgpt-2024-06/conversations.json', exported again: all 3 of its messages are read there"]



def test_two_exports_in_the_data_folder_are_a_warning_saying_how_to_read_each_message_once(tmp_path: Path) -> None:
    # the data folder (and a notes folder) reads each file on its own: both exports are read, so the
    # older says where its windows are read again, as a WhatsApp chat exported twice there does
    from vecbook.sources import load_directory
    export(tmp_path / "chatgpt-2023-11", [conversation()])
    export(tmp_path / "chatgpt-2024-06", [conversation()])
    report = load_directory(tmp_path)
    assert [str(p) for p in report.problems] == [
        "chatgpt-2023-11/conversations.json: the same chat as 'chatgpt-2024-06/conversations.json', exported again "
        "(1 of its 1 conversation windows are there too): this folder reads each file on its own, so their "
        "messages are searched and counted twice; to read each once, move both into a folder of their own and add "
        "it (`vecbook add FOLDER`)"]

# -- the fixture --

def test_the_sample_reads_its_current_branch_as_cited_windows() -> None:
    records, problems = load(SAMPLE)
    assert problems == []
    first = records[0]
    assert first.citation == ("gpt/chatgpt2graph_conversations.json:58-375"
                              "#aaa22f3c-c635-4d92-8b01-5e8c4f5a8a8a")
    assert first.id == "gpt:chatgpt2graph_conversations.json#aaa22f3c-c635-4d92-8b01-5e8c4f5a8a8a"
    assert first.text.startswith("User: given two random independent variables x,y in U(0,1), what is the "
                                 "average distance between them?\nChatGPT: To find the average distance")
    assert first.metadata == {"model": "gpt-4-code-interpreter", "date": "2023-09-21T19:57:53+00:00",
                              "end_date": "2023-09-21T19:58:55+00:00", "participants": ["User", "ChatGPT"],
                              "conversation": "Average Distance in U(0,1)",
                              "thread": "966da5c4-5bb7-4e4d-ab6d-a7316b96266e", "role": ["user", "assistant"],
                              "format": "chatgpt", "message_count": 6}
    # the user's turn is its message object, lines 58-75 of the file
    lines = cited_lines(SAMPLE, first)
    assert lines[0].strip() == '"message": {' and lines[75 - 58].strip() == "},"
    assert first.segments[0][1:] == (58, 75)
    # 45 nodes on the branch: 8 user turns, 12 answers and 11 code cells are read; the root, 2 hidden
    # system nodes and 11 tool outputs are not
    assert sum(r.metadata["message_count"] for r in records) == 31
    assert not any("<<ImageDisplayed>>" in r.text or "Code execution state reset" in r.text for r in records)
    for record in records:
        assert_messages_cited(SAMPLE, record)
    # the night between the two sessions breaks a window (the collection's gap applies)
    assert [r.metadata["date"][:10] for r in records].count("2023-09-22") == 8


def test_the_redacted_template_is_a_warning_naming_file_and_line() -> None:
    records, problems = load(CHATGPT / REDACTED)
    assert records == []
    # one line of JSON: the column and the text from the fault on find the spot
    assert problems == [f"gpt/{REDACTED}:1: collection 'gpt': file skipped: invalid JSON: Expecting value "
                        """(line 1, column 38, at 'EPOCHEPOCH.MILLIS, "upda')"""]
    records, problems = load(CHATGPT)  # the folder: the good file still loads
    assert len(records) == 14 and len(problems) == 1


# -- branches, roles, parts --

def test_the_branch_ending_at_current_node_is_read_and_hidden_turns_are_not(tmp_path: Path) -> None:
    records, problems = load(export(tmp_path, [conversation()]))
    assert problems == []
    (record,) = records
    assert record.text == ("User: how long to boil a soft egg?\n\n[image]\nChatGPT: Six minutes,\nthen cold water.\n"
                           "ChatGPT: Or seven for jammy.")
    assert record.metadata == {"model": "gpt-4o", "date": "2023-11-14T22:14:20+00:00",
                               "end_date": "2023-11-14T22:14:30+00:00", "participants": ["User", "ChatGPT"],
                               "conversation": "Eggs", "thread": "conv-1", "role": ["user", "assistant"],
                               "format": "chatgpt", "message_count": 3}
    assert record.citation.endswith("#q2") and record.id == "gpt:conversations.json#q2"
    assert_messages_cited(tmp_path, record)


def test_without_current_node_the_newest_leaf_s_branch_is_read(tmp_path: Path) -> None:
    item = conversation()
    del item["current_node"]
    item["mapping"]["a1"]["message"]["create_time"] = 1700000100.0  # after a3
    (record,), _ = load(export(tmp_path, [item], indent=None))
    assert record.text == "User: how long to boil an egg?\nChatGPT: Nine minutes."
    assert record.citation == "gpt/conversations.json:1-1#q1"


def test_a_turn_without_a_usable_time_is_read_with_the_conversation_s_time(tmp_path: Path) -> None:
    item = conversation()
    item["mapping"]["q2"]["message"]["create_time"] = 1e30
    item["mapping"]["a2"]["message"]["create_time"] = None
    (record,), problems = load(export(tmp_path, [item]))
    assert problems == [] and record.metadata["date"] == "2023-11-14T22:13:20+00:00"  # create_time of the chat


def test_one_conversation_without_a_mapping_is_a_warning(tmp_path: Path) -> None:
    records, problems = load(export(tmp_path, [{"title": "broken"}, conversation()]))
    assert len(records) == 1
    assert problems == ["gpt/conversations.json:2: collection 'gpt': a conversation without a 'mapping' object; "
                        "skipped"]


@pytest.mark.parametrize("filters, titles", [
    ({"role": "user"}, ["Bread", "Eggs"]),  # a window's role lists its turns' roles: any one matches
    ({"role": "system"}, []), ({"thread": "conv-1"}, ["Eggs"]), ({"conversation": "Bread"}, ["Bread"]),
    ({"participants__contains": "ChatGPT"}, ["Bread", "Eggs"]), ({"date__gte": "2027-01-01"}, ["Bread"]),
])
def test_chatgpt_turns_are_filtered_by_role_thread_and_date(tmp_path: Path, filters: dict,
                                                            titles: list[str]) -> None:
    other = conversation()
    other.update(title="Bread", conversation_id="conv-2", id="conv-2")
    for item in other["mapping"].values():
        if item["message"] and item["message"]["create_time"]:
            item["message"]["create_time"] += 100_000_000  # 2027
    folder = export(tmp_path / "gpt", [conversation(), other])
    (tmp_path / "notes").mkdir()
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "gpt"\npath = "{folder}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    hits = book.search("soft egg", mode="keyword", filters=filters, dedupe=False)  # filters under test, not folding
    assert sorted(h.metadata["conversation"] for h in hits) == titles


# -- detection --

def test_chatgpt_is_detected_from_its_fixtures_and_nothing_else() -> None:
    assert detect_format(collection(CHATGPT)) == "chatgpt"
    assert detect_format(collection(SAMPLE)) == "chatgpt"
    detector = reader("chatgpt")
    for folder in EXPORTS.iterdir():
        if folder.is_dir() and folder.name != "chatgpt":
            assert not detector.detect(Export("x", folder, "x")), folder


def tool_call(node_id: str, parent: str, children: list[str], recipient: str, text: str,
              when: float) -> tuple[str, dict]:
    """The assistant addressing a tool: a ``code`` message whose ``recipient`` is the tool."""
    key, value = node(node_id, parent, children, "assistant", when=when,
                      content={"content_type": "code", "language": "json", "text": text})
    value["message"]["recipient"] = recipient
    return key, value


def test_a_canvas_is_read_as_its_document_and_tool_plumbing_is_not(tmp_path: Path) -> None:
    # ChatGPT writes a canvas as the assistant's call to the canvas tool, its JSON holding the
    # document; edits as replacements. Read raw, "\n\nThe plan" fused words ("nThe"), and
    # web-browsing calls ({"search_query": ...}) were indexed as the assistant's words.
    t = 1700000000.0
    doc = {"name": "Trip plan", "type": "document", "content": "# Lisbon\n\nThe plan: trams on Tuesday."}
    mapping = dict([
        node("root", None, ["q"]),
        node("q", "root", ["web"], "user", ["plan a trip to Lisbon in a canvas"], t),
        tool_call("web", "q", ["canvas"], "web.run", json.dumps({"search_query": [{"q": "lisbon trams"}]}), t + 1),
        tool_call("canvas", "web", ["done"], "canmore.create_textdoc", json.dumps(doc), t + 2),
        node("done", "canvas", ["edit"], "tool", ["Successfully created text document 'Trip plan'"], t + 3),
        tool_call("edit", "done", ["a"], "canmore.update_textdoc", json.dumps(
            {"updates": [{"pattern": "Tuesday", "multiple": False, "replacement": "Wednesday, after the museum"}]}),
            t + 4),
        node("a", "edit", [], "assistant", ["Done: the plan is in the canvas."], t + 5),
    ])
    conv = {"title": "Lisbon", "create_time": t, "update_time": t + 5, "mapping": mapping, "current_node": "a",
            "conversation_id": "c-1", "id": "c-1"}
    records, problems = load(export(tmp_path, [conv]))
    assert problems == []
    assert [r.text for r in records] == [
        "User: plan a trip to Lisbon in a canvas\n"
        "ChatGPT: [canvas: Trip plan]\n# Lisbon\n\nThe plan: trams on Tuesday.\n"
        "ChatGPT: [canvas edit]\nWednesday, after the museum\n"
        "ChatGPT: Done: the plan is in the canvas."]



def test_citation_marks_inside_an_answer_are_not_words(tmp_path: Path) -> None:
    # Answers that searched the web hold citation marks the app draws as links: private-use
    # characters around "cite" and a turn id, or the older 【4†source】.
    t = 1700000000.0
    said = ("Trams run until 23:00 \ue200cite\ue202turn0search1\ue202turn0search4\ue201. "
            "The 28 is the scenic one【4†source】. Visit \ue200entity\ue202[\"place\",\"Alfama\"]\ue201.")
    mapping = dict([node("root", None, ["q"]), node("q", "root", ["a"], "user", ["trams?"], t),
                    node("a", "q", [], "assistant", [said], t + 1)])
    conv = {"title": "Trams", "create_time": t, "mapping": mapping, "current_node": "a", "id": "c-2"}
    records, problems = load(export(tmp_path, [conv]))
    assert problems == []
    assert [r.text for r in records] == [
        "User: trams?\nChatGPT: Trams run until 23:00. The 28 is the scenic one. Visit Alfama."]


def test_a_voice_turn_reads_as_its_transcript_and_names_its_recording_plainly(tmp_path: Path) -> None:
    # A voice chat's turns hold the transcript and a pointer to the recording (and, with the
    # camera on, to the video): "[audio]", not "[audio_asset_pointer]", whose words every voice
    # turn would share.
    t = 1700000000.0
    heard = {"content_type": "audio_transcription", "text": "what's a good pasta for tonight", "direction": "in"}
    recording = {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_1", "format": "wav"}
    camera = {"content_type": "real_time_user_audio_video_asset_pointer", "audio_asset_pointer": recording,
              "video_container_asset_pointer": None, "frames_asset_pointers": []}
    said = {"content_type": "audio_transcription", "text": "Try cacio e pepe.", "direction": "out"}
    mapping = dict([
        node("root", None, ["q"]),
        node("q", "root", ["a"], "user", when=t, content={"content_type": "multimodal_text", "parts": [heard, camera]}),
        node("a", "q", [], "assistant", when=t + 1,
             content={"content_type": "multimodal_text", "parts": [said, recording]}),
    ])
    conv = {"title": "Pasta", "create_time": t, "mapping": mapping, "current_node": "a", "id": "c-3"}
    records, problems = load(export(tmp_path, [conv]))
    assert problems == []
    assert [r.text for r in records] == [
        "User: what's a good pasta for tonight\n\n[video]\nChatGPT: Try cacio e pepe.\n\n[audio]"]


def test_a_file_the_user_gave_is_named_so_the_chat_about_it_is_found(tmp_path: Path) -> None:
    # An uploaded document is listed in the message's metadata, not its parts: named, it finds
    # the conversation about it ("which chat had the lease PDF?"); an image is already [image].
    t = 1700000000.0
    lease = {"id": "file-1", "name": "Mietvertrag Lisboa 2024.pdf", "size": 52011, "mime_type": "application/pdf"}
    photo = {"id": "file-2", "name": "IMG_0412.jpeg", "size": 90000, "mime_type": "image/jpeg"}
    mapping = dict([
        node("root", None, ["q"]),
        node("q", "root", ["f"], "user", ["is the deposit refundable?"], t, metadata={"attachments": [lease]}),
        node("f", "q", ["a"], "user", [""], t + 1, metadata={"attachments": [lease, photo, "odd", {"id": "x"}]}),
        node("a", "f", [], "assistant", ["Yes, within 30 days."], t + 2),
    ])
    conv = {"title": "Lease", "create_time": t, "mapping": mapping, "current_node": "a", "id": "c-4"}
    records, problems = load(export(tmp_path, [conv]))
    assert problems == []
    assert [r.text for r in records] == [
        "User: is the deposit refundable?\n\n[file: Mietvertrag Lisboa 2024.pdf]\n"
        "User: [file: Mietvertrag Lisboa 2024.pdf]\nChatGPT: Yes, within 30 days."]


def test_what_chatgpt_saved_to_memory_is_read(tmp_path: Path) -> None:
    # the memory tool takes plain text, which the app shows as "Memory updated": what it kept
    t = 1700000000.0
    mapping = dict([
        node("root", None, ["q"]),
        node("q", "root", ["m"], "user", ["remember that I'm allergic to peanuts"], t),
        tool_call("m", "q", ["a"], "bio", "Is allergic to peanuts.", t + 1),
        node("a", "m", [], "assistant", ["Noted."], t + 2),
    ])
    conv = {"title": "Allergy", "create_time": t, "mapping": mapping, "current_node": "a", "id": "c-5"}
    records, problems = load(export(tmp_path, [conv]))
    assert problems == []
    assert [r.text for r in records] == [
        "User: remember that I'm allergic to peanuts\nChatGPT: [memory: Is allergic to peanuts.]\nChatGPT: Noted."]


@pytest.mark.parametrize("tool", ["dalle.text2im", "t2uay3k.sj1i4kz", "image_gen.text2im"])
def test_an_image_chatgpt_made_is_read_by_its_prompt(tmp_path: Path, tool: str) -> None:
    # DALL·E's tool, and since 2025 the image generation of GPT-4o and later, whose tool ChatGPT
    # names "t2uay3k.sj1i4kz": the assistant calls it with the prompt as JSON; the image comes back
    # as a tool message, which is not read
    t = 1700000000.0
    mapping = dict([
        node("root", None, ["q"]),
        node("q", "root", ["call"], "user", ["draw a fox in the snow, 浮世絵 style"], t),
        tool_call("call", "q", ["img"], tool,
                  json.dumps({"prompt": "a red fox in deep snow, ukiyo-e woodblock style", "size": "1024x1024",
                              "n": 1}, ensure_ascii=False), t + 1),
        node("img", "call", ["a"], "tool", when=t + 20, content={"content_type": "multimodal_text", "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "sediment://file_1"}]}),
        node("a", "img", [], "assistant", ["Here is your fox."], t + 21),
    ])
    conv = {"title": "Fox", "create_time": t, "mapping": mapping, "current_node": "a", "id": "c-6"}
    records, problems = load(export(tmp_path, [conv]))
    assert problems == []
    assert [r.text for r in records] == [
        "User: draw a fox in the snow, 浮世絵 style\n"
        "ChatGPT: [image: a red fox in deep snow, ukiyo-e woodblock style]\nChatGPT: Here is your fox."]


def test_an_export_in_shards_reads_every_shard(tmp_path: Path) -> None:
    # Since 2026 a large history comes as conversations-000.json, conversations-001.json... beside
    # export_manifest.json, user.json and chat.html, with no conversations.json
    t = 1700000000.0
    for number, said in enumerate(["первый разговор", "second chat"]):
        mapping = dict([node("root", None, ["q"]), node("q", "root", [], "user", [said], t)])
        conv = {"title": said, "create_time": t, "mapping": mapping, "current_node": "q", "id": f"c-{number}"}
        (tmp_path / f"conversations-00{number}.json").write_text(json.dumps([conv]))
    (tmp_path / "export_manifest.json").write_text(json.dumps({"files": ["conversations-000.json"]}))
    (tmp_path / "user.json").write_text(json.dumps({"id": "user-1", "email": "ana@example.com"}))
    (tmp_path / "chat.html").write_text("<html><body>...</body></html>")
    records, problems = load(tmp_path)
    assert problems == []
    assert [(r.citation, r.text) for r in records] == [
        ("gpt/conversations-000.json:1-1#q", "User: первый разговор"), ("gpt/conversations-001.json:1-1#q", "User: second chat")]


@pytest.mark.parametrize("tool", ["python", "python_user_visible"])
def test_the_assistant_s_code_cells_are_read(tmp_path: Path, tool: str) -> None:
    # Code interpreter: "python", and "python_user_visible", the tool for the code whose charts and
    # tables the user is shown; what the code printed comes back as a tool message, not read
    t = 1700000000.0
    code = "import matplotlib.pyplot as plt\nplt.bar(['東京', 'Lisboa'], [14, 3])"
    mapping = dict([
        node("root", None, ["q"]),
        node("q", "root", ["code"], "user", ["chart my trips by city"], t),
        tool_call("code", "q", ["out"], tool, code, t + 1),
        node("out", "code", ["a"], "tool", when=t + 2,
             content={"content_type": "execution_output", "text": "<Figure>"}),
        node("a", "out", [], "assistant", ["Tokyo leads with 14 trips."], t + 3),
    ])
    conv = {"title": "Trips", "create_time": t, "mapping": mapping, "current_node": "a", "id": "c-7"}
    records, problems = load(export(tmp_path, [conv]))
    assert problems == []
    assert [r.text for r in records] == [
        f"User: chart my trips by city\nChatGPT: {code}\nChatGPT: Tokyo leads with 14 trips."]
