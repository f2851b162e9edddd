"""``leaderboard.html`` in a real headless Chromium (``support.browser``): sorting, the category
filter, the model filter, links to the verification reports, names from runs shown as text, the
forest plots, the per-category columns, the findings and the four verdict groups.

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

The four-verdict board (same items and categories): steady and mathy as above (verified),
careless (1 0 0 1 0 0: EX 1/3, physical 1/3, math 1/3) with one finding (item 2 read no
table), and D (rejected) and E (unattested), which answer every item and are listed apart.
"""

from __future__ import annotations

import time

import pytest
from support.browser import chromium, needs_chromium, open_page, page_problems
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


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One Chromium for the module; each test opens its own page (the page keeps no state)."""
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


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

    open_page(browser, page, "leaderboardReady")
    # By rank: steady (0.833) first; hostile and mathy tie at 0.5 (rank 2 both), by name.
    assert _models(browser)[0] == "steady"
    assert set(_models(browser)[1:]) == {"mathy", HOSTILE}
    assert _cells(browser, "rank") == ["1", "2", "2"]
    # The hostile name is text: no element was made from it, and it reads back unchanged.
    # (The one image is the forest plot.)
    images = browser.execute_script(
        "return Array.from(document.images).map((i) => [i.closest('figure.forest') !== null,"
        " i.getAttribute('src').slice(0, 26)])"
    )
    assert images == [[True, "data:image/svg+xml;base64,"]]
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


def _images_loaded(driver) -> list[tuple[int, str]]:
    """Each forest plot shown: its natural width once decoded, and its source's scheme."""
    script = (
        "return Array.from(document.querySelectorAll('figure.forest img'))"
        ".map((i) => [i.complete ? i.naturalWidth : -1, i.src.slice(0, 26)])"
    )
    for _ in range(100):  # images decode asynchronously
        shown = driver.execute_script(script)
        if all(width >= 0 for width, _ in shown):
            return [tuple(entry) for entry in shown]
        time.sleep(0.05)
    raise AssertionError("the forest plot did not load")


def test_four_verdict_groups_forest_plot_category_columns_and_findings(browser, tmp_path):
    from selenium.webdriver.support.ui import Select

    finding = ("reads_no_table", "1 answer(s) read no table of the database", [2])
    runs = [
        verification("steady", [1, 1, 1, 1, 1, 0], categories=CATEGORIES),
        verification("mathy", [0, 0, 0, 1, 1, 1], categories=CATEGORIES),
        verification("careless", [1, 0, 0, 1, 0, 0], categories=CATEGORIES, finding=finding),
        verification("D", [1] * 6, categories=CATEGORIES, reject=True),
        verification("E", [1] * 6, categories=CATEGORIES, unattested=True),
    ]
    path = tmp_path / "leaderboard.html"
    path.write_text(render_leaderboard(leaderboard_data(runs, {}, resamples=200)), "utf-8")
    open_page(browser, path, "leaderboardReady")

    # The groups: three ranked (two verified, one with findings), two apart.
    counts = {
        span.get_attribute("data-verdict"): span.text
        for span in browser.find_elements("css selector", "p.verdicts span")
    }
    assert counts == {
        "verified": "2 verified",
        "verified with findings": "1 verified with findings",
        "rejected": "1 rejected",
        "unattested": "1 unattested",
    }
    assert _models(browser) == ["steady", "mathy", "careless"]
    assert _cells(browser, "verdict") == ["verified", "verified", "verified with findings"]
    apart = browser.find_elements("css selector", ".apart-table tbody tr")
    assert [row.get_attribute("data-model") for row in apart] == ["D", "E"]
    reasons = [row.find_element("css selector", "td[data-col='reasons']").text for row in apart]
    assert reasons[0] == "duplicate_items: item 1 twice"
    assert reasons[1].startswith("unattested: a predictions file records no")

    # One column per category (sorted), EX there and the rank among the ranked models there.
    headers = [th.text for th in browser.find_elements("css selector", ".board-table th")]
    assert "EX math" in headers and "EX physical" in headers
    assert _cells(browser, "category:physical") == ["1.000 #1", "0.000 #3", "0.333 #2"]
    assert _cells(browser, "category:math") == ["0.667 #2", "1.000 #1", "0.333 #3"]
    # Sorting by a category column orders by EX there.
    _click(browser, "category:physical")
    assert _models(browser) == ["steady", "careless", "mathy"]

    # The findings column names each kind with its item count; the message on hover.
    cell = browser.find_element(
        "css selector", ".board-table tr[data-model='careless'] td[data-col='findings']"
    )
    assert cell.text == "answers that do not read the data (1 item)"
    shown = cell.find_element("css selector", ".finding")
    assert shown.get_attribute("title") == "1 answer(s) read no table of the database"
    findings = dict(zip(_models(browser), _cells(browser, "findings"), strict=True))
    assert (findings["steady"], findings["mathy"]) == ("none", "none")

    # The forest plot: an SVG drawn from data inside the page, decoded by the browser.
    whole = browser.find_element("css selector", "figure.forest img").get_attribute("src")
    ((width, scheme),) = _images_loaded(browser)
    assert width > 400 and scheme == "data:image/svg+xml;base64,"
    screenshot = tmp_path / "leaderboard.png"
    assert browser.save_screenshot(str(screenshot))
    print(f"screenshot: {screenshot}")
    # On a category, the plot is that category's.
    Select(browser.find_element("id", "category")).select_by_visible_text("math")
    ((width, scheme),) = _images_loaded(browser)
    on_math = browser.find_element("css selector", "figure.forest img").get_attribute("src")
    assert width > 400 and scheme == "data:image/svg+xml;base64," and on_math != whole
    assert page_problems(browser) == {"console_errors": [], "fetched": []}


def test_the_verification_report_a_leaderboard_links_to(browser, tmp_path):
    """The page a leaderboard row links to (``verifications/<stem>.html``), as Chromium shows it:
    the run's name as text, its verdict and its finding, no console error, nothing fetched."""
    from sqlbench_lmeval.submission.verify_report import write_verification

    finding = ("reads_no_table", "1 answer(s) read no table of the database", [2])
    run = verification(HOSTILE, [1, 0, 0, 1, 0, 0], categories=CATEGORIES, finding=finding)
    paths = write_verification(run, tmp_path / "verifications", "report-0")
    browser.get(paths["html"].as_uri())
    assert browser.find_element("tag name", "h1").text == f"Verification of {HOSTILE}"
    assert browser.execute_script("return document.images.length") == 0  # no element from it
    text = browser.find_element("tag name", "body").text
    assert "verified with findings" in text
    assert "1 answer(s) read no table of the database" in text
    assert page_problems(browser) == {"console_errors": [], "fetched": []}
    screenshot = tmp_path / "verification.png"
    assert browser.save_screenshot(str(screenshot))
    print(f"screenshot: {screenshot}")
