"""A toy benchmark that lives in the test suite, added by following docs/adding-a-benchmark.md
alone: five questions over a small shop database it builds (registered by
``$SQLBENCH_LMEVAL_BENCHMARKS=toy=support.toybench``; tests/test_toy_benchmark.py runs it)."""
