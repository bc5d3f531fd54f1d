from django.contrib import admin

from . import models


@admin.register(models.Restaurant)
class RestaurantAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "timezone", "reservation_minutes", "slot_minutes", "hold_minutes")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(models.DiningArea)
class DiningAreaAdmin(admin.ModelAdmin):
    list_display = ("name", "restaurant")
    list_filter = ("restaurant",)


@admin.register(models.Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("name", "restaurant", "area", "capacity", "is_active")
    list_filter = ("restaurant", "is_active")


@admin.register(models.TableCombination)
class TableCombinationAdmin(admin.ModelAdmin):
    list_display = ("name", "restaurant", "capacity")
    filter_horizontal = ("tables",)


@admin.register(models.OpeningHours)
class OpeningHoursAdmin(admin.ModelAdmin):
    list_display = ("restaurant", "weekday", "opens_at", "closes_at", "crosses_midnight")
    list_filter = ("restaurant", "weekday")


@admin.register(models.ServicePeriod)
class ServicePeriodAdmin(admin.ModelAdmin):
    list_display = ("name", "restaurant", "starts_at", "ends_at")


@admin.register(models.Closure)
class ClosureAdmin(admin.ModelAdmin):
    list_display = ("restaurant", "kind", "starts_at", "ends_at", "reason")
    list_filter = ("kind", "restaurant")


@admin.register(models.BookingPolicy)
class BookingPolicyAdmin(admin.ModelAdmin):
    list_display = ("restaurant", "min_notice_minutes", "max_advance_days", "deposit_required_from_party")


@admin.register(models.Guest)
class GuestAdmin(admin.ModelAdmin):
    list_display = ("name", "email", "phone")
    search_fields = ("name", "email", "phone")


@admin.register(models.Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ("name",)


@admin.register(models.GuestNote)
class GuestNoteAdmin(admin.ModelAdmin):
    list_display = ("guest", "text", "created_at")


class SpecialRequestInline(admin.TabularInline):
    model = models.SpecialRequest
    extra = 0


@admin.register(models.Reservation)
class ReservationAdmin(admin.ModelAdmin):
    list_display = ("id", "restaurant", "guest", "party_size", "table", "starts_at", "status")
    list_filter = ("status", "restaurant")
    search_fields = ("guest__name", "guest__email")
    date_hierarchy = "starts_at"
    inlines = [SpecialRequestInline]


@admin.register(models.Hold)
class HoldAdmin(admin.ModelAdmin):
    list_display = ("id", "restaurant", "table", "party_size", "starts_at", "expires_at", "status")
    list_filter = ("status",)


@admin.register(models.WaitlistEntry)
class WaitlistEntryAdmin(admin.ModelAdmin):
    list_display = ("guest", "restaurant", "party_size", "status", "offered_table", "offer_expires_at")
    list_filter = ("status",)


@admin.register(models.SpecialRequest)
class SpecialRequestAdmin(admin.ModelAdmin):
    list_display = ("reservation", "kind", "text")


@admin.register(models.Deposit)
class DepositAdmin(admin.ModelAdmin):
    list_display = ("reservation", "amount", "status")


@admin.register(models.Payment)
class PaymentAdmin(admin.ModelAdmin):
    list_display = ("reservation", "amount", "method", "paid_at")


@admin.register(models.NoShowRecord)
class NoShowRecordAdmin(admin.ModelAdmin):
    list_display = ("guest", "reservation", "recorded_at")


@admin.register(models.Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ("reservation", "rating", "comment")


@admin.register(models.Staff)
class StaffAdmin(admin.ModelAdmin):
    list_display = ("name", "role", "restaurant")


@admin.register(models.Shift)
class ShiftAdmin(admin.ModelAdmin):
    list_display = ("staff", "starts_at", "ends_at")


@admin.register(models.Menu)
class MenuAdmin(admin.ModelAdmin):
    list_display = ("name", "restaurant")


@admin.register(models.MenuItem)
class MenuItemAdmin(admin.ModelAdmin):
    list_display = ("name", "menu", "price")


@admin.register(models.Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("guest", "channel", "message", "created_at")


@admin.register(models.AuditLog)
class AuditLogAdmin(admin.ModelAdmin):
    list_display = ("action", "restaurant", "detail", "created_at")
    list_filter = ("action",)
