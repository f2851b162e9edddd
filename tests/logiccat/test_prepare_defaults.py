"""``prepare --engine mysql`` on a MariaDB made by ``mariadb-install-db`` with its defaults.

Such a server (``.ci/mariadb.sh start DIR --defaults``) has anonymous accounts ``''@'localhost'``
and ``''@'<hostname>'``, which match a client from those hosts before ``'reader'@'%'``, and
MariaDB 10.11 grants its test databases to ``PUBLIC``, that is to every account. ``prepare``
must work there or stop at once and say why; whatever it leaves must never look prepared.

The data is the hand-written fixture (one database, 12 items): what is tested is the server's
accounts and prepare's steps, not LogicCat. The tests share the one defaults server and run in
file order; each prepares what it needs (``prepared``), which is cheap.
"""

from __future__ import annotations

import json
import shutil

import pytest

pymysql = pytest.importorskip("pymysql")

from sqlbench_lmeval.errors import UserError  # noqa: E402
from sqlbench_lmeval.execution import Limits, mysql_admin  # noqa: E402
from sqlbench_lmeval.execution import mysql as engine  # noqa: E402
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable  # noqa: E402
from sqlbench_lmeval.logiccat import server  # noqa: E402

pytestmark = [pytest.mark.mysql]

DB = "chargingnet"
TEST_DATABASES = ("`test`", "`test\\_%`")  # what mariadb-install-db grants to PUBLIC


@pytest.fixture(scope="module")
def defaults(mysql_defaults_admin_url):
    from support.mysql_server import describe

    return describe(mysql_defaults_admin_url)


def admin_rows(defaults, sql: str, args=()) -> list[tuple]:
    conn = defaults.admin()
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql, args or None)
            return list(cursor.fetchall())
    finally:
        conn.close()


def public_grants(defaults) -> list[str]:
    conn = defaults.admin()
    try:
        with conn.cursor() as cursor:
            return mysql_admin.public_grants(cursor)
    finally:
        conn.close()


def grant_test_databases_to_public(defaults) -> None:
    """The state mariadb-install-db leaves (again, should an earlier run have revoked it)."""
    for name in TEST_DATABASES:
        admin_rows(defaults, f"GRANT SELECT, INSERT, CREATE, DROP ON {name}.* TO PUBLIC")


def revoke_test_databases_from_public(defaults) -> None:
    """The fix prepare's message gives (REVOKE fails where nothing is granted)."""
    granted = public_grants(defaults)
    for name in TEST_DATABASES:
        if any(f" ON {name}.* " in line for line in granted):
            admin_rows(defaults, f"REVOKE ALL PRIVILEGES ON {name}.* FROM PUBLIC")


@pytest.fixture(scope="module")
def prepare(defaults, cache, fixture_source):
    """``prepare_server`` of the fixture (or ``source``) into this module's cache."""

    def run(source=None, **options) -> dict:
        return server.prepare_server(
            defaults.admin_url,
            source or fixture_source,
            manifest_dir=server.manifest_dir(cache),
            **options,
        )

    return run


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("defaults-cache")


@pytest.fixture
def prepared(defaults, prepare):
    """The fixture prepared on the defaults server (verified when it already is)."""
    revoke_test_databases_from_public(defaults)
    return prepare()


def reader_url(cache, host: str | None = None, socket: str | None = None) -> str:
    """This cache's reader URL, optionally through another host name or the unix socket."""
    url = server.read_manifest(cache)["reader_url"]
    address = engine.parse_url(url)
    if socket:
        return f"mysql://{address.user}@localhost?unix_socket={socket}&read_default_file=" + str(
            address.option_file
        )
    if host:
        return url.replace(f"@{address.host}:", f"@{host}:", 1)
    return url


def current_user(url: str) -> str:
    conn = engine.open_connection(engine.parse_url(url))
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT CURRENT_USER()")
            return cursor.fetchone()[0]
    finally:
        conn.close()


def test_the_server_is_what_mariadb_install_db_makes_by_default(defaults):
    anonymous = admin_rows(defaults, "SELECT host FROM mysql.user WHERE user = ''")
    assert ("localhost",) in anonymous


def test_prepare_stops_at_once_when_public_holds_more_than_select(defaults, prepare):
    admin_rows(defaults, f"DROP DATABASE IF EXISTS {DB}")
    grant_test_databases_to_public(defaults)
    with pytest.raises(UserError) as refused:
        prepare()
    message = str(refused.value)
    assert "PUBLIC" in message and "INSERT on `test`.*" in message
    assert "REVOKE ALL PRIVILEGES ON `test`.* FROM PUBLIC;" in message
    assert "Nothing was loaded" in message
    # At once: nothing loaded, nothing marks the server prepared.
    schemata = "SELECT schema_name FROM information_schema.schemata WHERE schema_name = %s"
    assert admin_rows(defaults, schemata, (DB,)) == []
    conn = defaults.admin()
    try:
        with conn.cursor() as cursor:
            assert mysql_admin.read_document(cursor, server.BENCHMARK) is None
    finally:
        conn.close()


def test_after_the_fix_prepare_works_and_the_reader_beats_the_anonymous_accounts(
    defaults, cache, prepare
):
    revoke_test_databases_from_public(defaults)
    assert public_grants(defaults) == []
    manifest = prepare()
    said = "\n".join(manifest["actions"])
    assert "anonymous accounts" in said and "''@'localhost'" in said
    anonymous = [h for (h,) in admin_rows(defaults, "SELECT host FROM mysql.user WHERE user = ''")]
    reader_hosts = {
        h for (h,) in admin_rows(defaults, "SELECT host FROM mysql.user WHERE user = %s",
                                 (server.READER_USER,))
    }  # fmt: skip
    assert reader_hosts == {"%", *anonymous}
    # Every way in from this machine is 'localhost' to the server: the reader's own
    # 'localhost' account answers, not ''@'localhost'.
    assert current_user(reader_url(cache)) == f"{server.READER_USER}@localhost"
    assert current_user(reader_url(cache, socket=defaults.socket)) == (
        f"{server.READER_USER}@localhost"
    )
    assert "reader proved: logged in as 'logiccat_reader'@'localhost'" in said
    # The server says it is prepared; a reader-only machine reads that.
    run = server.server_run(cache_dir=cache)
    assert run.document["databases"].keys() == {DB}
    assert run.document["gold_status"].keys() == {str(i) for i in range(1, 13)}


def test_a_missing_host_account_is_explained_then_added_with_the_same_password(
    defaults, cache, prepare, prepared
):
    password = server.read_option_password(server.manifest_dir(cache) / server.READER_OPTION_FILE)
    admin_rows(defaults, "DROP USER %s@'localhost'", (server.READER_USER,))
    # Now ''@'localhost' shadows 'logiccat_reader'@'%' for every client of this machine.
    server._runs.clear()
    with pytest.raises(EvaluationUnavailable) as refused:
        server.server_run(cache_dir=cache)
    assert "Access denied" in str(refused.value) and "anonymous accounts" in str(refused.value)
    manifest = prepare()
    said = "\n".join(manifest["actions"])
    assert "credentials unchanged" in said and "added for 'localhost'" in said
    assert "reloaded nothing" in said
    after = server.read_option_password(server.manifest_dir(cache) / server.READER_OPTION_FILE)
    assert after == password
    assert current_user(reader_url(cache)) == f"{server.READER_USER}@localhost"


def test_the_anonymous_account_itself_is_refused_by_the_engine(defaults, prepared):
    # A user name without an account of its own, no password: the server logs it in as
    # ''@'localhost'.
    anonymous = engine.connect(f"mysql://nobody@127.0.0.1:{defaults.port}", Limits())
    with pytest.raises(EvaluationUnavailable, match="anonymous account"):
        engine.run(anonymous, "SELECT 1", Limits())


def test_rotate_reader_changes_the_password_and_only_then(defaults, cache, prepare, prepared):
    option_file = server.manifest_dir(cache) / server.READER_OPTION_FILE
    old = server.read_option_password(option_file)
    old_url = mysql_admin.with_account(
        f"mysql://x@127.0.0.1:{defaults.port}", server.READER_USER, old
    )
    assert current_user(old_url).startswith(server.READER_USER)
    manifest = prepare(rotate_reader=True)
    assert any("new password" in action for action in manifest["actions"])
    new = server.read_option_password(option_file)
    assert new != old
    with pytest.raises(pymysql.err.OperationalError, match="Access denied"):
        current_user(old_url)
    assert current_user(reader_url(cache)) == f"{server.READER_USER}@localhost"


def test_reload_reloads_and_keeps_the_reader(cache, prepare, prepared):
    password = server.read_option_password(server.manifest_dir(cache) / server.READER_OPTION_FILE)
    manifest = prepare(reload=True)
    said = "\n".join(manifest["actions"])
    assert "loaded 1 databases (reload requested)" in said
    assert "credentials unchanged" in said and "gold run twice" in said
    after = server.read_option_password(server.manifest_dir(cache) / server.READER_OPTION_FILE)
    assert after == password


def test_changed_data_is_found_by_the_verification(defaults, prepare, prepared):
    admin_rows(defaults, f"UPDATE {DB}.stations SET name = CONCAT(name, '!') LIMIT 1")
    with pytest.raises(UserError, match="changed since prepare loaded it.*--reload"):
        prepare()
    prepare(reload=True)
    assert any("verified" in action for action in prepare()["actions"])


def test_prepare_never_marks_the_server_prepared_when_most_gold_cannot_run(
    cache, prepare, prepared, fixture_source, source_from, tmp_path
):
    broken = tmp_path / "broken"
    shutil.copytree(fixture_source.root, broken)
    # The same questions, every gold query on a table the database does not have.
    for name in ("records-4036.json", "MySQL/data.sql"):
        path = broken / name
        text = path.read_text("utf-8")
        for table in ("charging_sessions", "Stations", "stations"):
            text = text.replace(table, "no_such_table")
        path.write_text(text, "utf-8")
    records = json.loads((broken / "records-4036.json").read_text("utf-8"))
    assert all("no_such_table" in r["query"] for r in records)  # the premise
    with pytest.raises(UserError, match="only 0 of 12 gold queries ran.*not marked prepared"):
        prepare(source=source_from(broken), reload=True)
    server._runs.clear()
    with pytest.raises(EvaluationUnavailable, match="holds no prepared LogicCat"):
        server.server_run(cache_dir=cache)
    # The good data again, for whoever comes next.
    prepare(reload=True)
