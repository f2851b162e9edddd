"""Every status, reason, flag and verdict value is written once, in ``vocabulary.py``
(docs/DEVELOPING.md#one-vocabulary): no other module of the package binds a module-level name to
a string literal that is one of its values (it binds the enum member instead), read with
``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

from sqlbench_lmeval import vocabulary

PACKAGE = Path(vocabulary.__file__).resolve().parent

#: Every value of every enum of the vocabulary.
VALUES = frozenset(
    member.value
    for enum in vars(vocabulary).values()
    if isinstance(enum, type) and issubclass(enum, vocabulary.Vocabulary)
    for member in enum
)


#: Module-level names whose literal happens to spell a vocabulary value but means something
#: else: (module, name) -> what it is.
OTHER_MEANINGS = {
    ("scoring/gold_ties.py", "_ORDER_WORDS"): "SQL keywords looked for in gold's text",
    ("scoring/cost.py", "TOKENIZER_NAME"): "a score-dict key (which tokenizer), not a source",
    ("scoring/metrics.py", "STRUCTURE"): "a metric group, not a reason",
    ("scoring/sampled.py", "_SAMPLE_FIELDS"): "score-dict keys, not values",
    ("sql/extract.py", "OTHER"): "a statement kind the extractor found, not a reason",
}


def literal_values(source: str) -> list[tuple[int, str, str]]:
    """(line, name, value) of each vocabulary value a module-level assignment of ``source``
    binds as a string literal (alone, or in a tuple, list, set or frozenset of literals)."""
    found = []
    for node in ast.parse(source).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        name = ",".join(ast.unparse(target) for target in targets)
        value = node.value
        if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "frozenset":
            value = value.args[0] if value.args else value
        parts = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
        found += [
            (node.lineno, name, part.value)
            for part in parts
            if isinstance(part, ast.Constant) and part.value in VALUES
        ]
    return found


def test_the_finder_sees_a_value_written_again():
    """The guard fails on a module that writes a value as main's ``scoring/answer.py`` did."""
    assert literal_values('MISSING = "missing"\nX = frozenset({"random"})\nY = "other_thing"') == [
        (1, "MISSING", "missing"),
        (2, "X", "random"),
    ]
    assert literal_values("MISSING = ScoreStatus.MISSING") == []


def test_no_module_but_the_vocabulary_writes_a_value():
    written = {
        f"{module}:{line} {name}": value
        for path in sorted(PACKAGE.rglob("*.py"))
        if (module := path.relative_to(PACKAGE).as_posix()) != "vocabulary.py"
        for line, name, value in literal_values(path.read_text(encoding="utf-8"))
        if (module, name) not in OTHER_MEANINGS
    }
    assert written == {}
