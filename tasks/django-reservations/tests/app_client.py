"""The agent's Django project, driven from outside: a server run as another user
(``app_server.py``), spoken to over HTTP, and its SQLite file read here.

Nothing the agent wrote is imported into this pytest (Django itself is not imported here), so a
module that registers a pytest hook or patches something on import does it in the server's
process, which has no hook to register and no report to reach. The server runs as
``boundary.PROGRAM_UID``: it cannot write /logs or /tests, nor signal or trace this process.

- ``App``: the server (started once, again if it dies), its control requests and its database
  file, copied by this process (never following a link, never blocking on a FIFO) and read
  from the copy with ``sqlite3``;
- ``Api``: a JSON client over HTTP, with cookies (``login`` signs into the admin);
- ``Models``: ``m.Restaurant.create(...)`` and ``update`` go through the project's models in the
  server; ``get``, ``count``, ``rows`` and ``first`` read the database file;
- ``Services``: ``svc.create_hold(...)`` runs there; rows, datetimes and dates cross as JSON and
  what it raised is raised here as the contract's class of that name.
"""

from __future__ import annotations

import http.client
import http.cookies
import json
import os
import select
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
import urllib.parse
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

import boundary

UTC = timezone.utc
START_TIMEOUT_S = 120
REQUEST_TIMEOUT_S = 60
MAX_BYTES = 64 * 1024 * 1024  # a response or a database file larger than this is a failure


class App:
    """The project served as the program user; its database file in a folder of this process."""

    def __init__(self, workspace: str, tests_dir: str) -> None:
        self.workspace = workspace
        self.server_py = os.path.join(tests_dir, "app_server.py")
        shared = tempfile.mkdtemp(prefix="hidden-db-")  # ours: its name cannot be moved
        os.chmod(shared, 0o777)  # the server writes the database and its journal here
        self.database = os.path.join(shared, "db.sqlite3")
        self.private = tempfile.mkdtemp(prefix="hidden-copy-")  # ours alone
        self.log_path = os.path.join(self.private, "server.log")
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self._failed_start: str | None = None  # a project that cannot start is not tried again
        self._described: dict[str, Any] | None = None

    def ensure(self) -> None:
        """A running server: started the first time, and again after it died."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()

    def _start(self) -> None:
        if self._failed_start is not None:
            raise boundary.ProgramFailed(self._failed_start)
        read_end, write_end = os.pipe()
        argv = [sys.executable, "-I", self.server_py, self.workspace, self.database, str(write_end)]
        with open(self.log_path, "ab") as log:
            try:
                self.proc = subprocess.Popen(
                    argv, pass_fds=[write_end], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    cwd=self.workspace, **boundary._as_program(),
                )
            finally:
                os.close(write_end)
        try:
            line = _read_line(read_end, START_TIMEOUT_S)
        finally:
            os.close(read_end)
        if not line.strip().isdigit():
            self.stop()
            self._failed_start = f"the project's server did not start: {self.log_tail()}"
            raise boundary.ProgramFailed(self._failed_start)
        self.port = int(line)

    def stop(self) -> None:
        """The server and whatever it started gone (killed as their user: we may not signal it)."""
        boundary.kill_leftovers()
        if self.proc is not None and self.proc.poll() is None:
            if not boundary.switching():
                self.proc.kill()
            self.proc.wait(timeout=30)

    def log_tail(self) -> str:
        with open(self.log_path, "rb") as fh:
            return fh.read()[-3000:].decode(errors="replace")

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None):
        """(status, headers, body) of one HTTP request to the server."""
        self.ensure()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT_S)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            data = response.read(MAX_BYTES + 1)
        except (OSError, http.client.HTTPException) as exc:
            raise boundary.ProgramFailed(f"{method} {path}: {exc!r}; server log: {self.log_tail()}") from None
        finally:
            conn.close()
        if len(data) > MAX_BYTES:
            raise boundary.ProgramFailed(f"{method} {path}: a response over {MAX_BYTES} bytes")
        return response.status, response.headers, data

    def control(self, op: str, **request: Any) -> dict[str, Any]:
        """One of app_server.py's ops; ``Raised`` when the project raised."""
        status, _, data = self.request("POST", f"/__hidden__/{op}", json.dumps(request).encode())
        try:
            reply = json.loads(data)
        except ValueError:
            raise boundary.ProgramFailed(f"{op}: not JSON ({status}): {data[:500]!r}") from None
        if not isinstance(reply, dict):
            raise boundary.ProgramFailed(f"{op}: not an object: {reply!r:.500}")
        if "raised" in reply:
            raise Raised(op, reply)
        return reply

    def describe(self) -> dict[str, Any]:
        if self._described is None:
            self._described = self.control("describe")
        return self._described

    def query(self, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
        """Rows of ``sql`` run on a fresh copy of the database file."""
        copy = os.path.join(self.private, "copy.sqlite3")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(copy + suffix):
                os.unlink(copy + suffix)
        for suffix in ("", "-wal"):
            data = _read_plain_file(self.database + suffix, required=not suffix)
            if data is not None:
                with open(copy + suffix, "wb") as fh:
                    fh.write(data)
        con = sqlite3.connect(copy, timeout=5)
        con.row_factory = sqlite3.Row
        try:
            return [dict(row) for row in con.execute(sql, params)]
        finally:
            con.close()


class Raised(AssertionError):
    """The project raised inside an op (``names``: its class's MRO, as names)."""

    def __init__(self, op: str, reply: dict[str, Any]) -> None:
        self.names = [str(n) for n in reply.get("raised", [])]
        self.message = str(reply.get("message", ""))
        self.status, self.code = reply.get("status"), reply.get("code")
        super().__init__(f"{op}: {self.names[:1]} {self.message}\n{reply.get('traceback', '')}")


def _read_line(fd: int, timeout: float) -> str:
    deadline, got = time.monotonic() + timeout, b""
    while b"\n" not in got:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return ""
        chunk = os.read(fd, 64)
        if not chunk:
            break
        got += chunk
    return got.decode(errors="replace")


def _read_plain_file(path: str, *, required: bool) -> bytes | None:
    """The bytes of a regular file the program wrote: a link is not followed, a FIFO not waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        if required:
            raise boundary.ProgramFailed(f"no database file at {path}") from None
        return None
    except OSError as exc:
        raise boundary.ProgramFailed(f"cannot read {path}: {exc}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise boundary.ProgramFailed(f"{path} is not a regular file")
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise boundary.ProgramFailed(f"{path} is over {MAX_BYTES} bytes")
    return data


class Api:
    """A JSON client: ``api.post(path, body)`` -> (status, parsed JSON or None); keeps cookies."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.cookies: dict[str, str] = {}

    def _send(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None):
        headers = {"Content-Type": content_type} if content_type else {}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        status, response_headers, data = self.app.request(method, path, body, headers)
        for header in response_headers.get_all("Set-Cookie") or []:
            jar = http.cookies.SimpleCookie()
            jar.load(header)
            self.cookies.update({name: morsel.value for name, morsel in jar.items()})
        return status, data

    @staticmethod
    def _parse(status: int, data: bytes):
        try:
            return status, json.loads(data or b"null")
        except ValueError:
            return status, None

    def get(self, path: str, params: dict[str, Any] | None = None):
        if params:
            path += ("&" if "?" in path else "?") + urllib.parse.urlencode(params)
        return self._parse(*self._send("GET", path))

    def post(self, path: str, body: Any = None, raw: str | None = None):
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self._parse(*self._send("POST", path, data.encode(), "application/json"))

    def delete(self, path: str):
        return self._parse(*self._send("DELETE", path))

    def page(self, path: str) -> int:
        """The status of a page that is not JSON (an admin page)."""
        return self._send("GET", path)[0]

    def login(self, username: str, password: str) -> None:
        """Sign into the admin through its login form, as a browser does."""
        self._send("GET", "/admin/login/")
        form = {"csrfmiddlewaretoken": self.cookies.get("csrftoken", ""), "username": username,
                "password": password, "next": "/admin/"}
        body = urllib.parse.urlencode(form).encode()
        status, _ = self._send("POST", "/admin/login/?next=/admin/", body, "application/x-www-form-urlencoded")
        assert status == 302 and "sessionid" in self.cookies, f"admin login failed ({status})"


class Row:
    """A row: ``pk``, ``model`` and its values by attribute name (``table_id``, ``starts_at``)."""

    def __init__(self, model: str, pk: Any, values: dict[str, Any]) -> None:
        self.__dict__.update(values)
        self.model, self.pk = model, pk

    def __repr__(self) -> str:
        return f"<{self.model} {self.pk}>"


def to_json(value: Any) -> Any:
    """A test's value as app_server.py decodes it."""
    if isinstance(value, Row):
        return {"$model": value.model, "pk": value.pk}
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


def from_json(value: Any) -> Any:
    if isinstance(value, list):
        return [from_json(v) for v in value]
    if isinstance(value, dict):
        if "$model" in value:
            return Row(value["$model"], value.get("pk"), from_json(value.get("fields", {})))
        if "$datetime" in value:
            return datetime.fromisoformat(value["$datetime"])
        if "$date" in value:
            return date.fromisoformat(value["$date"])
        return {k: from_json(v) for k, v in value.items()}
    return value


def stored(value: Any) -> Any:
    """A value read from the database file: Django keeps datetimes there as UTC text."""
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and value[10] in " T":
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return value
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    return value


class Model:
    """One model of the project: made and changed by the project, read from its database file."""

    def __init__(self, app: App, name: str) -> None:
        self.app, self.name = app, name

    def create(self, *, m2m: dict[str, list[int]] | None = None, **fields: Any) -> Row:
        values = {k: _field_json(v) for k, v in fields.items()}
        reply = self.app.control("create", model=self.name, fields=values, m2m=m2m or {})
        return Row(self.name, reply["pk"], fields)

    def update(self, pk: Any, **fields: Any) -> int:
        values = {k: _field_json(v) for k, v in fields.items()}
        return self.app.control("update", model=self.name, pk=pk, fields=values)["changed"]

    def display(self, pk: Any, field: str) -> str:
        return self.app.control("display", model=self.name, pk=pk, field=field)["value"]

    def _table(self) -> tuple[str, dict[str, str]]:
        described = self.app.describe()["models"].get(self.name)
        assert described is not None, f"no model {self.name} in reservations"
        return described["table"], described["columns"]

    def rows(self, **where: Any) -> list[Row]:
        table, columns = self._table()
        unknown = sorted(set(where) - set(columns))
        assert not unknown, f"{self.name} has no field {unknown}"
        clause = " AND ".join(f'"{columns[k]}" = ?' for k in where) or "1"
        found = self.app.query(f'SELECT * FROM "{table}" WHERE {clause}', tuple(to_db(v) for v in where.values()))
        by_column = {column: attname for attname, column in columns.items()}
        pk_column = columns.get("id", "id")
        rows = [Row(self.name, r.get(pk_column), {by_column.get(k, k): stored(v) for k, v in r.items()}) for r in found]
        return sorted(rows, key=lambda r: (r.pk is None, r.pk))

    def get(self, pk: Any) -> Row:
        found = self.rows(id=pk)
        assert len(found) == 1, f"{self.name} {pk}: {len(found)} rows"
        return found[0]

    def count(self, **where: Any) -> int:
        return len(self.rows(**where))

    def first(self) -> Row | None:
        found = self.rows()
        return found[0] if found else None


def _field_json(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value if value is None or isinstance(value, (bool, int, float, str, list)) else str(value)


def to_db(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")
    return value


class Models:
    """``m.Restaurant``: the project's model of that name (``names()``: all of them)."""

    def __init__(self, app: App) -> None:
        self._app = app

    def __getattr__(self, name: str) -> Model:
        if name.startswith("_"):
            raise AttributeError(name)
        return Model(self._app, name)

    def names(self) -> set[str]:
        return set(self._app.describe()["models"])

    def in_admin(self) -> set[str]:
        return set(self._app.describe()["admin"])


class ServiceError(Exception):
    """What ``reservations.services`` raised, as the class of that name in the contract."""

    def __init__(self, message: str = "", status: Any = None, code: Any = None) -> None:
        super().__init__(message)
        self.message, self.status, self.code = message, status, code


class ValidationFailed(ServiceError): ...


class NotFound(ServiceError): ...


class Conflict(ServiceError): ...


class Expired(ServiceError): ...


CONTRACT = {c.__name__: c for c in (ServiceError, ValidationFailed, NotFound, Conflict, Expired)}


class Services:
    """``svc.create_hold(r, 2, starts_at, now=t0)``: the project's function, run in the server."""

    ServiceError, ValidationFailed, NotFound, Conflict, Expired = (
        ServiceError, ValidationFailed, NotFound, Conflict, Expired,
    )

    def __init__(self, app: App) -> None:
        self._app = app

    def mro(self, name: str) -> list[str]:
        """The names of the project's class ``name`` and its bases ([] when it has none)."""
        return list(self._app.describe()["errors"].get(name, []))

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                reply = self._app.control("service", name=name, args=to_json(list(args)), kwargs=to_json(kwargs))
            except Raised as exc:
                raised = next((CONTRACT[n] for n in exc.names if n in CONTRACT), None)
                if raised is None:
                    raise
                raise raised(exc.message, exc.status, exc.code) from None
            return from_json(reply["value"])

        return call
