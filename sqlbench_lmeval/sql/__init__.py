"""SQL text and trees: lexing, extraction of one statement from a model's answer, dialects,
normalisation, TPC-DS structure and complexity, which tables a query reads. Pure functions of
SQL text and sqlglot trees; nothing here runs a query or imports an engine."""
