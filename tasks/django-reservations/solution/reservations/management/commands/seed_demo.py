"""Demo data: Lakeside Bistro with its rooms, tables, hours, three closures and a little of
everything else. Every row is looked up by a natural key first, so running it twice changes
nothing."""
from datetime import date, time, timedelta
from decimal import Decimal

from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from reservations import models
from reservations.timeutils import add_minutes, local_instant

ZONE = "Europe/Zurich"
TABLES = [("T1", 2, "Main Room"), ("T2", 2, "Main Room"), ("T3", 4, "Main Room"), ("T4", 4, "Main Room"),
          ("T5", 6, "Main Room"), ("P1", 4, "Terrace"), ("P2", 4, "Terrace"), ("P3", 8, "Terrace")]
GUESTS = [("Ada Lovelace", "ada@example.com", "+41 44 000 00 01"),
          ("Grace Hopper", "grace@example.com", "+41 44 000 00 02"),
          ("Alan Turing", "alan@example.com", "+41 44 000 00 03")]


class Command(BaseCommand):
    help = "Load demo data for Lakeside Bistro (idempotent)."

    @transaction.atomic
    def handle(self, *args, **options):
        r, created = models.Restaurant.objects.get_or_create(
            slug="lakeside-bistro", defaults={"name": "Lakeside Bistro", "timezone": ZONE})
        today = timezone.now().astimezone(r.zone).date()
        models.BookingPolicy.objects.get_or_create(restaurant=r)
        tables = self._tables(r)
        self._hours(r)
        self._closures(r, today)
        guests = self._guests()
        self._reservations(r, tables, guests, today)
        self._staff_and_menu(r, today)
        models.TableCombination.objects.get_or_create(
            restaurant=r, name="T3+T4", defaults={"capacity": 8})[0].tables.set([tables["T3"], tables["T4"]])
        if not models.AuditLog.objects.filter(restaurant=r, action="seed").exists():
            models.AuditLog.objects.create(restaurant=r, action="seed", detail="demo data loaded")
        self.stdout.write(self.style.SUCCESS(
            f"{'Created' if created else 'Updated'} {r.name}: {r.tables.count()} tables, "
            f"{r.closures.count()} closures, {r.reservations.count()} reservations"))

    def _tables(self, r):
        tables = {}
        for name, capacity, area_name in TABLES:
            area, _ = models.DiningArea.objects.get_or_create(restaurant=r, name=area_name)
            tables[name], _ = models.Table.objects.get_or_create(
                restaurant=r, name=name, defaults={"capacity": capacity, "area": area})
        return tables

    def _hours(self, r):
        for weekday in range(1, 7):  # closed on Mondays
            models.OpeningHours.objects.get_or_create(restaurant=r, weekday=weekday, opens_at=time(11, 30),
                                                      defaults={"closes_at": time(14, 30)})
            late = time(0, 30) if weekday in (4, 5) else time(22, 30)  # Fri and Sat past midnight
            models.OpeningHours.objects.get_or_create(restaurant=r, weekday=weekday, opens_at=time(17, 30),
                                                      defaults={"closes_at": late})
        for name, start, end in [("Lunch", time(11, 30), time(14, 30)), ("Dinner", time(17, 30), time(22, 30))]:
            models.ServicePeriod.objects.get_or_create(restaurant=r, name=name,
                                                       defaults={"starts_at": start, "ends_at": end})

    def _closures(self, r, today):
        event_day, works_day = today + timedelta(days=7), today + timedelta(days=14)
        christmas = date(today.year if today < date(today.year, 12, 25) else today.year + 1, 12, 25)
        plans = [
            (models.Closure.Kind.PRIVATE_EVENT, event_day, time(17, 30), event_day, time(23, 59), "Wedding party"),
            (models.Closure.Kind.MAINTENANCE, works_day, time(0, 0), works_day + timedelta(days=1), time(0, 0),
             "Kitchen ventilation service"),
            (models.Closure.Kind.HOLIDAY, christmas, time(0, 0), christmas + timedelta(days=2), time(0, 0),
             "Christmas"),
        ]
        for kind, d1, t1, d2, t2, reason in plans:
            models.Closure.objects.get_or_create(
                restaurant=r, kind=kind,
                defaults={"starts_at": local_instant(r, d1, t1), "ends_at": local_instant(r, d2, t2), "reason": reason})

    def _guests(self):
        vip, _ = models.Tag.objects.get_or_create(name="VIP")
        models.Tag.objects.get_or_create(name="Regular")
        guests = []
        for name, email, phone in GUESTS:
            guest, _ = models.Guest.objects.get_or_create(email=email, defaults={"name": name, "phone": phone})
            guests.append(guest)
        guests[0].tags.add(vip)
        models.GuestNote.objects.get_or_create(guest=guests[0], text="Prefers a window table.")
        return guests

    def _reservations(self, r, tables, guests, today):
        plans = [("seed:1", guests[0], tables["T3"], 3, 2, "confirmed"),
                 ("seed:2", guests[1], tables["T1"], 2, 3, "confirmed"),
                 ("seed:3", guests[2], tables["T5"], 5, -1, "no_show")]
        made = {}
        for key, guest, table, party, offset, status in plans:
            start = local_instant(r, today + timedelta(days=offset), time(19, 0))
            made[key], _ = models.Reservation.objects.get_or_create(
                restaurant=r, notes=key,
                defaults={"guest": guest, "table": table, "party_size": party, "starts_at": start,
                          "ends_at": add_minutes(start, r.reservation_minutes), "status": status})
        first, missed = made["seed:1"], made["seed:3"]
        models.SpecialRequest.objects.get_or_create(reservation=first, kind="allergy",
                                                    defaults={"text": "No peanuts"})
        models.Deposit.objects.get_or_create(reservation=first, defaults={"amount": Decimal("20.00")})
        models.Payment.objects.get_or_create(reservation=first, defaults={"amount": Decimal("20.00"),
                                                                          "paid_at": timezone.now()})
        models.Review.objects.get_or_create(reservation=missed, defaults={"rating": 4, "comment": "Lovely view."})
        models.NoShowRecord.objects.get_or_create(reservation=missed, guest=missed.guest,
                                                  defaults={"recorded_at": missed.ends_at})
        models.Notification.objects.get_or_create(guest=first.guest, reservation=first,
                                                  defaults={"message": "Your table is confirmed."})
        hold_start = local_instant(r, today + timedelta(days=4), time(20, 0))
        if not models.Hold.objects.filter(restaurant=r).exists():
            models.Hold.objects.create(restaurant=r, table=tables["P1"], party_size=4, starts_at=hold_start,
                                       ends_at=add_minutes(hold_start, r.reservation_minutes),
                                       expires_at=timezone.now() + timedelta(minutes=r.hold_minutes))
        models.WaitlistEntry.objects.get_or_create(restaurant=r, guest=guests[1], party_size=6,
                                                   defaults={"desired_start": hold_start})

    def _staff_and_menu(self, r, today):
        host, _ = models.Staff.objects.get_or_create(restaurant=r, name="Maya", defaults={"role": "host"})
        models.Staff.objects.get_or_create(restaurant=r, name="Luca", defaults={"role": "manager"})
        start = local_instant(r, today + timedelta(days=1), time(17, 0))
        models.Shift.objects.get_or_create(staff=host, defaults={"starts_at": start, "ends_at": add_minutes(start, 360)})
        menu, _ = models.Menu.objects.get_or_create(restaurant=r, name="Dinner")
        for name, price in [("Lake perch", "34.00"), ("Risotto", "28.50"), ("Meringue", "12.00")]:
            models.MenuItem.objects.get_or_create(menu=menu, name=name, defaults={"price": Decimal(price)})
