"""Task discovery: lm-eval's TaskManager sees our tasks folder with no flag, and only then.

Fast tests drive the hook in this process (``TaskManager(include_defaults=False)`` indexes only
our folder and the test's, in milliseconds) and in small subprocesses (start-up laziness). The
slow tests build a fresh virtualenv, ``pip install`` the project into it (a wheel, then an
editable install) beside a real lm-eval, and use the real ``lm-eval`` CLI there: list,
validate, run, disable, ``--include_path``, uninstall. lm-eval and our other dependencies are
the test environment's own, seen through a folder of links (see :func:`dependency_view`):
installing them again into every fresh virtualenv cost minutes and proved nothing of ours.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sqlbench_lmeval.lmeval import discovery
from sqlbench_lmeval.paths import tasks_dir

REPO = Path(__file__).resolve().parents[2]
PTH = REPO / "sqlbench_lmeval_discovery.pth"


def run(command, *, env=None, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(c) for c in command],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """``done``, after failing the test with its output if it exited non-zero."""
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-5000:]
        pytest.fail(f"exit {done.returncode}: {' '.join(done.args)}\n{tail}")
    return done


def write_task(folder: Path, name: str) -> Path:
    """A minimal task YAML (never loaded, only indexed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(f"task: {name}\ndataset_path: json\noutput_type: generate_until\n")
    return path


# --- pure parts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected_tail"),
    [
        (None, []),
        ("", []),
        ("/elsewhere/tasks", ["/elsewhere/tasks"]),
        (Path("/elsewhere/tasks"), [Path("/elsewhere/tasks")]),
        (["/a", "/b"], ["/a", "/b"]),
        (("/a",), ["/a"]),
    ],
)
def test_our_folder_goes_first_and_the_callers_are_kept_in_order(tmp_path, given, expected_tail):
    ours = tmp_path / "ours"
    ours.mkdir()
    assert discovery.extended_include_path(given, ours) == [str(ours.resolve()), *expected_tail]


@pytest.mark.parametrize("relation", ["same", "inside", "contains", "same_via_relative"])
def test_a_caller_path_overlapping_ours_leaves_include_path_alone(tmp_path, monkeypatch, relation):
    ours = tmp_path / "site" / "tasks"
    (ours / "tpcds").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    theirs = {
        "same": str(ours),
        "inside": str(ours / "tpcds"),
        "contains": str(tmp_path / "site"),
        "same_via_relative": "site/tasks/../tasks",
    }[relation]
    assert discovery.extended_include_path(["/other", theirs], ours) is None


@pytest.mark.parametrize(
    ("value", "off"),
    [("1", True), ("true", True), (" YES ", True), ("on", True), ("0", False), ("", False)],
)
def test_disable_variable(value, off):
    assert discovery.disabled({discovery.DISABLE_ENV: value}) is off
    assert discovery.disabled({}) is False


def fake_lm_eval(root: Path, manager_source: str) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "api").mkdir()
    (root / "tasks" / "manager.py").write_text(manager_source)
    (root / "api" / "registry.py").write_text("GROUPS = ('lm_eval.models',)\n")
    return root


def test_native_entry_points_need_both_lm_eval_support_and_our_declaration(tmp_path):
    native = fake_lm_eval(tmp_path / "new", 'eps = entry_points(group="lm_eval.tasks")\n')
    old = fake_lm_eval(tmp_path / "old", "from lm_eval.tasks._index import TaskIndex\n")

    assert discovery.native_task_plugins(native, ["console_scripts", "lm_eval.tasks"])
    # lm-eval 0.4.13: the group is not named (an import of lm_eval.tasks is not a group name).
    assert not discovery.native_task_plugins(old, ["console_scripts", "lm_eval.tasks"])
    # We do not advertise a task entry point: stepping aside would lose our tasks.
    assert not discovery.native_task_plugins(native, ["console_scripts"])
    assert not discovery.native_task_plugins(native, ["lm_eval.models"])


def test_installed_lm_eval_has_no_native_task_entry_points():
    import lm_eval

    root = Path(lm_eval.__file__).parent
    assert not discovery.native_task_plugins(root, ["lm_eval.tasks", "lm_eval.task_dirs"])


def test_build_ships_the_pth_at_the_wheel_root():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    build = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    force = build["targets"]["wheel"]["force-include"]
    assert force[PTH.name] == PTH.name
    assert "custom" in build["targets"]["wheel"]["hooks"]  # hatch_build.py: editable wheels


# --- the .pth and install(): lazy at start-up -------------------------------------------------

LAZY_PROBE = textwrap.dedent(
    """
    import site, sys
    site.addpackage({folder!r}, {name!r}, set())  # exactly what site does with a .pth file
    hooks = [type(f).__name__ for f in sys.meta_path if type(f).__name__ == "TasksImportHook"]
    print(hooks, "lm_eval" in sys.modules)
    import lm_eval.tasks
    from lm_eval.evaluator import TaskManager as from_evaluator
    from lm_eval.tasks.manager import TaskManager
    from sqlbench_lmeval.lmeval import discovery
    hooks = [type(f).__name__ for f in sys.meta_path if type(f).__name__ == "TasksImportHook"]
    print(discovery.is_active(), hooks, from_evaluator is TaskManager is lm_eval.tasks.TaskManager)
    """
)


def probe(env_extra: dict[str, str] | None = None, cwd=None, python_flags=()):
    env = {k: v for k, v in os.environ.items() if k != discovery.DISABLE_ENV}
    env.update(env_extra or {})
    code = LAZY_PROBE.format(folder=str(PTH.parent), name=PTH.name)
    return run([sys.executable, *python_flags, "-c", code], env=env, cwd=cwd, timeout=120)


def test_pth_arms_the_hook_without_importing_lm_eval_then_patches_on_import():
    done = ok(probe())
    assert done.stdout.splitlines() == ["['TasksImportHook'] False", "True [] True"]
    assert "Warning" not in done.stderr


def test_variable_at_start_up_keeps_the_hook_out():
    done = ok(probe({discovery.DISABLE_ENV: "1"}))
    assert done.stdout.splitlines() == ["[] False", "False [] True"]


def test_a_lookup_without_import_does_not_spend_the_hook():
    code = textwrap.dedent(
        """
        import importlib.util
        from sqlbench_lmeval.lmeval import discovery
        discovery.uninstall()
        discovery.install()
        assert importlib.util.find_spec("lm_eval.tasks") is not None  # looked up, not loaded
        import lm_eval.tasks
        print(discovery.is_active())
        """
    )
    env = {k: v for k, v in os.environ.items() if k != discovery.DISABLE_ENV}
    assert ok(run([sys.executable, "-c", code], env=env, timeout=120)).stdout.strip() == "True"


def test_pth_is_silent_when_the_package_is_gone(tmp_path):
    # -S: no site-packages, so neither sqlbench_lmeval nor lm_eval can be imported.
    code = f"import site; site.addpackage({str(PTH.parent)!r}, {PTH.name!r}, set()); print('ok')"
    done = run([sys.executable, "-S", "-c", code], cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "ok", "")


# --- the wrapped TaskManager, in this process --------------------------------------------------


@pytest.fixture
def hooked():
    """lm-eval's TaskManager with the hook freshly installed; the previous state restored after."""
    from lm_eval.tasks import TaskManager

    was_active = discovery.is_active()
    variables = (discovery.DISABLE_ENV, discovery.ONLY_OURS_ENV)
    saved = {name: os.environ.pop(name) for name in variables if name in os.environ}
    discovery.uninstall()
    discovery.install()
    yield TaskManager
    discovery.uninstall()
    if was_active:
        discovery.install()
    os.environ.update(saved)


def our_index() -> dict:
    from lm_eval.tasks._index import TaskIndex

    return TaskIndex.build([tasks_dir()])


def index_paths(manager) -> dict[str, str | None]:
    return {name: str(e.yaml_path) for name, e in manager.task_index.items()}


def test_task_manager_indexes_our_tasks_and_reports_the_callers_include_path(hooked):
    ours = {name: str(e.yaml_path) for name, e in our_index().items()}
    manager = hooked(include_defaults=False)
    assert index_paths(manager) == ours
    assert manager.include_path is None
    assert hooked.__init__.__wrapped__.__qualname__ == "TaskManager.__init__"


def test_passing_our_folder_again_indexes_nothing_twice(hooked, caplog):
    with caplog.at_level(logging.WARNING):
        twice = hooked(include_defaults=False, include_path=str(tasks_dir()))
    assert index_paths(twice) == index_paths(hooked(include_defaults=False))
    assert not [r for r in caplog.records if "overrides" in r.getMessage()]


def test_callers_folder_wins_over_ours_and_positional_arguments_work(hooked, tmp_path):
    mine = write_task(tmp_path / "mine", "my_own_task")
    shadow_name = next(iter(our_index()), None)
    shadow = write_task(tmp_path / "mine", shadow_name) if shadow_name else None

    manager = hooked(None, str(tmp_path / "mine"), False)  # verbosity, include_path, defaults

    paths = index_paths(manager)
    assert paths["my_own_task"] == str(mine)
    if shadow is not None:
        assert paths[shadow_name] == str(shadow)
    assert set(our_index()) <= set(paths)
    assert manager.include_path == str(tmp_path / "mine")


def test_variable_at_run_time_makes_the_hook_inert(hooked, monkeypatch):
    monkeypatch.setenv(discovery.DISABLE_ENV, "1")
    assert hooked(include_defaults=False).task_index == {}


def test_install_twice_wraps_once_and_uninstall_restores(hooked):
    wrapped = hooked.__init__
    discovery.install()
    assert hooked.__init__ is wrapped
    discovery.uninstall()
    assert not discovery.is_active()
    assert hooked(include_defaults=False).task_index == {}


def test_a_failing_hook_warns_and_lm_eval_still_works(hooked, monkeypatch, tmp_path):
    def broken():
        raise FileNotFoundError("no tasks folder")

    monkeypatch.setattr("sqlbench_lmeval.paths.tasks_dir", broken)
    write_task(tmp_path / "mine", "my_own_task")
    with pytest.warns(RuntimeWarning, match=r"no tasks folder.*--include_path"):
        manager = hooked(include_defaults=False, include_path=str(tmp_path / "mine"))
    assert list(manager.task_index) == ["my_own_task"]


def test_a_callers_bad_arguments_get_lm_evals_own_error_and_no_warning(hooked):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="no_such_argument"):
            hooked(no_such_argument=1)


def test_no_warning_in_the_normal_case(hooked):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hooked(include_defaults=False)


# --- a fresh virtualenv beside a real lm-eval -----------------------------------------------
#
# Every lm-eval command builds a TaskManager, which indexes lm-eval's ~15k task configs (about
# 10 s of CPU; `ls tasks` reads each config again, about 35 s), so each command runs once, in
# parallel where possible: the wheel install (README's install line) goes through the CLI
# (`ls tasks`, `validate`, a run, switched off, `--include_path`); the editable install checks
# TaskManager() from Python and that the live checkout is read. The run takes the default path,
# our folder beside lm-eval's whole index; `ls tasks` lists our tasks with lm-eval's own left
# out (SQLBENCH_LMEVAL_ONLY_OUR_TASKS), as a listing of all of them proved nothing more.

SMOKE = "sqlbench_discovery_smoke"
# Everything Python-path related is dropped so the venv sees only itself.
# The suite's own ONLY_OURS_ENV (tests/conftest.py) goes too: these venvs prove the default path.
_DROPPED_ENV = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "VIRTUAL_ENV",
    discovery.DISABLE_ENV,
    discovery.ONLY_OURS_ENV,
)

TASK_MANAGER_REPORT = textwrap.dedent(
    """
    import json
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._index import TaskIndex
    from sqlbench_lmeval.paths import tasks_dir

    ours = {n: str(e.yaml_path) for n, e in TaskIndex.build([tasks_dir()]).items()}
    # Without lm-eval's own ~15k configs (11 s of CPU): the hook adds our folder either way,
    # and the wheel test proves the full default index.
    index = TaskManager(include_defaults=False).task_index
    print(json.dumps({
        "tasks_dir": str(tasks_dir()),
        "ours": ours,
        "seen": {n: str(index[n].yaml_path) for n in ours if n in index},
    }))
    """
)

# Switched off at start-up: no finder armed, lm-eval's TaskManager left exactly as it is.
INERT_PROBE = textwrap.dedent(
    """
    import sys
    armed = [f for f in sys.meta_path if type(f).__name__ == "TasksImportHook"]
    import lm_eval.tasks
    from sqlbench_lmeval.lmeval import discovery
    wrapped = hasattr(lm_eval.tasks.TaskManager.__init__, "__wrapped__")
    print(len(armed), discovery.is_active(), wrapped)
    """
)


class FreshVenv:
    """A virtualenv (no system site-packages) in ``root/name``, made by :meth:`create`.

    ``dependencies``, a folder of links to the test environment's packages (see
    :func:`dependency_view`), is on its path, and lm-eval's console scripts are in its ``bin``.
    Without it, a folder with a link to the test environment's pip alone is."""

    def __init__(self, root: Path, name: str = "venv", dependencies: Path | None = None) -> None:
        self.root = root
        self.home = root / name
        self.bin = self.home / "bin"
        self.python = self.bin / "python"
        self.dependencies = dependencies
        self.env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        self.env.update(
            PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            VIRTUAL_ENV=str(self.home),
            HF_HUB_OFFLINE="1",
            HF_DATASETS_OFFLINE="1",
            HF_HOME=str(root / "hf_home"),
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )

    def create(self) -> None:
        # No pip of its own: ensurepip (copying and byte-compiling pip) was most of the time of
        # making a venv; the test environment's pip, in the dependency folder, runs as this
        # venv's pip (`python -m pip` with this venv's interpreter installs into this venv).
        ok(run([sys.executable, "-m", "venv", "--without-pip", self.home], timeout=300))
        with_lm_eval = self.dependencies is not None
        if not with_lm_eval:
            self.dependencies = dependency_view(self.root / f"{self.home.name}_pip", pip_only=True)
        # A plain path line: site puts the folder on sys.path and reads no .pth file in it.
        (self.site_packages / "test_dependencies.pth").write_text(f"{self.dependencies}\n")
        if not with_lm_eval:
            return
        for name in LM_EVAL_SCRIPTS:  # as pip writes them: this venv's python, lm-eval's main
            outer = Path(sys.executable).with_name(name).read_text().split("\n", 1)[1]
            script = self.bin / name
            script.write_text(f"#!{self.python}\n{outer}")
            script.chmod(0o755)

    @property
    def site_packages(self) -> Path:
        return next((self.home / "lib").glob("python3*/site-packages"))

    def do(self, *command, env_extra=None, timeout=900) -> subprocess.CompletedProcess:
        env = {**self.env, **(env_extra or {})}
        return run(command, env=env, cwd=self.root, timeout=timeout)

    def pip(self, *args) -> subprocess.CompletedProcess:
        # Installs pass --no-compile: byte-compiling is most of a small install's time.
        return ok(self.do(self.python, "-m", "pip", *args, "-q"))

    def python_json(self, code: str, env_extra=None):
        return json.loads(ok(self.do(self.python, "-c", code, env_extra=env_extra)).stdout)

    def state(self) -> tuple[dict[str, str], str]:
        """Every path in site-packages, bin and the dependency view (byte-code caches aside)
        with what it holds (a file's hash, a link's target), and a hash of every file of the
        lm_eval package this venv imports (its sources and its task configs)."""
        entries = {}
        for base in (self.site_packages, self.bin, self.dependencies):
            for path in base.rglob("*"):  # links are listed, not followed
                if "__pycache__" in path.parts:
                    continue
                entries[str(path.relative_to(self.root))] = (
                    f"-> {os.readlink(path)}"
                    if path.is_symlink()
                    else "folder"
                    if path.is_dir()
                    else hashlib.sha256(path.read_bytes()).hexdigest()
                )
        lm_eval = Path(self.python_json(LM_EVAL_FOLDER))
        digest = hashlib.sha256()
        for path in sorted(lm_eval.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(lm_eval)).encode() + b"\0")
                digest.update(path.read_bytes())
        return entries, digest.hexdigest()


LM_EVAL_SCRIPTS = ("lm_eval", "lm-eval")
# Found, not imported (importing lm_eval takes seconds).
LM_EVAL_FOLDER = (
    "import importlib.util, json;"
    "print(json.dumps(importlib.util.find_spec('lm_eval').submodule_search_locations[0]))"
)


def dependency_view(folder: Path, *, pip_only: bool = False) -> Path:
    """``folder`` filled with a link to every entry of this environment's site-packages except
    this project's own (its package, distribution metadata and .pth files): lm-eval and the
    rest of our dependencies, exactly as the suite runs them, without us. With ``pip_only``,
    pip alone (what a new venv holds)."""
    ours = ("sqlbench_lmeval", "_sqlbench_lmeval", "__editable__")
    folder.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.name.startswith(ours) or entry.suffix == ".pth" or entry.name == "__pycache__":
            continue
        if pip_only and not (entry.name == "pip" or entry.name.startswith("pip-")):
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


def copy_project(destination: Path) -> Path:
    """The checkout as it is now (working tree), plus a smoke task in its tasks folder."""
    junk = shutil.ignore_patterns(
        ".git", ".venv", "venv", "__pycache__", "*.egg-info", "build", "dist", "runs",
        ".pytest_cache", ".ruff_cache", ".hypothesis", ".mypy_cache",
    )  # fmt: skip
    shutil.copytree(REPO, destination, ignore=junk)
    smoke = destination / "tasks" / "_discovery_smoke"
    smoke.mkdir(parents=True)
    (smoke / "data.jsonl").write_text('{"q": "2 + 3", "a": "5"}\n{"q": "1 + 1", "a": "2"}\n')
    (smoke / f"{SMOKE}.yaml").write_text(
        textwrap.dedent(
            f"""\
            task: {SMOKE}
            dataset_path: json
            dataset_kwargs:
              data_files:
                test: {json.dumps(str(smoke / "data.jsonl"))}
            test_split: test
            output_type: generate_until
            doc_to_text: "{{{{q}}}} ="
            doc_to_target: "{{{{a}}}}"
            generation_kwargs:
              until: ["\\n"]
            metric_list:
              - metric: exact_match
            metadata:
              version: 1.0
            """
        )
    )
    return destination


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """(venv, project copy, our wheel, the venv's state before our install).

    The "before" is lm-eval and our other dependencies, without us."""
    root = tmp_path_factory.mktemp("fresh_venv")
    project = copy_project(root / "project")
    venv = FreshVenv(root, dependencies=dependency_view(root / "dependencies"))
    bare = FreshVenv(root, "bare_venv")

    def wheel_alone() -> Path:
        # Without lm-eval (a second venv, nothing but us): installing us, starting Python,
        # importing the hook: all silent. The wheel is built once, here.
        bare.create()
        bare.pip("wheel", "--no-deps", "--wheel-dir", root / "wheels", project)
        wheel = next((root / "wheels").glob("sqlbench_lmeval-*.whl"))
        bare.pip("install", "--no-deps", "--no-compile", wheel)
        done = ok(bare.do(bare.python, "-c", "import sqlbench_lmeval.lmeval.discovery"))
        assert (done.stdout, done.stderr) == ("", "")
        return wheel

    def before():
        venv.create()
        return venv.state()

    # Independent, so at the same time: the wheel build waits on pip, the state on the disk.
    state, wheel = in_parallel(before, wheel_alone)
    shutil.rmtree(bare.home, ignore_errors=True)
    yield venv, project, wheel, state
    shutil.rmtree(venv.home, ignore_errors=True)


def in_parallel(*calls):
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return [f.result() for f in [pool.submit(c) for c in calls]]


def uninstall_and_compare(venv: FreshVenv, state_before) -> None:
    """Uninstalled: no file of ours left, no file changed, lm-eval's package untouched.

    That also proves lm-eval's TaskManager indexes what it did before our install, without
    building that index again (about 15 s of CPU each time): the index is a function of the
    files this interpreter imports and reads (venv, dependency view, lm_eval's sources and task
    configs), all compared byte for byte here, and of the environment, which is the same."""
    venv.pip("uninstall", "-y", "sqlbench-lmeval")
    assert venv.state() == state_before


@pytest.mark.slow
def test_wheel_install_lists_validates_runs_switches_off_and_uninstalls(fresh):
    from lm_eval.tasks._index import TaskIndex

    venv, project, wheel, state_before = fresh
    # Our dependencies are there already (the view); --no-deps keeps pip from checking them.
    venv.pip("install", "--no-deps", "--no-compile", wheel)
    lm_eval, lm_eval_dash = venv.bin / "lm_eval", venv.bin / "lm-eval"
    off = {discovery.DISABLE_ENV: "1"}
    try:
        installed_tasks = venv.site_packages / "sqlbench_lmeval" / "tasks"
        printed = ok(venv.do(venv.python, "-m", "sqlbench_lmeval", "tasks-dir")).stdout.strip()
        assert Path(printed) == installed_tasks
        assert (venv.site_packages / PTH.name).is_file()

        # No `lm-eval validate --tasks` without a flag: the run looks its tasks up exactly as
        # validate does (TaskManager(include_path=None).match_tasks) and exits non-zero with
        # "Tasks not found" when one is missing, so a run that succeeds proves it, and a second
        # index of lm-eval's ~15k configs (10 s of CPU) proved nothing more. Validate is still
        # run below, switched off with --include_path.
        listed, ran, explicit_off, inert = in_parallel(
            lambda: venv.do(lm_eval_dash, "ls", "tasks", env_extra={discovery.ONLY_OURS_ENV: "1"}),
            lambda: venv.do(
                lm_eval, "--model", "dummy", "--tasks", SMOKE, "--output_path", venv.root / "out"
            ),
            lambda: venv.do(
                lm_eval_dash, "validate", "--tasks", SMOKE, "--include_path", printed, env_extra=off
            ),
            lambda: venv.do(venv.python, "-c", INERT_PROBE, env_extra=off),
        )

        # The installed folder (the venv's tasks_dir(), printed above) indexed by the same
        # lm-eval here, in this process: no Python start-up and lm-eval import in the venv.
        ours = sorted(TaskIndex.build([installed_tasks]))
        assert SMOKE in ours
        table = ok(listed).stdout  # markdown tables: groups, tags, then tasks with their file
        assert set(ours) <= set(re.findall(r"^\|([^|\s]+)\s*\|", table, re.M))
        rows = dict(re.findall(r"^\|([^|\s]+)\s*\|([^|]*?)\s*\|", table, re.M))
        assert rows[SMOKE] == str(installed_tasks / "_discovery_smoke" / f"{SMOKE}.yaml")
        ok(ran)
        results = json.loads(next((venv.root / "out").rglob("results_*.json")).read_text())
        assert results["results"][SMOKE]["exact_match,none"] == 0.0  # the dummy model: "lol"
        assert "All tasks found" in ok(explicit_off).stdout
        assert ok(inert).stdout.split() == ["0", "False", "False"]
    finally:
        uninstall_and_compare(venv, state_before)


@pytest.mark.slow
def test_editable_install_reads_the_live_checkout_and_uninstalls(fresh):
    venv, project, _, state_before = fresh
    venv.pip("install", "--no-deps", "--no-compile", "-e", project)
    added = project / "tasks" / "_added_after_install"
    try:
        assert (venv.site_packages / PTH.name).is_file()
        # No frozen copy of tasks/ in site-packages: the checkout's folder is the one indexed.
        assert not (venv.site_packages / "sqlbench_lmeval").exists()
        write_task(added, "sqlbench_added_later")

        report = venv.python_json(TASK_MANAGER_REPORT)

        assert Path(report["tasks_dir"]) == project / "tasks"
        assert {SMOKE, "sqlbench_added_later"} <= set(report["ours"])
        assert report["seen"] == report["ours"]  # all of our folder, from our folder
    finally:
        shutil.rmtree(added, ignore_errors=True)
        uninstall_and_compare(venv, state_before)


# --- SQLBENCH_LMEVAL_ONLY_OUR_TASKS: lm-eval's own tasks left out of the index ----------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", True), ("yes", True), (" On ", True), ("0", False), ("", False), ("no", False)],
)
def test_only_our_tasks_reads_its_variable_as_the_off_switch_reads_its_own(value, expected):
    assert discovery.only_our_tasks({discovery.ONLY_OURS_ENV: value}) is expected
    assert discovery.disabled({discovery.DISABLE_ENV: value}) is expected
    assert discovery.only_our_tasks({}) is False


def test_only_our_tasks_indexes_ours_and_the_callers_and_nothing_of_lm_eval(
    hooked, monkeypatch, tmp_path
):
    mine = write_task(tmp_path / "mine", "my_own_task")
    monkeypatch.setenv(discovery.ONLY_OURS_ENV, "1")

    manager = hooked(include_path=str(tmp_path / "mine"))  # include_defaults left at True

    ours = {name: str(e.yaml_path) for name, e in our_index().items()}
    assert index_paths(manager) == {**ours, "my_own_task": str(mine)}
    assert manager.include_path == str(tmp_path / "mine")


def test_only_our_tasks_applies_when_the_caller_already_passes_our_folder(hooked, monkeypatch):
    monkeypatch.setenv(discovery.ONLY_OURS_ENV, "1")
    ours = {name: str(e.yaml_path) for name, e in our_index().items()}
    assert index_paths(hooked(include_path=str(tasks_dir()))) == ours


def test_the_off_switch_also_switches_only_our_tasks_off(monkeypatch):
    calls = []

    def init(self, verbosity=None, include_path=None, include_defaults=True, metadata=None):
        calls.append((include_path, include_defaults))

    wrapped = discovery._wrap_init(init)  # lm-eval's signature, without a 11 s index to build
    monkeypatch.setenv(discovery.ONLY_OURS_ENV, "1")
    wrapped(object())
    monkeypatch.setenv(discovery.DISABLE_ENV, "1")
    wrapped(object())

    assert calls == [([str(tasks_dir())], False), (None, True)]


def test_only_our_tasks_names_itself_when_a_task_is_not_found(hooked, monkeypatch, caplog):
    monkeypatch.setenv(discovery.ONLY_OURS_ENV, "1")
    manager = hooked()
    with caplog.at_level(logging.WARNING, logger=discovery.__name__):
        assert manager.match_tasks(["logiccat_mini", "arc_easy", "tpcds*"])[0] == "logiccat_mini"
    (record,) = [r for r in caplog.records if r.name == discovery.__name__]
    assert record.getMessage() == discovery.missing_tasks_hint(["arc_easy"])
    assert f"{discovery.ONLY_OURS_ENV}=0" in record.getMessage()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=discovery.__name__):
        assert "tpcds" in manager.match_tasks(["tpcds*", "logiccat"])
    assert not [r for r in caplog.records if r.name == discovery.__name__]


def test_only_our_tasks_gives_no_hint_for_a_folder_of_yaml_files(
    hooked, monkeypatch, caplog, tmp_path
):
    write_task(tmp_path / "mine", "my_own_task")
    monkeypatch.setenv(discovery.ONLY_OURS_ENV, "1")
    manager = hooked()
    # lm-eval asks whether a --tasks folder is also a task's name before it loads the folder.
    with caplog.at_level(logging.WARNING, logger=discovery.__name__):
        assert manager.match_tasks([str(tmp_path / "mine")]) == []
    assert not [r for r in caplog.records if r.name == discovery.__name__]


def test_without_only_our_tasks_a_missing_task_gets_no_hint(hooked, caplog):
    manager = hooked(include_defaults=False)  # the caller's own choice: no variable to name
    with caplog.at_level(logging.WARNING, logger=discovery.__name__):
        assert manager.match_tasks(["arc_easy"]) == []
    assert not [r for r in caplog.records if r.name == discovery.__name__]


@pytest.mark.slow
def test_lm_eval_run_of_another_suites_task_names_only_our_tasks(tmp_path):
    lm_eval = Path(sys.executable).with_name("lm_eval")
    env = {**os.environ, discovery.ONLY_OURS_ENV: "1"}
    done = run([lm_eval, "--model", "dummy", "--tasks", "arc_easy"], env=env, cwd=tmp_path)
    assert done.returncode != 0
    assert "Tasks not found: arc_easy" in done.stderr
    hint = discovery.missing_tasks_hint(["arc_easy"])
    assert hint in done.stderr
    # Printed before lm-eval's traceback, where a reader starts.
    assert done.stderr.index(hint) < done.stderr.index("Traceback")


# --- the task plugin: our lm_eval.tasks entry point -------------------------------------------


def test_our_entry_point_names_a_package_that_is_the_tasks_folder():
    # What lm-eval with task plugins (upstream PR 4015) does with it: find the package's spec,
    # without importing it, and index the folder it names. This checkout is installed editable,
    # where no sqlbench_lmeval/tasks folder exists: the finder makes the name resolve.
    from importlib import metadata
    from importlib.util import find_spec

    (entry,) = metadata.entry_points(group="lm_eval.tasks", name="sqlbench_lmeval")
    assert entry.value == discovery.TASKS_PACKAGE
    spec = find_spec(entry.value)
    assert spec.submodule_search_locations == [str(tasks_dir())]
    assert not (Path(discovery.__file__).parents[1] / "tasks").exists()  # the editable layout


def test_the_off_switch_empties_the_tasks_package(monkeypatch):
    monkeypatch.setenv(discovery.DISABLE_ENV, "1")
    spec = discovery.TasksPackageFinder().find_spec(discovery.TASKS_PACKAGE)
    assert (spec.submodule_search_locations, spec.origin) == ([], None)  # lm-eval skips it
    assert discovery.TasksPackageFinder().find_spec("sqlbench_lmeval.other") is None


def test_where_lm_eval_indexes_our_entry_point_the_hook_only_leaves_its_tasks_out(monkeypatch):
    calls = []

    def init(self, verbosity=None, include_path=None, include_defaults=True, metadata=None):
        calls.append((include_path, include_defaults))

    wrapped = discovery._wrap_init(init, add_our_folder=False)  # as where plugins exist
    monkeypatch.delenv(discovery.ONLY_OURS_ENV, raising=False)  # the suite sets it
    wrapped(object())
    wrapped(object(), include_path="/mine")
    monkeypatch.setenv(discovery.ONLY_OURS_ENV, "1")
    wrapped(object())
    wrapped(object(), include_path="/mine")

    assert calls == [(None, True), ("/mine", True), (None, False), ("/mine", False)]
