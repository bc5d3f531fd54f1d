"""The admin shows every model; seed_demo builds Lakeside Bistro and can run twice."""
from django.contrib import admin
from django.core.management import call_command
from django.urls import reverse

MODELS = ["Restaurant", "DiningArea", "Table", "TableCombination", "OpeningHours", "ServicePeriod", "Closure",
          "BookingPolicy", "Guest", "Tag", "GuestNote", "Reservation", "Hold", "WaitlistEntry", "SpecialRequest",
          "Deposit", "Payment", "NoShowRecord", "Review", "Staff", "Shift", "Menu", "MenuItem", "Notification",
          "AuditLog"]


def test_all_specified_models_exist(m):
    from django.db import models as djm

    missing = [name for name in MODELS
               if not (isinstance(getattr(m, name, None), type) and issubclass(getattr(m, name), djm.Model))]
    assert missing == []


def test_every_model_is_registered_in_admin(m):
    registered = {model.__name__ for model in admin.site._registry}
    assert sorted(set(MODELS) - registered) == []


def test_seed_demo_is_idempotent(m):
    call_command("seed_demo", verbosity=0)
    counts = {name: getattr(m, name).objects.count() for name in MODELS}
    call_command("seed_demo", verbosity=0)
    assert m.Restaurant.objects.filter(name="Lakeside Bistro").count() == 1
    bistro = m.Restaurant.objects.get(name="Lakeside Bistro")
    assert bistro.slug == "lakeside-bistro"
    closures = m.Closure.objects.filter(restaurant=bistro)
    assert sorted(c.kind for c in closures) == ["holiday", "maintenance", "private_event"]
    assert sorted(c.get_kind_display() for c in closures) == ["Holiday", "Maintenance", "Private Event"]
    assert {name: getattr(m, name).objects.count() for name in MODELS} == counts


def test_seed_demo_fills_every_model(m):
    call_command("seed_demo", verbosity=0)
    empty = [name for name in MODELS if not getattr(m, name).objects.exists()]
    assert empty == []
    from zoneinfo import ZoneInfo

    ZoneInfo(m.Restaurant.objects.get(slug="lakeside-bistro").timezone)  # a real IANA zone


def test_every_changelist_loads_with_seed_data(admin_client, m):
    call_command("seed_demo", verbosity=0)
    failures = {}
    for name in MODELS:
        url = reverse(f"admin:reservations_{name.lower()}_changelist")
        response = admin_client.get(url)
        if response.status_code != 200:
            failures[name] = response.status_code
    assert failures == {}


def test_change_pages_load_for_seed_rows(admin_client, m):
    call_command("seed_demo", verbosity=0)
    failures = {}
    for name in ["Restaurant", "Closure", "Reservation", "Hold", "WaitlistEntry", "Guest"]:
        obj = getattr(m, name).objects.first()
        response = admin_client.get(reverse(f"admin:reservations_{name.lower()}_change", args=[obj.pk]))
        if response.status_code != 200:
            failures[name] = response.status_code
    assert failures == {}


def test_api_lists_seeded_restaurant(api):
    call_command("seed_demo", verbosity=0)
    status, body = api.get("/api/restaurants/")
    assert status == 200
    assert [r["name"] for r in body["restaurants"]] == ["Lakeside Bistro"]
