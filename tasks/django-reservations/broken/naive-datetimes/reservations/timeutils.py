"""BROKEN VARIANT (naive-datetimes): wall-clock values are read in the server's zone (settings
TIME_ZONE, UTC) instead of the restaurant's, and results are shown in UTC. This is the
prototype-level time-zone handling the seed's review found."""
from datetime import date, datetime, time, timedelta
from datetime import timezone as dt_timezone

from django.utils import timezone

UTC = dt_timezone.utc


def zone_of(restaurant):
    return timezone.get_default_timezone()


def local_instant(restaurant, day: date, wall: time) -> datetime:
    return timezone.make_aware(datetime.combine(day, wall))


def to_aware(restaurant, value: datetime) -> datetime:
    if timezone.is_naive(value):
        value = timezone.make_aware(value)
    return value


def to_local(restaurant, value):
    return value


def isoformat_local(restaurant, value):
    return None if value is None else value.isoformat()


def add_minutes(value: datetime, minutes: int) -> datetime:
    return value + timedelta(minutes=minutes)


def local_date(restaurant, value: datetime) -> date:
    return value.date()


def opening_periods(restaurant, day: date):
    periods = []
    for hours in restaurant.opening_hours.filter(weekday=day.weekday()).order_by("opens_at"):
        close_day = day + timedelta(days=1) if hours.closes_at <= hours.opens_at else day
        periods.append((local_instant(restaurant, day, hours.opens_at),
                        local_instant(restaurant, close_day, hours.closes_at)))
    return periods


def periods_around(restaurant, instant: datetime):
    day = local_date(restaurant, instant)
    return opening_periods(restaurant, day - timedelta(days=1)) + opening_periods(restaurant, day)
