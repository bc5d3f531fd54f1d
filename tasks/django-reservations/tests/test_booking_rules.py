"""Opening hours, closures, capacity, table choice, double booking and the status life cycle."""
import pytest

from conftest import assert_error, book, utc

DAY = "2030-01-15"  # a Tuesday


def at(hhmm):
    return f"{DAY}T{hhmm}:00"


def test_availability_payload_shape(api, make_restaurant):
    r = make_restaurant()
    status, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": DAY, "party_size": "2"})
    assert status == 200, body
    assert body["restaurant_id"] == r.pk and body["date"] == DAY
    assert body["timezone"] == "UTC" and body["party_size"] == 2
    assert len(body["slots"]) == 8
    first = body["slots"][0]
    assert first["table_ids"] == sorted(t.pk for t in r.test_tables)
    assert first["starts_at"].startswith(f"{DAY}T17:00:00") and first["ends_at"].startswith(f"{DAY}T18:30:00")


def test_availability_lists_only_tables_that_fit(api, make_restaurant):
    r = make_restaurant()
    _, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": DAY, "party_size": 5})
    assert {tuple(s["table_ids"]) for s in body["slots"]} == {(r.test_tables[2].pk,)}


def test_party_larger_than_every_table_has_no_slots(api, make_restaurant, guest):
    r = make_restaurant()
    _, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": DAY, "party_size": 7})
    assert body["slots"] == []
    status, body = book(api, r, guest, at("19:00"), party_size=7)
    assert_error(status, body, 409, "conflict")


def test_inactive_table_is_never_offered(api, make_restaurant, guest, m):
    r = make_restaurant(tables=(4,))
    m.Table.update(r.test_tables[0].pk, is_active=False)
    _, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": DAY, "party_size": 2})
    assert body["slots"] == []
    assert book(api, r, guest, at("19:00"))[0] == 409


def test_day_without_opening_hours_has_no_slots(api, make_restaurant):
    r = make_restaurant(hours=(([0], "17:00", "22:00"),))  # Mondays only
    _, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": DAY, "party_size": 2})
    assert body["slots"] == []


def test_lunch_and_dinner_periods(api, make_restaurant, guest):
    r = make_restaurant(hours=((range(7), "12:00", "14:00"), (range(7), "18:00", "21:00")))
    _, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": DAY, "party_size": 2})
    assert [s["starts_at"][11:16] for s in body["slots"]] == ["12:00", "12:30", "18:00", "18:30", "19:00", "19:30"]
    assert book(api, r, guest, at("13:00"))[0] == 409  # would run past 14:00
    assert book(api, r, guest, at("12:30"))[0] == 201


@pytest.mark.parametrize("kind", ["private_event", "maintenance", "holiday"])
def test_closure_of_each_kind_blocks_booking(api, make_restaurant, guest, m, kind):
    r = make_restaurant()
    m.Closure.create(restaurant_id=r.pk, kind=kind, reason="closed",
                             starts_at=utc(2030, 1, 15, 18, 0), ends_at=utc(2030, 1, 15, 20, 0))
    status, body = book(api, r, guest, at("18:30"))
    assert_error(status, body, 409, "conflict")
    assert book(api, r, guest, at("17:00"))[0] == 409  # overlaps the closure's first half hour
    assert book(api, r, guest, at("20:00"))[0] == 201
    _, body = api.get(f"/api/restaurants/{r.pk}/availability/", {"date": DAY, "party_size": 2})
    assert [s["starts_at"][11:16] for s in body["slots"]] == ["20:00", "20:30"]


def test_booking_outside_opening_hours_refused(api, make_restaurant, guest):
    r = make_restaurant()
    assert book(api, r, guest, at("16:00"))[0] == 409
    assert book(api, r, guest, at("21:00"))[0] == 409  # ends 22:30, after closing
    assert book(api, r, guest, at("20:30"))[0] == 201  # ends exactly at closing


def test_create_reservation_picks_smallest_fitting_table(api, make_restaurant, guest):
    r = make_restaurant()
    status, body = book(api, r, guest, at("19:00"), party_size=3)
    assert status == 201, body
    assert body["table_id"] == r.test_tables[1].pk
    assert body["status"] == "confirmed" and body["party_size"] == 3 and body["guest_id"] == guest.pk
    assert body["restaurant_id"] == r.pk and body["notes"] == ""


def test_double_booking_same_table_refused(api, make_restaurant, guest, m):
    r = make_restaurant()
    table = r.test_tables[1].pk
    assert book(api, r, guest, at("19:00"), table_id=table)[0] == 201
    status, body = book(api, r, guest, at("19:30"), table_id=table)
    assert_error(status, body, 409, "conflict")
    assert m.Reservation.count(table_id=table) == 1


def test_overlapping_bookings_fill_tables_then_refuse(api, make_restaurant, guest):
    r = make_restaurant(tables=(2, 2))
    first, second = book(api, r, guest, at("19:00")), book(api, r, guest, at("19:15"))
    assert first[0] == 201 and second[0] == 201
    assert first[1]["table_id"] != second[1]["table_id"]
    status, body = book(api, r, guest, at("20:00"))
    assert_error(status, body, 409, "conflict")


def test_touching_windows_do_not_overlap(api, make_restaurant, guest):
    r = make_restaurant(tables=(2,))
    assert book(api, r, guest, at("17:00"))[0] == 201
    assert book(api, r, guest, at("18:30"))[0] == 201


def test_table_too_small_refused(api, make_restaurant, guest):
    r = make_restaurant()
    status, body = book(api, r, guest, at("19:00"), party_size=4, table_id=r.test_tables[0].pk)
    assert_error(status, body, 409, "conflict")


def test_cancel_frees_table_and_cannot_repeat(api, make_restaurant, guest):
    r = make_restaurant(tables=(2,))
    _, made = book(api, r, guest, at("19:00"))
    status, body = api.post(f"/api/reservations/{made['id']}/cancel/")
    assert status == 200 and body["status"] == "cancelled", body
    assert book(api, r, guest, at("19:00"))[0] == 201
    status, body = api.post(f"/api/reservations/{made['id']}/cancel/")
    assert_error(status, body, 409, "conflict")


def test_seat_then_cancel_refused(api, make_restaurant, guest):
    r = make_restaurant()
    _, made = book(api, r, guest, at("19:00"))
    status, body = api.post(f"/api/reservations/{made['id']}/seat/")
    assert status == 200 and body["status"] == "seated", body
    assert api.post(f"/api/reservations/{made['id']}/cancel/")[0] == 409
    assert api.post(f"/api/reservations/{made['id']}/seat/")[0] == 409


def test_no_show_is_recorded(api, make_restaurant, guest, m):
    r = make_restaurant()
    _, made = book(api, r, guest, at("19:00"))
    status, body = api.post(f"/api/reservations/{made['id']}/no-show/")
    assert status == 200 and body["status"] == "no_show", body
    assert m.NoShowRecord.count(reservation_id=made["id"], guest_id=guest.pk) == 1


def test_reservation_detail(api, make_restaurant, guest):
    r = make_restaurant()
    _, made = book(api, r, guest, at("19:00"), notes="window please")
    status, body = api.get(f"/api/reservations/{made['id']}/")
    assert status == 200 and body == made


def test_restaurant_list_and_detail(api, make_restaurant):
    r = make_restaurant(tz="Asia/Tokyo", hold_minutes=7)
    status, body = api.get("/api/restaurants/")
    assert status == 200 and [x["id"] for x in body["restaurants"]] == [r.pk]
    status, body = api.get(f"/api/restaurants/{r.pk}/")
    assert status == 200, body
    assert body["timezone"] == "Asia/Tokyo" and body["hold_minutes"] == 7 and body["reservation_minutes"] == 90
    assert sorted(t["capacity"] for t in body["tables"]) == [2, 4, 6]


def test_guest_create_and_get(api):
    status, body = api.post("/api/guests/", {"name": "Bo", "email": "bo@example.com"})
    assert status == 201 and body["name"] == "Bo" and body["email"] == "bo@example.com", body
    status, again = api.get(f"/api/guests/{body['id']}/")
    assert status == 200 and again["id"] == body["id"] and again["phone"] in ("", None)


def test_service_errors_are_typed(svc, make_restaurant, guest):
    r = make_restaurant(tables=(2,))
    with pytest.raises(svc.ValidationFailed) as bad:
        svc.create_reservation(r, guest, 0, utc(2030, 1, 15, 19, 0))
    assert bad.value.status == 400 and bad.value.code == "validation_error"
    svc.create_reservation(r, guest, 2, utc(2030, 1, 15, 19, 0))
    with pytest.raises(svc.Conflict) as taken:
        svc.create_reservation(r, guest, 2, utc(2030, 1, 15, 19, 30))
    assert taken.value.status == 409 and taken.value.code == "conflict"
    assert "ServiceError" in svc.mro("Expired") and "ServiceError" in svc.mro("NotFound")
