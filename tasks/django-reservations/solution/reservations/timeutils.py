"""Time in a restaurant's own zone.

Everything that compares or adds times works on UTC instants, so durations are real minutes even
on the night a daylight-saving change happens. Wall-clock values (opening hours, naive input) are
turned into instants with the restaurant's ``ZoneInfo``; ``fold=0`` picks the first of two
ambiguous readings.
"""
from datetime import date, datetime, time, timedelta
from datetime import timezone as dt_timezone
from zoneinfo import ZoneInfo

UTC = dt_timezone.utc


def zone_of(restaurant):
    return ZoneInfo(restaurant.timezone)


def local_instant(restaurant, day: date, wall: time) -> datetime:
    """The UTC instant at which the restaurant's clocks show ``wall`` on ``day``."""
    return datetime.combine(day, wall).replace(tzinfo=zone_of(restaurant)).astimezone(UTC)


def to_aware(restaurant, value: datetime) -> datetime:
    """An aware UTC datetime: naive values are wall-clock time in the restaurant's zone."""
    if value.tzinfo is None or value.utcoffset() is None:
        value = value.replace(tzinfo=zone_of(restaurant))
    return value.astimezone(UTC)


def to_local(restaurant, value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(zone_of(restaurant))


def isoformat_local(restaurant, value: datetime | None) -> str | None:
    local = to_local(restaurant, value)
    return None if local is None else local.isoformat()


def add_minutes(value: datetime, minutes: int) -> datetime:
    """``value`` plus real minutes (arithmetic in UTC, never wall-clock)."""
    return (value.astimezone(UTC) + timedelta(minutes=minutes)).astimezone(value.tzinfo)


def local_date(restaurant, value: datetime) -> date:
    return value.astimezone(zone_of(restaurant)).date()


def opening_periods(restaurant, day: date) -> list[tuple[datetime, datetime]]:
    """(opens, closes) UTC instants of the periods that open on local ``day``."""
    periods = []
    for hours in restaurant.opening_hours.filter(weekday=day.weekday()).order_by("opens_at"):
        close_day = day + timedelta(days=1) if hours.closes_at <= hours.opens_at else day
        periods.append((local_instant(restaurant, day, hours.opens_at),
                        local_instant(restaurant, close_day, hours.closes_at)))
    return periods


def periods_around(restaurant, instant: datetime) -> list[tuple[datetime, datetime]]:
    """Periods that could contain ``instant``: those opening on its local date or the day before."""
    day = local_date(restaurant, instant)
    return opening_periods(restaurant, day - timedelta(days=1)) + opening_periods(restaurant, day)
