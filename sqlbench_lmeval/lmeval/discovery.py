"""Let lm-eval find our tasks without ``--include_path``: where lm-eval has task plugins (upstream
PR 4015), our ``lm_eval.tasks`` entry point names ``sqlbench_lmeval.tasks``, which
:class:`TasksPackageFinder` makes the tasks folder in every install layout; elsewhere a lazy import
hook, run at interpreter start by ``sqlbench_lmeval_discovery.pth``, adds that folder to every
``TaskManager``'s include path. Either way the hook leaves lm-eval's built-in tasks out when
``SQLBENCH_LMEVAL_ONLY_OUR_TASKS`` asks (how, when each adds nothing, and how to switch them off:
docs/install.md#how-lm-eval-finds-the-tasks)."""

from __future__ import annotations

import os
import sys

DISABLE_ENV = "SQLBENCH_LMEVAL_NO_DISCOVERY"
ONLY_OURS_ENV = "SQLBENCH_LMEVAL_ONLY_OUR_TASKS"
HOOKED_MODULE = "lm_eval.tasks"
#: What our ``lm_eval.tasks`` entry point names (pyproject.toml): the tasks folder as a package.
TASKS_PACKAGE = "sqlbench_lmeval.tasks"
# lm-eval's model package; importing it fills the model registry (see ModelsImportHook).
MODELS_MODULE = "lm_eval.models"
#: Our lm-eval model (``repair.RepairModel``), registered lazily by name and "module:Class".
REPAIR_MODEL = "sqlbench-repair"
REPAIR_TARGET = "sqlbench_lmeval.lmeval.repair:RepairModel"
#: ... and ``metered.MeteredModel``, registered the same way.
METERED_MODEL = "sqlbench-metered"
METERED_TARGET = "sqlbench_lmeval.lmeval.metered:MeteredModel"
DISTRIBUTION = "sqlbench-lmeval"
# Marks a wrapped __init__ so a second install() or a reload never wraps it twice.
_WRAPPED_MARK = "__sqlbench_lmeval_discovery__"
_TRUTHY = frozenset({"1", "true", "yes", "on"})
# lm-eval source files that would name a native task entry-point group (globs in lm_eval/).
_LM_EVAL_LOADER_SOURCES = ("tasks/*.py", "api/registry.py")


def disabled(environ: dict[str, str] | None = None) -> bool:
    """True when ``SQLBENCH_LMEVAL_NO_DISCOVERY`` (in ``environ``, default ``os.environ``)
    switches discovery off."""
    return _truthy(DISABLE_ENV, environ)


def only_our_tasks(environ: dict[str, str] | None = None) -> bool:
    """True when ``SQLBENCH_LMEVAL_ONLY_OUR_TASKS`` (in ``environ``, default ``os.environ``)
    leaves lm-eval's built-in tasks out of the index."""
    return _truthy(ONLY_OURS_ENV, environ)


def _truthy(name: str, environ: dict[str, str] | None) -> bool:
    value = (os.environ if environ is None else environ).get(name, "")
    return value.strip().lower() in _TRUTHY


def install() -> None:
    """Arm the hooks; called by the ``.pth`` file at every interpreter start: the finder of
    ``sqlbench_lmeval.tasks`` always, lm-eval's import hooks unless discovery is switched off.

    Costs one environment lookup and a few list inserts: the finders do their work only when
    their module is looked up. Safe to call more than once.
    """
    try:
        expose_tasks_package()  # it honours the off switch itself (a wheel must not bypass it)
        if disabled():
            return
        for hook in (TasksImportHook, ModelsImportHook):
            module = sys.modules.get(hook.hooked)
            if module is not None:
                # lm-eval was imported before us (install() called late, by hand): patch now.
                hook.patch(module)
            elif not any(type(finder) is hook for finder in sys.meta_path):
                sys.meta_path.insert(0, hook())
    except Exception as error:  # noqa: BLE001 - a start-up hook must never raise
        _warn(error)


def uninstall() -> None:
    """Disarm the hook: remove the finders and restore the original ``TaskManager.__init__``
    (a registered ``sqlbench-repair`` model stays: lm-eval's registry has no removal)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, TasksImportHook)]
    if is_active():
        manager = sys.modules[HOOKED_MODULE].TaskManager
        manager.__init__ = manager.__init__.__wrapped__


def is_active() -> bool:
    """True when lm-eval's ``TaskManager`` is currently wrapped by this hook."""
    manager = getattr(sys.modules.get(HOOKED_MODULE), "TaskManager", None)
    return bool(getattr(getattr(manager, "__init__", None), _WRAPPED_MARK, False))


class TasksImportHook:
    """A ``sys.meta_path`` finder that waits for ``lm_eval.tasks`` and patches it once loaded.

    It finds nothing itself: for ``lm_eval.tasks`` it asks the other finders for the real spec
    and wraps that spec's loader so the patch runs right after the module body.
    """

    hooked = HOOKED_MODULE

    @staticmethod
    def patch(module) -> None:
        _patch_task_module(module)

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.hooked:
            return None
        try:
            spec = self._real_spec(fullname, path, target)
            loader = getattr(spec, "loader", None)
            if loader is None or not hasattr(loader, "exec_module"):
                return None
            loader.exec_module = self._patched_exec(loader)
            return spec
        except Exception as error:  # noqa: BLE001 - fall back to the plain import
            _warn(error)
            return None

    def _real_spec(self, fullname, path, target):
        for finder in list(sys.meta_path):
            find_spec = getattr(finder, "find_spec", None)
            if finder is self or find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None

    def _patched_exec(self, loader):
        """``loader.exec_module``, then the patch; used once, then the loader is as it was."""
        exec_module = loader.exec_module

        def exec_then_patch(module):
            # A loader may serve several modules (a zip importer): undo our shadowing first.
            vars(loader).pop("exec_module", None)
            exec_module(module)
            if getattr(module, "__name__", None) != self.hooked:
                return
            # Only once lm-eval's own module body succeeded: a failed import may be retried.
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            self.patch(module)

        return exec_then_patch


class ModelsImportHook(TasksImportHook):
    """The same finder for ``lm_eval.models``: registers ``sqlbench-repair`` (and
    ``sqlbench-metered``) once it is loaded.

    Why then: lm-eval 0.4.13's ``get_model`` imports ``lm_eval.models`` (which registers the
    built-in models) only while the model registry is empty, so registering ours any earlier
    would hide every built-in model. The registration is a "module:Class" placeholder, so
    nothing of ours is imported until someone asks for the model.
    """

    hooked = MODELS_MODULE

    @staticmethod
    def patch(module) -> None:
        register_repair_model()


class TasksPackageFinder:
    """A ``sys.meta_path`` finder that makes ``sqlbench_lmeval.tasks`` our tasks folder, as a
    namespace package, wherever that folder lies: a wheel carries it as ``sqlbench_lmeval/tasks``
    but a source checkout (an editable install) keeps it beside the package, where the name would
    not resolve and lm-eval's entry-point lookup would find no tasks. With discovery switched
    off (:data:`DISABLE_ENV`) the package is empty, so that lookup finds no folder either.

    Armed by :func:`install` (the ``.pth`` file, at interpreter start) whatever the switch says:
    it reads the switch itself, at each lookup.
    """

    def find_spec(self, fullname, path=None, target=None):
        if fullname != TASKS_PACKAGE:
            return None
        from importlib.machinery import ModuleSpec

        spec = ModuleSpec(fullname, None, is_package=True)
        if not disabled():
            from sqlbench_lmeval.paths import tasks_dir

            spec.submodule_search_locations.append(str(tasks_dir()))
        return spec


def expose_tasks_package() -> None:
    """Arm :class:`TasksPackageFinder` (once), ahead of the path finder: a wheel's own
    ``sqlbench_lmeval/tasks`` must not bypass the switch."""
    if not any(type(finder) is TasksPackageFinder for finder in sys.meta_path):
        sys.meta_path.insert(0, TasksPackageFinder())


def register_repair_model() -> None:
    """Register ``sqlbench-repair`` and ``sqlbench-metered`` in lm-eval's model registry
    (lazily; idempotent)."""
    try:
        from lm_eval.api.registry import model_registry

        for name, target in ((REPAIR_MODEL, REPAIR_TARGET), (METERED_MODEL, METERED_TARGET)):
            if name not in model_registry.keys():
                model_registry.register(name, target=target)
    except Exception as error:  # noqa: BLE001 - never break lm-eval's import
        _warn(error)


def extended_include_path(include_path, tasks_dir) -> list | None:
    """The ``include_path`` to give ``TaskManager`` with our tasks folder in it, or None.

    ``include_path`` is what the caller passed (None, a path, or a list/tuple of paths). Ours
    goes first, so the caller's folders keep precedence (lm-eval lets later folders override
    earlier ones). None means "leave it alone": one of the caller's paths already covers our
    folder, lies inside it, or contains it.
    """
    from pathlib import Path

    if include_path is None or include_path == "":
        given = []
    elif isinstance(include_path, (list, tuple)):
        given = list(include_path)
    else:
        given = [include_path]
    ours = Path(tasks_dir).resolve()
    for path in given:
        theirs = Path(path).resolve()
        if theirs == ours or theirs in ours.parents or ours in theirs.parents:
            return None
    return [str(ours), *given]


def native_task_plugins(lm_eval_root, our_groups) -> bool:
    """True when lm-eval indexes installed packages' task folders itself (see module doc).

    ``lm_eval_root`` is the ``lm_eval`` package folder; ``our_groups`` the entry-point groups
    our distribution advertises. Both conditions must hold: lm-eval naming a task group we do
    not advertise would make our tasks vanish if we stepped aside.
    """
    from pathlib import Path

    groups = [g for g in our_groups if g.startswith("lm_eval") and "task" in g]
    if not groups:
        return False
    for pattern in _LM_EVAL_LOADER_SOURCES:
        for path in sorted(Path(lm_eval_root).glob(pattern)):
            try:
                source = path.read_text(encoding="utf-8")
            except OSError:
                continue
            if any(f'"{g}"' in source or f"'{g}'" in source for g in groups):
                return True
    return False


def _our_entry_point_groups() -> list[str]:
    from importlib import metadata

    try:
        return sorted({ep.group for ep in metadata.distribution(DISTRIBUTION).entry_points})
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return []


def _patch_task_module(module) -> None:
    try:
        manager = getattr(module, "TaskManager", None)
        if manager is None:
            raise RuntimeError(f"{HOOKED_MODULE} has no TaskManager")
        if getattr(manager.__init__, _WRAPPED_MARK, False):
            return
        from pathlib import Path

        lm_eval_root = Path(module.__file__).resolve().parent.parent
        # Where lm-eval indexes our entry point's folder itself, adding it again would index
        # every task twice: the wrapper then only leaves lm-eval's own tasks out, when asked.
        plugins = native_task_plugins(lm_eval_root, _our_entry_point_groups())
        manager.__init__ = _wrap_init(manager.__init__, add_our_folder=not plugins)
    except Exception as error:  # noqa: BLE001 - never break lm-eval's import
        _warn(error)


def _wrap_init(original, add_our_folder: bool = True):
    import functools
    import inspect

    signature = inspect.signature(original)
    if "include_path" not in signature.parameters:
        raise RuntimeError("TaskManager.__init__ takes no include_path")

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        try:
            call = _call_with_our_tasks(signature, self, args, kwargs, add_our_folder)
        except Exception as error:  # noqa: BLE001
            _warn(error)
            call = None
        if call is None:
            original(self, *args, **kwargs)
            return
        new_args, new_kwargs, given, left_out_builtins = call
        try:
            original(self, *new_args, **new_kwargs)
        except Exception as error:  # noqa: BLE001 - retry exactly as the caller asked
            _warn(error)
            original(self, *args, **kwargs)
            return
        # Callers (and their logs) see the include_path they passed, not ours.
        if hasattr(self, "include_path"):
            self.include_path = given
        if left_out_builtins and callable(getattr(self, "match_tasks", None)):
            self.match_tasks = _hinting_match_tasks(self.match_tasks)

    setattr(__init__, _WRAPPED_MARK, True)
    return __init__


def _call_with_our_tasks(signature, self, args, kwargs, add_our_folder=True):
    """(args, kwargs, caller's include_path, whether lm-eval's built-in tasks are left out)
    for a call that includes our folder (where ``add_our_folder``) or leaves lm-eval's own tasks
    out, or None."""
    if disabled() or not (add_our_folder or only_our_tasks()):
        return None
    try:
        bound = signature.bind(self, *args, **kwargs)
    except TypeError:  # the caller's own mistake: let lm-eval raise it, unchanged
        return None
    given = bound.arguments.get("include_path")
    include_path = None
    if add_our_folder:
        from sqlbench_lmeval.paths import tasks_dir

        include_path = extended_include_path(given, tasks_dir())
    # Only a caller's own include_defaults=False is already what the variable asks for.
    leave_out_builtins = only_our_tasks() and bound.arguments.get("include_defaults", True)
    if include_path is None and not leave_out_builtins:
        return None
    import logging

    logger = logging.getLogger(__name__)
    if include_path is not None:
        bound.arguments["include_path"] = include_path
        logger.debug(
            "adding %s to lm-eval's include_path (%s=1 turns this off)",
            include_path[0],
            DISABLE_ENV,
        )
    if leave_out_builtins:
        if "include_defaults" not in signature.parameters:
            raise RuntimeError(f"TaskManager.__init__ takes no include_defaults ({ONLY_OURS_ENV})")
        bound.arguments["include_defaults"] = False
        logger.debug("%s is set: lm-eval's built-in tasks are left out of the index", ONLY_OURS_ENV)
    return bound.args[1:], bound.kwargs, given, bool(leave_out_builtins)


def missing_tasks_hint(missing: list[str]) -> str:
    """What a run with lm-eval's built-in tasks left out says of task names it cannot find."""
    return (
        f"no task matches {', '.join(missing)}: {ONLY_OURS_ENV}=1 is set, which leaves "
        "lm-eval's own tasks out of the index (only sqlbench-lmeval's tasks and --include_path "
        f"folders are found); unset it, or set {ONLY_OURS_ENV}=0, to run lm-eval's tasks"
    )


def _hinting_match_tasks(match_tasks):
    """``TaskManager.match_tasks`` that logs :func:`missing_tasks_hint` for the names it
    matches nothing to (lm-eval then stops with "Tasks not found", which does not say why)."""
    import fnmatch
    import functools
    import logging

    def is_task_name(name) -> bool:
        # lm-eval also asks about a folder of YAML files given as --tasks (it loads the folder
        # when no task has that name), and loads .yaml paths itself: neither is a miss.
        return isinstance(name, str) and not name.endswith(".yaml") and not os.path.isdir(name)

    @functools.wraps(match_tasks)
    def match_and_hint(task_list, *args, **kwargs):
        matched = match_tasks(task_list, *args, **kwargs)
        try:
            names = [task_list] if isinstance(task_list, str) else list(task_list)
            missing = [
                name
                for name in names
                if is_task_name(name) and not fnmatch.filter(list(matched), name)
            ]
            if missing:
                logging.getLogger(__name__).warning(missing_tasks_hint(missing))
        except Exception as error:  # noqa: BLE001 - a hint must never break lm-eval
            _warn(error)
        return matched

    return match_and_hint


def _warn(error: BaseException) -> None:
    import warnings

    warnings.warn(
        f"sqlbench-lmeval could not add its tasks to lm-eval ({error!r}). Pass them by hand with"
        ' --include_path "$(python -m sqlbench_lmeval tasks-dir)", or set'
        f" {DISABLE_ENV}=1 to silence this.",
        RuntimeWarning,
        stacklevel=2,
    )
