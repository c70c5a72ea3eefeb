"""Approvals in the web console: a real headless Chromium, a real server in the default mode
(``ask``: every edit asks first), the real ``patch`` and ``write_file`` tools. Every test saves
a screenshot in its tmp dir."""

import pytest

from tests.core.approval_edit import AFTER, BEFORE
from tests.core.console.harness import (
    browser_to_test,
    chromium,
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

HTML = "<img src=x onerror=alert(1)>\n<b>bold</b>\n"
SCRIPTS = {
    "edit": [
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
        {"text": "Patched.", "expect": {"last_message_contains": "app.py"}},
    ],
    "write": [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "page.html", "content": HTML}}
            ]
        },
        {"text": "Not written.", "expect": {"last_message_contains": "not that file"}},
    ],
    # a reply long enough to scroll, then (next message) an edit that asks
    "long": [
        {"text": "\n\n".join(f"Paragraph {n} of a long answer." for n in range(80))},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "late.txt", "content": "x"}}]},
        {"text": "Written."},
    ],
}


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """The module's browser; quitting it leaves none of the processes it ran."""
    with chromium(tmp_path_factory.mktemp("profile")) as driver:
        yield driver
        running = descendants(driver.service.process.pid)
    assert wait_gone(running, 5) == [], "still running after the quit"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = serve(SCRIPTS, tmp_path_factory.mktemp("server"))
    yield running
    running.stop()


@pytest.fixture
def workspace(server):
    root = server.hub.config.workspace
    (root / "app.py").write_text(BEFORE)
    (root / "page.html").unlink(missing_ok=True)
    return root


@pytest.fixture
def page(browser, server, workspace, tmp_path):
    """The console of ``server``, on a new session; a screenshot is saved afterwards."""
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


def pending_card(driver):
    return wait_for(
        driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".approval[data-state='pending']")
    )[0]


def test_an_edit_is_made_only_after_the_user_sees_its_diff_and_allows_it(page, workspace):
    say(page, "edit the greeting")
    card = pending_card(page)
    assert card.find_element(By.CLASS_NAME, "approval-title").text == "allow patch to edit?"
    assert card.find_element(By.CSS_SELECTOR, ".diff-add").text == "+    return 'hello'"
    assert card.find_element(By.CSS_SELECTOR, ".diff-del").text == "-    return 'hi'"
    assert "mode 'ask'" in card.find_element(By.CLASS_NAME, "approval-reason").text
    assert "patch(/app.py)" in card.find_element(By.CLASS_NAME, "approval-always").text
    buttons = card.find_elements(By.CSS_SELECTOR, ".approval-buttons button")
    assert [b.text for b in buttons] == ["Allow once", "Allow always", "Deny"]
    tool = page.find_element(By.CSS_SELECTOR, ".tool-card[data-tool='patch']")
    assert tool.find_element(By.CLASS_NAME, "tool-state").text == "awaiting approval…"
    assert (workspace / "app.py").read_text() == BEFORE  # shown, not made

    buttons[0].click()
    wait_for(page, lambda d: "Patched." in messages(d))
    wait_for(page, lambda d: card.get_attribute("data-state") == "allowed")
    assert card.find_element(By.CLASS_NAME, "approval-outcome").text == "Allowed once"
    assert not card.find_element(By.CLASS_NAME, "approval-answer").is_displayed()
    assert (workspace / "app.py").read_text() == AFTER


def test_a_denial_with_a_reason_writes_nothing_and_the_preview_is_shown_as_text(page, workspace):
    say(page, "write a page")
    card = pending_card(page)
    added = [e.text for e in card.find_elements(By.CSS_SELECTOR, ".diff-add")]
    assert "+<img src=x onerror=alert(1)>" in added
    assert "+<b>bold</b>" in added
    assert card.find_elements(By.CSS_SELECTOR, "img, b") == []
    reason = card.find_element(By.CLASS_NAME, "approval-deny-reason")
    reason.send_keys("not that file")
    reason.send_keys(Keys.ENTER)  # the form's answer is a denial
    wait_for(page, lambda d: "Not written." in messages(d))
    wait_for(page, lambda d: card.get_attribute("data-state") == "denied")
    outcome = card.find_element(By.CLASS_NAME, "approval-outcome").text
    assert outcome == "Denied (not that file)"
    written = page.find_element(By.CSS_SELECTOR, ".tool-card[data-tool='write_file']")
    assert written.get_attribute("data-state") == "error"
    assert "the user denied it: not that file" in written.text
    assert not (workspace / "page.html").exists()
    with pytest.raises(NoAlertPresentException):
        page.switch_to.alert.text  # noqa: B018


def test_a_reload_mid_approval_shows_the_request_again_and_it_can_be_answered(page, workspace):
    say(page, "edit after a reload")
    pending_card(page)
    page.refresh()
    card = pending_card(page)
    assert card.find_element(By.CSS_SELECTOR, ".diff-add").text == "+    return 'hello'"
    assert page.find_element(By.CSS_SELECTOR, ".msg-user").text == "edit after a reload"
    assert len(page.find_elements(By.CSS_SELECTOR, ".approval")) == 1
    card.find_element(By.CSS_SELECTOR, "button.allow-once").click()
    wait_for(page, lambda d: "Patched." in messages(d))
    assert (workspace / "app.py").read_text() == AFTER


def test_a_request_for_approval_is_brought_into_view_though_the_reader_scrolled_up(page):
    say(page, "long answer please")
    wait_for(page, lambda d: "Paragraph 79" in messages(d))
    page.execute_script("window.scrollTo(0, 0)")
    say(page, "now write it")
    card = pending_card(page)
    top, header, height = page.execute_script(
        "return [arguments[0].getBoundingClientRect().top,"
        " document.querySelector('.topbar').getBoundingClientRect().bottom, window.innerHeight];",
        card,
    )
    assert header <= top < height, (header, top, height)  # on screen, not under the header
    card.find_elements(By.CSS_SELECTOR, ".approval-buttons button")[-1].click()  # deny
    wait_for(page, lambda d: card.get_attribute("data-state") == "denied")
