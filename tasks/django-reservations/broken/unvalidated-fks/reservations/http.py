"""BROKEN VARIANT (unvalidated-fks): ids in request bodies are looked up with ``.get()`` and
nothing else, so an unknown, missing or ill-typed id ends in a 500.

JSON plumbing for the API: reading bodies and fields, looking up referenced objects,
writing objects and errors. Anything wrong in a request becomes a ``ServiceError``."""
import json
from datetime import date, datetime
from functools import wraps

from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

from . import timeutils
from .services import NotFound, ServiceError, ValidationFailed


class InvalidJSON(ValidationFailed):
    code = "invalid_json"


def error_response(status, code, message):
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def api_view(*methods):
    """CSRF-exempt JSON view that answers only ``methods`` and turns ServiceErrors into JSON."""
    def decorate(view):
        @csrf_exempt
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if request.method not in methods:
                return error_response(405, "method_not_allowed", f"use {' or '.join(methods)}")
            try:
                return view(request, *args, **kwargs)
            except ServiceError as exc:
                return error_response(exc.status, exc.code, exc.message)
        return wrapper
    return decorate


def read_body(request):
    if not request.body:
        return {}
    try:
        body = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        raise InvalidJSON("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise InvalidJSON("the request body must be a JSON object")
    return body


def int_field(data, name, *, required=True):
    value = data.get(name)
    if value is None:
        if required:
            raise ValidationFailed(f"{name} is required")
        return None
    if isinstance(value, bool):
        raise ValidationFailed(f"{name} must be an integer")
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not isinstance(value, int):
        raise ValidationFailed(f"{name} must be an integer")
    return value


def str_field(data, name, *, required=True, default=""):
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise ValidationFailed(f"{name} is required")
        return default
    if not isinstance(value, str):
        raise ValidationFailed(f"{name} must be a string")
    return value


def datetime_field(data, name, *, required=True):
    value = str_field(data, name, required=required, default=None)
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ValidationFailed(f"{name} must be an ISO 8601 datetime") from None


def date_param(data, name):
    value = str_field(data, name)
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed(f"{name} must be a date (YYYY-MM-DD)") from None


def reference(model, data, name, *, required=True):
    """The ``model`` row whose id is ``data[name]``; an unknown id is a validation error (400)."""
    if not required and data.get(name) is None:
        return None
    return model.objects.get(pk=data.get(name))


def from_path(model, pk):
    """The ``model`` row named in the URL; unknown is 404."""
    obj = model.objects.filter(pk=pk).first()
    if obj is None:
        raise NotFound(f"{model.__name__} {pk} does not exist")
    return obj


def local(restaurant, value):
    return timeutils.isoformat_local(restaurant, value)
