"""LogicCat (Liu et al. 2025) on SQLite: the faithful data build and the lm-eval hooks. Data flows
source -> bundle: ``source`` finds or downloads the pinned upstream files, ``mysqldump`` converts
each MySQL dump to SQLite, ``transpile`` and ``gold`` turn the MySQL gold into SQLite,
``mysql_functions`` registers MySQL-compatible functions and the frozen clock on every
connection, ``health`` judges each gold query, ``bundle`` writes and loads the result,
``fidelity`` measures it against a MariaDB reference; ``benchmark`` and ``task`` hand the bundle
to scoring and to lm-eval (how and why: docs/logiccat.md#how-the-copy-is-made)."""
