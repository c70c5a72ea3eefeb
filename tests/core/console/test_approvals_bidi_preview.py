"""The console's approval card shows a command's bidirectional overrides raw.

The terminal shows U+202A-U+202E and U+2066-U+2069 as escapes (``neta.terminal_text``), since
they reorder what is shown ("Trojan Source"). The console card puts the preview in a <pre>
with textContent: the browser obeys them, so the person reads a reordered command.
Here ``echo "<RLO>" ; touch pwned #`` is displayed as ``$ echo "# denwp hcuot ; "``: an echo
of a string, while bash runs ``touch pwned``.
"""

import pytest

from tests.core.console.harness import browser_to_test, chromium, serve, wait_for

missing = browser_to_test()
pytestmark = pytest.mark.skipif(missing is not None, reason=f"no browser: {missing}")

if missing is None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

RLO = "\u202e"
COMMAND = f'echo "{RLO}" ; touch pwned #'
SCRIPTS = {
    "run": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": COMMAND}}]},
        {"text": "ok"},
    ]
}


def test_the_approval_card_does_not_let_a_bidi_override_reorder_the_command(tmp_path):
    server = serve(SCRIPTS, tmp_path / "server")
    try:
        with chromium(tmp_path / "profile") as page:
            page.get(server.url)
            wait_for(page, lambda d: d.find_element(By.ID, "input").is_enabled())
            box = page.find_element(By.ID, "input")
            box.send_keys("run it")
            box.send_keys(Keys.ENTER)
            card = wait_for(
                page,
                lambda d: d.find_elements(By.CSS_SELECTOR, ".approval[data-state='pending']"),
            )[0]
            preview = card.find_element(By.CLASS_NAME, "approval-preview")
            raw = page.execute_script("return arguments[0].textContent", preview)
            page.save_screenshot(str(tmp_path / "bidi.png"))
            print("screenshot:", tmp_path / "bidi.png")
            card.find_element(By.CSS_SELECTOR, "button.deny").click()
    finally:
        server.stop()
    assert "touch pwned" in raw  # it is the command that would run
    assert RLO not in raw, "the card shows the command with a live right-to-left override"
