"""A full-page screenshot of the web console after a finished run (the one in docs/console.md).

Starts a server on a free 127.0.0.1 port whose scripted model plans with ``todo``, edits a
file with ``patch``, asks a question with ``clarify`` and finishes; a headless Chromium (the
distribution's, as in the tests) sends the message, clicks an answer, waits for the end of
the run and saves the page.

Run: python bench/console_shot.py OUT.png
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.core.console.harness import (
    browser_missing,
    chromium,
    full_page_screenshot,
    serve,
    wait_for,
)

APP = """def greet(name):
    return "hi " + name


def main():
    print(greet("world"))
"""

PLAN = [
    {"id": "1", "content": "Read app.py", "status": "completed"},
    {"id": "2", "content": "Make the greeting friendlier", "status": "in_progress"},
    {"id": "3", "content": "Ask which punctuation to use", "status": "pending"},
]


def _todo(todos: list[dict[str, str]], merge: bool = False) -> dict[str, object]:
    return {"tool_calls": [{"name": "todo", "arguments": {"todos": todos, "merge": merge}}]}


SCRIPT = [
    {"text": "I'll plan this first.", **_todo(PLAN)},
    {
        "tool_calls": [
            {
                "name": "patch",
                "arguments": {
                    "path": "app.py",
                    "old_string": 'return "hi " + name',
                    "new_string": 'greeting = f"Hello, {name}"\n    return greeting',
                },
            }
        ]
    },
    {
        "tool_calls": [
            {
                "name": "clarify",
                "arguments": {
                    "question": "End the greeting with an exclamation mark or a full stop?",
                    "choices": ["exclamation mark", "full stop"],
                },
            }
        ]
    },
    {
        "tool_calls": [
            {
                "name": "patch",
                "arguments": {
                    "path": "app.py",
                    "old_string": 'greeting = f"Hello, {name}"',
                    "new_string": 'greeting = f"Hello, {name}!"',
                },
            }
        ]
    },
    _todo(
        [
            {"id": "2", "content": "Make the greeting friendlier", "status": "completed"},
            {"id": "3", "content": "Ask which punctuation to use", "status": "completed"},
        ],
        merge=True,
    ),
    {
        "text": (
            "Done. `greet` now returns **Hello, world!**:\n\n"
            "- the greeting reads `Hello, {name}!`\n"
            "- `main` is unchanged"
        )
    },
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="where to write the PNG")
    args = parser.parse_args()
    missing = browser_missing()
    if missing:
        print(f"cannot take the screenshot: {missing}", file=sys.stderr)
        return 1
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = serve({"make": SCRIPT}, root, pause=0.01)
        (server.hub.config.workspace / "app.py").write_text(APP)
        try:
            with chromium(root / "profile", width=1280, height=900) as driver:
                started = time.perf_counter()
                driver.get(server.url)
                box = wait_for(driver, lambda d: d.find_element(By.ID, "input"))
                wait_for(driver, lambda d: box.is_enabled())
                box.send_keys("make the greeting in app.py friendlier")
                box.send_keys(Keys.ENTER)
                choice = wait_for(
                    driver, lambda d: d.find_element(By.CSS_SELECTOR, "button.choice")
                )
                choice.click()
                wait_for(
                    driver,
                    lambda d: d.execute_script("return document.body.dataset.running") == "no",
                )
                wait_for(driver, lambda d: "main" in d.find_element(By.ID, "messages").text)
                elapsed = time.perf_counter() - started
                driver.execute_script("window.scrollTo(0, 0); document.activeElement.blur();")
                args.out.parent.mkdir(parents=True, exist_ok=True)
                full_page_screenshot(driver, args.out)
                width, height = driver.execute_script(
                    "const e = document.documentElement; return [e.clientWidth, e.scrollHeight];"
                )
        finally:
            server.stop()
    print(f"wrote {args.out}: {width}x{height} px, run finished in {elapsed:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
