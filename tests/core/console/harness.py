"""A real server and a real headless Chromium for the console's tests (and its screenshot).

The browser is the distribution's Chromium driven through its ``chromedriver``, both named by
path, so Selenium Manager never runs and nothing is downloaded. Its headless shell
(``chromium-headless-shell``: the same engine without the desktop browser's interface) is taken
when installed, as it is in CI: these tests then take about a quarter less CPU (12 s against
16 s here, the server and the test process included). ``chromium`` is the fallback.
``browser_missing()`` says why the browser tests cannot run on this machine;
``browser_to_test()`` is what a test module skips on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from neta.hosting.config import HostConfig
from neta.providers.base import ModelRequest, ModelResponse, TextSink
from neta.providers.scripted import ScriptedProvider
from neta_base.processes import kill_marked
from tests.core.hosting.server_harness import RunningServer, builtin_pm, start_server

HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--password-store=basic",
)


def browser_missing() -> str | None:
    """Why no browser test can run here (``None`` when Chromium and its driver are present)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    for path, package in ((browser_binary(), "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.is_file():
            return f"{path} is missing (apt-get install {package}; .ci/run installs it as root)"
    return None


def browser_to_test() -> str | None:
    """Why a browser test module skips, or ``None`` when its tests run.

    Where ``NETA_REQUIRE_SERVICES=1`` (CI installs the browser) they always run: without a
    browser they fail instead of skipping.
    """
    return None if os.environ.get("NETA_REQUIRE_SERVICES") == "1" else browser_missing()


def browser_binary() -> Path:
    """The headless shell when installed, else the desktop ``chromium``."""
    return HEADLESS_SHELL if HEADLESS_SHELL.is_file() else CHROMIUM


@contextlib.contextmanager
def chromium(profile: Path, width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A headless Chromium with a fresh profile in ``profile``, quit on leaving.

    ``chromedriver`` makes the profile itself, in its ``TMPDIR``, and removes it on quit. Given
    one with ``--user-data-dir``, it starts the headless shell on no page and waits for ever.
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile.mkdir(parents=True, exist_ok=True)
    options = webdriver.ChromeOptions()
    options.binary_location = str(browser_binary())
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=str(CHROMEDRIVER), env={**os.environ, "TMPDIR": str(profile)})
    driver = webdriver.Chrome(service=service, options=options)
    try:
        driver.set_page_load_timeout(15)
        yield driver
    finally:
        driver.quit()
        # the quit leaves the headless shell's browser process running, and its helpers with
        # it; chromedriver and the browser have the profile as TMPDIR, the helpers end with it
        kill_marked("TMPDIR", str(profile))


class KeywordScripts:
    """A session's model that picks its script by the first word of the session's first
    message, then replays it; text streams word by word, ``pause`` seconds apart."""

    def __init__(self, scripts: dict[str, list[dict[str, Any]]], pause: float = 0.0) -> None:
        self.scripts = scripts
        self.pause = pause
        self.inner: ScriptedProvider | None = None

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Play the next turn of the script the first message chose."""
        if self.inner is None:
            first = next(m.content or "" for m in request.messages if m.role == "user")
            keyword = (first.split() or [""])[0].lower()
            self.inner = ScriptedProvider(self.scripts.get(keyword, [{"text": "No script."}]))
        if not self.pause:
            return await self.inner.complete(request, on_text)
        pieces: list[str] = []
        response = await self.inner.complete(request, pieces.append)
        for piece in pieces:
            on_text(piece)
            await asyncio.sleep(self.pause)
        return response


def serve(
    scripts: dict[str, list[dict[str, Any]]],
    root: Path,
    *,
    pause: float = 0.0,
    **options: Any,
) -> RunningServer:
    """Start uvicorn on a free 127.0.0.1 port; each session replays one of ``scripts``."""
    workspace = root / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    options.setdefault("home", root / "home")
    options.setdefault("plugin_manager", builtin_pm())
    factory: Callable[[], Any] = lambda: KeywordScripts(scripts, pause)  # noqa: E731
    config = HostConfig(workspace=workspace, provider_factory=factory, **options)
    return start_server(config)


def wait_for(driver: Any, condition: Callable[[Any], Any], timeout: float = 10) -> Any:
    """Wait until ``condition(driver)`` is truthy and return it."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)


def click(driver: Any, element: Any) -> None:
    """Click ``element`` once scrolled to the middle of the window (not under the composer)."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    element.click()


def full_page_screenshot(driver: Any, path: Path) -> None:
    """Save the whole page (not only the window) as a PNG."""
    width, height = driver.execute_script(
        "const e = document.documentElement; return [e.clientWidth, e.scrollHeight];"
    )
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:  # two animation frames: the page has been laid out and painted at the new size
        driver.execute_async_script(
            "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(done));"
        )
        driver.save_screenshot(str(path))
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def collapsed(text: str) -> str:
    """``text`` with runs of whitespace made one space."""
    return re.sub(r"\s+", " ", text).strip()
