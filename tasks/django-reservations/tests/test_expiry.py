"""Holds and waitlist offers expire: once their time is up they block nothing and cannot be used,
whether or not the clean-up has run."""
from datetime import datetime, timedelta

import pytest
from conftest import UTC, assert_error, book, instant, utc

START = "2030-01-15T19:00:00"


def now():
    return datetime.now(UTC)


def hold(api, r, **extra):
    status, body = api.post("/api/holds/", {"restaurant_id": r.pk, "party_size": 2, "starts_at": START, **extra})
    assert status == 201, body
    return body


def offer(api, m, r, guest):
    entry = m.WaitlistEntry.create(restaurant_id=r.pk, guest_id=guest.pk, party_size=2)
    status, body = api.post(f"/api/waitlist/{entry.pk}/offer/", {"starts_at": START})
    assert status == 200, body
    return body


def backdate_hold(m, hold_id):
    m.Hold.update(hold_id, expires_at=now() - timedelta(minutes=1))


def backdate_offer(m, entry_id):
    m.WaitlistEntry.update(entry_id, offer_expires_at=now() - timedelta(minutes=1))


def test_hold_blocks_table_while_active(api, make_restaurant, guest):
    r = make_restaurant(tables=(2,))
    body = hold(api, r)
    assert body["status"] == "active" and body["table_id"] == r.test_tables[0].pk
    assert_error(*book(api, r, guest, START), 409, "conflict")


def test_hold_expires_after_hold_minutes(api, make_restaurant):
    r = make_restaurant(hold_minutes=7)
    before = now()
    body = hold(api, r)
    expires = instant(body["expires_at"])
    assert before + timedelta(minutes=7) - timedelta(seconds=5) <= expires <= now() + timedelta(minutes=7)


def test_expired_hold_no_longer_blocks(api, make_restaurant, guest, m):
    r = make_restaurant(tables=(2,))
    body = hold(api, r)
    backdate_hold(m, body["id"])
    status, made = book(api, r, guest, START)
    assert status == 201, made


def test_expired_hold_returns_to_availability(api, make_restaurant, m):
    r = make_restaurant(tables=(2,))
    body = hold(api, r)
    params = {"date": "2030-01-15", "party_size": 2}
    _, avail = api.get(f"/api/restaurants/{r.pk}/availability/", params)
    assert not any(s["starts_at"].startswith(START) for s in avail["slots"])
    backdate_hold(m, body["id"])
    _, avail = api.get(f"/api/restaurants/{r.pk}/availability/", params)
    assert any(s["starts_at"].startswith(START) for s in avail["slots"])


def test_confirm_expired_hold_refused(api, make_restaurant, guest, m):
    r = make_restaurant()
    body = hold(api, r)
    backdate_hold(m, body["id"])
    status, err = api.post(f"/api/holds/{body['id']}/confirm/", {"guest_id": guest.pk})
    assert_error(status, err, 410, "expired")
    assert m.Reservation.count() == 0
    assert m.Hold.get(body["id"]).status != "confirmed"


def test_confirm_active_hold_creates_reservation(api, make_restaurant, guest, m):
    r = make_restaurant()
    body = hold(api, r, table_id=r.test_tables[2].pk)
    status, made = api.post(f"/api/holds/{body['id']}/confirm/", {"guest_id": guest.pk})
    assert status == 201, made
    assert made["table_id"] == r.test_tables[2].pk and made["status"] == "confirmed"
    assert made["starts_at"] == body["starts_at"] and made["guest_id"] == guest.pk
    assert m.Hold.get(body["id"]).status == "confirmed"
    assert_error(*api.post(f"/api/holds/{body['id']}/confirm/", {"guest_id": guest.pk}), 409, "conflict")


def test_confirm_hold_service_checks_the_clock(svc, make_restaurant, guest):
    r = make_restaurant(hold_minutes=10)
    t0 = now()
    late = svc.create_hold(r, 2, utc(2030, 1, 15, 19, 0), now=t0)
    with pytest.raises(svc.Expired) as exc:
        svc.confirm_hold(late, guest, now=t0 + timedelta(minutes=11))
    assert exc.value.status == 410
    on_time = svc.create_hold(r, 2, utc(2030, 1, 15, 19, 0), now=t0)
    reservation = svc.confirm_hold(on_time, guest, now=t0 + timedelta(minutes=9))
    assert reservation.status == "confirmed" and reservation.table_id == on_time.table_id


def test_released_hold_frees_table(api, make_restaurant, guest, m):
    r = make_restaurant(tables=(2,))
    body = hold(api, r)
    status, released = api.post(f"/api/holds/{body['id']}/release/")
    assert status == 200 and released["status"] == "released", released
    assert book(api, r, guest, START)[0] == 201


def test_expire_endpoint_sweeps_holds_and_offers(api, make_restaurant, guest, m):
    r = make_restaurant(tables=(2, 2, 4))
    stale, fresh = hold(api, r), hold(api, r)
    entry = offer(api, m, r, guest)
    backdate_hold(m, stale["id"])
    backdate_offer(m, entry["id"])
    status, body = api.post("/api/maintenance/expire/")
    assert status == 200, body
    assert (body["holds_expired"], body["offers_expired"]) == (1, 1)
    assert m.Hold.get(stale["id"]).status == "expired"
    assert m.Hold.get(fresh["id"]).status == "active"
    assert m.WaitlistEntry.get(entry["id"]).status == "expired"


def test_expire_service_counts(svc, make_restaurant, guest, m):
    r = make_restaurant(tables=(2, 2))
    t0 = now()
    svc.create_hold(r, 2, utc(2030, 1, 15, 19, 0), now=t0)
    entry = svc.join_waitlist(r, guest, 2, now=t0)
    svc.offer_waitlist_slot(entry, utc(2030, 1, 15, 19, 0), now=t0)
    assert svc.expire_stale_holds_and_offers(now=t0 + timedelta(minutes=1)) == {"holds_expired": 0,
                                                                                 "offers_expired": 0}
    assert svc.expire_stale_holds_and_offers(now=t0 + timedelta(hours=1)) == {"holds_expired": 1,
                                                                              "offers_expired": 1}


def test_waitlist_offer_blocks_table(api, make_restaurant, guest, m):
    r = make_restaurant(tables=(2,), waitlist_offer_minutes=20)
    before = now()
    body = offer(api, m, r, guest)
    assert body["status"] == "offered" and body["offered_table_id"] == r.test_tables[0].pk
    assert instant(body["offer_expires_at"]) >= before + timedelta(minutes=20) - timedelta(seconds=5)
    assert_error(*book(api, r, guest, START), 409, "conflict")


def test_accept_expired_offer_refused(api, make_restaurant, guest, m):
    r = make_restaurant(tables=(2,))
    body = offer(api, m, r, guest)
    backdate_offer(m, body["id"])
    status, err = api.post(f"/api/waitlist/{body['id']}/accept/")
    assert_error(status, err, 410, "expired")
    assert m.Reservation.count() == 0
    assert book(api, r, guest, START)[0] == 201


def test_accept_live_offer_creates_reservation(api, make_restaurant, guest, m):
    r = make_restaurant(tables=(2,))
    body = offer(api, m, r, guest)
    status, made = api.post(f"/api/waitlist/{body['id']}/accept/")
    assert status == 201, made
    assert made["table_id"] == r.test_tables[0].pk and made["guest_id"] == guest.pk
    entry = m.WaitlistEntry.get(body["id"])
    assert entry.status == "accepted" and entry.reservation_id == made["id"]
    assert_error(*api.post(f"/api/waitlist/{body['id']}/accept/"), 409, "conflict")


def test_accept_offer_service_checks_the_clock(svc, make_restaurant, guest, m):
    r = make_restaurant(waitlist_offer_minutes=15)
    t0 = now()
    entry = svc.offer_waitlist_slot(svc.join_waitlist(r, guest, 2, now=t0), utc(2030, 1, 15, 19, 0), now=t0)
    with pytest.raises(svc.Expired):
        svc.accept_waitlist_offer(entry, now=t0 + timedelta(minutes=16))
    assert m.Reservation.count() == 0


def test_expired_offer_can_be_offered_again(api, make_restaurant, guest, m):
    r = make_restaurant(tables=(2,))
    body = offer(api, m, r, guest)
    backdate_offer(m, body["id"])
    status, again = api.post(f"/api/waitlist/{body['id']}/offer/", {"starts_at": START})
    assert status == 200 and again["status"] == "offered", again
    assert instant(again["offer_expires_at"]) > now()


def test_join_waitlist_over_http(api, make_restaurant, guest):
    r = make_restaurant()
    status, body = api.post("/api/waitlist/", {"restaurant_id": r.pk, "guest_id": guest.pk, "party_size": 3,
                                               "desired_start": START})
    assert status == 201, body
    assert body["status"] == "waiting" and body["party_size"] == 3 and body["reservation_id"] is None
    assert instant(body["desired_start"]) == utc(2030, 1, 15, 19, 0)
