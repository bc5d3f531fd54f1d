"""BROKEN VARIANT (expiry-ignored): holds and waitlist offers block tables and can be used
until the clean-up job marks them expired; their expiry time is never checked at the moment of use.

The booking rules: availability, holds, reservations and the waitlist.

Every public function takes model instances and an optional ``now`` (defaults to
``timezone.now()``), and raises a ``ServiceError`` subclass for anything the caller did wrong or
that cannot be booked; the HTTP layer turns those into JSON errors.
"""
from datetime import date, datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from . import timeutils
from .models import (AuditLog, Closure, Hold, NoShowRecord, Notification, Reservation, Table,
                     WaitlistEntry)


class ServiceError(Exception):
    status = 400
    code = "validation_error"

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class ValidationFailed(ServiceError):
    status = 400
    code = "validation_error"


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class Conflict(ServiceError):
    status = 409
    code = "conflict"


class Expired(ServiceError):
    status = 410
    code = "expired"


# --- helpers -------------------------------------------------------------------------------


def _now(now):
    return now if now is not None else timezone.now()


def _check_party_size(party_size):
    if isinstance(party_size, bool) or not isinstance(party_size, int):
        raise ValidationFailed("party_size must be an integer")
    if party_size < 1:
        raise ValidationFailed("party_size must be at least 1")


def _check_table(restaurant, table):
    if table is not None and table.restaurant_id != restaurant.pk:
        raise ValidationFailed(f"table {table.pk} does not belong to restaurant {restaurant.pk}")


def _window(restaurant, starts_at):
    if not isinstance(starts_at, datetime):
        raise ValidationFailed("starts_at must be a datetime")
    start = timeutils.to_aware(restaurant, starts_at)
    return start, timeutils.add_minutes(start, restaurant.reservation_minutes)


def _inside_opening_hours(restaurant, start, end):
    return any(opens <= start and end <= closes for opens, closes in timeutils.periods_around(restaurant, start))


def _closure_overlaps(restaurant, start, end):
    return Closure.objects.filter(restaurant=restaurant, starts_at__lt=end, ends_at__gt=start).exists()


def _check_bookable(restaurant, start, end):
    if not _inside_opening_hours(restaurant, start, end):
        raise Conflict("the restaurant is not open for the whole booking")
    if _closure_overlaps(restaurant, start, end):
        raise Conflict("the restaurant is closed at that time")


def _blocking(restaurant, start, end, now, *, skip_hold=None, skip_entry=None):
    """(table_id, start, end) of everything that occupies a table between ``start`` and ``end``."""
    duration = timedelta(minutes=restaurant.reservation_minutes)
    busy = [
        (r.table_id, r.starts_at, r.ends_at)
        for r in Reservation.objects.filter(restaurant=restaurant, status__in=Reservation.BLOCKING,
                                            starts_at__lt=end, ends_at__gt=start)
    ]
    holds = Hold.objects.filter(restaurant=restaurant, status=Hold.Status.ACTIVE,
                                starts_at__lt=end, ends_at__gt=start)
    busy += [(h.table_id, h.starts_at, h.ends_at) for h in holds if h.pk != getattr(skip_hold, "pk", None)]
    offers = WaitlistEntry.objects.filter(restaurant=restaurant, status=WaitlistEntry.Status.OFFERED,
                                          offered_starts_at__lt=end,
                                          offered_starts_at__gt=start - duration)
    busy += [(e.offered_table_id, e.offered_starts_at, e.offered_starts_at + duration)
             for e in offers if e.pk != getattr(skip_entry, "pk", None)]
    return busy


def _free_tables(restaurant, party_size, start, end, blocking):
    taken = {table_id for table_id, b_start, b_end in blocking if b_start < end and b_end > start}
    fitting = Table.objects.filter(restaurant=restaurant, is_active=True, capacity__gte=party_size)
    return [t for t in fitting.order_by("capacity", "id") if t.pk not in taken]


def _choose_table(restaurant, party_size, start, end, now, table=None, **skip):
    free = _free_tables(restaurant, party_size, start, end, _blocking(restaurant, start, end, now, **skip))
    if table is None:
        if not free:
            raise Conflict("no free table fits the party at that time")
        return free[0]
    if not table.is_active or table.capacity < party_size:
        raise Conflict(f"table {table.pk} does not fit a party of {party_size}")
    if table.pk not in {t.pk for t in free}:
        raise Conflict(f"table {table.pk} is already taken at that time")
    return table


def _audit(restaurant, action, detail):
    AuditLog.objects.create(restaurant=restaurant, action=action, detail=detail)


def _book(restaurant, guest, party_size, table, start, end, notes=""):
    reservation = Reservation.objects.create(restaurant=restaurant, table=table, guest=guest,
                                             party_size=party_size, starts_at=start, ends_at=end,
                                             notes=notes)
    _audit(restaurant, "reservation.created", f"reservation {reservation.pk} on table {table.pk}")
    if guest.email:
        when = timeutils.to_local(restaurant, start)
        Notification.objects.create(guest=guest, reservation=reservation,
                                    message=f"Your table at {restaurant.name} on {when:%Y-%m-%d %H:%M} is confirmed.")
    return reservation


def _transition(reservation, allowed_from, to, action):
    if reservation.status not in allowed_from:
        raise Conflict(f"a {reservation.status} reservation cannot become {to}")
    reservation.status = to
    reservation.save(update_fields=["status"])
    _audit(reservation.restaurant, action, f"reservation {reservation.pk}")
    return reservation


# --- availability --------------------------------------------------------------------------


def check_availability(restaurant, date: date, party_size, *, now=None):
    """Bookable slots on the local ``date`` for ``party_size``, in start order."""
    _check_party_size(party_size)
    now = _now(now)
    periods = timeutils.opening_periods(restaurant, date)
    if not periods:
        return []
    first, last = min(p[0] for p in periods), max(p[1] for p in periods)
    blocking = _blocking(restaurant, first, last, now)
    closures = list(Closure.objects.filter(restaurant=restaurant, starts_at__lt=last, ends_at__gt=first))
    duration = timedelta(minutes=restaurant.reservation_minutes)
    step = timedelta(minutes=restaurant.slot_minutes)
    slots = []
    for opens, closes in periods:
        start = opens
        while start + duration <= closes:
            end = start + duration
            if not any(c.starts_at < end and c.ends_at > start for c in closures):
                free = _free_tables(restaurant, party_size, start, end, blocking)
                if free:
                    slots.append({"starts_at": timeutils.to_local(restaurant, start),
                                  "ends_at": timeutils.to_local(restaurant, end),
                                  "table_ids": sorted(t.pk for t in free)})
            start += step
    # Sort on UTC: aware datetimes sharing a tzinfo compare by wall clock, which breaks on fall-back nights.
    slots.sort(key=lambda s: s["starts_at"].astimezone(timeutils.UTC))
    return slots


# --- holds ---------------------------------------------------------------------------------


def create_hold(restaurant, party_size, starts_at, *, table=None, guest=None, now=None):
    """Keep a table for ``hold_minutes`` while the guest decides."""
    _check_party_size(party_size)
    _check_table(restaurant, table)
    now = _now(now)
    start, end = _window(restaurant, starts_at)
    with transaction.atomic():
        _check_bookable(restaurant, start, end)
        chosen = _choose_table(restaurant, party_size, start, end, now, table)
        hold = Hold.objects.create(restaurant=restaurant, table=chosen, guest=guest, party_size=party_size,
                                   starts_at=start, ends_at=end,
                                   expires_at=now + timedelta(minutes=restaurant.hold_minutes))
        _audit(restaurant, "hold.created", f"hold {hold.pk} on table {chosen.pk}")
    return hold


def confirm_hold(hold, guest, *, now=None):
    """Turn a live hold into a confirmed reservation for ``guest``."""
    now = _now(now)
    if hold.status == Hold.Status.EXPIRED:
        raise Expired(f"hold {hold.pk} has expired")
    if hold.status != Hold.Status.ACTIVE:
        raise Conflict(f"hold {hold.pk} is {hold.status}")
    restaurant = hold.restaurant
    with transaction.atomic():
        _choose_table(restaurant, hold.party_size, hold.starts_at, hold.ends_at, now, hold.table, skip_hold=hold)
        reservation = _book(restaurant, guest, hold.party_size, hold.table, hold.starts_at, hold.ends_at)
        hold.status = Hold.Status.CONFIRMED
        hold.guest = guest
        hold.save(update_fields=["status", "guest"])
    return reservation


def release_hold(hold, *, now=None):
    if hold.status != Hold.Status.ACTIVE:
        raise Conflict(f"hold {hold.pk} is {hold.status}")
    hold.status = Hold.Status.RELEASED
    hold.save(update_fields=["status"])
    return hold


# --- reservations --------------------------------------------------------------------------


def create_reservation(restaurant, guest, party_size, starts_at, *, table=None, notes="", now=None):
    _check_party_size(party_size)
    _check_table(restaurant, table)
    if guest is None:
        raise ValidationFailed("a reservation needs a guest")
    now = _now(now)
    start, end = _window(restaurant, starts_at)
    with transaction.atomic():
        _check_bookable(restaurant, start, end)
        chosen = _choose_table(restaurant, party_size, start, end, now, table)
        return _book(restaurant, guest, party_size, chosen, start, end, notes)


def cancel_reservation(reservation, *, now=None):
    return _transition(reservation, {Reservation.Status.CONFIRMED}, Reservation.Status.CANCELLED,
                       "reservation.cancelled")


def seat_reservation(reservation, *, now=None):
    return _transition(reservation, {Reservation.Status.CONFIRMED}, Reservation.Status.SEATED,
                       "reservation.seated")


def mark_no_show(reservation, *, now=None):
    with transaction.atomic():
        _transition(reservation, {Reservation.Status.CONFIRMED}, Reservation.Status.NO_SHOW,
                    "reservation.no_show")
        NoShowRecord.objects.create(reservation=reservation, guest=reservation.guest, recorded_at=_now(now))
    return reservation


# --- waitlist ------------------------------------------------------------------------------


def join_waitlist(restaurant, guest, party_size, *, desired_start=None, now=None):
    _check_party_size(party_size)
    if guest is None:
        raise ValidationFailed("a waitlist entry needs a guest")
    if desired_start is not None:
        desired_start = timeutils.to_aware(restaurant, desired_start)
    return WaitlistEntry.objects.create(restaurant=restaurant, guest=guest, party_size=party_size,
                                        desired_start=desired_start)


def _offer_live(entry, now):
    return entry.offer_expires_at is not None and entry.offer_expires_at > now


def offer_waitlist_slot(entry, starts_at, *, table=None, now=None):
    """Offer the waiting guest a table at ``starts_at``; the offer holds the table until it expires."""
    now = _now(now)
    restaurant = entry.restaurant
    reofferable = entry.status in (WaitlistEntry.Status.OFFERED, WaitlistEntry.Status.EXPIRED) \
        and not _offer_live(entry, now)
    if entry.status != WaitlistEntry.Status.WAITING and not reofferable:
        raise Conflict(f"waitlist entry {entry.pk} is {entry.status}")
    _check_table(restaurant, table)
    start, end = _window(restaurant, starts_at)
    with transaction.atomic():
        _check_bookable(restaurant, start, end)
        chosen = _choose_table(restaurant, entry.party_size, start, end, now, table, skip_entry=entry)
        entry.status = WaitlistEntry.Status.OFFERED
        entry.offered_table = chosen
        entry.offered_starts_at = start
        entry.offer_expires_at = now + timedelta(minutes=restaurant.waitlist_offer_minutes)
        entry.save(update_fields=["status", "offered_table", "offered_starts_at", "offer_expires_at"])
        _audit(restaurant, "waitlist.offered", f"entry {entry.pk} offered table {chosen.pk}")
    return entry


def accept_waitlist_offer(entry, *, now=None):
    now = _now(now)
    if entry.status == WaitlistEntry.Status.EXPIRED:
        raise Expired(f"the offer to waitlist entry {entry.pk} has expired")
    if entry.status != WaitlistEntry.Status.OFFERED:
        raise Conflict(f"waitlist entry {entry.pk} has no open offer ({entry.status})")
    restaurant = entry.restaurant
    start = entry.offered_starts_at
    end = timeutils.add_minutes(start, restaurant.reservation_minutes)
    with transaction.atomic():
        table = _choose_table(restaurant, entry.party_size, start, end, now, entry.offered_table,
                              skip_entry=entry)
        reservation = _book(restaurant, entry.guest, entry.party_size, table, start, end, "from the waitlist")
        entry.status = WaitlistEntry.Status.ACCEPTED
        entry.reservation = reservation
        entry.save(update_fields=["status", "reservation"])
    return reservation


# --- housekeeping --------------------------------------------------------------------------


def expire_stale_holds_and_offers(*, now=None):
    """Mark holds and waitlist offers whose time is up as ``expired``; return how many of each."""
    now = _now(now)
    holds = Hold.objects.filter(status=Hold.Status.ACTIVE, expires_at__lte=now).update(
        status=Hold.Status.EXPIRED)
    offers = WaitlistEntry.objects.filter(
        Q(status=WaitlistEntry.Status.OFFERED) & Q(offer_expires_at__lte=now)
    ).update(status=WaitlistEntry.Status.EXPIRED)
    return {"holds_expired": holds, "offers_expired": offers}
