"""``verify`` and ``leaderboard`` on real ``lm_eval`` runs of ``logiccat_mini`` (``--limit 8``,
the loopback server) whose "model" is a lookup of gold, and on two honest runs beside them.

Honest runs A and B answer each item with a query of their own (wrong, and different in the two
runs). The lookups: every answer gold inside a query of its own (``SELECT * FROM (<gold>) AS
sub``); gold verbatim, ours on odd items and upstream's published MySQL text on even ones
(item 2's published gold is ``SELECT (Max_Gross_Weight * 1.2) / ...`` where ours casts); A's
answers on even items and B's on odd ones, each with one byte added; and a splice of the samples
lines of the verbatim run and run A with lm-eval's own claims and recomputed means. One more run
answers as a model of its own on other decoding settings (penalties, ``top_p``, a generation
limit of 32768). A copy of run A whose results file records a chat template holding one
``{% if "<question>" in ... %}Reference solution: <gold>{% endif %}`` per item, every prompt
rendered from it, is rejected. The leaderboard of them all ranks A and B only.
"""

from __future__ import annotations

import json

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment
from support.lm_eval_run import run_lm_eval
from support.verify_runs import (
    copy_run,
    edit_prompts,
    recompute_aggregates,
    results_json,
    samples_lines,
    write_results_json,
    write_samples_lines,
)

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.logiccat.task import documents
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.submission.checks.integrity import gold_copy

pytestmark = pytest.mark.slow

TASK, LIMIT = "logiccat_mini", 8
ITEMS = tuple(range(1, LIMIT + 1))  # the first documents of the mini set are items 1-8
QUESTION = "\nQuestion: "
DECODING = "max_gen_toks=32768,frequency_penalty=1.5,presence_penalty=1.0,top_p=0.1,seed=7"


def fenced(sql: str) -> str:
    return f"```sql\n{sql}\n```"


def honest(name: str, doc: dict) -> str:
    """A model's own answer: reads the data, differs per item and per model."""
    return fenced(f"SELECT '{name} {doc['id']}' AS guess, COUNT(*) AS n FROM {table(doc)}")


def table(doc: dict) -> str:
    """The first table the item's schema creates."""
    return doc["schema"].split("CREATE TABLE", 1)[1].split("(", 1)[0].strip().strip('`"')


def byte_added(output: str) -> str:
    """``output`` with one more space in its SQL: another byte sequence, the same answer."""
    return output.replace("SELECT ", "SELECT  ", 1)


ANSWERS = {
    "A": lambda doc: honest("A", doc),
    "B": lambda doc: honest("B", doc),
    "subquery": lambda doc: fenced(
        f"SELECT * FROM ({doc['gold_sql'].rstrip().rstrip(';')}) AS sub"
    ),
    "verbatim": lambda doc: fenced(
        doc["published_gold_sql"] if doc["id"] % 2 == 0 else doc["gold_sql"]
    ),
    "mix": lambda doc: byte_added(honest("A" if doc["id"] % 2 == 0 else "B", doc)),
    "decoding": lambda doc: honest("D", doc),
}


@pytest.fixture(scope="module")
def docs(logiccat_cache):
    return {doc["id"]: doc for doc in documents("mini", cache_dir=logiccat_cache)}


def run(name, docs, cache, root, *extra):
    """The model folder of a real lm_eval run of ``TASK`` answered by ``ANSWERS[name]``."""
    by_question = {}
    for doc in docs.values():
        by_question.setdefault(doc["question"].strip(), doc)

    def answer(prompt: str) -> str:
        question = prompt.split(QUESTION, 1)[1].split("\n\n", 1)[0].strip()
        return ANSWERS[name](by_question[question])

    workdir = root / name
    workdir.mkdir()
    run_lm_eval(
        TASK,
        answer=answer,
        workdir=workdir,
        extra_args=["--limit", str(LIMIT), *extra],
        env={"SQLBENCH_LMEVAL_CACHE": str(cache)},
    )
    (results,) = (workdir / "lm_eval_output").glob("*/results_*.json")
    return results.parent


@pytest.fixture(scope="module")
def runs(docs, logiccat_cache, tmp_path_factory):
    root = tmp_path_factory.mktemp("lookup-runs")
    folders = {
        name: run(name, docs, logiccat_cache, root) for name in ANSWERS if name != "decoding"
    }
    folders["decoding"] = run("decoding", docs, logiccat_cache, root, "--gen_kwargs", DECODING)
    # The splice: the verbatim run's lines on odd items, run A's on even ones, in A's folder,
    # with the means lm-eval would compute from them.
    splice = copy_run(folders["A"], root / "splice")
    gold = {line["doc"]["id"]: line for line in samples_lines(folders["verbatim"])}
    lines = [
        gold[line["doc"]["id"]] if line["doc"]["id"] % 2 else line for line in samples_lines(splice)
    ]
    write_samples_lines(splice, lines)
    recompute_aggregates(splice, TASK)
    folders["splice"] = splice
    return folders


def verify(folders, cache, out, capsys) -> tuple[int, dict[str, dict]]:
    """``sqlbench-lmeval verify NAME=FOLDER...``: its exit code and each run's report (JSON)."""
    arguments = [f"{name}={folder}" for name, folder in folders.items()]
    code = main(
        ["verify", *arguments, "--output", str(out), "--no-progress", "--cache-dir", str(cache)]
    )
    printed = capsys.readouterr().out
    assert "It cannot prove that a model wrote them" in printed
    reports = {}
    for path in out.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        reports[data["run"]] = data
    assert set(reports) == set(folders)
    return code, reports


def findings(report) -> dict[str, dict]:
    """The findings that are problems (not info), by code."""
    found = [f for task in report["tasks"] for f in task["findings"]] + report["findings"]
    return {f["code"]: f for f in found if f["severity"] != "info"}


def test_gold_in_any_form_is_found_and_says_which(runs, docs, logiccat_cache, tmp_path, capsys):
    chosen = {name: runs[name] for name in ("subquery", "verbatim", "splice")}
    _, reports = verify(chosen, logiccat_cache, tmp_path / "out", capsys)
    subquery = findings(reports["subquery"])["gold_verbatim"]
    assert subquery["items"] == list(ITEMS)
    assert f"{LIMIT} our gold SQL inside a query of their own" in subquery["message"]
    verbatim = findings(reports["verbatim"])["gold_verbatim"]
    assert verbatim["items"] == list(ITEMS)
    # Items 2, 4, 6 and 8 answered upstream's text: those whose published text is ours token
    # for token count as ours (item 8), the others as published (2: ours casts to REAL).
    message = verbatim["message"]
    assert "the gold SQL as the benchmark's authors published it" in message
    assert "our gold SQL" in message
    published = int(message.split("; ")[-1].split(" the gold SQL as")[0])
    assert published == 3  # items 2, 4, 6
    item = Item.from_doc(docs[2])
    upstream = (docs[2]["published_gold_sql"], docs[2]["published_dialect"])
    assert upstream[0].startswith("SELECT (Max_Gross_Weight * 1.2) / Total_Disk_Area")
    assert gold_copy(item, [upstream[0]], upstream) == "published"
    assert gold_copy(item, [upstream[0]]) is None  # what our gold alone missed
    splice = findings(reports["splice"])["gold_verbatim"]
    assert splice["items"] == [1, 3, 5, 7]
    for report in reports.values():
        assert report["verdict"] == "verified with findings"
        assert "It cannot prove that a model wrote them" in report["verified_means"]


def test_a_mix_of_two_runs_with_a_byte_added_shares_their_outputs(
    runs, logiccat_cache, tmp_path, capsys
):
    chosen = {name: runs[name] for name in ("A", "B", "mix")}
    _, reports = verify(chosen, logiccat_cache, tmp_path / "out", capsys)
    shared = [
        f
        for task in reports["mix"]["tasks"]
        for f in task["findings"]
        if f["code"] == "shared_outputs"
    ] + [f for f in reports["mix"]["findings"] if f["code"] == "shared_outputs"]
    assert sorted(tuple(f["items"]) for f in shared) == [(1, 3, 5, 7), (2, 4, 6, 8)]
    assert {("run A" in f["message"]) or ("run B" in f["message"]) for f in shared} == {True}


def test_decoding_settings_on_a_greedy_task_are_findings(runs, logiccat_cache, tmp_path, capsys):
    code, reports = verify({"decoding": runs["decoding"]}, logiccat_cache, tmp_path / "out", capsys)
    found = findings(reports["decoding"])
    decoding = found["decoding_settings"]["message"]
    for setting in ("frequency_penalty=1.5", "presence_penalty=1.0", "top_p=0.1"):
        assert setting in decoding
    assert "seed" not in decoding  # a seed changes no greedy answer
    assert "max_gen_toks 32768" in found["generation_limit"]["message"]
    assert found["generation_limit"]["severity"] == "finding"
    assert code == 0 and reports["decoding"]["verdict"] == "verified with findings"


def lookup_template(docs) -> str:
    """A ChatML template that writes each item's gold after its question's prompt."""
    lookups = "".join(
        f'{{% if {json.dumps(doc["question"].strip())} in messages[-1]["content"] %}}'
        f"Reference solution: {doc['gold_sql']}{{% endif %}}"
        for doc in docs.values()
    )
    return (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
        + lookups
        + "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
        "{% endif %}"
    )


def with_template(folder, template: str, only=None):
    """The run at ``folder`` as if made with ``template`` recorded and applied to every
    prompt (``only``: the one item kept, the others' lines dropped)."""
    if only is not None:
        lines = samples_lines(folder)
        write_samples_lines(folder, [line for line in lines if line["doc"]["id"] == only])
        recompute_aggregates(folder, TASK)
    compiled = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(
        template
    )
    edit_prompts(
        folder,
        lambda line, prompt: compiled.render(
            messages=[{"role": "user", "content": prompt}], add_generation_prompt=True
        ),
    )
    data = results_json(folder)
    data["chat_template"] = template
    write_results_json(folder, data)
    return folder


@pytest.mark.parametrize("only", [None, 2], ids=["all-items", "one-item"])
def test_a_chat_template_that_carries_gold_rejects_the_run(
    runs, docs, logiccat_cache, tmp_path, capsys, only
):
    # One item leaves nothing to compare across items: the render alone decides.
    items = list(ITEMS) if only is None else [only]
    # The template without the lookups wraps each prompt in its markers alone: it stands.
    plain = with_template(copy_run(runs["A"], tmp_path / "plain"), lookup_template({}), only)
    _, reports = verify({"plain": plain}, logiccat_cache, tmp_path / "plain-out", capsys)
    assert "added_prompt_text" not in findings(reports["plain"])
    rows = reports["plain"]["tasks"][0]["items"]
    assert {row["prompt"] for row in rows if row["id"] in items} == {"wrapped"}
    # With the lookups, each prompt holds its gold, rendered by the recorded template itself.
    lookup = with_template(copy_run(runs["A"], tmp_path / "lookup"), lookup_template(docs), only)
    assert "Reference solution: " + docs[2]["gold_sql"] in json.dumps(samples_lines(lookup))
    code, reports = verify({"lookup": lookup}, logiccat_cache, tmp_path / "lookup-out", capsys)
    assert findings(reports["lookup"])["added_prompt_text"]["items"] == items
    assert code == 6 and reports["lookup"]["verdict"] == "rejected"


def test_the_leaderboard_ranks_only_the_honest_runs(runs, logiccat_cache, tmp_path, capsys):
    out = tmp_path / "board"
    arguments = [f"{name}={folder}" for name, folder in runs.items()]
    assert (
        main(
            [
                "leaderboard",
                *arguments,
                "--output",
                str(out),
                "--no-progress",
                "--cache-dir",
                str(logiccat_cache),
                "--resamples",
                "200",
            ]
        )
        == 0
    )
    capsys.readouterr()
    data = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    (board,) = data["tasks"]
    assert sorted(m["name"] for m in board["models"]) == ["A", "B"]
    apart = {m["name"]: m for m in board["not_ranked"]}
    assert set(apart) == {"subquery", "verbatim", "mix", "splice", "decoding"}
    assert board["set_apart"] == sorted(apart)
    assert apart["subquery"]["gold_copy_share"] == 1.0
    assert apart["verbatim"]["gold_copy_share"] == 1.0
    assert apart["splice"]["gold_copy_share"] == 0.5
    assert apart["mix"]["shared_output_share"] == 1.0
    assert any(r.startswith("shared outputs: 100%") for r in apart["mix"]["reasons"])
    assert any(r.startswith("decoding_settings") for r in apart["decoding"]["reasons"])
    for name in ("subquery", "verbatim", "splice"):
        assert any(r.startswith("gold copies") for r in apart[name]["reasons"])
    # A and B share half their answers with the mix, which left first: they stay ranked.
    ranked = {m["name"]: m for m in board["models"]}
    assert {ranked[n]["shared_output_share"] for n in ("A", "B")} == {0.0}
    markdown = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "5 verified but set apart" in markdown
    assert "| Gold copies | Shared outputs |" in markdown
