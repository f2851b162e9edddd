"""LogicCat as a benchmark: the built bundle's records as scorable items."""

from __future__ import annotations

from sqlbench_lmeval.execution import Database
from sqlbench_lmeval.scoring import Item

#: Registered on every connection, for gold and predictions alike: MySQL-compatible
#: functions and the frozen clock (see ``mysql_functions``).
CONNECTION_SETUP = "sqlbench_lmeval.logiccat.mysql_functions:install"

#: The official LogicCat mini set is the first 500 questions (``idx`` 1-500).
MINI_SET_IDS = range(1, 501)

CATEGORIES = ("physical", "mathematical", "commonsense", "hypothetical")


def load_items(cache_dir=None, source=None, **_options) -> list[Item]:
    """All 4,036 LogicCat items, building the bundle first if it is not in the cache."""
    from sqlbench_lmeval.logiccat.bundle import ensure_bundle

    return items_from_bundle(ensure_bundle(source=source, cache_dir=cache_dir))


def items_from_bundle(bundle) -> list[Item]:
    """One item per record of a loaded ``logiccat.bundle.Bundle``."""
    return [
        Item(
            id=record.id,
            question=record.question,
            database=Database(
                engine="sqlite",
                path=str(bundle.database_path(record.db_id)),
                setup=CONNECTION_SETUP,
            ),
            gold_sql=record.gold_sql,
            dialect="sqlite",
            category=record.category,
            gold_status=record.gold_status,
            flags=tuple(record.flags),
        )
        for record in bundle.records
    ]


def dataset_version(cache_dir=None, source=None, **_options) -> str:
    from sqlbench_lmeval.logiccat.bundle import ensure_bundle

    return version_of_bundle(ensure_bundle(source=source, cache_dir=cache_dir))


def version_of_bundle(bundle) -> str:
    """Names the exact data: upstream commit and the builder that made the bundle."""
    from sqlbench_lmeval.logiccat.bundle import BUILDER_VERSION

    commit = bundle.manifest.get("source_commit", "unknown")
    return f"logiccat-{commit[:12]}-builder{BUILDER_VERSION}"
