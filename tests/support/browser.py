"""Headless Chromium for page tests: Debian's ``chromium`` driven by Selenium through
``/usr/bin/chromedriver`` (an explicit driver path, so Selenium Manager never downloads one).

``needs_chromium`` is the skip mark for a module; ``chromium(profile)`` starts a driver with a
fresh profile folder and quits it on exit::

    pytestmark = needs_chromium

    def test_page(tmp_path):
        with chromium(tmp_path / "profile") as driver:
            driver.get(page.as_uri())
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = shutil.which("chromium")

needs_chromium = pytest.mark.skipif(
    not CHROMEDRIVER.exists() or CHROMIUM is None,
    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
)


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
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
