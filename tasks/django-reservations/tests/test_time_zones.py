"""Availability and bookings are computed in the restaurant's own zone, far from UTC."""
from datetime import datetime, timedelta

from conftest import book, instant, utc

AKL = "Pacific/Auckland"  # UTC+13 in January
TYO = "Asia/Tokyo"  # UTC+9


def slots(api, r, day, party_size=2):
    status, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": day, "party_size": party_size})
    assert status == 200, body
    return body["slots"]


def test_availability_in_auckland_uses_local_opening_hours(api, make_restaurant):
    r = make_restaurant(tz=AKL)
    found = slots(api, r, "2030-01-15")
    starts = [instant(s["starts_at"]) for s in found]
    assert starts == [utc(2030, 1, 15, 4, 0) + timedelta(minutes=30 * i) for i in range(8)]
    assert datetime.fromisoformat(found[0]["starts_at"]).utcoffset() == timedelta(hours=13)
    assert instant(found[-1]["ends_at"]) == utc(2030, 1, 15, 9, 0)


def test_availability_in_tokyo_crosses_utc_date(api, make_restaurant):
    r = make_restaurant(tz=TYO, hours=(([2], "07:00", "10:00"),))  # Wednesdays only
    found = slots(api, r, "2030-01-16")
    assert [instant(s["starts_at"]) for s in found] == [
        utc(2030, 1, 15, 22, 0), utc(2030, 1, 15, 22, 30), utc(2030, 1, 15, 23, 0), utc(2030, 1, 15, 23, 30)]
    assert slots(api, r, "2030-01-15") == []


def test_naive_start_is_local_wall_time(api, make_restaurant, guest, m):
    r = make_restaurant(tz=AKL)
    status, body = book(api, r, guest, "2030-01-15T19:00:00")
    assert status == 201, body
    assert instant(body["starts_at"]) == utc(2030, 1, 15, 6, 0)
    assert datetime.fromisoformat(body["starts_at"]).utcoffset() == timedelta(hours=13)
    assert m.Reservation.get(body["id"]).starts_at == utc(2030, 1, 15, 6, 0)


def test_offset_start_is_an_instant(api, make_restaurant, guest):
    r = make_restaurant(tz=AKL)
    status, body = book(api, r, guest, "2030-01-15T06:00:00Z")
    assert status == 201, body
    assert body["starts_at"].startswith("2030-01-15T19:00:00")
    assert instant(body["ends_at"]) == utc(2030, 1, 15, 7, 30)


def test_start_outside_local_hours_refused(api, make_restaurant, guest):
    r = make_restaurant(tz=AKL)
    status, body = book(api, r, guest, "2030-01-15T18:00:00Z")  # 07:00 on the 16th in Auckland: closed
    assert status == 409, body
    status, body = book(api, r, guest, "2030-01-15T05:00:00")  # 05:00 in Auckland: closed
    assert status == 409, body


def test_service_treats_naive_datetime_as_local(svc, make_restaurant, guest):
    r = make_restaurant(tz=AKL)
    reservation = svc.create_reservation(r, guest, 2, datetime(2030, 1, 15, 19, 0))
    assert reservation.starts_at == utc(2030, 1, 15, 6, 0)
    assert reservation.ends_at == utc(2030, 1, 15, 7, 30)


def test_service_availability_returns_local_aware_datetimes(svc, make_restaurant):
    r = make_restaurant(tz=AKL)
    found = svc.check_availability(r, datetime(2030, 1, 15).date(), 2)
    assert found[0]["starts_at"] == utc(2030, 1, 15, 4, 0)
    assert found[0]["starts_at"].utcoffset() == timedelta(hours=13)


def test_reservation_list_date_filter_is_local(api, make_restaurant, guest):
    r = make_restaurant(tz=AKL, hours=((range(7), "08:00", "22:00"),))
    _, evening = book(api, r, guest, "2030-01-15T20:00:00")  # 07:00Z on the 15th
    _, morning = book(api, r, guest, "2030-01-16T09:00:00")  # 20:00Z on the 15th, local 16th
    status, body = api.get("/api/reservations/", {"restaurant_id": r.pk, "date": "2030-01-15"})
    assert status == 200, body
    assert [x["id"] for x in body["reservations"]] == [evening["id"]]
    _, body = api.get("/api/reservations/", {"restaurant_id": r.pk, "date": "2030-01-16"})
    assert [x["id"] for x in body["reservations"]] == [morning["id"]]


def test_closure_blocks_in_local_time(api, make_restaurant, m):
    r = make_restaurant(tz=AKL)
    m.Closure.create(restaurant_id=r.pk, kind="private_event", reason="Party",
                             starts_at=utc(2030, 1, 15, 5, 0), ends_at=utc(2030, 1, 15, 7, 0))  # 18:00-20:00 local
    found = slots(api, r, "2030-01-15")
    assert [s["starts_at"][:19] for s in found] == ["2030-01-15T20:00:00", "2030-01-15T20:30:00"]


def test_hold_datetimes_use_restaurant_offset(api, make_restaurant):
    r = make_restaurant(tz=TYO)
    status, body = api.post("/api/holds/", {"restaurant_id": r.pk, "party_size": 2,
                                            "starts_at": "2030-01-16T18:00:00"})
    assert status == 201, body
    for key in ("starts_at", "ends_at", "expires_at"):
        assert datetime.fromisoformat(body[key]).utcoffset() == timedelta(hours=9), (key, body[key])
    assert instant(body["starts_at"]) == utc(2030, 1, 16, 9, 0)
