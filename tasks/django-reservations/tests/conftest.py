"""Fixtures for the hidden acceptance tests: they use only the contract in instruction.md
(module paths, model and field names, service functions, HTTP paths and JSON shapes).
Project modules are imported inside fixtures, so a missing module fails the tests that need
it instead of the whole run."""
import json
from datetime import datetime, time, timezone

import pytest
from django.test import Client

UTC = timezone.utc
EVERY_DAY = range(7)


@pytest.fixture(autouse=True)
def _db(db):
    """Every test may touch the database."""


@pytest.fixture
def m():
    from reservations import models

    return models


@pytest.fixture
def svc():
    from reservations import services

    return services


class Api:
    """Thin JSON client: ``api.post(path, body)`` -> (status, parsed JSON or None)."""

    def __init__(self):
        self.client = Client(raise_request_exception=False)

    @staticmethod
    def _parse(response):
        try:
            return response.status_code, json.loads(response.content or b"null")
        except ValueError:
            return response.status_code, None

    def get(self, path, params=None):
        return self._parse(self.client.get(path, params or {}))

    def post(self, path, body=None, raw=None):
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self._parse(self.client.post(path, data=data, content_type="application/json"))

    def delete(self, path):
        return self._parse(self.client.delete(path))


@pytest.fixture
def api():
    return Api()


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
        r = m.Restaurant.objects.create(name=f"Test Place {counter['n']}", slug=f"test-place-{counter['n']}",
                                        timezone=tz, **fields)
        for days, opens, closes in hours:
            for d in days:
                m.OpeningHours.objects.create(restaurant=r, weekday=d, opens_at=hhmm(opens), closes_at=hhmm(closes))
        r.test_tables = [m.Table.objects.create(restaurant=r, name=f"T{i + 1}", capacity=c)
                         for i, c in enumerate(tables)]
        return r

    return make


@pytest.fixture
def guest(m):
    return m.Guest.objects.create(name="Ann Example", email="ann@example.com")


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
