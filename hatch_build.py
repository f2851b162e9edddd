"""Hatchling build hook: keep editable wheels to the path hook and our discovery .pth.

``force-include`` in pyproject.toml copies ``tasks/`` into wheels as ``sqlbench_lmeval/tasks``.
Hatchling applies ``force-include`` to editable wheels too, which would leave a frozen copy of
the tasks in site-packages beside the live checkout; an editable install must instead read the
checkout's ``tasks/`` (``sqlbench_lmeval.paths.tasks_dir`` finds it, and the finder in
``sqlbench_lmeval/lmeval/discovery.py`` makes it ``sqlbench_lmeval.tasks`` for lm-eval's task entry
point), so for editable builds we force-include only the ``.pth`` that arms task discovery.
"""

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

DISCOVERY_PTH = "sqlbench_lmeval_discovery.pth"


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if version == "editable":
            build_data["force_include_editable"] = {DISCOVERY_PTH: DISCOVERY_PTH}
