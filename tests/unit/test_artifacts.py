"""measure_django on the reference solution and on small hand-made projects."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from agentrun.artifacts import measure_django
from agentrun.paths import data_dir

SOLUTION = data_dir("tasks") / "django-reservations" / "solution"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    return root


def test_reference_solution_has_the_seeds_scale() -> None:
    measured = measure_django(SOLUTION)
    assert measured["models"] == 25
    assert measured["services"] == 12
    assert measured["endpoints"] == 17
    assert measured["admin_models"] == 25
    assert measured["own_tests"] >= 50
    assert measured["python_files"] > 10 and measured["python_lines"] > 1000


def test_missing_workspace_measures_zero(tmp_path: Path) -> None:
    assert set(measure_django(tmp_path / "nope").values()) == {0}


def test_models_follow_inheritance_and_skip_abstract(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "shop/models/__init__.py": """
            from django.db import models
            from django.db.models import Model

            class Stamped(models.Model):
                class Meta:
                    abstract = True

            class Item(Stamped):
                pass

            class Order(Model):
                pass

            class NotAModel:
                pass
        """,
            "shop/models/more.py": """
            from .base import Item

            class SpecialItem(Item):
                pass
        """,
            "shop/migrations/0001_initial.py": "class Migration(migrations.Migration):\n    pass\n",
        },
    )
    assert measure_django(tmp_path)["models"] == 3


def test_services_count_public_functions_and_service_methods(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/services.py": """
            class BookingError(Exception):
                def describe(self): ...

            class BookingService:
                def book(self): ...
                def cancel(self): ...
                def _helper(self): ...

            def check_availability(): ...
            async def notify(): ...
            def _private(): ...
        """,
        },
    )
    assert measure_django(tmp_path)["services"] == 4


def test_endpoints_leave_out_includes_and_admin(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config/urls.py": """
            from django.contrib import admin
            from django.urls import include, path
            urlpatterns = [path("admin/", admin.site.urls), path("api/", include("app.urls"))]
        """,
            "app/urls.py": """
            from django.urls import path, re_path
            from rest_framework.routers import DefaultRouter
            router = DefaultRouter()
            router.register("tables", TableViewSet)
            urlpatterns = [
                path("a/", views.a),
                path("b/<int:pk>/", views.b, name="b"),
                re_path(r"^c/$", views.c),
            ]
        """,
        },
    )
    assert measure_django(tmp_path)["endpoints"] == 4


def test_own_tests_in_test_files_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/tests/test_api.py": """
            from django.test import TestCase

            class ApiTests(TestCase):
                def setUp(self): ...
                def test_one(self): ...
                def test_two(self): ...

            def test_function(): ...
        """,
            "app/tests.py": "def test_x(): ...\n",
            "app/checks_tests.py": "def test_y(): ...\n",
            "app/helpers.py": "def test_not_counted(): ...\n",
        },
    )
    assert measure_django(tmp_path)["own_tests"] == 5


def test_admin_models_deduplicated_across_styles(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/admin.py": """
            from django.contrib import admin
            from . import models

            admin.site.register(models.Tag)
            admin.site.register([models.Menu, models.MenuItem])

            @admin.register(models.Guest, models.Table)
            class GuestAdmin(admin.ModelAdmin):
                pass

            @admin.register(models.Tag)
            class TagAdmin(admin.ModelAdmin):
                pass
        """,
        },
    )
    assert measure_django(tmp_path)["admin_models"] == 5


def test_broken_files_and_virtualenvs_are_tolerated(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/models.py": "from django.db import models\nclass A(models.Model):\n    pass\n",
            "app/services.py": "def broken(:\n",
            ".venv/lib/site-packages/django/models.py": "class B(models.Model):\n    pass\n",
        },
    )
    measured = measure_django(tmp_path)
    assert measured["models"] == 1 and measured["services"] == 0
    assert measured["python_files"] == 2
