"""Small builders shared by the test modules."""
from datetime import datetime, time
from datetime import timezone as dt_timezone

from reservations.models import Guest, OpeningHours, Restaurant, Table

UTC = dt_timezone.utc


def utc(*args):
    return datetime(*args, tzinfo=UTC)


def restaurant(name="Harbour", tz="UTC", hours=((range(7), time(17), time(22)),), capacities=(2, 4, 6), **fields):
    r = Restaurant.objects.create(name=name, slug=name.lower().replace(" ", "-"), timezone=tz, **fields)
    for days, opens, closes in hours:
        for day in days:
            OpeningHours.objects.create(restaurant=r, weekday=day, opens_at=opens, closes_at=closes)
    for i, capacity in enumerate(capacities):
        Table.objects.create(restaurant=r, name=f"T{i + 1}", capacity=capacity)
    return r


def guest(name="Ann", email="ann@example.com"):
    return Guest.objects.create(name=name, email=email)
