"""Daylight-saving days in America/New_York (2030: spring forward 10 March, fall back 3 November)."""
from datetime import datetime, timedelta

from conftest import UTC, book, instant, utc

NY = "America/New_York"
SATURDAY = [5]


def slots(api, r, day, party_size=2):
    status, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": day, "party_size": party_size})
    assert status == 200, body
    return body["slots"]


def test_spring_forward_day_uses_summer_offset(api, make_restaurant):
    r = make_restaurant(tz=NY)
    before, after = slots(api, r, "2030-03-09"), slots(api, r, "2030-03-10")
    assert instant(before[0]["starts_at"]) == utc(2030, 3, 9, 22, 0)
    assert instant(after[0]["starts_at"]) == utc(2030, 3, 10, 21, 0)
    assert datetime.fromisoformat(after[0]["starts_at"]).utcoffset() == timedelta(hours=-4)


def test_fall_back_day_uses_winter_offset(api, make_restaurant):
    r = make_restaurant(tz=NY)
    before, after = slots(api, r, "2030-11-02"), slots(api, r, "2030-11-03")
    assert instant(before[0]["starts_at"]) == utc(2030, 11, 2, 21, 0)
    assert instant(after[0]["starts_at"]) == utc(2030, 11, 3, 22, 0)
    assert datetime.fromisoformat(after[0]["starts_at"]).utcoffset() == timedelta(hours=-5)


def test_spring_forward_night_slots_step_in_real_time(api, make_restaurant):
    r = make_restaurant(tz=NY, hours=((SATURDAY, "22:00", "04:00"),))
    found = slots(api, r, "2030-03-09")
    starts = [instant(s["starts_at"]) for s in found]
    assert starts == [utc(2030, 3, 10, 3, 0) + timedelta(minutes=30 * i) for i in range(8)]
    for s in found:
        assert instant(s["ends_at"]) - instant(s["starts_at"]) == timedelta(minutes=90)
    assert instant(found[-1]["ends_at"]) == utc(2030, 3, 10, 8, 0)  # 04:00 EDT


def test_fall_back_night_lists_both_one_oclocks(api, make_restaurant):
    r = make_restaurant(tz=NY, hours=((SATURDAY, "22:00", "04:00"),))
    found = slots(api, r, "2030-11-02")
    starts = [instant(s["starts_at"]) for s in found]
    assert starts == [utc(2030, 11, 3, 2, 0) + timedelta(minutes=30 * i) for i in range(12)]
    offsets = {datetime.fromisoformat(s["starts_at"]).utcoffset() for s in found if s["starts_at"][11:16] == "01:00"}
    assert offsets == {timedelta(hours=-4), timedelta(hours=-5)}


def test_reservation_across_spring_forward_lasts_real_minutes(api, make_restaurant, guest):
    r = make_restaurant(tz=NY, hours=((SATURDAY, "22:00", "04:00"),))
    status, body = book(api, r, guest, "2030-03-10T01:30:00")
    assert status == 201, body
    assert instant(body["ends_at"]) - instant(body["starts_at"]) == timedelta(minutes=90)
    assert body["ends_at"].startswith("2030-03-10T04:00:00-04:00")


def test_booking_ending_after_close_across_dst_refused(api, make_restaurant, guest):
    r = make_restaurant(tz=NY, hours=((SATURDAY, "22:00", "04:00"),))
    status, body = book(api, r, guest, "2030-03-10T01:45:00")  # would end 04:15 EDT
    assert status == 409, body


def test_service_duration_is_absolute_across_fall_back(svc, make_restaurant, guest):
    r = make_restaurant(tz=NY, hours=((SATURDAY, "22:00", "04:00"),))
    reservation = svc.create_reservation(r, guest, 2, utc(2030, 11, 3, 5, 0))  # 01:00 EDT
    start, end = reservation.starts_at.astimezone(UTC), reservation.ends_at.astimezone(UTC)
    assert end - start == timedelta(minutes=90)
    assert end == utc(2030, 11, 3, 6, 30)
