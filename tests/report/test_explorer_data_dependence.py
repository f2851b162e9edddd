"""The explorer shows, per answer, whether it reads the data (``data_dependence``), in a real
headless Chromium, over ``sqlbench-lmeval score`` files of real LogicCat items (the real
upstream data, built once per session; slow).

Two items of the AirCraft database, and why each answer must be judged as it is:

- item 8 asks for London Heathrow's passengers after five years; gold filters
  ``Airport_Name = 'London Heathrow'`` and returns one number. On the perturbed copies gold's
  result changes (on the doubled one no airport has that name, on the subset the numbers
  moved). Three runs answer it:

  - "honest": gold's sum with its terms in another order, under the same filter: it matches
    (the same number up to float noise) and gives gold's result on each copy: ``changed``, not
    flagged;
  - "disguised": gold's number selected ``FROM airport LIMIT 1``: it names a table, but on a
    copy it returns that number, not gold's result there: ``differs``, flagged;
  - "constant": gold's number alone: it names no table: ``no_table``, flagged, no run.

- item 10 filters ``Aircraft = 'RobinsonR-22'`` (no space), which no aircraft is called: gold
  is empty, and stays empty on the copies. "honest" answers
  with gold's own SQL: it matches, and the test cannot decide (``undecidable``, not flagged).
  "disguised" lists every aircraft: a wrong result that names a table, so it is not run
  again and nothing is decided (``data_dependence`` null).
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from support.browser import choose, chromium, needs_chromium, open_page, page_problems

from sqlbench_lmeval import cli
from sqlbench_lmeval.logiccat import bundle

pytestmark = [pytest.mark.slow, needs_chromium]

HEATHROW = 8
NO_SUCH_AIRCRAFT = 10
# Gold of item 8 with its three terms in reverse order: the same function of the data.
HONEST_8 = (
    "SELECT Transit_Passengers * POWER(1 - 0.005, 5) + Domestic_Passengers * POWER(1 + 0.02, 5)"
    " + International_Passengers * POWER(1 + 0.015, 5) AS After_5_Years FROM airport"
    " WHERE Airport_Name = 'London Heathrow'"
)


def _gold_rows(path, sql: str) -> list[tuple]:
    # Read-only and independent of the scorer: what SQLite itself returns for gold.
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        return connection.execute(sql).fetchall()


def _scored(cache, folder, name: str, answers: dict[int, str]):
    predictions = folder / f"{name}.jsonl"
    lines = (json.dumps({"id": i, "prediction": sql}) for i, sql in answers.items())
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = folder / f"{name}.json"
    argv = ["score", "logiccat", str(predictions), "-o", str(output), "--no-progress"]
    assert cli.main([*argv, "--cache-dir", str(cache)]) == 0
    return output


def _shown_keys(driver) -> list[str]:
    rows = driver.find_elements("css selector", "#items tbody tr")
    return [row.get_attribute("data-key") for row in rows]


def _panels(driver, key: str) -> dict[str, dict]:
    """Per run panel of item ``key``: the verdict, the data-dependence line and r_ves's."""
    driver.find_element("css selector", f"#items tr[data-key='{key}']").click()
    found = {}
    for panel in driver.find_element("id", "detail").find_elements("css selector", ".run"):
        data = panel.find_elements("css selector", ".why .data-dependence")
        efficiency = panel.find_elements("css selector", ".why .efficiency")
        found[panel.find_element("tag name", "h3").text] = {
            "verdict": panel.find_element("css selector", ".verdict").text,
            "value": data[0].get_attribute("data-data-dependence") if data else None,
            "text": data[0].text if data else None,
            "efficiency": efficiency[0].text if efficiency else None,
        }
    return found


def test_each_answer_says_whether_it_reads_the_data(logiccat_cache, tmp_path, capsys):
    records = {r.id: r for r in bundle.load_bundle(logiccat_cache).records}
    heathrow, no_such = records[HEATHROW], records[NO_SUCH_AIRCRAFT]
    assert heathrow.db_id == no_such.db_id == "AirCraft"
    # The reasoning above rests on these gold queries: a text filter each, one match, none.
    assert "WHERE Airport_Name = 'London Heathrow'" in heathrow.gold_sql
    assert "WHERE Aircraft = 'RobinsonR-22'" in no_such.gold_sql
    (database,) = logiccat_cache.glob("logiccat/*/databases/AirCraft.sqlite")
    ((value,),) = _gold_rows(database, heathrow.gold_sql)
    assert _gold_rows(database, no_such.gold_sql) == []
    # Only the space tells the two names apart: gold of item 10 finds nothing by one typo.
    assert _gold_rows(database, "SELECT 1 FROM aircraft WHERE Aircraft = 'Robinson R-22'")
    assert _gold_rows(database, HONEST_8) == [(pytest.approx(value, rel=1e-12),)]

    runs = {
        "honest": {HEATHROW: HONEST_8, NO_SUCH_AIRCRAFT: no_such.gold_sql},
        "disguised": {
            HEATHROW: f"SELECT {value!r} FROM airport LIMIT 1",
            NO_SUCH_AIRCRAFT: no_such.gold_sql.split(" WHERE ")[0],
        },
        "constant": {HEATHROW: f"SELECT {value!r}"},
    }
    files, printed = [], {}
    for name, answers in runs.items():
        files.append(f"{name}={_scored(logiccat_cache, tmp_path, name, answers)}")
        printed[name] = capsys.readouterr().out.splitlines()
    # ``score`` counts the verdicts as it prints the others.
    assert "data dependence: changed 1, undecidable 1" in printed["honest"]
    assert "data dependence: differs 1" in printed["disguised"]  # item 10 is not counted
    assert "data dependence: no_table 1" in printed["constant"]
    assert cli.main(["explore", *files, "--output", str(tmp_path / "out")]) == 0

    with chromium(tmp_path / "profile") as driver:
        open_page(driver, tmp_path / "out" / "explorer.html", "explorerReady", seconds=20)
        # The list: each flagged answer says so under its verdict, and why.
        row = driver.find_element("css selector", f"#items tr[data-key='logiccat/{HEATHROW}']")
        honest, disguised, constant = row.find_elements("tag name", "td")[3:6]
        assert honest.text == "correct"
        assert disguised.text == (
            "correct\ndoes not read the data: not gold's result on a perturbed copy"
        )
        assert constant.text == "correct\ndoes not read the data: no table named"

        # The filter: flagged answers (some run), then each way of deciding.
        choose(driver, "data-dependence", "does not read the data (some run)")
        assert _shown_keys(driver) == [f"logiccat/{HEATHROW}"]
        choose(driver, "data-dependence", "undecidable (some run)")
        assert _shown_keys(driver) == [f"logiccat/{NO_SUCH_AIRCRAFT}"]
        choose(driver, "data-dependence", "reads the data (some run)")
        assert _shown_keys(driver) == [f"logiccat/{HEATHROW}"]
        choose(driver, "data-dependence", "not gold's result on a perturbed copy (some run)")
        assert _shown_keys(driver) == [f"logiccat/{HEATHROW}"]
        choose(driver, "data-dependence", "any")
        every = len(records)
        assert driver.find_element("id", "summary").text == f"{every} of {every} items"

        # The item view: how each answer was judged, in words, and what it cost on r_ves.
        panels = _panels(driver, f"logiccat/{HEATHROW}")
        assert {name: panel["verdict"] for name, panel in panels.items()} == dict.fromkeys(
            runs, "correct"
        )
        assert panels["honest"]["value"] == "changed"
        assert panels["honest"]["text"].startswith(
            "Data dependence: reads the data: on each perturbed copy of the database where "
            "gold's result changed, its result is gold's there"
        )
        assert panels["disguised"]["value"] == "differs"
        assert panels["disguised"]["text"].startswith(
            "Data dependence: does not read the data as gold does: on a perturbed copy of the "
            "database where gold's result changed, its result is not gold's there"
        )
        assert panels["constant"]["value"] == "no_table"
        assert "it names no table (a constant); flagged" in panels["constant"]["text"]
        for name in ("disguised", "constant"):
            assert panels[name]["efficiency"].startswith(
                "R-VES (work) 0.000: the answer does not read the data (gold's work "
            )
        assert "BIRD's reward" in panels["honest"]["efficiency"]

        panels = _panels(driver, f"logiccat/{NO_SUCH_AIRCRAFT}")
        assert panels["honest"]["value"] == "undecidable"
        assert panels["honest"]["text"].startswith(
            "Data dependence: not decided: gold's result changed on no perturbed copy"
        )
        assert "flagged, so" not in panels["honest"]["text"]
        # Gold's own SQL: the same count of VM steps as gold, ratio 1.
        assert panels["honest"]["efficiency"].startswith("R-VES (work) 1.000: gold's work ")
        assert "ratio 1.00;" in panels["honest"]["efficiency"]
        # A wrong answer is not run again, and "constant" did not answer: nothing is said.
        assert panels["disguised"]["verdict"] == "wrong result"
        assert panels["disguised"]["text"] is None and panels["constant"]["text"] is None
        assert page_problems(driver) == {"console_errors": [], "fetched": []}
        screenshot = tmp_path / "explorer-data-dependence.png"
        _panels(driver, f"logiccat/{HEATHROW}")
        assert driver.save_screenshot(str(screenshot))
        print(f"screenshot: {screenshot}")
