"""The web console on a REST session: a new call reusing an old call's id re-opens the old card.

``ApprovalCards.ask`` keeps one card per requestId; a REST session's requestId is the call's
id (chosen by the model), and its answers never get an ``approval_resolved``, so the card stays
"sent". When the next call reuses the id, its ``approval_request`` finds that card, sets it
back to "pending" with the OLD preview, and its "Allow once" approves the NEW call.
"""

import pytest

from tests import http_clients
from tests.core.console.harness import browser_to_test, chromium, click, serve, wait_for

missing = browser_to_test()
pytestmark = pytest.mark.skipif(missing is not None, reason=f"no browser: {missing}")

if missing is None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys


def write(call_id, path, content):
    return {
        "tool_calls": [
            {"id": call_id, "name": "write_file", "arguments": {"path": path, "content": content}}
        ]
    }


SCRIPTS = {
    "write": [
        write("call_0", "notes.txt", "hello\n"),
        write("call_0", "pwned.txt", "evil payload\n"),
        {"text": "All done."},
    ]
}


def test_a_call_reusing_an_old_id_gets_a_card_showing_its_own_preview(tmp_path):
    server = serve(SCRIPTS, tmp_path / "server")
    workspace = server.hub.config.workspace
    try:
        with http_clients.client(base_url=server.http, timeout=30) as http:
            sid = http.post("/v1/sessions").json()["sessionId"]
        with chromium(tmp_path / "profile") as page:
            page.get(f"{server.url}?sessionId={sid}")
            wait_for(page, lambda d: d.find_element(By.ID, "input").is_enabled())
            box = page.find_element(By.ID, "input")
            box.send_keys("write my notes")
            box.send_keys(Keys.ENTER)
            card = wait_for(
                page,
                lambda d: d.find_elements(By.CSS_SELECTOR, ".approval[data-state='pending']"),
            )[0]
            assert "notes.txt" in card.text
            card.find_element(By.CSS_SELECTOR, "button.allow-once").click()
            wait_for(page, lambda d: (workspace / "notes.txt").exists())
            # the second call (pwned.txt) now waits under the same requestId
            pending = wait_for(
                page,
                lambda d: d.find_elements(By.CSS_SELECTOR, ".approval[data-state='pending']"),
            )
            shown = "\n".join(c.text for c in pending)
            page.save_screenshot(str(tmp_path / "console.png"))
            # the person must be shown what would now run before anything can approve it
            assert "pwned.txt" in shown, f"the card shown for the write of pwned.txt: {shown!r}"
            click(page, pending[-1].find_element(By.CSS_SELECTOR, "button.allow-once"))
            wait_for(page, lambda d: "All done." in d.find_element(By.ID, "messages").text)
    finally:
        server.stop()


def test_allowing_the_card_that_shows_notes_txt_does_not_write_pwned_txt(tmp_path):
    server = serve(SCRIPTS, tmp_path / "server")
    workspace = server.hub.config.workspace
    try:
        with http_clients.client(base_url=server.http, timeout=30) as http:
            sid = http.post("/v1/sessions").json()["sessionId"]
        with chromium(tmp_path / "profile") as page:
            page.get(f"{server.url}?sessionId={sid}")
            wait_for(page, lambda d: d.find_element(By.ID, "input").is_enabled())
            box = page.find_element(By.ID, "input")
            box.send_keys("write my notes")
            box.send_keys(Keys.ENTER)
            pending = ".approval[data-state='pending']"
            card = wait_for(page, lambda d: d.find_elements(By.CSS_SELECTOR, pending))[0]
            card.find_element(By.CSS_SELECTOR, "button.allow-once").click()
            wait_for(page, lambda d: (workspace / "notes.txt").exists())
            again = wait_for(page, lambda d: d.find_elements(By.CSS_SELECTOR, pending))
            for shown in again:
                if "pwned" not in shown.text:  # the person approves what the card shows
                    click(page, shown.find_element(By.CSS_SELECTOR, "button.allow-once"))
            page.implicitly_wait(0)
            import time

            time.sleep(1.5)
    finally:
        server.stop()
    assert not (workspace / "pwned.txt").exists(), "allowing the notes.txt card wrote pwned.txt"
