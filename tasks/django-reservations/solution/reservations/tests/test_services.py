from datetime import date, datetime, time, timedelta

from django.test import TestCase
from django.utils import timezone

from reservations import services
from reservations.models import AuditLog, Closure, Hold, NoShowRecord, Notification, Reservation, WaitlistEntry

from .factories import UTC, guest, restaurant, utc

DAY = date(2030, 1, 15)
SEVEN_PM = utc(2030, 1, 15, 19)


class AvailabilityTests(TestCase):
    def setUp(self):
        self.r = restaurant()

    def test_slots_cover_opening_hours(self):
        slots = services.check_availability(self.r, DAY, 2)
        self.assertEqual(len(slots), 8)
        self.assertEqual(slots[0]["starts_at"], utc(2030, 1, 15, 17))
        self.assertEqual(slots[-1]["ends_at"], utc(2030, 1, 15, 22))

    def test_only_fitting_tables(self):
        six = self.r.tables.get(capacity=6)
        self.assertEqual({tuple(s["table_ids"]) for s in services.check_availability(self.r, DAY, 5)}, {(six.pk,)})

    def test_reservation_removes_table(self):
        g = guest()
        res = services.create_reservation(self.r, g, 2, SEVEN_PM)
        slot = next(s for s in services.check_availability(self.r, DAY, 2) if s["starts_at"] == SEVEN_PM)
        self.assertNotIn(res.table_id, slot["table_ids"])

    def test_closure_removes_slots(self):
        Closure.objects.create(restaurant=self.r, kind="holiday", starts_at=utc(2030, 1, 15), ends_at=utc(2030, 1, 16))
        self.assertEqual(services.check_availability(self.r, DAY, 2), [])

    def test_bad_party_size(self):
        with self.assertRaises(services.ValidationFailed):
            services.check_availability(self.r, DAY, 0)

    def test_dst_night_steps_in_real_time(self):
        r = restaurant(name="NY", tz="America/New_York", hours=(([5], time(22), time(4)),))
        slots = services.check_availability(r, date(2030, 11, 2), 2)
        self.assertEqual(len(slots), 12)
        starts = [s["starts_at"].astimezone(UTC) for s in slots]  # same-zone subtraction is wall-clock
        gaps = {b - a for a, b in zip(starts, starts[1:])}
        self.assertEqual(gaps, {timedelta(minutes=30)})


class ReservationServiceTests(TestCase):
    def setUp(self):
        self.r, self.g = restaurant(), guest()

    def test_create_picks_smallest_table(self):
        res = services.create_reservation(self.r, self.g, 3, SEVEN_PM)
        self.assertEqual(res.table.capacity, 4)
        self.assertEqual(res.ends_at - res.starts_at, timedelta(minutes=90))

    def test_naive_start_is_local(self):
        r = restaurant(name="Akl", tz="Pacific/Auckland")
        res = services.create_reservation(r, self.g, 2, datetime(2030, 1, 15, 19))
        self.assertEqual(res.starts_at, utc(2030, 1, 15, 6))

    def test_double_booking_conflict(self):
        table = self.r.tables.get(capacity=2)
        services.create_reservation(self.r, self.g, 2, SEVEN_PM, table=table)
        with self.assertRaises(services.Conflict):
            services.create_reservation(self.r, self.g, 2, SEVEN_PM + timedelta(minutes=30), table=table)

    def test_table_of_other_restaurant_invalid(self):
        other = restaurant(name="Other")
        with self.assertRaises(services.ValidationFailed):
            services.create_reservation(self.r, self.g, 2, SEVEN_PM, table=other.tables.first())

    def test_outside_hours_conflict(self):
        with self.assertRaises(services.Conflict):
            services.create_reservation(self.r, self.g, 2, utc(2030, 1, 15, 21))

    def test_status_life_cycle(self):
        res = services.create_reservation(self.r, self.g, 2, SEVEN_PM)
        self.assertEqual(services.seat_reservation(res).status, "seated")
        with self.assertRaises(services.Conflict):
            services.cancel_reservation(res)

    def test_cancel_twice_conflict(self):
        res = services.create_reservation(self.r, self.g, 2, SEVEN_PM)
        services.cancel_reservation(res)
        with self.assertRaises(services.Conflict):
            services.cancel_reservation(res)

    def test_no_show_records(self):
        res = services.create_reservation(self.r, self.g, 2, SEVEN_PM)
        services.mark_no_show(res)
        self.assertEqual(NoShowRecord.objects.filter(reservation=res).count(), 1)

    def test_audit_and_notification(self):
        res = services.create_reservation(self.r, self.g, 2, SEVEN_PM)
        self.assertTrue(AuditLog.objects.filter(action="reservation.created").exists())
        self.assertTrue(Notification.objects.filter(reservation=res).exists())


class HoldServiceTests(TestCase):
    def setUp(self):
        self.r, self.g = restaurant(capacities=(2,)), guest()
        self.t0 = timezone.now()

    def test_hold_blocks_then_expires(self):
        services.create_hold(self.r, 2, SEVEN_PM, now=self.t0)
        with self.assertRaises(services.Conflict):
            services.create_reservation(self.r, self.g, 2, SEVEN_PM, now=self.t0)
        later = self.t0 + timedelta(minutes=11)
        self.assertEqual(services.create_reservation(self.r, self.g, 2, SEVEN_PM, now=later).status, "confirmed")

    def test_confirm_live_hold(self):
        hold = services.create_hold(self.r, 2, SEVEN_PM, now=self.t0)
        res = services.confirm_hold(hold, self.g, now=self.t0 + timedelta(minutes=5))
        self.assertEqual((res.table_id, hold.status), (hold.table_id, "confirmed"))

    def test_confirm_expired_hold(self):
        hold = services.create_hold(self.r, 2, SEVEN_PM, now=self.t0)
        with self.assertRaises(services.Expired):
            services.confirm_hold(hold, self.g, now=self.t0 + timedelta(minutes=10))
        self.assertEqual(Hold.objects.get(pk=hold.pk).status, "expired")
        self.assertFalse(Reservation.objects.exists())

    def test_release(self):
        hold = services.create_hold(self.r, 2, SEVEN_PM, now=self.t0)
        services.release_hold(hold)
        with self.assertRaises(services.Conflict):
            services.release_hold(hold)

    def test_expire_sweep(self):
        services.create_hold(self.r, 2, SEVEN_PM, now=self.t0)
        result = services.expire_stale_holds_and_offers(now=self.t0 + timedelta(hours=1))
        self.assertEqual(result, {"holds_expired": 1, "offers_expired": 0})


class WaitlistServiceTests(TestCase):
    def setUp(self):
        self.r, self.g = restaurant(capacities=(2,)), guest()
        self.t0 = timezone.now()
        self.entry = services.join_waitlist(self.r, self.g, 2, now=self.t0)

    def test_join(self):
        self.assertEqual(self.entry.status, "waiting")

    def test_offer_and_accept(self):
        services.offer_waitlist_slot(self.entry, SEVEN_PM, now=self.t0)
        res = services.accept_waitlist_offer(self.entry, now=self.t0 + timedelta(minutes=5))
        self.assertEqual(WaitlistEntry.objects.get(pk=self.entry.pk).reservation_id, res.pk)

    def test_offer_blocks_table(self):
        services.offer_waitlist_slot(self.entry, SEVEN_PM, now=self.t0)
        with self.assertRaises(services.Conflict):
            services.create_reservation(self.r, self.g, 2, SEVEN_PM, now=self.t0)

    def test_accept_expired_offer(self):
        services.offer_waitlist_slot(self.entry, SEVEN_PM, now=self.t0)
        with self.assertRaises(services.Expired):
            services.accept_waitlist_offer(self.entry, now=self.t0 + timedelta(minutes=15))
        self.assertFalse(Reservation.objects.exists())

    def test_reoffer_after_expiry(self):
        services.offer_waitlist_slot(self.entry, SEVEN_PM, now=self.t0)
        later = self.t0 + timedelta(minutes=30)
        services.offer_waitlist_slot(self.entry, SEVEN_PM, now=later)
        self.assertEqual(self.entry.offer_expires_at, later + timedelta(minutes=15))

    def test_offer_twice_while_live_conflicts(self):
        services.offer_waitlist_slot(self.entry, SEVEN_PM, now=self.t0)
        with self.assertRaises(services.Conflict):
            services.offer_waitlist_slot(self.entry, SEVEN_PM, now=self.t0)
