"""The search page in a real browser: headless Chromium (Debian's chromium and chromium-driver)
driven by Selenium, against the app served by uvicorn on a thread of this process."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib import parse

import pytest

import vecbook
from conftest import write_served_corpus
from test_server import TOKEN, in_thread

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
# .ci/run installs both and sets this: there a missing browser fails the run instead of skipping.
REQUIRED = os.environ.get("VECBOOK_BROWSER_TESTS") == "required"
if not (CHROMIUM and CHROMEDRIVER):
    if REQUIRED:
        raise RuntimeError("the browser tests need Debian's chromium and chromium-driver: apt-get install -y "
                           "chromium chromium-driver")
    pytest.skip("no chromium/chromedriver (apt-get install chromium chromium-driver)", allow_module_level=True)
try:
    from selenium import webdriver
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError:
    if REQUIRED:
        raise
    pytest.skip("selenium is not installed (pip install -r requirements.txt)", allow_module_level=True)

WAIT_SECONDS = 30.0


def start_chromium(dark: bool = False) -> Any:
    """Headless Chromium on a fresh profile, offline-minded: no background networking, no sync."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="vecbook-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--window-size=1100,900", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
        {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
    driver.profile_folder = profile
    return driver


def stop_chromium(driver: Any) -> None:
    driver.quit()
    shutil.rmtree(driver.profile_folder, ignore_errors=True)


def until(condition: Callable[[], Any], what: str) -> Any:
    """The first truthy value of ``condition()`` within WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            value = condition()
        except Exception:  # the element is not there yet, or went stale while the page redrew
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def page_book(tmp_path_factory: pytest.TempPathFactory, embedder: vecbook.Embedder) -> vecbook.VecBook:
    config = write_served_corpus(tmp_path_factory.mktemp("page"))
    return vecbook.VecBook(config=vecbook.load_config(config), embedder=embedder)


@pytest.fixture(scope="module")
def site(page_book: vecbook.VecBook) -> Iterator[str]:
    with in_thread(page_book) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = start_chromium()
    yield driver
    stop_chromium(driver)


def hits(browser: Any) -> list[Any]:
    return browser.find_elements(By.CSS_SELECTOR, "#hits .hit")


def citations(browser: Any) -> list[str]:
    return [hit.find_element(By.CSS_SELECTOR, ".citation").text for hit in hits(browser)]


def search_for(browser: Any, site: str, text: str) -> None:
    browser.get(site + "/")
    until(lambda: browser.find_elements(By.CSS_SELECTOR, "#sources input"), "the sources list")
    box = browser.find_element(By.ID, "q")
    box.send_keys(text, Keys.ENTER)
    until(lambda: "hit" in browser.find_element(By.ID, "status").text, "hits")


def test_typing_a_query_shows_hits_with_their_citation_score_date_and_marked_words(browser: Any, site: str) -> None:
    search_for(browser, site, "boiler broke")
    first = hits(browser)[0]
    assert first.find_element(By.CSS_SELECTOR, ".citation").text == "journal.txt:1-4"
    assert first.find_element(By.CSS_SELECTOR, ".date").text == "2024-03-14"
    assert first.find_element(By.CSS_SELECTOR, ".source").text == "files"
    assert 0 < float(first.find_element(By.CSS_SELECTOR, ".score").text) <= 1
    marked = [mark.text for mark in first.find_elements(By.TAG_NAME, "mark")]
    assert marked == ["Boiler", "broke"]
    assert browser.current_url == site + "/?q=boiler+broke"


def test_a_hit_opens_in_context_without_leaving_the_page(browser: Any, site: str) -> None:
    search_for(browser, site, "bacalhau lunch")
    page = browser.current_url
    hits(browser)[0].find_element(By.CSS_SELECTOR, "a.open").click()
    dialog = until(lambda: browser.find_element(By.CSS_SELECTOR, "dialog[open]"), "the context dialog")
    until(lambda: dialog.find_elements(By.CSS_SELECTOR, ".entry.this-hit"), "the entries")
    entries = dialog.find_elements(By.CSS_SELECTOR, ".entry")
    mine = dialog.find_element(By.CSS_SELECTOR, ".entry.this-hit")
    assert len(entries) == 3 and mine.get_attribute("aria-current") == "true"  # its neighbours on each side
    assert "this hit" in mine.text and "journal.txt:6-8" in mine.text
    assert "bacalhau" in mine.find_element(By.TAG_NAME, "mark").text
    assert browser.current_url.startswith(page) and "open=journal.txt" in browser.current_url
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    until(lambda: not browser.find_elements(By.CSS_SELECTOR, "dialog[open]"), "the dialog to close")
    assert browser.current_url == page


def test_filters_by_source_and_date(browser: Any, site: str) -> None:
    search_for(browser, site, "birthday")
    assert {"files", "family-chat"} <= {hit.find_element(By.CSS_SELECTOR, ".source").text for hit in hits(browser)}
    browser.find_element(By.CSS_SELECTOR, "#sources input[value='family-chat']").click()
    browser.execute_script("document.getElementById('until').value = '2024-03-01'")
    browser.find_element(By.ID, "q").send_keys(Keys.ENTER)
    until(lambda: "until=2024-03-01" in browser.current_url, "the address to carry the filters")
    until(lambda: hits(browser) and all(h.find_element(By.CSS_SELECTOR, ".source").text == "family-chat"
                                        for h in hits(browser)), "family-chat hits only")
    dates = [hit.find_element(By.CSS_SELECTOR, ".date").text for hit in hits(browser)]
    assert dates and all("2024-02-14" <= date[:10] <= "2024-03-01" for date in dates)
    assert "sources=family-chat" in browser.current_url


def test_filters_by_participant(browser: Any, site: str) -> None:
    search_for(browser, site, "birthday")
    people = browser.find_element(By.ID, "participants")
    people.send_keys("Priya", Keys.ENTER)
    until(lambda: "participants=Priya" in browser.current_url, "the address to carry the participant")
    until(lambda: hits(browser) and all("Priya" in h.find_element(By.CSS_SELECTOR, ".people").text
                                        for h in hits(browser)), "conversations with Priya only")
    assert browser.find_elements(By.CSS_SELECTOR, "#people option[value='Priya']")  # offered from `sources`


def test_a_bookmarked_address_runs_the_same_search(browser: Any, site: str) -> None:
    # (utm_source: a parameter a link's sender adds, which the search does not take)
    query = parse.urlencode([("q", "lunch"), ("mode", "keyword"), ("sources", "files"), ("since", "2024-03-15"),
                             ("utm_source", "mail")])
    browser.get(f"{site}/?{query}")
    until(lambda: hits(browser), "hits on load")
    assert citations(browser) == ["journal.txt:6-8"]
    assert not browser.find_element(By.ID, "extra").is_displayed()
    assert browser.find_element(By.ID, "q").get_attribute("value") == "lunch"
    assert browser.find_element(By.ID, "mode").get_attribute("value") == "keyword"
    assert browser.find_element(By.CSS_SELECTOR, "#sources input[value='files']").is_selected()
    assert browser.find_element(By.ID, "since").get_attribute("value") == "2024-03-15"


def test_an_address_whose_opened_hit_is_not_among_its_hits_says_so_and_opens_it_by_id(
        browser: Any, site: str) -> None:
    """``&open=ID`` names a record; the address's search may no longer rank it among its hits
    (the index changed since): the page says so and opens the record by its id all the same."""
    import json
    from urllib import request

    with request.urlopen(site + "/search.json?q=boiler+broke&max_results=1") as answer:
        boiler = json.loads(answer.read())[0]
    browser.get(f"{site}/?{parse.urlencode([('q', 'lunch'), ('mode', 'keyword'), ('open', boiler['id'])])}")
    until(lambda: hits(browser), "hits on load")
    assert "journal.txt:1-4" not in citations(browser)
    status = browser.find_element(By.ID, "status")
    until(lambda: "opened from the index by its id" in status.text, "the note")
    assert f"the hit this address opens ({boiler['id']}) is not among these hits" in status.text
    mine = until(lambda: browser.find_element(By.CSS_SELECTOR, "dialog[open] .entry.this-hit"), "the record")
    assert "journal.txt:1-4" in mine.text
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)

    browser.get(f"{site}/?q=lunch&mode=keyword&open=gone.txt:1-2")
    until(lambda: "no longer holds it" in status_text(browser), "the record said gone")
    assert not browser.find_elements(By.CSS_SELECTOR, "dialog[open]") and hits(browser)


def status_text(browser: Any) -> str:
    return str(browser.find_element(By.ID, "status").text)


def test_a_search_without_hits_says_what_left_it_empty(browser: Any, site: str) -> None:
    browser.get(f"{site}/?q=lunch&mode=keyword&since=2099")
    until(lambda: "no results" in status_text(browser), "no hits")
    assert status_text(browser).startswith("no results: since 2099 leaves no record; the records are dated ")


def paste(browser: Any, box: str, text: str) -> None:
    """``text`` put into the field ``box`` as a paste puts it (the field's own limits apply)."""
    browser.find_element(By.ID, box).clear()
    browser.find_element(By.ID, box).click()
    browser.execute_cdp_cmd("Input.insertText", {"text": text})


def test_a_pasted_query_is_never_cut_and_one_too_long_is_refused_as_the_server_refuses_it(
        browser: Any, site: str) -> None:
    """The box held at most 10,000 UTF-16 units: a longer paste was cut without a word (an emoji
    query at 5,000 characters), where the CLI and MCP count characters and refuse one past 10,000."""
    browser.get(site + "/")
    until(lambda: browser.find_elements(By.CSS_SELECTOR, "#sources input"), "the sources list")
    emoji = "boiler " + "🔥" * 5_000  # 5,007 characters, 10,007 UTF-16 units
    paste(browser, "q", emoji)
    assert browser.execute_script("return Array.from(document.getElementById('q').value).length") == 5_007
    paste(browser, "q", "boiler " + "x" * 9_994)  # 10,001 characters
    browser.find_element(By.ID, "q").send_keys(Keys.ENTER)
    until(lambda: "limit" in status_text(browser), "the refusal")
    assert status_text(browser) == "query is 10,001 characters long; the limit is 10,000" and not hits(browser)
    assert browser.find_element(By.ID, "status").get_attribute("class") == "problem"


def test_record_text_holding_markup_is_shown_never_run(browser: Any, site: str) -> None:
    search_for(browser, site, "boiler manual pasted")
    hit = next(h for h in hits(browser) if "hostile.txt" in h.text)
    snippet = hit.find_element(By.CSS_SELECTOR, ".snippet").text
    assert "<script>window.vecbookPwned = 1</script>" in snippet and '<img src=x onerror="window.vecbookPwned = 2">' in snippet
    assert not browser.find_elements(By.CSS_SELECTOR, "#hits script, #hits img")
    hit.find_element(By.CSS_SELECTOR, "a.open").click()
    mine = until(lambda: browser.find_element(By.CSS_SELECTOR, "dialog[open] .entry.this-hit"), "the record")
    assert "<script>window.vecbookPwned = 1</script>" in mine.text
    assert browser.execute_script("return window.vecbookPwned") is None


def test_text_in_any_script_and_direction_is_shown_whole(browser: Any, site: str) -> None:
    search_for(browser, site, "ボイラー")
    hit = next(h for h in hits(browser) if "world.txt" in h.text)
    assert "東京で新しいボイラーを買った 🔥 — בוילר חדש במטבח" in hit.text
    assert [mark.text for mark in hit.find_elements(By.TAG_NAME, "mark")] == ["ボイラー"]


def test_a_query_or_name_typed_right_to_left_reads_right_to_left_in_its_box(browser: Any, site: str) -> None:
    # a Hebrew or Arabic query mixed with digits and Latin ("רופא שיניים 10:30 Zoom") is laid out
    # in the box as in the hits below, not as a left-to-right line
    search_for(browser, site, "רופא שיניים 10:30 Zoom")
    for box, typed in (("q", None), ("participants", "دانة")):
        if typed:
            browser.find_element(By.ID, box).send_keys(typed)
        assert browser.execute_script(f"return document.getElementById('{box}').matches(':dir(rtl)')"), box
    browser.find_element(By.ID, "q").clear()
    browser.find_element(By.ID, "q").send_keys("boiler")
    assert browser.execute_script("return document.getElementById('q').matches(':dir(ltr)')")


def test_slash_focuses_the_search_box(browser: Any, site: str) -> None:
    search_for(browser, site, "train")
    browser.execute_script("document.activeElement.blur()")
    assert browser.switch_to.active_element.get_attribute("id") != "q"
    ActionChains(browser).send_keys("/").perform()  # typed with nothing focused, as a person would
    assert browser.switch_to.active_element.get_attribute("id") == "q"
    assert browser.find_element(By.ID, "q").get_attribute("value") == "train"  # the key is not typed into it


def give_the_token(browser: Any, address: str) -> None:
    """Open ``address`` of a server with a token and give it in the page's form, as a person would."""
    browser.get(address)
    field = until(lambda: browser.find_element(By.ID, "token"), "the token field")
    until(lambda: field.is_displayed(), "the token form")
    field.send_keys(TOKEN, Keys.ENTER)
    until(lambda: hits(browser), "hits once the token is given")


def test_the_page_asks_for_the_token_once_and_keeps_it(page_book: vecbook.VecBook, browser: Any) -> None:
    with in_thread(page_book, token=TOKEN) as url:
        give_the_token(browser, f"{url}/?q=boiler")
        browser.get(f"{url}/?q=lunch")  # the same session: not asked again
        until(lambda: hits(browser), "hits without asking again")
        assert not browser.find_element(By.ID, "token").is_displayed()
        browser.execute_script("sessionStorage.clear()")


def test_the_json_links_open_in_a_tab_of_their_own_once_the_page_has_the_token(
        page_book: vecbook.VecBook, browser: Any) -> None:
    """A "JSON" link opened in a new tab sends none of the page's headers: the page hands the
    token it was given to the browser, which sends it there, so the tab shows the hits, not 401."""
    import json

    with in_thread(page_book, token=TOKEN) as url:
        give_the_token(browser, f"{url}/?q=boiler")
        address = browser.find_element(By.LINK_TEXT, "JSON").get_attribute("href")
        assert address == f"{url}/search.json?q=boiler"  # nothing secret in the link
        page = browser.current_window_handle
        browser.switch_to.new_window("tab")
        try:
            browser.get(address)
            shown = until(lambda: browser.find_element(By.TAG_NAME, "pre").text, "the JSON in the tab")
            assert json.loads(shown)[0]["citation"] == "journal.txt:1-4"
        finally:
            browser.close()
            browser.switch_to.window(page)
            browser.execute_script("sessionStorage.clear()")


def test_a_hit_opened_in_a_new_tab_does_not_ask_for_the_token_again(page_book: vecbook.VecBook,
                                                                     browser: Any) -> None:
    """The page lets a Ctrl-click open a hit in a tab of its own, whose session storage starts
    empty: the browser, handed the token, sends it there, so that tab shows the hit at once."""
    with in_thread(page_book, token=TOKEN) as url:
        give_the_token(browser, f"{url}/?q=boiler")
        page = browser.current_window_handle
        link = hits(browser)[0].find_element(By.CSS_SELECTOR, "a.open")
        ActionChains(browser).key_down(Keys.CONTROL).click(link).key_up(Keys.CONTROL).perform()
        until(lambda: len(browser.window_handles) == 2, "the new tab")
        browser.switch_to.window(next(h for h in browser.window_handles if h != page))
        try:
            mine = until(lambda: browser.find_element(By.CSS_SELECTOR, "dialog[open] .entry.this-hit"), "the hit")
            assert "journal.txt:1-4" in mine.text
            assert not browser.find_element(By.ID, "token").is_displayed()
        finally:
            browser.close()
            browser.switch_to.window(page)
            browser.execute_script("sessionStorage.clear()")


def test_a_server_that_stopped_is_said_so_and_the_hits_stay(page_book: vecbook.VecBook, browser: Any) -> None:
    with in_thread(page_book) as url:
        search_for(browser, url, "boiler")
        shown = citations(browser)
    browser.find_element(By.ID, "q").send_keys(" broke", Keys.ENTER)  # the server has stopped
    status = browser.find_element(By.ID, "status")
    until(lambda: "does not answer" in status.text, "the stopped server named")
    assert status.text == "the VecBook server does not answer: is `vecbook serve --http` still running?"
    assert citations(browser) == shown  # the last hits are still there to read


def test_a_narrow_window_shows_the_whole_search_box_without_scrolling_sideways(browser: Any, site: str) -> None:
    browser.set_window_size(360, 800)  # a phone, or a window docked beside an editor
    try:
        search_for(browser, site, "boiler")
        width = browser.execute_script("return document.documentElement.clientWidth")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
        button = browser.find_element(By.CSS_SELECTOR, "#search button[type=submit]")
        assert button.rect["x"] + button.rect["width"] <= width
    finally:
        browser.set_window_size(1100, 900)


def test_a_page_opened_while_the_index_is_still_read_gets_its_filters_once_it_is(
        page_book: vecbook.VecBook, browser: Any, site: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first start over many files reads for a while, and ``sources`` answers 400 ("still
    loading") meanwhile: the page says so, then asks again instead of staying without filters."""
    answered = page_book.sources
    calls: list[int] = []

    def still_loading() -> list[dict[str, Any]]:
        calls.append(1)
        if len(calls) == 1:
            raise vecbook.VecBookError("the index is still loading; try again in a few seconds")
        return answered()

    monkeypatch.setattr(page_book, "sources", still_loading)
    browser.get(site + "/?q=boiler&sources=files")
    status = browser.find_element(By.ID, "status")
    until(lambda: "still loading" in status.text, "the wait said")
    until(lambda: hits(browser), "the hits once the index is read")
    assert browser.find_element(By.CSS_SELECTOR, "#sources input[value='files']").is_selected()
    assert len(browser.find_elements(By.CSS_SELECTOR, "#sources input[value='files']")) == 1
    assert "problem" not in (status.get_attribute("class") or "")


@pytest.mark.parametrize("since", ["3650d", "2024-03-15T08:00"])
def test_a_span_or_time_in_the_address_stays_in_the_form_for_the_next_search(browser: Any, site: str,
                                                                             since: str) -> None:
    """``since`` takes a span back from now or a date-time as well as a date: a date field cannot
    hold those, and the next search made from the form would drop the filter without a word."""
    browser.get(f"{site}/?{parse.urlencode([('q', 'lunch'), ('since', since)])}")
    until(lambda: hits(browser), "hits on load")
    assert browser.find_element(By.ID, "since").get_attribute("value") == since
    box = browser.find_element(By.ID, "q")
    box.send_keys(" bacalhau", Keys.ENTER)
    until(lambda: "bacalhau" in browser.current_url, "the next search")
    assert parse.parse_qs(parse.urlparse(browser.current_url).query)["since"] == [since]


def test_slash_focuses_the_search_box_from_a_ticked_source_box(browser: Any, site: str) -> None:
    """A checkbox takes no text: ``/`` there, just after ticking a source, goes to the search box."""
    search_for(browser, site, "train")
    browser.find_element(By.CSS_SELECTOR, "#sources input[value='files']").click()
    assert browser.switch_to.active_element.get_attribute("type") == "checkbox"
    ActionChains(browser).send_keys("/").perform()
    assert browser.switch_to.active_element.get_attribute("id") == "q"
    assert browser.find_element(By.ID, "q").get_attribute("value") == "train"


def test_hits_answered_by_keywords_while_the_vectors_are_computed_say_so(
        page_book: vecbook.VecBook, browser: Any, site: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """During a first index a hybrid search is answered from the keyword index (as MCP's note
    tells an assistant): the page says so, and /search.json in a header, instead of passing the
    keyword hits off as hybrid ones."""
    from urllib import request

    searched = page_book.search

    def while_embedding(*args: Any, **kwargs: Any) -> vecbook.Results:
        found = searched(*args, **{**kwargs, "mode": "keyword"})
        return vecbook.Results(found, found.left_out, "keyword", found.analysis)

    monkeypatch.setattr(page_book, "search", while_embedding)
    search_for(browser, site, "boiler")
    status = browser.find_element(By.ID, "status").text
    assert "answered by keywords" in status and "still computing vectors" in status
    with request.urlopen(site + "/search.json?q=boiler") as answer:
        assert answer.headers["VecBook-Answered-As"] == "keyword"
    with request.urlopen(site + "/search.json?q=boiler&mode=keyword") as answer:
        assert answer.headers["VecBook-Answered-As"] is None  # asked for keywords: nothing to say


def test_a_participant_whose_name_holds_a_comma_stays_one_name(
        page_book: vecbook.VecBook, browser: Any, site: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mail names people as "Doe, Jane" <jane@example.org>: picked from the list offered, that
    name is one participant, not "Doe" and "Jane" (the field separates names by commas)."""
    listed = page_book.sources

    def with_mail_names() -> list[dict[str, Any]]:
        found = listed()
        return [{**found[0], "participants": [*(found[0]["participants"] or []), "Doe, Jane"]}, *found[1:]]

    monkeypatch.setattr(page_book, "sources", with_mail_names)
    search_for(browser, site, "birthday")
    until(lambda: browser.find_elements(By.CSS_SELECTOR, "#people option[value='Doe, Jane']"), "the name offered")
    browser.find_element(By.ID, "participants").send_keys("Doe, Jane, Priya", Keys.ENTER)
    until(lambda: "participants=" in browser.current_url, "the address to carry the participants")
    assert parse.parse_qs(parse.urlparse(browser.current_url).query)["participants"] == ["Doe, Jane", "Priya"]
    browser.get(browser.current_url)  # the same address again: the form reads it back the same way
    until(lambda: browser.find_element(By.ID, "participants").get_attribute("value") == "Doe, Jane, Priya", "the form")
    browser.find_element(By.ID, "q").send_keys(Keys.ENTER)
    until(lambda: "problem" in (browser.find_element(By.ID, "status").get_attribute("class") or "")
          or hits(browser), "the search")
    assert parse.parse_qs(parse.urlparse(browser.current_url).query)["participants"] == ["Doe, Jane", "Priya"]


def test_participants_named_in_right_to_left_scripts_are_listed_in_their_order(
        page_book: vecbook.VecBook, browser: Any, site: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chat with Arabic and Hebrew names: the list reads in the chat's order, each name whole
    and its comma after it, rather than the bidirectional algorithm running the right-to-left
    names together into one run shown in reverse order."""
    import dataclasses

    searched = page_book.search
    names = ["دانة", "יוסי כהן", "Zoë 🌸"]

    def with_names(*args: Any, **kwargs: Any) -> vecbook.Results:
        found = searched(*args, **kwargs)
        return vecbook.Results([dataclasses.replace(hit, metadata={**hit.metadata, "participants": names})
                                for hit in found], found.left_out, found.mode, found.analysis)

    monkeypatch.setattr(page_book, "search", with_names)
    search_for(browser, site, "birthday")
    people = hits(browser)[0].find_element(By.CSS_SELECTOR, ".people")
    lefts = browser.execute_script("""
        const span = arguments[0], text = span.textContent;
        return arguments[1].map((name) => {
          const walker = document.createTreeWalker(span, NodeFilter.SHOW_TEXT);
          for (let node; (node = walker.nextNode());) {
            const at = node.data.indexOf(name);
            if (at < 0) continue;
            const range = document.createRange();
            range.setStart(node, at);
            range.setEnd(node, at + name.length);
            return Math.min(...[...range.getClientRects()].map((r) => r.left));
          }
          return null;
        });""", people, names)
    assert None not in lefts and lefts == sorted(lefts), lefts  # first name leftmost, on a left-to-right page


@pytest.mark.parametrize("since", ["2024-02-30", "2024-13-45"])
def test_a_date_that_is_no_date_in_the_address_stays_in_the_form_beside_its_error(browser: Any, site: str,
                                                                                 since: str) -> None:
    """A date field cannot hold 30 February: it blanked it, so the page said the date was wrong
    while the form showed none, and the next search from the form dropped it without a word."""
    browser.get(f"{site}/?{parse.urlencode([('q', 'lunch'), ('since', since)])}")
    status = browser.find_element(By.ID, "status")
    until(lambda: "problem" in (status.get_attribute("class") or ""), "the error")
    assert f"got '{since}'" in status.text
    assert browser.find_element(By.ID, "since").get_attribute("value") == since


def test_a_long_record_opens_scrolled_to_the_hits_words_not_to_its_middle(
        page_book: vecbook.VecBook, browser: Any, site: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hit in a long record (a long note or mail) opens with its marked snippet in view: the
    whole record centred put the middle of the record on screen, hundreds of lines from the match."""
    from types import SimpleNamespace

    got = page_book.get

    def long_record(ref: str, context: int = 0) -> Any:
        found = got(ref, context).to_dict()
        filler = "\n".join(f"Line {n}: more about the plumbing, nothing to do with the search." for n in range(400))
        found["record"] = {**found["record"], "text": found["record"]["text"] + "\n" + filler}
        return SimpleNamespace(to_dict=lambda: found)

    monkeypatch.setattr(page_book, "get", long_record)
    search_for(browser, site, "boiler broke")
    hits(browser)[0].find_element(By.CSS_SELECTOR, "a.open").click()
    mark = until(lambda: browser.find_element(By.CSS_SELECTOR, "dialog[open] .entry.this-hit mark"), "the record")
    time.sleep(0.3)  # the scroll
    assert "Boiler broke overnight" in mark.text
    assert browser.execute_script("""
        const mark = arguments[0].getBoundingClientRect(), box = document.querySelector("dialog").getBoundingClientRect();
        return mark.top >= box.top && mark.bottom <= box.bottom;""", mark)
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)


def test_a_slow_record_closed_unread_never_fills_the_next_hit_opened(
        page_book: vecbook.VecBook, browser: Any, site: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hit opened, then closed with Escape before its record came (a 5 MB note takes seconds),
    and another hit opened: the first record's late answer does not replace the second's."""
    fetched = page_book.get

    def slow_for_the_boiler(ref: str, context: int = 0) -> Any:
        if "journal.txt" in ref:
            time.sleep(1.5)
        return fetched(ref, context)

    monkeypatch.setattr(page_book, "get", slow_for_the_boiler)
    search_for(browser, site, "boiler")
    first = next(h for h in hits(browser) if "journal.txt" in h.text)
    other = next(h for h in hits(browser) if "hostile.txt" in h.text)
    first.find_element(By.CSS_SELECTOR, "a.open").click()
    until(lambda: browser.find_element(By.CSS_SELECTOR, "dialog[open]"), "the dialog")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    until(lambda: not browser.find_elements(By.CSS_SELECTOR, "dialog[open]"), "the dialog to close")
    other.find_element(By.CSS_SELECTOR, "a.open").click()
    mine = until(lambda: browser.find_element(By.CSS_SELECTOR, "dialog[open] .entry.this-hit"), "the second hit")
    assert "hostile.txt" in mine.text
    time.sleep(2.0)  # the first record's answer has come meanwhile
    assert "hostile.txt" in browser.find_element(By.ID, "context-title").text
    shown = browser.find_element(By.ID, "entries").text
    assert "hostile.txt" in shown and "journal.txt" not in shown, shown
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)


def test_dates_beyond_the_records_dates_still_search(browser: Any, site: str) -> None:
    """The date fields offer the records' span, but a date outside it is a search the server
    answers (a bookmarked 'since 2020', a note written today after the page loaded): the form
    sends it rather than stop at the browser's 'Value must be ... or later'."""
    browser.get(f"{site}/?q=boiler&since=2020-01-01")
    until(lambda: hits(browser), "hits on load")
    assert browser.find_element(By.ID, "since").get_attribute("min") > "2020-01-01"  # out of the span offered
    browser.find_element(By.ID, "q").send_keys(" broke", Keys.ENTER)
    until(lambda: "q=boiler+broke" in browser.current_url, "the search to run")
    assert "since=2020-01-01" in browser.current_url
    browser.execute_script("document.getElementById('until').value = '2099-12-31'")
    browser.find_element(By.ID, "q").send_keys(Keys.ENTER)
    until(lambda: "until=2099-12-31" in browser.current_url, "the search to run with a date after every record")
    until(lambda: hits(browser), "its hits")


def test_search_settings_the_form_has_no_field_for_are_shown_and_kept_for_the_next_search(
        browser: Any, site: str) -> None:
    """An address may carry what the command line takes and the form has no field for (a
    metadata filter as --filter, max_results as -n): its hits were filtered with no sign of it
    on the page, and the next search from the form dropped the filter without a word."""
    filters = '{"tags__contains": "home"}'
    browser.get(f"{site}/?{parse.urlencode([('q', 'boiler'), ('mode', 'keyword'), ('filters', filters)])}")
    until(lambda: hits(browser), "hits on load")
    assert citations(browser) == ["journal.txt:1-4"]  # hostile.txt has no tag 'home'
    shown = browser.find_element(By.ID, "extra")
    assert shown.is_displayed() and f"filters: {filters}" in shown.text
    browser.find_element(By.ID, "q").send_keys(" manual", Keys.ENTER)
    until(lambda: "manual" in browser.current_url, "the next search")
    assert parse.parse_qs(parse.urlparse(browser.current_url).query)["filters"] == [filters]
    until(lambda: citations(browser) == ["journal.txt:1-4"], "the filter kept")
    shown.find_element(By.TAG_NAME, "button").click()  # "clear": the next search goes without it
    assert not shown.is_displayed()
    browser.find_element(By.ID, "q").send_keys(Keys.ENTER)
    until(lambda: "hostile.txt:1-3" in citations(browser), "the hits without the filter")
    assert "filters" not in browser.current_url


def test_the_page_sends_only_what_the_search_takes() -> None:
    # the page's list of /search.json's parameters is the server's own: a parameter left out would
    # be dropped from a bookmarked address, one too many sent on and refused as unknown
    import re

    from vecbook.remote import SEARCH_PARAMS

    script = (Path(vecbook.__file__).parent / "page" / "page.js").read_text(encoding="utf-8")
    listed = re.search(r"const SEARCH_TAKES = \[(.*?)\];", script, re.S)
    assert listed and re.findall(r'"(\w+)"', listed.group(1)) == list(SEARCH_PARAMS)
