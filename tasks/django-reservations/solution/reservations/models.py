"""Domain models of the reservation system. Datetimes are aware and stored in UTC; opening hours
and service periods are wall-clock times in the restaurant's own IANA zone."""
from zoneinfo import ZoneInfo, available_timezones

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


def validate_timezone(value):
    if value not in available_timezones():
        raise ValidationError(f"{value!r} is not an IANA time zone")


class Restaurant(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(unique=True)
    timezone = models.CharField(max_length=64, default="UTC", validators=[validate_timezone])
    reservation_minutes = models.PositiveIntegerField(default=90)
    slot_minutes = models.PositiveIntegerField(default=30)
    hold_minutes = models.PositiveIntegerField(default=10)
    waitlist_offer_minutes = models.PositiveIntegerField(default=15)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def zone(self):
        return ZoneInfo(self.timezone)


class DiningArea(models.Model):
    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="areas")
    name = models.CharField(max_length=100)

    def __str__(self):
        return f"{self.restaurant} / {self.name}"


class Table(models.Model):
    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="tables")
    area = models.ForeignKey(DiningArea, on_delete=models.SET_NULL, null=True, blank=True, related_name="tables")
    name = models.CharField(max_length=50)
    capacity = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["capacity", "id"]

    def __str__(self):
        return f"{self.name} ({self.capacity} seats)"


class TableCombination(models.Model):
    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="table_combinations")
    name = models.CharField(max_length=100)
    tables = models.ManyToManyField(Table, related_name="combinations")
    capacity = models.PositiveIntegerField()

    def __str__(self):
        return f"{self.name} ({self.capacity} seats)"


class OpeningHours(models.Model):
    WEEKDAYS = [(0, "Monday"), (1, "Tuesday"), (2, "Wednesday"), (3, "Thursday"),
                (4, "Friday"), (5, "Saturday"), (6, "Sunday")]

    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="opening_hours")
    weekday = models.PositiveSmallIntegerField(choices=WEEKDAYS)
    opens_at = models.TimeField()
    closes_at = models.TimeField(help_text="At or before opens_at means the period ends after midnight.")

    class Meta:
        ordering = ["restaurant", "weekday", "opens_at"]
        verbose_name_plural = "opening hours"

    def __str__(self):
        return f"{self.get_weekday_display()} {self.opens_at:%H:%M}-{self.closes_at:%H:%M}"

    @property
    def crosses_midnight(self):
        return self.closes_at <= self.opens_at


class ServicePeriod(models.Model):
    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="service_periods")
    name = models.CharField(max_length=50)
    starts_at = models.TimeField()
    ends_at = models.TimeField()

    def __str__(self):
        return f"{self.name} {self.starts_at:%H:%M}-{self.ends_at:%H:%M}"


class Closure(models.Model):
    class Kind(models.TextChoices):
        PRIVATE_EVENT = "private_event", "Private Event"
        MAINTENANCE = "maintenance", "Maintenance"
        HOLIDAY = "holiday", "Holiday"

    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="closures")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["starts_at"]

    def __str__(self):
        return f"{self.get_kind_display()}: {self.reason or self.restaurant}"

    def clean(self):
        if self.starts_at and self.ends_at and self.ends_at <= self.starts_at:
            raise ValidationError("A closure must end after it starts.")


class BookingPolicy(models.Model):
    restaurant = models.OneToOneField(Restaurant, on_delete=models.CASCADE, related_name="booking_policy")
    min_notice_minutes = models.PositiveIntegerField(default=0)
    max_advance_days = models.PositiveIntegerField(default=90)
    deposit_required_from_party = models.PositiveIntegerField(default=8)

    class Meta:
        verbose_name_plural = "booking policies"

    def __str__(self):
        return f"Policy for {self.restaurant}"


class Tag(models.Model):
    name = models.CharField(max_length=50, unique=True)

    def __str__(self):
        return self.name


class Guest(models.Model):
    name = models.CharField(max_length=200)
    email = models.EmailField(blank=True)
    phone = models.CharField(max_length=40, blank=True)
    tags = models.ManyToManyField(Tag, blank=True, related_name="guests")

    def __str__(self):
        return self.name


class GuestNote(models.Model):
    guest = models.ForeignKey(Guest, on_delete=models.CASCADE, related_name="notes")
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"Note on {self.guest}"


class Reservation(models.Model):
    class Status(models.TextChoices):
        CONFIRMED = "confirmed", "Confirmed"
        SEATED = "seated", "Seated"
        COMPLETED = "completed", "Completed"
        CANCELLED = "cancelled", "Cancelled"
        NO_SHOW = "no_show", "No-show"

    BLOCKING = (Status.CONFIRMED, Status.SEATED)

    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="reservations")
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="reservations")
    guest = models.ForeignKey(Guest, on_delete=models.PROTECT, related_name="reservations")
    party_size = models.PositiveIntegerField()
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.CONFIRMED)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["starts_at", "id"]

    def __str__(self):
        return f"{self.guest} x{self.party_size} at {self.restaurant} ({self.status})"


class Hold(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        CONFIRMED = "confirmed", "Confirmed"
        RELEASED = "released", "Released"
        EXPIRED = "expired", "Expired"

    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="holds")
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="holds")
    guest = models.ForeignKey(Guest, on_delete=models.SET_NULL, null=True, blank=True, related_name="holds")
    party_size = models.PositiveIntegerField()
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"Hold on {self.table} ({self.status})"


class WaitlistEntry(models.Model):
    class Status(models.TextChoices):
        WAITING = "waiting", "Waiting"
        OFFERED = "offered", "Offered"
        ACCEPTED = "accepted", "Accepted"
        EXPIRED = "expired", "Expired"
        CANCELLED = "cancelled", "Cancelled"

    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="waitlist")
    guest = models.ForeignKey(Guest, on_delete=models.CASCADE, related_name="waitlist_entries")
    party_size = models.PositiveIntegerField()
    desired_start = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.WAITING)
    offered_table = models.ForeignKey(Table, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    offered_starts_at = models.DateTimeField(null=True, blank=True)
    offer_expires_at = models.DateTimeField(null=True, blank=True)
    reservation = models.ForeignKey(Reservation, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "waitlist entries"

    def __str__(self):
        return f"{self.guest} x{self.party_size} waiting at {self.restaurant} ({self.status})"


class SpecialRequest(models.Model):
    class Kind(models.TextChoices):
        ALLERGY = "allergy", "Allergy"
        ACCESSIBILITY = "accessibility", "Accessibility"
        CELEBRATION = "celebration", "Celebration"
        OTHER = "other", "Other"

    reservation = models.ForeignKey(Reservation, on_delete=models.CASCADE, related_name="special_requests")
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.OTHER)
    text = models.CharField(max_length=300)

    def __str__(self):
        return f"{self.get_kind_display()}: {self.text}"


class Deposit(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        PAID = "paid", "Paid"
        REFUNDED = "refunded", "Refunded"

    reservation = models.ForeignKey(Reservation, on_delete=models.CASCADE, related_name="deposits")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)

    def __str__(self):
        return f"Deposit {self.amount} ({self.status})"


class Payment(models.Model):
    reservation = models.ForeignKey(Reservation, on_delete=models.CASCADE, related_name="payments")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    method = models.CharField(max_length=30, default="card")
    paid_at = models.DateTimeField()

    def __str__(self):
        return f"Payment {self.amount} by {self.method}"


class NoShowRecord(models.Model):
    reservation = models.ForeignKey(Reservation, on_delete=models.CASCADE, related_name="no_show_records")
    guest = models.ForeignKey(Guest, on_delete=models.CASCADE, related_name="no_shows")
    recorded_at = models.DateTimeField()

    def __str__(self):
        return f"No-show: {self.guest}"


class Review(models.Model):
    reservation = models.ForeignKey(Reservation, on_delete=models.CASCADE, related_name="reviews")
    rating = models.PositiveSmallIntegerField(validators=[MinValueValidator(1), MaxValueValidator(5)])
    comment = models.TextField(blank=True)

    def __str__(self):
        return f"{self.rating}/5 for {self.reservation.restaurant}"


class Staff(models.Model):
    class Role(models.TextChoices):
        HOST = "host", "Host"
        SERVER = "server", "Server"
        MANAGER = "manager", "Manager"

    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="staff")
    name = models.CharField(max_length=100)
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.SERVER)

    class Meta:
        verbose_name_plural = "staff"

    def __str__(self):
        return f"{self.name} ({self.role})"


class Shift(models.Model):
    staff = models.ForeignKey(Staff, on_delete=models.CASCADE, related_name="shifts")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()

    def __str__(self):
        return f"{self.staff.name} {self.starts_at:%Y-%m-%d %H:%M}"


class Menu(models.Model):
    restaurant = models.ForeignKey(Restaurant, on_delete=models.CASCADE, related_name="menus")
    name = models.CharField(max_length=100)

    def __str__(self):
        return self.name


class MenuItem(models.Model):
    menu = models.ForeignKey(Menu, on_delete=models.CASCADE, related_name="items")
    name = models.CharField(max_length=100)
    price = models.DecimalField(max_digits=8, decimal_places=2)

    def __str__(self):
        return f"{self.name} ({self.price})"


class Notification(models.Model):
    class Channel(models.TextChoices):
        EMAIL = "email", "Email"
        SMS = "sms", "SMS"

    guest = models.ForeignKey(Guest, on_delete=models.CASCADE, related_name="notifications")
    reservation = models.ForeignKey(Reservation, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="notifications")
    channel = models.CharField(max_length=10, choices=Channel.choices, default=Channel.EMAIL)
    message = models.CharField(max_length=300)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.channel} to {self.guest}: {self.message[:40]}"


class AuditLog(models.Model):
    restaurant = models.ForeignKey(Restaurant, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="audit_log")
    action = models.CharField(max_length=50)
    detail = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.action}: {self.detail[:60]}"
