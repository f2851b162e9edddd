"""Headless Chromium for page tests: Debian's ``chromium`` driven by Selenium through
``/usr/bin/chromedriver`` (an explicit driver path, so Selenium Manager never downloads one).

``needs_chromium`` is the skip mark for a module; ``chromium(profile)`` starts a driver with a
fresh profile folder and quits it on exit::

    pytestmark = needs_chromium

    def test_page(tmp_path):
        with chromium(tmp_path / "profile") as driver:
            driver.get(page.as_uri())
            assert page_problems(driver) == {"console_errors": [], "fetched": []}
"""

from __future__ import annotations

import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = shutil.which("chromium")

needs_chromium = pytest.mark.skipif(
    not CHROMEDRIVER.exists() or CHROMIUM is None,
    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
)


def page_problems(driver) -> dict[str, list[str]]:
    """What a page must not do, since it was opened: console errors (``SEVERE`` entries of the
    browser log) and fetches of anything that is not part of the page itself (a resource
    whose address is not a ``data:`` URI)."""
    errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    fetched = driver.execute_script(
        "return performance.getEntriesByType('resource').map((entry) => entry.name)"
    )
    return {
        "console_errors": errors,
        "fetched": [name for name in fetched if not name.startswith("data:")],
    }


@contextmanager
def chromium(profile: Path):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1800",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    # Keeps the page's console for page_problems (the console errors a test must not see).
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver, path: Path, ready: str, seconds: float = 10) -> None:
    """Open ``path`` and wait until its script sets ``window.<ready>`` (it has drawn
    everything); an AssertionError after ``seconds``."""
    driver.get(path.as_uri())
    for _ in range(int(seconds / 0.05)):
        if driver.execute_script(f"return window.{ready} === true"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{path.name} did not finish loading ({ready} not set)")


def choose(driver, element_id: str, text: str) -> None:
    """Pick the option shown as ``text`` in the select ``element_id``."""
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", element_id)).select_by_visible_text(text)
