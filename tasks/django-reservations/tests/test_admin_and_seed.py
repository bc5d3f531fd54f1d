"""The admin shows every model; seed_demo builds Lakeside Bistro and can run twice."""
from zoneinfo import ZoneInfo

MODELS = ["Restaurant", "DiningArea", "Table", "TableCombination", "OpeningHours", "ServicePeriod", "Closure",
          "BookingPolicy", "Guest", "Tag", "GuestNote", "Reservation", "Hold", "WaitlistEntry", "SpecialRequest",
          "Deposit", "Payment", "NoShowRecord", "Review", "Staff", "Shift", "Menu", "MenuItem", "Notification",
          "AuditLog"]


def seed_demo(app):
    app.control("command", name="seed_demo")


def test_all_specified_models_exist(m):
    assert sorted(set(MODELS) - m.names()) == []


def test_every_model_is_registered_in_admin(m):
    assert sorted(set(MODELS) - m.in_admin()) == []


def test_seed_demo_is_idempotent(app, m):
    seed_demo(app)
    counts = {name: getattr(m, name).count() for name in MODELS}
    seed_demo(app)
    assert m.Restaurant.count(name="Lakeside Bistro") == 1
    (bistro,) = m.Restaurant.rows(name="Lakeside Bistro")
    assert bistro.slug == "lakeside-bistro"
    closures = m.Closure.rows(restaurant_id=bistro.pk)
    assert sorted(c.kind for c in closures) == ["holiday", "maintenance", "private_event"]
    assert sorted(m.Closure.display(c.pk, "kind") for c in closures) == ["Holiday", "Maintenance", "Private Event"]
    assert {name: getattr(m, name).count() for name in MODELS} == counts


def test_seed_demo_fills_every_model(app, m):
    seed_demo(app)
    empty = [name for name in MODELS if not getattr(m, name).count()]
    assert empty == []
    (bistro,) = m.Restaurant.rows(slug="lakeside-bistro")
    ZoneInfo(bistro.timezone)  # a real IANA zone


def test_every_changelist_loads_with_seed_data(app, admin_client, m):
    seed_demo(app)
    failures = {}
    for name in MODELS:
        status = admin_client.page(f"/admin/reservations/{name.lower()}/")
        if status != 200:
            failures[name] = status
    assert failures == {}


def test_change_pages_load_for_seed_rows(app, admin_client, m):
    seed_demo(app)
    failures = {}
    for name in ["Restaurant", "Closure", "Reservation", "Hold", "WaitlistEntry", "Guest"]:
        obj = getattr(m, name).first()
        status = admin_client.page(f"/admin/reservations/{name.lower()}/{obj.pk}/change/")
        if status != 200:
            failures[name] = status
    assert failures == {}


def test_api_lists_seeded_restaurant(app, api):
    seed_demo(app)
    status, body = api.get("/api/restaurants/")
    assert status == 200
    assert [r["name"] for r in body["restaurants"]] == ["Lakeside Bistro"]
