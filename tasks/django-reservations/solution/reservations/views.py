"""The JSON API. Views parse and look up; the rules live in ``services``."""
from datetime import time, timedelta

from django.http import JsonResponse

from . import services
from .http import api_view, date_param, datetime_field, from_path, int_field, local, read_body, reference, str_field
from .models import Guest, Hold, Reservation, Restaurant, Table, WaitlistEntry
from .services import ValidationFailed
from .timeutils import local_instant


def restaurant_json(r):
    return {"id": r.pk, "name": r.name, "slug": r.slug, "timezone": r.timezone,
            "reservation_minutes": r.reservation_minutes, "slot_minutes": r.slot_minutes,
            "hold_minutes": r.hold_minutes, "waitlist_offer_minutes": r.waitlist_offer_minutes}


def guest_json(g):
    return {"id": g.pk, "name": g.name, "email": g.email, "phone": g.phone}


def reservation_json(r):
    rest = r.restaurant
    return {"id": r.pk, "restaurant_id": r.restaurant_id, "table_id": r.table_id, "guest_id": r.guest_id,
            "party_size": r.party_size, "starts_at": local(rest, r.starts_at), "ends_at": local(rest, r.ends_at),
            "status": r.status, "notes": r.notes}


def hold_json(h):
    rest = h.restaurant
    return {"id": h.pk, "restaurant_id": h.restaurant_id, "table_id": h.table_id, "guest_id": h.guest_id,
            "party_size": h.party_size, "starts_at": local(rest, h.starts_at), "ends_at": local(rest, h.ends_at),
            "expires_at": local(rest, h.expires_at), "status": h.status}


def entry_json(e):
    rest = e.restaurant
    return {"id": e.pk, "restaurant_id": e.restaurant_id, "guest_id": e.guest_id, "party_size": e.party_size,
            "desired_start": local(rest, e.desired_start), "status": e.status,
            "offered_table_id": e.offered_table_id, "offered_starts_at": local(rest, e.offered_starts_at),
            "offer_expires_at": local(rest, e.offer_expires_at), "reservation_id": e.reservation_id}


def _table_in(restaurant, body):
    table = reference(Table, body, "table_id", required=False)
    if table is not None and table.restaurant_id != restaurant.pk:
        raise ValidationFailed(f"table {table.pk} does not belong to restaurant {restaurant.pk}")
    return table


# --- restaurants ---------------------------------------------------------------------------


@api_view("GET")
def restaurant_list(request):
    return JsonResponse({"restaurants": [restaurant_json(r) for r in Restaurant.objects.all()]})


@api_view("GET")
def restaurant_detail(request, pk):
    r = from_path(Restaurant, pk)
    tables = [{"id": t.pk, "name": t.name, "capacity": t.capacity, "area_id": t.area_id, "is_active": t.is_active}
              for t in r.tables.order_by("id")]
    return JsonResponse({**restaurant_json(r), "tables": tables})


@api_view("GET")
def availability(request, pk):
    r = from_path(Restaurant, pk)
    day = date_param(request.GET, "date")
    party_size = int_field(request.GET, "party_size")
    slots = services.check_availability(r, day, party_size)
    return JsonResponse({"restaurant_id": r.pk, "date": day.isoformat(), "timezone": r.timezone,
                         "party_size": party_size,
                         "slots": [{"starts_at": s["starts_at"].isoformat(), "ends_at": s["ends_at"].isoformat(),
                                    "table_ids": s["table_ids"]} for s in slots]})


# --- guests --------------------------------------------------------------------------------


@api_view("POST")
def guest_create(request):
    body = read_body(request)
    guest = Guest.objects.create(name=str_field(body, "name"), email=str_field(body, "email", required=False),
                                 phone=str_field(body, "phone", required=False))
    return JsonResponse(guest_json(guest), status=201)


@api_view("GET")
def guest_detail(request, pk):
    return JsonResponse(guest_json(from_path(Guest, pk)))


# --- holds ---------------------------------------------------------------------------------


@api_view("POST")
def hold_create(request):
    body = read_body(request)
    r = reference(Restaurant, body, "restaurant_id")
    party_size = int_field(body, "party_size")
    starts_at = datetime_field(body, "starts_at")
    hold = services.create_hold(r, party_size, starts_at, table=_table_in(r, body),
                                guest=reference(Guest, body, "guest_id", required=False))
    return JsonResponse(hold_json(hold), status=201)


@api_view("POST")
def hold_confirm(request, pk):
    hold = from_path(Hold, pk)
    body = read_body(request)
    guest = reference(Guest, body, "guest_id")
    return JsonResponse(reservation_json(services.confirm_hold(hold, guest)), status=201)


@api_view("POST")
def hold_release(request, pk):
    return JsonResponse(hold_json(services.release_hold(from_path(Hold, pk))))


# --- reservations --------------------------------------------------------------------------


@api_view("GET", "POST")
def reservations(request):
    if request.method == "POST":
        return _reservation_create(request)
    qs = Reservation.objects.select_related("restaurant").order_by("starts_at", "id")
    restaurant_id = int_field(request.GET, "restaurant_id", required=False)
    if restaurant_id is not None:
        qs = qs.filter(restaurant_id=restaurant_id)
    if request.GET.get("date"):
        day = date_param(request.GET, "date")
        if restaurant_id is None:
            raise ValidationFailed("filtering by date needs restaurant_id (dates are local)")
        r = reference(Restaurant, request.GET, "restaurant_id")
        start = local_instant(r, day, time(0, 0))
        end = local_instant(r, day + timedelta(days=1), time(0, 0))
        qs = qs.filter(starts_at__gte=start, starts_at__lt=end)
    return JsonResponse({"reservations": [reservation_json(x) for x in qs]})


def _reservation_create(request):
    body = read_body(request)
    r = reference(Restaurant, body, "restaurant_id")
    guest = reference(Guest, body, "guest_id")
    party_size = int_field(body, "party_size")
    starts_at = datetime_field(body, "starts_at")
    table = _table_in(r, body)
    notes = str_field(body, "notes", required=False)
    reservation = services.create_reservation(r, guest, party_size, starts_at, table=table, notes=notes)
    return JsonResponse(reservation_json(reservation), status=201)


@api_view("GET")
def reservation_detail(request, pk):
    return JsonResponse(reservation_json(from_path(Reservation, pk)))


@api_view("POST")
def reservation_cancel(request, pk):
    return JsonResponse(reservation_json(services.cancel_reservation(from_path(Reservation, pk))))


@api_view("POST")
def reservation_seat(request, pk):
    return JsonResponse(reservation_json(services.seat_reservation(from_path(Reservation, pk))))


@api_view("POST")
def reservation_no_show(request, pk):
    return JsonResponse(reservation_json(services.mark_no_show(from_path(Reservation, pk))))


# --- waitlist ------------------------------------------------------------------------------


@api_view("POST")
def waitlist_join(request):
    body = read_body(request)
    r = reference(Restaurant, body, "restaurant_id")
    guest = reference(Guest, body, "guest_id")
    party_size = int_field(body, "party_size")
    desired = datetime_field(body, "desired_start", required=False)
    entry = services.join_waitlist(r, guest, party_size, desired_start=desired)
    return JsonResponse(entry_json(entry), status=201)


@api_view("POST")
def waitlist_offer(request, pk):
    entry = from_path(WaitlistEntry, pk)
    body = read_body(request)
    starts_at = datetime_field(body, "starts_at")
    entry = services.offer_waitlist_slot(entry, starts_at, table=_table_in(entry.restaurant, body))
    return JsonResponse(entry_json(entry))


@api_view("POST")
def waitlist_accept(request, pk):
    entry = from_path(WaitlistEntry, pk)
    return JsonResponse(reservation_json(services.accept_waitlist_offer(entry)), status=201)


@api_view("POST")
def expire(request):
    return JsonResponse(services.expire_stale_holds_and_offers())
