"""What a model controls cannot make a tool card show something other than what ran.

A real headless Chromium on a real server. A sub-agent's call ids are its own: a child may
reuse the id of one of its parent's calls (servers that number calls ``call_0``, ``call_1``
in every conversation do), and its call must still get a card of its own. A bidirectional
override in a call's arguments, or in what it returned, is shown escaped, as the approval
card's preview is, so that no card reads as a command other than the one that ran.
"""

import pytest

import neta_crew.plugin
from neta.hosting.config import HostConfig
from neta.providers.scripted import ScriptedProvider
from tests.core.console.harness import KeywordScripts, browser_to_test, chromium, wait_for
from tests.core.hosting.server_harness import builtin_pm, start_server

missing = browser_to_test()
pytestmark = pytest.mark.skipif(missing is not None, reason=f"no browser: {missing}")

if missing is None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

RLO = "\u202e"
COMMAND = f'echo "{RLO}" ; touch pwned #'


def _call(call_id, name, **arguments):
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


SCRIPTS = {
    # the parent reads a file as call_0, then delegates; the child writes a file as call_0
    "crew": [
        _call("call_0", "read_file", path="notes.txt"),
        _call("call_1", "delegate_task", goal="[kid] write the file"),
        {"text": "Done."},
    ],
    "bidi": [_call("call_0", "list_dir", path=f"src{RLO}txt.exe"), {"text": "Listed."}],
    "reply": [{"text": f"Said: run `{COMMAND}` now."}],
    "question": [_call("call_0", "clarify", question=f"May I run {COMMAND}?")],
}


CHILD = [_call("call_0", "write_file", path="evil.txt", content="pwned\n"), {"text": "Wrote."}]


class ParentOrChild:
    """A session's model, or its child's: a child's goal names ``[kid]``."""

    def __init__(self):
        self.parent = KeywordScripts(SCRIPTS)
        self.child = ScriptedProvider(CHILD)

    async def complete(self, request, on_text):
        first = next(m.content or "" for m in request.messages if m.role == "user")
        chosen = self.child if "[kid]" in first else self.parent
        return await chosen.complete(request, on_text)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("server")
    (root / "workspace").mkdir()
    (root / "workspace" / "notes.txt").write_text("hello\n")
    server = start_server(
        HostConfig(
            workspace=root / "workspace",
            home=root / "home",
            provider_factory=ParentOrChild,
            permissions="auto",
            plugin_manager=builtin_pm(("crew", neta_crew.plugin)),
        )
    )
    try:
        with chromium(tmp_path_factory.mktemp("profile")) as driver:
            yield server, driver
    finally:
        server.stop()


def _run(page, text, done):
    server, driver = page
    driver.get(server.url)
    wait_for(driver, lambda d: d.find_element(By.ID, "input").is_enabled())
    box = driver.find_element(By.ID, "input")
    box.send_keys(text)
    box.send_keys(Keys.ENTER)
    wait_for(driver, lambda d: done in d.find_element(By.ID, "messages").text)
    return driver


def _cards(driver):
    return [
        {
            "tool": card.get_attribute("data-tool"),
            "state": card.get_attribute("data-state"),
            "text": driver.execute_script("return arguments[0].textContent", card),
        }
        for card in driver.find_elements(By.CSS_SELECTOR, ".tool-card")
    ]


def test_a_sub_agents_call_reusing_its_parents_call_id_gets_its_own_card(page):
    driver = _run(page, "crew go", "Done.")
    cards = {card["tool"]: card for card in _cards(driver)}
    assert set(cards) == {"read_file", "delegate_task", "write_file"}
    assert all(card["state"] == "done" for card in cards.values()), cards
    assert "evil.txt" in cards["write_file"]["text"]  # the child's write is shown, done
    assert "evil.txt" not in cards["read_file"]["text"]
    assert "hello" in cards["read_file"]["text"]  # the parent's read keeps its own result


def test_a_bidi_override_in_a_calls_arguments_and_result_is_shown_escaped(page):
    driver = _run(page, "bidi go", "Listed.")
    [card] = _cards(driver)
    assert "\\u202e" in card["text"]  # the argument, and the error naming the path
    assert RLO not in card["text"], "the card shows a live right-to-left override"


def test_a_bidi_override_in_a_diff_is_shown_escaped(page):
    server, driver = page
    driver.get(server.url)
    wait_for(driver, lambda d: d.find_element(By.ID, "input").is_enabled())
    shown = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "import('/console/diff.js').then((m) => done(m.renderDiff(arguments[0]).textContent));",
        f"--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-echo hi\n+{COMMAND}",
    )
    assert "touch pwned" in shown
    assert RLO not in shown


@pytest.mark.parametrize(("keyword", "shown"), [("reply", "Said:"), ("question", "May I run")])
def test_a_bidi_override_in_the_agents_reply_or_question_is_shown_escaped(page, keyword, shown):
    driver = _run(page, f"{keyword} go", shown)
    text = driver.execute_script("return document.getElementById('messages').textContent")
    assert "touch pwned" in text
    assert "\\u202e" in text
    assert RLO not in text, "the page shows a live right-to-left override"
