"""What each answer cost (``--model sqlbench-metered``) through the real ``lm_eval`` CLI and
``sqlbench-lmeval score``, against the scripted loopback chat server.

- A server that sends ``usage`` (numbers the test chooses per prompt and reply) and holds each
  reply back ``DELAY_S``: every item's counts are what the server sent for its request, its
  latency at least the delay (a lower bound only: no timed test), the run's sums and medians
  follow, ``--price`` turns them into spend; concurrent requests (``num_concurrent``) keep each
  reply's own usage.
- A server without ``usage``, with ``tokenizer=`` a WordLevel tokenizer the test writes: the
  counts are the tokenizer's, said to be.
- ``sqlbench-repair`` over ``sqlbench-metered``: every attempt is metered, the item costs their sum.
- The scores with and without metering are the same, field for field, once the cost fields
  are set aside (the lm-eval samples and ``score``'s file alike).
- Where the numbers are shown, they are the server's: ``report``'s cost section and its chart
  (opened in Chromium, with the explorer's item view), and ``leaderboard``'s columns, marked
  unverifiable for usage; ``verify`` counts a tokenizer's numbers again, and a count edited in
  the log is a finding.
"""

from __future__ import annotations

import ast
import json
import shutil
import statistics
import time

import pytest
from support.browser import chromium, needs_chromium, open_page, page_problems
from support.cost import COST_FIELDS
from support.lm_eval_run import run_lm_eval
from support.logiccat_answers import QUESTION, known_answers_model
from support.openai_server import ScriptedOpenAIServer
from support.repair_run import run_wrapped

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.logiccat.bundle import load_bundle
from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.explorer import write_explorer
from sqlbench_lmeval.report.sections.cost import cost_rows
from sqlbench_lmeval.submission.leaderboard import build_leaderboard, leaderboard_data
from sqlbench_lmeval.submission.leaderboard_cost import LEGEND, MARK
from sqlbench_lmeval.submission.logged import read_submissions
from sqlbench_lmeval.submission.verify import verify_submission

pytestmark = pytest.mark.slow

DELAY_S = 0.2
LIMIT = 3


def words(text: str) -> int:
    """How many words the tokenizer below sees in ``text`` (each one token: in its vocabulary
    or ``[UNK]``), by the ``tokenizers`` library's own Whitespace split of the text the server
    received: a count made without the code under test."""
    from tokenizers import pre_tokenizers

    return len(pre_tokenizers.Whitespace().pre_tokenize_str(text))


def sent_usage(prompt: str, text: str) -> tuple[int, int]:
    """What the usage server says it counted: numbers of the test's choosing, distinct per item."""
    return 1000 + len(prompt), 7 + len(text)


def run_metered(server, workdir, model_args: str, model="sqlbench-metered", env=None):
    """``lm_eval --model <model>`` on ``LIMIT`` logiccat_mini items against ``server``;
    (the output folder, the samples)."""
    _, samples = run_wrapped(
        server, model, model_args, "logiccat_mini", workdir,
        extra_args=["--limit", str(LIMIT)], env=env,
    )  # fmt: skip
    return workdir / "out", samples["logiccat_mini"]


def logged_score(sample) -> dict:
    return ast.literal_eval(sample["filtered_resps"][0])  # lm-eval logs it as its repr


def without_cost(score: dict) -> dict:
    return {name: value for name, value in score.items() if name not in COST_FIELDS}


def score_file(run, tmp_path, name, capsys, *options) -> tuple[dict, str, str]:
    """``score logiccat_mini <run>``: (the score file, its text without cost fields, stdout)."""
    path = tmp_path / f"{name}.json"
    capsys.readouterr()
    assert (
        main(["score", "logiccat_mini", str(run), "-o", str(path), "--no-progress", *options]) == 0
    )
    printed = capsys.readouterr().out
    result = json.loads(path.read_text())
    bare = {
        **result,
        "metrics": {k: v for k, v in result["metrics"].items() if k != "cost"},
        "items": [without_cost(item) for item in result["items"]],
    }
    return result, json.dumps(bare, sort_keys=True), printed


def sent_for(server, question: str) -> list[tuple[str, str, tuple[int, int] | None, dict]]:
    """What the server sent for the requests about ``question`` (its first user turn asks it)."""
    found = []
    for prompt, text, usage, body in server.usages:
        first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        asked = QUESTION.search(first_user)
        if asked is not None and asked.group(1).strip() == question.strip():
            found.append((prompt, text, usage, body))
    return found


def test_usage_and_latency_land_in_the_score_dicts_and_scores_do_not_change(
    logiccat_cache, tmp_path, capsys
):
    records = load_bundle(logiccat_cache).records
    env = {"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)}
    answer = known_answers_model(records)
    (tmp_path / "metered").mkdir()
    with ScriptedOpenAIServer(answer, usage=sent_usage, delay_s=DELAY_S) as server:
        run, samples = run_metered(
            server, tmp_path / "metered", "base=local-chat-completions,num_concurrent=3", env=env
        )
        sent = list(server.usages)
    assert len(samples) == LIMIT and len(sent) == LIMIT
    expected = {}
    for sample in samples:
        ((prompt, text, usage, _body),) = sent_for(server, sample["doc"]["question"])
        assert usage == sent_usage(prompt, text)
        score = logged_score(sample)
        assert (score["prompt_tokens"], score["completion_tokens"]) == usage
        assert score["tokens_from"] == "usage" and score["requests"] == 1
        assert score["latency_s"] >= DELAY_S
        # The raw response is the envelope: the base model's text and its cost.
        envelope = json.loads(sample["resps"][0][0])
        assert envelope["output"] == text and envelope["cost"]["prompt_tokens"] == usage[0]
        expected[sample["doc"]["id"]] = usage
    # Not a row of lm-eval's table: tokens are not averaged into a score.
    table = json.loads(next(run.rglob("results_*.json")).read_text())["results"]["logiccat_mini"]
    assert not any(
        key.startswith(("prompt_tokens", "completion_tokens", "latency")) for key in table
    )

    # The same answers, unmetered: every score field the same.
    (tmp_path / "plain").mkdir()
    _, plain_samples = run_lm_eval(
        "logiccat_mini", answer=answer, chat=True, workdir=tmp_path / "plain",
        extra_args=["--limit", str(LIMIT)], env=env,
    )  # fmt: skip
    plain = {s["doc"]["id"]: logged_score(s) for s in plain_samples["logiccat_mini"]}
    metered = {s["doc"]["id"]: logged_score(s) for s in samples}
    assert not COST_FIELDS & set().union(*plain.values())
    assert {i: without_cost(s) for i, s in metered.items()} == plain

    # score: the items' counts, the run's sums and medians, and the spend at a given price.
    result, bare, printed = score_file(run, tmp_path, "metered", capsys, "--price", "2,8")
    plain_result, plain_bare, plain_printed = score_file(
        tmp_path / "plain" / "lm_eval_output", tmp_path, "plain", capsys
    )
    assert bare == plain_bare  # byte for byte, once the cost fields are set aside
    assert "cost:" not in plain_printed
    items = {item["id"]: item for item in result["items"]}
    for item_id, (prompt_tokens, completion_tokens) in expected.items():
        item = items[item_id]
        assert (item["prompt_tokens"], item["completion_tokens"]) == (
            prompt_tokens,
            completion_tokens,
        )
        assert item["spend"] == pytest.approx((2 * prompt_tokens + 8 * completion_tokens) / 1e6)
    cost = result["metrics"]["cost"]
    prompts = [p for p, _ in expected.values()]
    completions = [c for _, c in expected.values()]
    assert cost["n_metered"] == cost["n_counted"] == LIMIT
    assert cost["prompt_tokens"] == sum(prompts)
    assert cost["completion_tokens"] == sum(completions)
    assert cost["median_prompt_tokens"] == statistics.median(prompts)
    assert cost["median_tokens"] == statistics.median(p + c for p, c in expected.values())
    assert cost["latency_s"] >= LIMIT * DELAY_S and cost["median_latency_s"] >= DELAY_S
    assert cost["tokens_from"] == {"usage": LIMIT}
    assert cost["spend"] == pytest.approx((2 * sum(prompts) + 8 * sum(completions)) / 1e6)
    assert result["metrics"]["ex"] == plain_result["metrics"]["ex"]  # tokens are in no mean
    assert f"cost: {LIMIT} items metered" in printed
    assert f"prompt {sum(prompts):,}" in printed and "spend" in printed

    # report: the server's numbers in the cost section, a point for the metered run only.
    tokens = [p + c for p, c in expected.values()]
    runs = read_runs([f"metered={tmp_path / 'metered.json'}", f"plain={tmp_path / 'plain.json'}"])
    rows = {row.run: row for row in cost_rows(runs)}
    assert (rows["metered"].median_tokens, rows["metered"].total_tokens) == (
        statistics.median(tokens),
        sum(tokens),
    )
    assert rows["metered"].median_latency_s >= DELAY_S
    assert rows["metered"].spend == pytest.approx(cost["spend"])
    assert rows["metered"].sources == f"usage {LIMIT}" and rows["plain"].metered == 0
    report = write_report(runs, tmp_path / "report", resamples=20)
    markdown = report.markdown.read_text("utf-8")
    assert f"| {statistics.median(tokens):,.1f} | {sum(tokens):,} |" in markdown
    assert "Not measured (not run with sqlbench-metered" in markdown
    explorer = write_explorer(runs, tmp_path / "explorer")

    # leaderboard: the same numbers, marked unverifiable (the server's usage, latency).
    board = tmp_path / "board"
    build_leaderboard([f"metered={run}"], board, cache_dir=logiccat_cache, resamples=50)
    (task,) = json.loads((board / "leaderboard.json").read_text("utf-8"))["tasks"]
    (model,) = task["models"] + task["not_ranked"]
    assert (model["median_tokens"], model["total_tokens"]) == (
        statistics.median(tokens),
        sum(tokens),
    )
    assert model["tokens_unverifiable"] is True and model["median_latency_s"] >= DELAY_S
    board_markdown = (board / "leaderboard.md").read_text("utf-8")
    assert f"| {statistics.median(tokens):,.0f} {MARK} | {sum(tokens):,} {MARK} |" in board_markdown
    assert LEGEND in board_markdown
    if needs_chromium.args[0]:  # no browser here: the files above are checked all the same
        return
    shown = in_chromium(tmp_path, report.html, explorer, board / "leaderboard.html")
    assert shown["chart"] == "cost for logiccat_mini" and shown["chart_width"] > 300
    assert f"{sum(tokens):,}" in shown["report_table"]
    assert shown["board_tokens"] == [f"{statistics.median(tokens):,.0f} {MARK}"]
    assert shown["board_legend"] == LEGEND
    item_id, (prompt_tokens, completion_tokens) = next(iter(expected.items()))
    metered_why, plain_why = shown["explorer"](item_id)
    assert metered_why.startswith(
        f"Cost: {prompt_tokens + completion_tokens:,} tokens (prompt {prompt_tokens:,}, "
        f"completion {completion_tokens:,}; the server's usage, unverifiable), "
    )
    assert plain_why is None  # the run that was not metered has no cost line


def in_chromium(tmp_path, report, explorer, board) -> dict:
    """What Chromium shows of the report's cost section, the leaderboard's token column and the
    explorer's item view; a screenshot of each under ``tmp_path``."""
    with chromium(tmp_path / "profile") as driver:
        driver.get(report.as_uri())
        chart = driver.find_element("css selector", "img[alt^='cost for']")
        for _ in range(100):  # images decode asynchronously
            if driver.execute_script("return arguments[0].complete", chart):
                break
            time.sleep(0.05)
        driver.execute_script("arguments[0].scrollIntoView()", chart)
        heading = driver.find_element("xpath", "//h2[text()='Cost: tokens and latency']")
        shown = {
            "chart": chart.get_attribute("alt"),
            "chart_width": driver.execute_script("return arguments[0].naturalWidth", chart),
            "report_table": heading.find_element("xpath", "following::table[1]").text,
        }
        assert page_problems(driver) == {"console_errors": [], "fetched": []}
        assert driver.save_screenshot(str(tmp_path / "report-cost.png"))
        open_page(driver, board, "leaderboardReady")
        cells = driver.find_elements("css selector", "td[data-col='median_tokens']")
        shown["board_tokens"] = [cell.text for cell in cells]
        shown["board_legend"] = driver.find_element("css selector", ".cost-legend").text
        assert page_problems(driver) == {"console_errors": [], "fetched": []}
        assert driver.save_screenshot(str(tmp_path / "leaderboard-cost.png"))
        open_page(driver, explorer, "explorerReady")
        panels = {}
        for row in driver.find_elements("css selector", "#items tr[data-key]"):
            key = row.get_attribute("data-key")
            row.click()
            found = driver.find_element("id", "detail").find_elements("css selector", ".run")
            panels[int(key.rsplit("/", 1)[1])] = [
                next((p.text for p in panel.find_elements("css selector", ".why .cost")), None)
                for panel in found
            ]
        assert page_problems(driver) == {"console_errors": [], "fetched": []}
        assert driver.save_screenshot(str(tmp_path / "explorer-cost.png"))
    shown["explorer"] = panels.__getitem__
    print(f"screenshots: {tmp_path}/{{report,leaderboard,explorer}}-cost.png")
    return shown


def write_word_tokenizer(folder, texts) -> None:
    """A WordLevel tokenizer over the words of ``texts`` (Whitespace pre-tokenizer, no special
    tokens added to a text), saved where ``AutoTokenizer`` loads it."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    split = pre_tokenizers.Whitespace().pre_tokenize_str
    known = sorted({word for text in texts for word, _ in split(text)})
    vocab = {"[UNK]": 0, **{word: i + 1 for i, word in enumerate(known)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]").save_pretrained(folder)


def test_without_usage_a_named_tokenizer_counts_and_verify_counts_again(
    logiccat_cache, tmp_path, capsys
):
    records = load_bundle(logiccat_cache).records
    env = {"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)}
    tokenizer = tmp_path / "tokenizer"
    write_word_tokenizer(tokenizer, ["SELECT the pumps"])  # most words are unknown: one token each
    (tmp_path / "run").mkdir()
    with ScriptedOpenAIServer(known_answers_model(records), usage=None, delay_s=DELAY_S) as server:
        run, samples = run_metered(
            server, tmp_path / "run", f"base=local-chat-completions,tokenizer={tokenizer}", env=env
        )
    for sample in samples:
        ((_prompt, text, usage, body),) = sent_for(server, sample["doc"]["question"])
        assert usage is None
        score = logged_score(sample)
        # No chat template in the tokenizer: the messages' contents, one per line.
        shown = "\n".join(m["content"] for m in body["messages"])
        assert score["prompt_tokens"] == words(shown)
        assert score["completion_tokens"] == words(text)
        assert score["tokens_from"] == "tokenizer" and score["latency_s"] >= DELAY_S
    result, _, printed = score_file(run, tmp_path, "scores", capsys)
    assert result["metrics"]["cost"]["tokens_from"] == {"tokenizer": LIMIT}
    assert result["metrics"]["cost"]["tokenizer"] == str(tokenizer)  # says which
    assert "(tokenizer 3)" in printed and f"counted by tokenizer {tokenizer}" in printed

    # verify counts them again with the named tokenizer: all agree, only latency is unverifiable.
    ids = sorted(sample["doc"]["id"] for sample in samples)
    found = cost_findings(run, logiccat_cache)
    assert found["cost_checked"]["items"] == ids and found["cost_unverifiable"]["items"] == []
    assert "the latency of every answer" in found["cost_unverifiable"]["message"]
    assert "cost_tokens_differ" not in found
    data = leaderboard_data([verification_of(run, logiccat_cache)], {}, resamples=20)
    (model,) = data["tasks"][0]["models"] + data["tasks"][0]["not_ranked"]
    assert model["tokens_unverifiable"] is False
    assert model["total_tokens"] == result["metrics"]["cost"]["tokens"]

    # One count edited in the log (the envelope and the logged score dict alike): a finding.
    edited = tmp_path / "edited"
    shutil.copytree(run, edited)
    (log,) = edited.rglob("samples_*.jsonl")
    lines = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    claimed = json.loads(lines[0]["resps"][0][0])["cost"]["prompt_tokens"]
    lines[0]["resps"][0][0] = lines[0]["resps"][0][0].replace(
        f'"prompt_tokens": {claimed},', f'"prompt_tokens": {claimed - 1},'
    )
    lines[0]["filtered_resps"][0] = lines[0]["filtered_resps"][0].replace(
        f"'prompt_tokens': {claimed},", f"'prompt_tokens': {claimed - 1},"
    )
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    found = cost_findings(edited, logiccat_cache)
    assert found["cost_tokens_differ"]["items"] == [lines[0]["doc"]["id"]]
    assert found["cost_tokens_differ"]["severity"] == "finding"
    assert "item_mismatch" not in found  # the scores stand: only the count was edited


def verification_of(run, cache):
    (submission,) = read_submissions(str(run))
    return verify_submission(submission, cache_dir=cache)


def cost_findings(run, cache) -> dict[str, dict]:
    """``verify``'s findings on ``run``, by code."""
    verification = verification_of(run, cache)
    return {f.code: f.to_json() for f in verification.all_findings}


def test_repair_over_metered_meters_every_attempt(logiccat_cache, tmp_path):
    env = {"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)}
    prose = "I would need to know more about the pumps before answering."
    (tmp_path / "run").mkdir()
    with ScriptedOpenAIServer(prose, usage=sent_usage) as server:
        _, samples = run_metered(
            server, tmp_path / "run",
            "base=sqlbench-metered,metered_base=local-chat-completions,retries=1",
            model="sqlbench-repair", env=env,
        )  # fmt: skip
    for sample in samples:
        sent = sent_for(server, sample["doc"]["question"])
        assert len(sent) == 2  # the question, then the no-SQL feedback
        score = logged_score(sample)
        assert [a["cost"]["prompt_tokens"] for a in score["attempts"]] == [
            u[0] for _, _, u, _ in sent
        ]
        assert score["prompt_tokens"] == sum(u[0] for _, _, u, _ in sent)
        assert score["completion_tokens"] == sum(u[1] for _, _, u, _ in sent)
        assert score["requests"] == 2 and score["retries_used"] == 1


def test_a_sampled_task_counts_every_sample(logiccat_cache, tmp_path):
    """``logiccat_mini_sc`` (8 samples per question), two requests at a time: the item's
    counts are the sum of what the server sent for its 8 samples."""
    records = load_bundle(logiccat_cache).records
    env = {"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)}
    (tmp_path / "run").mkdir()
    with ScriptedOpenAIServer(known_answers_model(records), usage=sent_usage) as server:
        _, samples = run_wrapped(
            server, "sqlbench-metered", "base=local-chat-completions,num_concurrent=2",
            "logiccat_mini_sc", tmp_path / "run", extra_args=["--limit", "1"], env=env,
        )  # fmt: skip
    ((sample,),) = samples.values()
    sent = sent_for(server, sample["doc"]["question"])
    assert len(sent) == 8  # every sample was a request of its own
    score = logged_score(sample)
    assert score["requests"] == 8 and score["tokens_from"] == "usage"
    assert score["prompt_tokens"] == sum(u[0] for _, _, u, _ in sent)
    assert score["completion_tokens"] == sum(u[1] for _, _, u, _ in sent)
