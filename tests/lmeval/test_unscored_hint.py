"""When ``lm_eval`` stops on a cache it cannot write, the answers it saves for ``score`` name
their task, and so does the hint: ``score logiccat_mini``, not ``score logiccat`` (which would
score all 4,036 LogicCat items, the 500 of the mini set among them). ``score`` refuses the file
under another name. A real run of ``logiccat_mini`` (3 items) on a private copy of the cache
whose gold folder is a file."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from support.lm_eval_run import run_lm_eval_failing

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.paths import gold_cache_dir

ANSWER = "```sql\nSELECT 1 AS one\n```"


@pytest.mark.slow  # lm_eval indexes its task configs at start-up
def test_the_saved_answers_name_their_task(logiccat_cache, tmp_path, capsys):
    root = tmp_path / "cache"
    shutil.copytree(logiccat_cache, root, ignore=shutil.ignore_patterns(gold_cache_dir(root).name))
    gold_cache_dir(root).write_text("")  # the gold folder is a file
    output = run_lm_eval_failing(
        "logiccat_mini",
        answer=ANSWER,
        workdir=tmp_path,
        extra_args=["--limit", "3"],
        env={"SQLBENCH_LMEVAL_CACHE": str(root)},
    )
    assert "EvaluationUnavailable: the cache file" in output, output[-3000:]
    hint = re.search(r"score them with `sqlbench-lmeval score (\S+) (\S+) ", output)
    assert hint is not None, output[-3000:]
    task, saved = hint.groups()
    assert task == "logiccat_mini"
    lines = [json.loads(line) for line in open(saved, encoding="ascii")]
    assert [(line["id"], line["task"]) for line in lines] == [
        (n, "logiccat_mini") for n in (1, 2, 3)
    ]
    # Under the benchmark's name the file is refused, naming its task.
    common = ["--cache-dir", str(root), "--no-progress", "--output", str(tmp_path / "s.json")]
    assert main(["score", "logiccat", saved, *common]) == 2
    assert "score logiccat_mini" in capsys.readouterr().err
    # The cause fixed, the hint's command scores the mini set.
    gold_cache_dir(root).unlink()
    assert main(["score", task, saved, *common]) == 0
    scored = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert (scored["task"], len(scored["items"])) == ("logiccat_mini", 500)
    assert scored["missing_ids"] == list(range(4, 501))
