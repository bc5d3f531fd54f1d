from datetime import date, datetime, time, timedelta

from django.test import TestCase

from reservations import timeutils

from .factories import restaurant, utc


class TimeUtilsTests(TestCase):
    def test_local_instant_far_from_utc(self):
        r = restaurant(tz="Pacific/Auckland", hours=())
        self.assertEqual(timeutils.local_instant(r, date(2030, 1, 15), time(19)), utc(2030, 1, 15, 6))

    def test_naive_input_is_local(self):
        r = restaurant(tz="Asia/Tokyo", hours=())
        self.assertEqual(timeutils.to_aware(r, datetime(2030, 1, 16, 7)), utc(2030, 1, 15, 22))

    def test_aware_input_is_kept(self):
        r = restaurant(tz="Asia/Tokyo", hours=())
        self.assertEqual(timeutils.to_aware(r, utc(2030, 1, 16, 7)), utc(2030, 1, 16, 7))

    def test_add_minutes_is_real_time_across_dst(self):
        r = restaurant(tz="America/New_York", hours=())
        start = timeutils.to_local(r, utc(2030, 3, 10, 6, 30))  # 01:30 EST
        end = timeutils.add_minutes(start, 90)
        self.assertEqual(end.astimezone(timeutils.UTC) - start.astimezone(timeutils.UTC), timedelta(minutes=90))
        self.assertEqual(end.isoformat(), "2030-03-10T04:00:00-04:00")

    def test_overnight_period_closes_next_day(self):
        r = restaurant(tz="Europe/Berlin", hours=(([4], time(18), time(2)),))
        [(opens, closes)] = timeutils.opening_periods(r, date(2030, 1, 18))
        self.assertEqual((opens, closes), (utc(2030, 1, 18, 17), utc(2030, 1, 19, 1)))

    def test_isoformat_local(self):
        r = restaurant(tz="Pacific/Auckland", hours=())
        self.assertEqual(timeutils.isoformat_local(r, utc(2030, 1, 15, 6)), "2030-01-15T19:00:00+13:00")
        self.assertIsNone(timeutils.isoformat_local(r, None))
