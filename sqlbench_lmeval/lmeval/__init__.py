"""Everything lm-eval loads: the scoring filters and ``process_results`` of our task YAML
(``hooks``, ``sampling``), the ``sqlbench-repair`` model (``repair``), task discovery
(``discovery``, armed by the ``.pth`` file at import time: keep this package's import light) and
the task definitions read without lm-eval (``task_specs``).
"""
