"""``leaderboard.html`` in a real headless Chromium (``support.browser``): sorting, the category
filter, the model filter, links to the verification reports, and names from runs shown as text.

Three hand-made verifications of one LogicCat task over 6 items (``test_leaderboard``'s
helper): items 1-3 are "physical", 4-6 "math".

=========  ==================  ==========  =============  ==========
model      EX per item         EX          EX physical    EX math
=========  ==================  ==========  =============  ==========
hostile    1 1 1 0 0 0         0.5         1.0            0.0
steady     1 1 1 1 1 0         0.833       1.0            0.667
mathy      0 0 0 1 1 1         0.5         0.0            1.0
=========  ==================  ==========  =============  ==========

"hostile"'s name holds markup and quotes; the page must show it as text.
"""

from __future__ import annotations

import time

import pytest
from support.browser import chromium, needs_chromium
from support.verifications import HOSTILE, verification

from sqlbench_lmeval.submission.leaderboard import leaderboard_data, render_leaderboard

pytestmark = needs_chromium

CATEGORIES = ["physical"] * 3 + ["math"] * 3


@pytest.fixture
def page(tmp_path):
    runs = [
        verification(HOSTILE, [1, 1, 1, 0, 0, 0], categories=CATEGORIES),
        verification("steady", [1, 1, 1, 1, 1, 0], categories=CATEGORIES),
        verification("mathy", [0, 0, 0, 1, 1, 1], categories=CATEGORIES),
    ]
    links = {run.run: f"verifications/report-{index}.html" for index, run in enumerate(runs)}
    path = tmp_path / "leaderboard.html"
    path.write_text(render_leaderboard(leaderboard_data(runs, links, resamples=200)), "utf-8")
    return path


@pytest.fixture
def browser(tmp_path):
    with chromium(tmp_path / "chromium-profile") as driver:
        yield driver


def _open(driver, path):
    driver.get(path.as_uri())
    for _ in range(200):
        if driver.execute_script("return window.leaderboardReady === true"):
            return
        time.sleep(0.05)
    raise AssertionError("the leaderboard did not finish loading")


def _models(driver) -> list[str]:
    rows = driver.find_elements("css selector", ".board-table tbody tr")
    return [row.find_element("css selector", "td[data-col='name']").text for row in rows]


def _cells(driver, column: str) -> list[str]:
    cells = driver.find_elements("css selector", f".board-table tbody td[data-col='{column}']")
    return [cell.text for cell in cells]


def _click(driver, column: str) -> None:
    driver.find_element("css selector", f".board-table th[data-sort='{column}']").click()


def test_sorting_filters_links_and_escaped_names(browser, page):
    from selenium.webdriver.support.ui import Select

    _open(browser, page)
    # By rank: steady (0.833) first; hostile and mathy tie at 0.5 (rank 2 both), by name.
    assert _models(browser)[0] == "steady"
    assert set(_models(browser)[1:]) == {"mathy", HOSTILE}
    assert _cells(browser, "rank") == ["1", "2", "2"]
    # The hostile name is text: no element was made from it, and it reads back unchanged.
    assert browser.find_elements("tag name", "img") == []
    link = browser.find_element("link text", HOSTILE)
    assert link.get_attribute("href").endswith("verifications/report-0.html")

    _click(browser, "name")  # ascending by name
    assert _models(browser) == [HOSTILE, "mathy", "steady"]  # "<" sorts before letters
    _click(browser, "ex")  # highest EX first
    assert _models(browser)[0] == "steady"
    assert _cells(browser, "ex")[0].startswith("0.833 [")

    # Category "math": EX is the math items' EX; still sorted by EX, mathy (1.0) leads.
    Select(browser.find_element("id", "category")).select_by_visible_text("math")
    header = browser.find_element("css selector", ".board-table th[data-sort='ex']").text
    assert header.startswith("EX math")
    assert _models(browser) == ["mathy", "steady", HOSTILE]
    assert [cell.split(" ")[0] for cell in _cells(browser, "ex")] == ["1.000", "0.667", "0.000"]
    Select(browser.find_element("id", "category")).select_by_visible_text("physical")
    assert [cell.split(" ")[0] for cell in _cells(browser, "ex")][0] == "1.000"
    _click(browser, "ex")  # the same column again: lowest first
    assert _models(browser)[0] == "mathy"  # 0.0 on physical

    # The model filter keeps the rows whose name contains the text.
    search = browser.find_element("id", "search")
    search.send_keys("<img")
    assert _models(browser) == [HOSTILE]
