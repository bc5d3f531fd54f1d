from django.urls import path

from . import views

app_name = "reservations"

urlpatterns = [
    path("restaurants/", views.restaurant_list, name="restaurant-list"),
    path("restaurants/<int:pk>/", views.restaurant_detail, name="restaurant-detail"),
    path("restaurants/<int:pk>/availability/", views.availability, name="availability"),
    path("guests/", views.guest_create, name="guest-create"),
    path("guests/<int:pk>/", views.guest_detail, name="guest-detail"),
    path("holds/", views.hold_create, name="hold-create"),
    path("holds/<int:pk>/confirm/", views.hold_confirm, name="hold-confirm"),
    path("holds/<int:pk>/release/", views.hold_release, name="hold-release"),
    path("reservations/", views.reservations, name="reservations"),
    path("reservations/<int:pk>/", views.reservation_detail, name="reservation-detail"),
    path("reservations/<int:pk>/cancel/", views.reservation_cancel, name="reservation-cancel"),
    path("reservations/<int:pk>/seat/", views.reservation_seat, name="reservation-seat"),
    path("reservations/<int:pk>/no-show/", views.reservation_no_show, name="reservation-no-show"),
    path("waitlist/", views.waitlist_join, name="waitlist-join"),
    path("waitlist/<int:pk>/offer/", views.waitlist_offer, name="waitlist-offer"),
    path("waitlist/<int:pk>/accept/", views.waitlist_accept, name="waitlist-accept"),
    path("maintenance/expire/", views.expire, name="expire"),
]
