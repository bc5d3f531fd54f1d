"""Opening periods that run past midnight (Europe/Berlin, Friday 18:00 - Saturday 02:00)."""
from conftest import book, instant, utc

BERLIN = "Europe/Berlin"
FRIDAY = [4]


def late_bar(make_restaurant, tables=(2, 4)):
    return make_restaurant(tz=BERLIN, hours=((FRIDAY, "18:00", "02:00"),), tables=tables)


def test_booking_across_midnight_accepted(api, make_restaurant, guest):
    r = late_bar(make_restaurant)
    status, body = book(api, r, guest, "2030-01-18T23:30:00")
    assert status == 201, body
    assert body["ends_at"].startswith("2030-01-19T01:00:00+01:00")


def test_after_midnight_start_belongs_to_previous_days_period(api, make_restaurant, guest):
    r = late_bar(make_restaurant)
    status, body = book(api, r, guest, "2030-01-19T00:30:00")
    assert status == 201, body
    assert instant(body["ends_at"]) == utc(2030, 1, 19, 1, 0)  # 02:00 local, closing time


def test_booking_past_closing_after_midnight_refused(api, make_restaurant, guest):
    r = late_bar(make_restaurant)
    status, body = book(api, r, guest, "2030-01-19T01:00:00")
    assert status == 409, body


def test_availability_includes_after_midnight_slots(api, make_restaurant):
    r = late_bar(make_restaurant)
    status, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": "2030-01-18", "party_size": 2})
    assert status == 200, body
    assert len(body["slots"]) == 14
    assert body["slots"][-1]["starts_at"].startswith("2030-01-19T00:30:00+01:00")
    status, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": "2030-01-19", "party_size": 2})
    assert status == 200 and body["slots"] == []


def test_reservation_across_midnight_blocks_the_table_after_midnight(api, make_restaurant, guest):
    r = late_bar(make_restaurant, tables=(4,))
    status, _ = book(api, r, guest, "2030-01-18T23:30:00")
    assert status == 201
    status, body = book(api, r, guest, "2030-01-19T00:15:00")
    assert status == 409, body
    _, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": "2030-01-18", "party_size": 2})
    assert len(body["slots"]) == 9
    assert body["slots"][-1]["starts_at"].startswith("2030-01-18T22:00:00")
