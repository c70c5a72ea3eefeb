"""The console's header (model, workspace), a question's countdown at the server's default,
and a diff written in a reply without a fence: a real headless Chromium, one for the module."""

import re
import time

import pytest

from neta.hosting.config import HostConfig
from tests.core.console.harness import browser_to_test, chromium, serve, wait_for

missing = browser_to_test()
pytestmark = pytest.mark.skipif(
    missing is not None, reason=f"no browser for the console: {missing}"
)

if missing is None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

ASK = {
    "tool_calls": [
        {"name": "clarify", "arguments": {"question": "Which colour?", "choices": ["red", "blue"]}}
    ]
}
UNFENCED = """Here is the change:

--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 def greet():
-    return 'hi'
+    return 'hello'

- one more thing
- and another"""
FENCED = "The same, fenced:\n\n```diff\n@@ -2 +2 @@\n-    return 'hi'\n+    return 'hello'\n```"
SCRIPTS = {
    "ask": [ASK, {"text": "Red it is.", "expect": {"last_message_contains": "red"}}],
    "unfenced": [{"text": UNFENCED}],
    "fenced": [{"text": FENCED}],
}
TOKEN = "header-token"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("profile")) as driver:
        yield driver


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server with the default question timeout, whose sessions use ``test-model``."""
    running = serve(SCRIPTS, tmp_path_factory.mktemp("server"), model="test-model")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def token_server(tmp_path_factory):
    running = serve(SCRIPTS, tmp_path_factory.mktemp("token"), model="test-model", token=TOKEN)
    yield running
    running.stop()


def opened(browser, server):
    browser.get(server.url)
    wait_for(browser, lambda d: d.find_element(By.ID, "input").is_enabled())
    return browser


def say(driver, text):
    box = driver.find_element(By.ID, "input")
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


def reply(driver, words):
    """The last assistant message, once it has streamed in whole (it contains ``words``)."""
    wait_for(driver, lambda d: words in d.find_element(By.ID, "messages").text)
    wait_for(driver, lambda d: d.execute_script("return document.body.dataset.running") == "no")
    return driver.find_elements(By.CSS_SELECTOR, ".msg-assistant")[-1]


def test_a_question_counts_down_from_the_default_five_minutes_in_minutes(browser, server):
    assert server.hub.config.clarify_timeout == HostConfig.clarify_timeout >= 300
    page = opened(browser, server)
    asked = time.monotonic()
    say(page, "ask me")
    prompt = wait_for(page, lambda d: d.find_element(By.CSS_SELECTOR, ".clarify"))
    shown = prompt.find_element(By.CLASS_NAME, "clarify-countdown").text
    minutes, seconds = re.fullmatch(r"(\d+):(\d\d) to answer", shown).groups()
    # five minutes from when the page saw the question, less what has gone by since
    assert 300 - (time.monotonic() - asked) <= int(minutes) * 60 + int(seconds) <= 300
    prompt.find_element(By.CSS_SELECTOR, "button.choice").click()
    reply(page, "Red it is.")


def test_the_header_shows_the_model_and_the_workspace_folder(browser, server):
    page = opened(browser, server)
    model = wait_for(page, lambda d: d.find_element(By.ID, "host-model"))
    wait_for(page, lambda d: model.text == "test-model")
    workspace = page.find_element(By.ID, "host-workspace")
    assert workspace.text == "workspace"  # the folder's name: no token, no full path
    assert str(server.hub.config.workspace) not in page.page_source


def test_with_the_token_the_header_gives_the_workspace_full_path(browser, token_server):
    browser.get(token_server.url)
    box = wait_for(browser, lambda d: d.find_element(By.ID, "token-input"))
    wait_for(browser, lambda d: box.is_displayed())
    assert browser.find_element(By.ID, "host-model").text == ""  # nothing before the token
    box.send_keys(TOKEN)
    box.send_keys(Keys.ENTER)
    wait_for(browser, lambda d: d.find_element(By.ID, "input").is_enabled())
    workspace = browser.find_element(By.ID, "host-workspace")
    path = str(token_server.hub.config.workspace)
    wait_for(browser, lambda d: workspace.get_attribute("title") == path)
    assert workspace.text == "workspace"
    assert browser.find_element(By.ID, "host-model").text == "test-model"


def test_an_unfenced_diff_in_a_reply_is_a_diff_block_not_a_list(browser, server):
    page = opened(browser, server)
    say(page, "unfenced diff")
    message = reply(page, "and another")
    [diff] = message.find_elements(By.CSS_SELECTOR, "pre.diff")
    assert [e.text for e in diff.find_elements(By.CSS_SELECTOR, ".diff-del")] == [
        "-    return 'hi'"
    ]
    assert [e.text for e in diff.find_elements(By.CSS_SELECTOR, ".diff-add")] == [
        "+    return 'hello'"
    ]
    assert diff.find_element(By.CSS_SELECTOR, ".diff-hunk").text == "@@ -1,2 +1,2 @@"
    assert "return 'hi'" not in " ".join(li.text for li in message.find_elements(By.TAG_NAME, "li"))
    # the list after the diff (its hunk's lines all counted) is still a list
    items = [li.text for li in message.find_elements(By.TAG_NAME, "li")]
    assert items == ["one more thing", "and another"]
    assert message.find_element(By.TAG_NAME, "p").text == "Here is the change:"


def test_a_fenced_diff_block_is_coloured_as_a_diff(browser, server):
    page = opened(browser, server)
    say(page, "fenced diff")
    message = reply(page, "The same, fenced")
    wait_for(page, lambda d: message.find_elements(By.CSS_SELECTOR, "pre.diff .diff-add"))
    added = message.find_element(By.CSS_SELECTOR, "pre.diff .diff-add")
    assert added.text == "+    return 'hello'"
