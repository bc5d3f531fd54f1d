"""The agent's Django project as a server: run by the hidden tests as another user, never imported.

    python -I app_server.py WORKSPACE DATABASE READY_FD

Points ``DATABASES`` at DATABASE (a settings module that star-imports ``config.settings``, as
the own-tests wrapper does), migrates, and serves on 127.0.0.1 (a free port, written to READY_FD
as one line) two things, one request at a time:

- every path but ``/__hidden__/``: the project's own WSGI application, as a client would see it;
- ``POST /__hidden__/<op>``: what the tests need done inside the project, each a JSON object in
  and out: ``reset`` (every row gone), ``create``/``update`` (through the project's models),
  ``service`` (a call of ``reservations.services``), ``command`` (a management command),
  ``display`` (``get_FOO_display()``), ``describe`` (models, tables, columns, the admin).

Whatever the project does here happens in this process, as this user: the pytest that reports
only sees the JSON that comes back, the HTTP responses and the database file it reads itself.
"""

import datetime as dt
import decimal
import json
import os
import sys
import tempfile
import traceback
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

KEEP_TABLES = {"django_migrations", "django_content_type", "auth_permission"}


def configure(workspace, database):
    """Django set up for the project in ``workspace`` with its database at ``database``."""
    wrapper = tempfile.mkdtemp(prefix="hidden-settings-")
    with open(os.path.join(wrapper, "agentrun_hidden_settings.py"), "w") as fh:
        fh.write(
            "from config.settings import *  # noqa\n"
            f"DATABASES = {{'default': {{'ENGINE': 'django.db.backends.sqlite3', 'NAME': {database!r}}}}}\n"
        )
    sys.path[:0] = [wrapper, workspace]
    os.environ["DJANGO_SETTINGS_MODULE"] = "agentrun_hidden_settings"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)


def model(name):
    from django.apps import apps

    if name == "User":
        from django.contrib.auth import get_user_model

        return get_user_model()
    return apps.get_model("reservations", name)


def decode(value):
    """JSON from the tests into Python: ``{"$model", "pk"}`` is that row, fresh from the database."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "$model" in value:
            return model(value["$model"])._default_manager.get(pk=value["pk"])
        if "$datetime" in value:
            return dt.datetime.fromisoformat(value["$datetime"])
        if "$date" in value:
            return dt.date.fromisoformat(value["$date"])
        return {k: decode(v) for k, v in value.items()}
    return value


def encode(value, depth=0):
    """Python into JSON for the tests: a model instance is its class name, pk and concrete fields."""
    from django.db import models

    if depth > 6:
        return repr(value)
    if isinstance(value, models.Model):
        fields = {f.attname: encode(getattr(value, f.attname), depth + 1) for f in value._meta.concrete_fields}
        return {"$model": type(value).__name__, "pk": value.pk, "fields": fields}
    if isinstance(value, dt.datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, (dt.time, decimal.Decimal)):
        return str(value)
    if isinstance(value, dict):
        return {str(k): encode(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [encode(v, depth + 1) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def field_values(cls, fields):
    """Each value as its field's Python type (``"2030-01-15T18:00:00+00:00"`` an aware datetime)."""
    return {name: cls._meta.get_field(name).to_python(value) for name, value in fields.items()}


def op_reset(request):
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        for table in connection.introspection.get_table_list(cursor):
            if table.type == "t" and table.name not in KEEP_TABLES:
                cursor.execute(f'DELETE FROM "{table.name}"')
        cursor.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'")
        if cursor.fetchone():
            cursor.execute("DELETE FROM sqlite_sequence")
    return {}


def op_create(request):
    cls = model(request["model"])
    if request["model"] == "User":
        user = cls._default_manager.create_superuser(**request["fields"])
        return {"pk": user.pk}
    made = cls._default_manager.create(**field_values(cls, request["fields"]))
    for name, pks in request.get("m2m", {}).items():
        getattr(made, name).set(pks)
    return {"pk": made.pk}


def op_update(request):
    cls = model(request["model"])
    changed = cls._default_manager.filter(pk=request["pk"]).update(**field_values(cls, request["fields"]))
    return {"changed": changed}


def op_service(request):
    import importlib

    services = importlib.import_module("reservations.services")
    function = getattr(services, request["name"])
    return {"value": encode(function(*decode(request["args"]), **decode(request["kwargs"])))}


def op_command(request):
    from django.core.management import call_command

    call_command(request["name"], verbosity=0)
    return {}


def op_display(request):
    row = model(request["model"])._default_manager.get(pk=request["pk"])
    return {"value": str(getattr(row, f"get_{request['field']}_display")())}


def op_describe(request):
    import importlib

    from django.apps import apps
    from django.contrib import admin

    described = {}
    for cls in apps.get_app_config("reservations").get_models():
        columns = {f.attname: f.column for f in cls._meta.concrete_fields}
        described[cls.__name__] = {"table": cls._meta.db_table, "columns": columns}
    try:
        services = importlib.import_module("reservations.services")
    except Exception:  # noqa: BLE001 -- no services module: no error classes
        services = None
    errors = {
        name: [k.__name__ for k in getattr(services, name).__mro__]
        for name in ("ServiceError", "ValidationFailed", "NotFound", "Conflict", "Expired")
        if isinstance(getattr(services, name, None), type)
    }
    registered = sorted(m.__name__ for m in admin.site._registry if m._meta.app_label == "reservations")
    return {"models": described, "admin": registered, "errors": errors}


OPS = {name[3:]: fn for name, fn in globals().items() if name.startswith("op_")}


def control(environ, start_response):
    """``POST /__hidden__/<op>``: the op's reply, or what it raised (its class's MRO, status, code)."""
    try:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        request = json.loads(environ["wsgi.input"].read(size) or b"{}")
        reply = OPS[environ["PATH_INFO"].rsplit("/", 1)[-1]](request)
    except BaseException as exc:  # noqa: BLE001 -- the project's failure is the tests' answer
        reply = {
            "raised": [k.__name__ for k in type(exc).__mro__],
            "message": str(exc)[:2000],
            "status": encode(getattr(exc, "status", None)),
            "code": encode(getattr(exc, "code", None)),
            "traceback": traceback.format_exc()[-4000:],
        }
    body = json.dumps(reply).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def main():
    workspace, database, ready_fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.chdir(workspace)
    configure(workspace, database)
    from django.core.wsgi import get_wsgi_application

    project = get_wsgi_application()

    def app(environ, start_response):
        if environ.get("PATH_INFO", "").startswith("/__hidden__/"):
            return control(environ, start_response)
        return project(environ, start_response)

    server = make_server("127.0.0.1", 0, app, server_class=WSGIServer, handler_class=Quiet)
    with os.fdopen(ready_fd, "w") as ready:
        ready.write(f"{server.server_port}\n")
    server.serve_forever()


if __name__ == "__main__":
    main()
