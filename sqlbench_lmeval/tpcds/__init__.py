"""TPC-DS as a text-to-SQL benchmark: DuckDB's 99 TPC-DS queries, our questions, structure metrics.
``data`` builds the database and reads gold SQL and schema from the ``tpcds`` extension,
``questions`` holds the natural-language questions, ``benchmark`` turns both into scorable
items, ``task`` is the lm-eval hook module (docs/tpcds.md)."""
