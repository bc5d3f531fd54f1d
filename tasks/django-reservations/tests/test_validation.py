"""Bad input, unknown foreign keys and unknown paths get JSON errors with the right status, never 500."""
import pytest

from conftest import assert_error

START = "2030-01-15T19:00:00"
MISSING = 987654


@pytest.fixture
def setup(make_restaurant, guest):
    return make_restaurant(), guest


def reservation_body(r, guest, **changes):
    body = {"restaurant_id": r.pk, "guest_id": guest.pk, "party_size": 2, "starts_at": START}
    body.update(changes)
    return {k: v for k, v in body.items() if v is not ...}


@pytest.mark.parametrize("field", ["restaurant_id", "guest_id", "table_id"])
def test_unknown_foreign_key_in_reservation_is_400(api, setup, m, field):
    r, guest = setup
    status, body = api.post("/api/reservations/", reservation_body(r, guest, **{field: MISSING}))
    assert_error(status, body, 400, "validation_error")
    assert m.Reservation.count() == 0


@pytest.mark.parametrize("field", ["restaurant_id", "guest_id", "party_size", "starts_at"])
def test_missing_field_in_reservation_is_400(api, setup, field):
    r, guest = setup
    status, body = api.post("/api/reservations/", reservation_body(r, guest, **{field: ...}))
    assert_error(status, body, 400, "validation_error")


@pytest.mark.parametrize("field,value", [
    ("restaurant_id", "abc"), ("guest_id", None), ("guest_id", [1]), ("table_id", "x1"),
    ("party_size", "four"), ("party_size", 0), ("party_size", -2), ("starts_at", "next tuesday"),
    ("starts_at", 20300115),
])
def test_ill_typed_field_in_reservation_is_400(api, setup, field, value):
    r, guest = setup
    status, body = api.post("/api/reservations/", reservation_body(r, guest, **{field: value}))
    assert_error(status, body, 400, "validation_error")


def test_table_of_another_restaurant_is_400(api, setup, make_restaurant):
    r, guest = setup
    other = make_restaurant()
    status, body = api.post("/api/reservations/", reservation_body(r, guest, table_id=other.test_tables[0].pk))
    assert_error(status, body, 400, "validation_error")


@pytest.mark.parametrize("field", ["restaurant_id", "table_id", "guest_id"])
def test_unknown_foreign_key_in_hold_is_400(api, setup, m, field):
    r, guest = setup
    body = {"restaurant_id": r.pk, "party_size": 2, "starts_at": START, field: MISSING}
    assert_error(*api.post("/api/holds/", body), 400, "validation_error")
    assert m.Hold.count() == 0


@pytest.mark.parametrize("guest_field", [{"guest_id": MISSING}, {}, {"guest_id": "nobody"}])
def test_confirm_hold_needs_a_real_guest(api, setup, m, guest_field):
    r, _ = setup
    status, hold = api.post("/api/holds/", {"restaurant_id": r.pk, "party_size": 2, "starts_at": START})
    assert status == 201, hold
    assert_error(*api.post(f"/api/holds/{hold['id']}/confirm/", guest_field), 400, "validation_error")
    assert m.Reservation.count() == 0
    assert m.Hold.get(hold["id"]).status == "active"


@pytest.mark.parametrize("field", ["restaurant_id", "guest_id"])
def test_unknown_foreign_key_in_waitlist_is_400(api, setup, field):
    r, guest = setup
    body = {"restaurant_id": r.pk, "guest_id": guest.pk, "party_size": 2, field: MISSING}
    assert_error(*api.post("/api/waitlist/", body), 400, "validation_error")


def test_offer_with_unknown_table_is_400(api, setup, m):
    r, guest = setup
    entry = m.WaitlistEntry.create(restaurant_id=r.pk, guest_id=guest.pk, party_size=2)
    assert_error(*api.post(f"/api/waitlist/{entry.pk}/offer/", {"starts_at": START, "table_id": MISSING}),
                 400, "validation_error")
    assert m.WaitlistEntry.get(entry.pk).status == "waiting"


@pytest.mark.parametrize("path", ["/api/reservations/", "/api/holds/", "/api/waitlist/", "/api/guests/"])
def test_invalid_json_is_400(api, path):
    assert_error(*api.post(path, raw="{not json"), 400, "invalid_json")


@pytest.mark.parametrize("path", ["/api/reservations/", "/api/holds/"])
def test_json_that_is_not_an_object_is_400(api, path):
    status, body = api.post(path, raw="[1, 2, 3]")
    assert_error(status, body, 400)


def test_guest_without_name_is_400(api):
    assert_error(*api.post("/api/guests/", {"email": "x@example.com"}), 400, "validation_error")


@pytest.mark.parametrize("method,path", [
    ("get", "/api/restaurants/{missing}/"),
    ("get", "/api/restaurants/{missing}/availability/?date=2030-01-15&party_size=2"),
    ("get", "/api/guests/{missing}/"),
    ("get", "/api/reservations/{missing}/"),
    ("post", "/api/reservations/{missing}/cancel/"),
    ("post", "/api/reservations/{missing}/seat/"),
    ("post", "/api/holds/{missing}/confirm/"),
    ("post", "/api/holds/{missing}/release/"),
    ("post", "/api/waitlist/{missing}/offer/"),
    ("post", "/api/waitlist/{missing}/accept/"),
])
def test_unknown_object_in_path_is_404(api, guest, method, path):
    path = path.format(missing=MISSING)
    body = {"guest_id": guest.pk, "starts_at": START}
    status, err = api.get(path) if method == "get" else api.post(path, body)
    assert_error(status, err, 404, "not_found")


@pytest.mark.parametrize("params", [
    {"party_size": 2}, {"date": "15/01/2030", "party_size": 2}, {"date": "2030-02-30", "party_size": 2},
    {"date": "2030-01-15", "party_size": 0}, {"date": "2030-01-15", "party_size": "many"},
    {"date": "2030-01-15"},
])
def test_bad_availability_query_is_400(api, setup, params):
    r, _ = setup
    assert_error(*api.get(f"/api/restaurants/{r.pk}/availability/", params), 400, "validation_error")


def test_wrong_method_is_405(api, setup):
    r, _ = setup
    assert_error(*api.get("/api/holds/"), 405, "method_not_allowed")
    assert_error(*api.delete(f"/api/restaurants/{r.pk}/"), 405, "method_not_allowed")
