"""The data layer under every benchmark: fetching a benchmark's source files (``download``),
checking files against the sizes and checksums recorded when they were built (``checksums``),
building a cache folder once under its lock and loading it checked (``built``), the error that
names a damaged file and the command that rebuilds it (``damage``), and the gold run with the
gold health of its results (``gold``). It knows no benchmark: the benchmarks import it, never
the reverse (docs/DEVELOPING.md#layers)."""
