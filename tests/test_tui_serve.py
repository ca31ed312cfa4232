"""``drivemt tui --serve`` in a real headless browser: Debian's Chromium, driven by Selenium through chromedriver.

The page is textual-serve's: xterm.js draws the console on a canvas, so the test reads what the console sent to
the browser (the websocket frames, from Chromium's performance log) rather than the page's DOM, and clicks the
Violations tab at its cell. The README's test command installs Chromium when it is missing and the user is root.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bus import Bus
from bus.events import ViolationFound, ViolationPayload

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
needs_browser = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="Debian's chromium and chromium-driver are not installed (./test.sh installs them when run as root)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--window-size=1400,900", f"--user-data-dir={tmp_path / 'chromium'}",
    ):  # fmt: skip
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        with contextlib.suppress(Exception):  # the test may have quit it already
            driver.quit()


class Frames:
    """What the console sent to the browser and what the browser sent back, read from the performance log."""

    def __init__(self, driver: Any) -> None:
        self.driver, self.received, self.sent = driver, b"", []

    def read(self) -> None:
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            method, params = message["method"], message.get("params", {})
            if method == "Network.webSocketFrameReceived":
                r = params["response"]
                self.received += base64.b64decode(r["payloadData"]) if r["opcode"] == 2 else r["payloadData"].encode()
            elif method == "Network.webSocketFrameSent":
                self.sent.append(params["response"]["payloadData"])

    def until(self, predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, f"the browser never showed {what}"
            time.sleep(0.25)
            self.read()

    def size(self) -> tuple[int, int]:
        """The terminal's columns and rows, as the page told the server."""
        for payload in reversed(self.sent):
            try:
                kind, data = json.loads(payload)
            except (ValueError, TypeError):
                continue
            if kind == "resize":
                return int(data["width"]), int(data["height"])
        raise AssertionError("the page never sent its terminal size")


@needs_browser
async def test_the_console_served_to_a_browser_switches_to_violations_on_a_click(
    bus: Bus, nats_url: str, namespace: str, tmp_path: Path, browser: Any
) -> None:
    """The browser loads the page, the console starts on the daemon's bus with what the streams hold, and a click
    on the Violations tab shows that pane with the violation in it."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    item = f"case-{uuid.uuid4().hex[:6]}"
    await bus.publish(
        ViolationFound(
            correlation_id=str(uuid.uuid4()), producer="judge",
            payload=ViolationPayload(kind="mr", item_id=item, description="epoch did not slow down in fog",
                                     metrics={"change": 0.4, "band": 1.0}, details={"model": "epoch"}),
        )
    )  # fmt: skip
    port = _free_port()
    env = dict(os.environ, DRIVEMT_NAMESPACE=namespace)
    command = [sys.executable, "-m", "runners.cli", "tui", "--serve", "--port", str(port), "--nats-url", nats_url]
    server = subprocess.Popen([*command, "--data-dir", str(tmp_path / "data")], env=env)
    try:
        _wait_port(port)
        browser.get(f"http://127.0.0.1:{port}")
        frames = Frames(browser)
        frames.until(lambda: b"Conversation" in frames.received and b"Violations" in frames.received, "the tabs")
        frames.until(lambda: item.encode() in frames.received, "the caught-up violation in the conversation")
        assert b"relation or MR" not in frames.received  # the Violations pane is not drawn yet
        cols, rows = frames.size()
        screen = browser.find_element(By.CSS_SELECTOR, ".xterm-screen")
        cell_w, cell_h = screen.rect["width"] / cols, screen.rect["height"] / rows
        # Row 1 holds the tabs, " Conversation " then " Violations ": column 20 lies inside the second.
        x, y = (20.5 * cell_w) - screen.rect["width"] / 2, (1.5 * cell_h) - screen.rect["height"] / 2
        ActionChains(browser).move_to_element_with_offset(screen, int(x), int(y)).click().perform()
        frames.until(lambda: b"relation or MR" in frames.received, "the Violations pane after a click")
        assert b"driving model" in frames.received  # the counts per pipeline
    finally:
        browser.quit()  # the session ends, so its console process quits and the server stops at once
        t0 = time.monotonic()
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
        print(f"the server stopped {time.monotonic() - t0:.1f} s after SIGTERM")
