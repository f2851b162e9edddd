"""A tiny generate_until lm-eval task written by a test into a folder of its choice.

Its data is a JSONL file beside the YAML, loaded through ``dataset_path: json`` with an absolute
``data_files`` path (relative ones resolve against the current directory), so it needs nothing
but lm-eval and ``datasets`` and runs offline with any model: ``--model dummy`` answers "lol",
the scripted loopback server answers what the test says.
"""

from __future__ import annotations

import json
from pathlib import Path

SMOKE_TASK = "sqlbench_smoke"
# (question, answer) pairs; the prompt is "Question: <q>\nAnswer:".
SMOKE_DOCS = (
    ("What is 2 + 3?", "5"),
    ("Which SQL keyword starts a query?", "SELECT"),
    ("What is the capital of France?", "Paris"),
)

_YAML = """\
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 16
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


def write_smoke_task(folder: Path, name: str = SMOKE_TASK, docs=SMOKE_DOCS) -> Path:
    """Write ``<folder>/<name>.yaml`` and its data ``<folder>/<name>.jsonl``; return the YAML."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{name}.jsonl"
    data.write_text(
        "".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in docs),
        encoding="utf-8",
    )
    yaml_path = folder / f"{name}.yaml"
    yaml_path.write_text(_YAML.format(name=name, data=json.dumps(str(data.resolve()))), "utf-8")
    return yaml_path


def smoke_answer(prompt: str) -> str:
    """The right answer for every smoke question found in ``prompt`` (else "unknown")."""
    for question, answer in SMOKE_DOCS:
        if question in prompt:
            return f"{answer}\nQuestion: this line is cut by the stop sequence"
    return "unknown"
