"""The web console end to end: a real headless Chromium against a real server and a scripted
model. One browser serves the whole module; every test saves a screenshot in its tmp dir."""

import re
import sqlite3
import time

import pytest

from tests.core.console.harness import (
    browser_to_test,
    chromium,
    collapsed,
    full_page_screenshot,
    serve,
    wait_for,
)
from tests.processes import descendants, wait_gone

missing = browser_to_test()
pytestmark = pytest.mark.skipif(
    missing is not None, reason=f"no browser for the console: {missing}"
)

if missing is None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

REPLY = "Here is **the plan**:\n\n- read `app.py`\n- fix the greeting\n\nAll words stream in."
TODOS = [
    {"id": "1", "content": "Read app.py", "status": "completed"},
    {"id": "2", "content": "Fix the greeting", "status": "in_progress"},
    {"id": "3", "content": "Run the tests", "status": "pending"},
]
ASK = {
    "tool_calls": [
        {"name": "clarify", "arguments": {"question": "Which colour?", "choices": ["red", "blue"]}}
    ]
}
SCRIPTS = {
    "hello": [{"text": REPLY}],
    "plan": [
        {"tool_calls": [{"name": "todo", "arguments": {"todos": TODOS}}]},
        {
            "tool_calls": [
                {
                    "name": "patch",
                    "arguments": {
                        "path": "app.py",
                        "old_string": "return 'hi'",
                        "new_string": "return 'hello'",
                    },
                }
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "patch",
                    "arguments": {"path": "app.py", "old_string": "absent", "new_string": "x"},
                },
                {
                    "name": "write_file",
                    "arguments": {"path": "notes.md", "content": "# Notes\nok\n"},
                },
            ]
        },
        {"text": "Patched."},
    ],
    "blue": [ASK, {"text": "Blue it is.", "expect": {"last_message_contains": "blue"}}],
    "red": [ASK, {"text": "Red it is.", "expect": {"last_message_contains": "red"}}],
    "xss": [
        {"text": "Look: <img src=x onerror=alert(1)> and <b>bold?</b> [go](javascript:alert(2))"}
    ],
    "late": [ASK, {"text": "I chose myself.", "expect": {"last_message_contains": "in time"}}],
    "slow": [{"text": "Thinking hard about it", "delay": 30}],
}
TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """The module's browser. Leaving, it checks that quitting it left none of the processes it
    ran: chromedriver's quit left the headless shell running, one more after every run of the
    suite (38 of them held 3.7 GB and, idle, a tenth of a core; the kernel's memory monitor
    took another sixth)."""
    with chromium(tmp_path_factory.mktemp("profile")) as driver:
        yield driver
        running = descendants(driver.service.process.pid)
    assert len(running) >= 3, f"the browser and its helpers were not running: {running}"
    assert wait_gone(running, 5) == [], "still running after the quit"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("server")
    # edits run unasked; questions wait 20 s (the countdown in seconds; the default: minutes)
    running = serve(SCRIPTS, root, pause=0.03, permissions="auto", clarify_timeout=20)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def token_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("token-server")
    running = serve(SCRIPTS, root, token=TOKEN)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def hurried_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("hurried-server")
    running = serve(SCRIPTS, root, clarify_timeout=1.5)
    yield running
    running.stop()


@pytest.fixture
def page(browser, server, tmp_path):
    """The console of ``server``, on a new session; a screenshot is saved afterwards."""
    (server.hub.config.workspace / "app.py").write_text("def greet():\n    return 'hi'\n")
    browser.get(server.url)
    wait_for(browser, lambda d: d.find_element(By.ID, "input").is_enabled())
    yield browser
    full_page_screenshot(browser, tmp_path / "console.png")


def say(driver, text):
    box = driver.find_element(By.ID, "input")
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


def messages(driver):
    return driver.find_element(By.ID, "messages").text


def rgb(css_colour):
    return [int(part) for part in re.findall(r"\d+", css_colour)[:3]]


def finished(driver):
    return driver.execute_script("return document.body.dataset.running") == "no"


SHOWN_WHILE_STREAMING = """
window.shownWhileStreaming = [];
new MutationObserver(() => {
  for (const reply of document.querySelectorAll(".msg-assistant.streaming")) {
    window.shownWhileStreaming.push(reply.innerText);
  }
}).observe(document.body, { subtree: true, childList: true, characterData: true });
"""


def last_reply(driver):
    return driver.find_elements(By.CSS_SELECTOR, ".msg-assistant")[-1]


def test_reply_streams_in_and_renders_markdown_as_elements(page):
    box = page.find_element(By.ID, "input")
    box.send_keys("hello there")
    box.send_keys(Keys.SHIFT, Keys.ENTER)
    box.send_keys("second line")
    assert box.get_attribute("value") == "hello there\nsecond line"
    # what the streaming reply showed, each time it changed: polling from here could miss
    # every partial state on a busy machine, the page itself does not
    page.execute_script(SHOWN_WHILE_STREAMING)
    box.send_keys(Keys.ENTER)
    assert box.get_attribute("value") == ""
    user = wait_for(page, lambda d: d.find_elements(By.CSS_SELECTOR, ".msg-user"))
    assert user[-1].text == "hello there\nsecond line"
    wait_for(page, lambda d: "All words stream in." in messages(d))
    shown = page.execute_script("return window.shownWhileStreaming")
    assert any(0 < len(text) < len(collapsed(REPLY)) - 10 for text in shown), shown
    # the reply is rendered once more when its stream ends: read it after that
    wait_for(page, lambda d: "streaming" not in last_reply(d).get_attribute("class"))
    reply = page.find_elements(By.CSS_SELECTOR, ".msg-assistant")[-1]
    assert reply.find_element(By.TAG_NAME, "strong").text == "the plan"
    assert [li.text for li in reply.find_elements(By.TAG_NAME, "li")] == [
        "read app.py",
        "fix the greeting",
    ]
    assert reply.find_element(By.CSS_SELECTOR, "li code").text == "app.py"
    assert "streaming" not in reply.get_attribute("class")
    wait_for(page, finished)


def test_plan_run_shows_the_todo_panel_and_a_coloured_diff(page, server):
    say(page, "plan the fix")
    wait_for(page, lambda d: "Patched." in messages(d))
    rows = page.find_elements(By.CSS_SELECTOR, "#todos .todo")
    assert [
        (r.get_attribute("data-status"), r.find_element(By.CLASS_NAME, "todo-text").text)
        for r in rows
    ] == [(t["status"], t["content"]) for t in TODOS]
    assert page.find_element(By.ID, "todo-counts").text == "1/3 done"
    card, refused = page.find_elements(By.CSS_SELECTOR, ".tool-card[data-tool='patch']")
    assert card.get_attribute("open") == "true"
    assert card.get_attribute("data-state") == "done"
    added = card.find_element(By.CSS_SELECTOR, ".diff-add")
    removed = card.find_element(By.CSS_SELECTOR, ".diff-del")
    assert added.text == "+    return 'hello'"
    assert removed.text == "-    return 'hi'"
    green = rgb(added.value_of_css_property("background-color"))
    red = rgb(removed.value_of_css_property("background-color"))
    assert green[1] > green[0]  # added lines are green...
    assert red[0] > red[1]  # ...and removed ones red
    assert (server.hub.config.workspace / "app.py").read_text().endswith("return 'hello'\n")
    assert refused.get_attribute("data-state") == "error"
    assert refused.get_attribute("open") == "true"
    assert refused.find_element(By.CLASS_NAME, "tool-state").text == "error"
    assert "old_string was not found" in refused.find_element(By.CLASS_NAME, "tool-result").text
    assert refused.find_elements(By.CLASS_NAME, "diff") == []
    written = page.find_element(By.CSS_SELECTOR, ".tool-card[data-tool='write_file']")
    lines = [e.text for e in written.find_elements(By.CSS_SELECTOR, ".diff-add")]
    assert lines == ["+# Notes", "+ok"]


def test_question_answered_with_a_choice_button_finishes_the_run_with_it(page):
    asked = time.monotonic()
    say(page, "blue please")
    prompt = wait_for(page, lambda d: d.find_element(By.CSS_SELECTOR, ".clarify"))
    assert prompt.find_element(By.CLASS_NAME, "clarify-question").text == "Which colour?"
    choices = prompt.find_elements(By.CSS_SELECTOR, "button.choice")
    assert [c.text for c in choices] == ["red", "blue"]
    assert prompt.find_element(By.CSS_SELECTOR, ".clarify-free input").is_enabled()
    countdown = prompt.find_element(By.CLASS_NAME, "clarify-countdown").text
    assert countdown.endswith("s to answer")
    # the 20 s from when the page saw the question, less what has gone by since, rounded up
    assert 20 - (time.monotonic() - asked) <= int(countdown.split()[0]) <= 20
    choices[1].click()
    wait_for(page, lambda d: "Blue it is." in messages(d))
    assert prompt.find_element(By.CLASS_NAME, "clarify-sent").text == "You answered: blue"
    wait_for(
        page,
        lambda d: prompt.find_element(By.CLASS_NAME, "clarify-outcome").text == "Outcome: answered",
    )
    assert prompt.get_attribute("data-state") == "answered"
    assert not prompt.find_element(By.CSS_SELECTOR, "button.choice").is_displayed()


def test_unanswered_question_counts_down_and_shows_that_it_timed_out(
    browser, hurried_server, tmp_path
):
    browser.get(hurried_server.url)
    wait_for(browser, lambda d: d.find_element(By.ID, "input").is_enabled())
    asked = time.monotonic()
    say(browser, "late answer")
    prompt = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".clarify"))
    countdown = prompt.find_element(By.CLASS_NAME, "clarify-countdown")
    shown = countdown.text
    left = 0 if shown == "time is up" else int(shown.removesuffix(" s to answer"))
    assert 1.5 - (time.monotonic() - asked) <= left <= 2  # as for 20 s, on a 1.5 s question
    assert "urgent" in countdown.get_attribute("class")
    wait_for(browser, lambda d: "I chose myself." in messages(d))
    outcome = prompt.find_element(By.CLASS_NAME, "clarify-outcome").text
    assert outcome == "Outcome: timed out: the agent decides for itself"
    assert prompt.get_attribute("data-state") == "timed_out"
    assert not countdown.is_displayed()
    full_page_screenshot(browser, tmp_path / "console.png")


def test_reload_mid_question_reattaches_with_history_and_the_question(page):
    said = time.monotonic()
    say(page, "red or blue?")
    [asked] = wait_for(
        page, lambda d: d.find_elements(By.CSS_SELECTOR, ".clarify[data-state='pending']")
    )
    session_id = page.execute_script("return new URLSearchParams(location.search).get('sessionId')")
    assert session_id

    def seconds_left(prompt):
        return int(prompt.find_element(By.CLASS_NAME, "clarify-countdown").text.split()[0])

    first = seconds_left(asked)
    wait_for(page, lambda _: seconds_left(asked) < first)  # a second has gone by
    page.refresh()
    prompt = wait_for(
        page, lambda d: d.find_elements(By.CSS_SELECTOR, ".clarify[data-state='pending']")
    )[0]
    assert page.find_element(By.CSS_SELECTOR, ".msg-user").text == "red or blue?"
    assert f"sessionId={session_id}" in page.current_url
    remaining = seconds_left(prompt)
    # the 20 s from when the page first saw the question, less what has gone by since
    assert 20 - (time.monotonic() - said) <= remaining <= 19
    assert remaining < first  # the countdown went on across the reload, it did not restart
    page.find_element(By.CSS_SELECTOR, "#sessions-panel summary").click()
    listed = page.find_element(By.CSS_SELECTOR, "#sessions a[aria-current='page']")
    assert listed.text == "red or blue?"
    answer = prompt.find_element(By.CSS_SELECTOR, ".clarify-free input")
    answer.send_keys("red")
    answer.send_keys(Keys.ENTER)
    wait_for(page, lambda d: "Red it is." in messages(d))
    assert prompt.find_element(By.CLASS_NAME, "clarify-sent").text == "You answered: red"


def test_model_html_is_shown_as_text_never_run(page):
    say(page, "xss test")
    wait_for(page, lambda d: "alert(2))" in messages(d))  # the whole reply has streamed in
    reply = page.find_elements(By.CSS_SELECTOR, ".msg-assistant")[-1]
    assert (
        reply.text
        == "Look: <img src=x onerror=alert(1)> and <b>bold?</b> [go](javascript:alert(2))"
    )
    assert page.find_elements(By.CSS_SELECTOR, "#messages img, #messages b, #messages a") == []
    with pytest.raises(NoAlertPresentException):
        page.switch_to.alert.text  # noqa: B018


def test_escape_stops_a_run_and_the_page_fits_360_pixels(page, tmp_path):
    say(page, "slow thinking")
    stop = page.find_element(By.ID, "stop")
    wait_for(page, lambda d: stop.is_displayed())
    page.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    wait_for(page, lambda d: "Run ended (cancelled)" in messages(d))
    assert not stop.is_displayed()
    metrics = {"width": 360, "height": 740, "deviceScaleFactor": 1, "mobile": True}
    page.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        wide = page.execute_script("return document.documentElement.scrollWidth")
        assert wide <= 360
        send = page.find_element(By.ID, "send").rect
        assert send["x"] + send["width"] <= 360
        plan = page.find_element(By.ID, "plan").rect
        chat = page.find_element(By.ID, "messages").rect
        assert plan["y"] < chat["y"]  # the plan sits above the chat on a phone
        page.save_screenshot(str(tmp_path / "console-360.png"))
    finally:
        page.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_unknown_session_in_the_address_starts_a_new_one(browser, server, tmp_path):
    browser.get(server.url + "?sessionId=no-such-session")
    wait_for(browser, lambda d: "no-such-session is gone" in messages(d))
    wait_for(browser, lambda d: d.find_element(By.ID, "input").is_enabled())
    fresh = browser.execute_script("return new URLSearchParams(location.search).get('sessionId')")
    assert fresh
    assert fresh != "no-such-session"
    assert server.hub.store.exists(fresh)
    say(browser, "hello again")
    wait_for(browser, lambda d: "All words stream in." in messages(d))
    full_page_screenshot(browser, tmp_path / "console.png")


def test_token_server_refuses_the_page_until_the_token_is_given(browser, token_server, tmp_path):
    browser.get(token_server.url)
    dialog = wait_for(browser, lambda d: d.find_element(By.ID, "token-dialog"))
    wait_for(browser, lambda d: dialog.is_displayed())
    assert not browser.find_element(By.ID, "input").is_enabled()
    box = browser.find_element(By.ID, "token-input")
    box.send_keys("wrong")
    box.send_keys(Keys.ENTER)
    error = browser.find_element(By.ID, "token-error")
    wait_for(browser, lambda d: error.is_displayed())
    assert error.text == "The server refused this token."
    db = sqlite3.connect(token_server.hub.config.home / "neta.db")
    assert db.execute("SELECT count(*) FROM sessions").fetchone() == (0,)
    box.clear()
    box.send_keys(TOKEN)
    box.send_keys(Keys.ENTER)
    wait_for(browser, lambda d: d.find_element(By.ID, "input").is_enabled())
    say(browser, "hello with a token")
    wait_for(browser, lambda d: "All words stream in." in messages(d))
    browser.refresh()  # the token is kept for the tab: no second prompt
    wait_for(browser, lambda d: d.find_element(By.ID, "input").is_enabled())
    assert not browser.find_element(By.ID, "token-dialog").is_displayed()
    assert "All words stream in." in messages(browser)
    assert db.execute("SELECT count(*) FROM sessions").fetchone() == (1,)
    assert TOKEN not in browser.current_url
    logged = " ".join(entry["message"] for entry in browser.get_log("browser"))
    assert TOKEN not in logged
    full_page_screenshot(browser, tmp_path / "console.png")
