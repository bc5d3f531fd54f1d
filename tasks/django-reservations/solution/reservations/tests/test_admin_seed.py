from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import TestCase
from django.urls import reverse

from reservations.models import Closure, Restaurant


class SeedDemoTests(TestCase):
    def test_creates_lakeside_bistro_with_three_closures(self):
        call_command("seed_demo", verbosity=0)
        bistro = Restaurant.objects.get(name="Lakeside Bistro")
        self.assertEqual(sorted(bistro.closures.values_list("kind", flat=True)),
                         ["holiday", "maintenance", "private_event"])

    def test_idempotent(self):
        call_command("seed_demo", verbosity=0)
        call_command("seed_demo", verbosity=0)
        self.assertEqual(Restaurant.objects.filter(name="Lakeside Bistro").count(), 1)
        self.assertEqual(Closure.objects.count(), 3)

    def test_every_model_has_rows(self):
        call_command("seed_demo", verbosity=0)
        empty = [m.__name__ for m in apps.get_app_config("reservations").get_models() if not m.objects.exists()]
        self.assertEqual(empty, [])


class AdminTests(TestCase):
    def setUp(self):
        self.user = User.objects.create_superuser("admin", "admin@example.com", "pw")
        self.client.force_login(self.user)
        call_command("seed_demo", verbosity=0)

    def test_every_model_registered(self):
        for model in apps.get_app_config("reservations").get_models():
            self.assertIn(model, admin.site._registry)

    def test_every_changelist_loads(self):
        for model in apps.get_app_config("reservations").get_models():
            with self.subTest(model=model.__name__):
                response = self.client.get(reverse(f"admin:reservations_{model._meta.model_name}_changelist"))
                self.assertEqual(response.status_code, 200)

    def test_restaurant_change_page(self):
        bistro = Restaurant.objects.get(slug="lakeside-bistro")
        response = self.client.get(reverse("admin:reservations_restaurant_change", args=[bistro.pk]))
        self.assertContains(response, "Lakeside Bistro")
