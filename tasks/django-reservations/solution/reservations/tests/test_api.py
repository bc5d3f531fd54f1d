import json

from django.test import TestCase
from django.utils import timezone

from reservations.models import Hold, Reservation

from .factories import guest, restaurant


class ApiTestCase(TestCase):
    def setUp(self):
        self.r, self.g = restaurant(tz="Pacific/Auckland"), guest()

    def post(self, path, body=None, raw=None):
        data = raw if raw is not None else json.dumps(body or {})
        response = self.client.post(path, data=data, content_type="application/json")
        return response.status_code, response.json()

    def book(self, **changes):
        body = {"restaurant_id": self.r.pk, "guest_id": self.g.pk, "party_size": 2,
                "starts_at": "2030-01-15T19:00:00", **changes}
        return self.post("/api/reservations/", body)


class RestaurantApiTests(ApiTestCase):
    def test_list(self):
        body = self.client.get("/api/restaurants/").json()
        self.assertEqual(body["restaurants"][0]["timezone"], "Pacific/Auckland")

    def test_detail_has_tables(self):
        body = self.client.get(f"/api/restaurants/{self.r.pk}/").json()
        self.assertEqual(len(body["tables"]), 3)

    def test_availability_local_offsets(self):
        body = self.client.get(f"/api/restaurants/{self.r.pk}/availability/",
                               {"date": "2030-01-15", "party_size": 2}).json()
        self.assertEqual(body["slots"][0]["starts_at"], "2030-01-15T17:00:00+13:00")

    def test_availability_bad_date(self):
        response = self.client.get(f"/api/restaurants/{self.r.pk}/availability/", {"date": "x", "party_size": 2})
        self.assertEqual(response.status_code, 400)

    def test_unknown_restaurant_404(self):
        response = self.client.get("/api/restaurants/999/")
        self.assertEqual((response.status_code, response.json()["error"]["code"]), (404, "not_found"))


class ReservationApiTests(ApiTestCase):
    def test_create(self):
        status, body = self.book()
        self.assertEqual(status, 201)
        self.assertEqual(body["starts_at"], "2030-01-15T19:00:00+13:00")

    def test_double_booking(self):
        table = self.r.tables.get(capacity=2).pk
        self.book(table_id=table)
        status, body = self.book(table_id=table)
        self.assertEqual((status, body["error"]["code"]), (409, "conflict"))

    def test_unknown_guest_is_400(self):
        status, body = self.book(guest_id=999)
        self.assertEqual((status, body["error"]["code"]), (400, "validation_error"))

    def test_unknown_table_is_400(self):
        self.assertEqual(self.book(table_id=999)[0], 400)

    def test_string_id_is_400(self):
        self.assertEqual(self.book(restaurant_id="abc")[0], 400)

    def test_invalid_json(self):
        status, body = self.post("/api/reservations/", raw="{")
        self.assertEqual((status, body["error"]["code"]), (400, "invalid_json"))

    def test_cancel_and_seat(self):
        _, made = self.book()
        self.assertEqual(self.post(f"/api/reservations/{made['id']}/seat/")[1]["status"], "seated")
        self.assertEqual(self.post(f"/api/reservations/{made['id']}/cancel/")[0], 409)

    def test_list_by_local_date(self):
        self.book()
        body = self.client.get("/api/reservations/", {"restaurant_id": self.r.pk, "date": "2030-01-15"}).json()
        self.assertEqual(len(body["reservations"]), 1)

    def test_method_not_allowed(self):
        response = self.client.put("/api/reservations/")
        self.assertEqual(response.status_code, 405)


class HoldAndWaitlistApiTests(ApiTestCase):
    def hold(self):
        return self.post("/api/holds/", {"restaurant_id": self.r.pk, "party_size": 2,
                                         "starts_at": "2030-01-15T19:00:00"})[1]

    def test_hold_and_confirm(self):
        hold = self.hold()
        status, res = self.post(f"/api/holds/{hold['id']}/confirm/", {"guest_id": self.g.pk})
        self.assertEqual((status, res["table_id"]), (201, hold["table_id"]))

    def test_expired_hold_confirm_410(self):
        hold = self.hold()
        Hold.objects.filter(pk=hold["id"]).update(expires_at=timezone.now())
        status, body = self.post(f"/api/holds/{hold['id']}/confirm/", {"guest_id": self.g.pk})
        self.assertEqual((status, body["error"]["code"]), (410, "expired"))
        self.assertFalse(Reservation.objects.exists())

    def test_release(self):
        hold = self.hold()
        self.assertEqual(self.post(f"/api/holds/{hold['id']}/release/")[1]["status"], "released")

    def test_waitlist_flow(self):
        _, entry = self.post("/api/waitlist/", {"restaurant_id": self.r.pk, "guest_id": self.g.pk, "party_size": 2})
        status, offered = self.post(f"/api/waitlist/{entry['id']}/offer/", {"starts_at": "2030-01-15T19:00:00"})
        self.assertEqual((status, offered["status"]), (200, "offered"))
        status, res = self.post(f"/api/waitlist/{entry['id']}/accept/")
        self.assertEqual((status, res["status"]), (201, "confirmed"))

    def test_expire_endpoint(self):
        hold = self.hold()
        Hold.objects.filter(pk=hold["id"]).update(expires_at=timezone.now())
        self.assertEqual(self.post("/api/maintenance/expire/")[1], {"holds_expired": 1, "offers_expired": 0})

    def test_guest_create(self):
        status, body = self.post("/api/guests/", {"name": "Bo"})
        self.assertEqual((status, body["name"]), (201, "Bo"))
        self.assertEqual(self.client.get(f"/api/guests/{body['id']}/").json()["id"], body["id"])
