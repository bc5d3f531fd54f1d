from datetime import time

from django.core.exceptions import ValidationError
from django.test import TestCase

from reservations import models

from .factories import guest, restaurant, utc


class RestaurantModelTests(TestCase):
    def test_defaults(self):
        r = models.Restaurant.objects.create(name="Plain", slug="plain")
        self.assertEqual((r.timezone, r.reservation_minutes, r.slot_minutes), ("UTC", 90, 30))
        self.assertEqual((r.hold_minutes, r.waitlist_offer_minutes), (10, 15))

    def test_timezone_must_be_iana(self):
        r = models.Restaurant(name="Nowhere", slug="nowhere", timezone="Mars/Olympus")
        with self.assertRaises(ValidationError):
            r.full_clean()

    def test_valid_timezone_passes_validation(self):
        models.Restaurant(name="Akl", slug="akl", timezone="Pacific/Auckland").full_clean()

    def test_str(self):
        self.assertEqual(str(restaurant(name="Lake")), "Lake")

    def test_zone_property(self):
        self.assertEqual(str(restaurant(tz="Asia/Tokyo").zone), "Asia/Tokyo")


class OpeningHoursTests(TestCase):
    def test_crosses_midnight(self):
        r = restaurant(hours=())
        late = models.OpeningHours.objects.create(restaurant=r, weekday=4, opens_at=time(18), closes_at=time(2))
        early = models.OpeningHours.objects.create(restaurant=r, weekday=4, opens_at=time(8), closes_at=time(11))
        self.assertTrue(late.crosses_midnight)
        self.assertFalse(early.crosses_midnight)

    def test_str_names_the_weekday(self):
        r = restaurant(hours=())
        hours = models.OpeningHours.objects.create(restaurant=r, weekday=0, opens_at=time(9), closes_at=time(17))
        self.assertEqual(str(hours), "Monday 09:00-17:00")


class ClosureTests(TestCase):
    def test_kind_labels(self):
        self.assertEqual(dict(models.Closure.Kind.choices), {
            "private_event": "Private Event", "maintenance": "Maintenance", "holiday": "Holiday"})

    def test_must_end_after_start(self):
        c = models.Closure(restaurant=restaurant(), kind="holiday", starts_at=utc(2030, 1, 2), ends_at=utc(2030, 1, 1))
        with self.assertRaises(ValidationError):
            c.clean()


class StrTests(TestCase):
    def test_reservation_and_guest_str(self):
        r, g = restaurant(), guest()
        res = models.Reservation.objects.create(restaurant=r, table=r.tables.first(), guest=g, party_size=2,
                                                starts_at=utc(2030, 1, 1, 18), ends_at=utc(2030, 1, 1, 19, 30))
        self.assertIn("Ann", str(res))
        self.assertIn("confirmed", str(res))
        self.assertEqual(str(g), "Ann")

    def test_table_str(self):
        self.assertEqual(str(restaurant(capacities=(4,)).tables.get()), "T1 (4 seats)")

    def test_model_count(self):
        from django.apps import apps

        self.assertEqual(len(list(apps.get_app_config("reservations").get_models())), 25)
