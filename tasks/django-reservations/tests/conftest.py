"""Fixtures for the hidden acceptance tests: they use only the contract in instruction.md
(module paths, model and field names, service functions, HTTP paths and JSON shapes).

The project runs as a server under another user (``app_client.App``, ``boundary.py``): nothing
it does reaches this pytest. One server for the session; every test starts on an empty
database (``reset``) and a dead server is started again."""
import os
from datetime import datetime, time, timezone

import pytest

import app_client

UTC = timezone.utc
EVERY_DAY = range(7)
WORKSPACE = os.environ.get("WORKSPACE", "/workspace")


@pytest.fixture(scope="session")
def app():
    served = app_client.App(WORKSPACE, os.path.dirname(os.path.abspath(__file__)))
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture(autouse=True)
def _db(app):
    """Every test starts on an empty database."""
    app.control("reset")


@pytest.fixture
def m(app):
    return app_client.Models(app)


@pytest.fixture
def svc(app):
    return app_client.Services(app)


@pytest.fixture
def api(app):
    return app_client.Api(app)


@pytest.fixture
def admin_client(app, m):
    """A client signed into the admin as a superuser."""
    m.User.create(username="admin", email="admin@example.com", password="password")
    client = app_client.Api(app)
    client.login("admin", "password")
    return client


def hhmm(text):
    h, mnt = text.split(":")
    return time(int(h), int(mnt))


@pytest.fixture
def make_restaurant(m):
    """A restaurant with tables of the given capacities and weekly opening hours.

    ``hours`` is a list of (weekdays, "HH:MM", "HH:MM"); the tables are on ``r.test_tables``."""
    counter = {"n": 0}

    def make(tz="UTC", hours=((EVERY_DAY, "17:00", "22:00"),), tables=(2, 4, 6), **fields):
        counter["n"] += 1
        r = m.Restaurant.create(name=f"Test Place {counter['n']}", slug=f"test-place-{counter['n']}",
                                timezone=tz, **fields)
        for days, opens, closes in hours:
            for d in days:
                m.OpeningHours.create(restaurant_id=r.pk, weekday=d, opens_at=hhmm(opens), closes_at=hhmm(closes))
        r.test_tables = [m.Table.create(restaurant_id=r.pk, name=f"T{i + 1}", capacity=c)
                         for i, c in enumerate(tables)]
        return r

    return make


@pytest.fixture
def guest(m):
    return m.Guest.create(name="Ann Example", email="ann@example.com")


def instant(text):
    """Parse an ISO 8601 string from a response into an aware UTC datetime (fails when naive)."""
    value = datetime.fromisoformat(text)
    assert value.tzinfo is not None and value.utcoffset() is not None, f"naive datetime in response: {text}"
    return value.astimezone(UTC)


def utc(*args):
    return datetime(*args, tzinfo=UTC)


def assert_error(status, body, expected_status, code=None):
    assert status == expected_status, (status, body)
    assert isinstance(body, dict) and isinstance(body.get("error"), dict), body
    assert isinstance(body["error"].get("code"), str) and isinstance(body["error"].get("message"), str), body
    if code is not None:
        assert body["error"]["code"] == code, body


def book(api, r, guest, starts_at, party_size=2, **extra):
    return api.post("/api/reservations/", {"restaurant_id": r.pk, "guest_id": guest.pk,
                                           "party_size": party_size, "starts_at": starts_at, **extra})
