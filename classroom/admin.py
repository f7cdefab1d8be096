"""Django's admin for the classroom: admins manage cohorts (with their learners), invitations,
broadcasts and playlists here; accounts and their roles (groups) are Django's own User and Group
pages."""
from __future__ import annotations

from django.contrib import admin

from classroom.models import Broadcast, Cohort, Invitation, Membership, Playlist


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    readonly_fields = ["joined"]


@admin.register(Cohort)
class CohortAdmin(admin.ModelAdmin):
    list_display = ["name", "code", "join_open", "join_expires_at", "created_by", "created"]
    list_filter = ["join_open"]
    search_fields = ["name", "code", "instructors__username"]
    filter_horizontal = ["instructors"]
    readonly_fields = ["created"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "cohort", "joined"]
    list_filter = ["cohort"]
    search_fields = ["user__username", "cohort__name", "cohort__code"]
    autocomplete_fields = ["user", "cohort"]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ["token_start", "role", "cohort", "created_by", "created", "expires_at", "used_by", "used_at"]
    list_filter = ["role", "cohort"]
    search_fields = ["created_by__username", "used_by__username", "cohort__name"]
    readonly_fields = ["token", "created", "used_by", "used_at"]

    @admin.display(description="token")
    def token_start(self, invite: Invitation) -> str:
        return invite.token[:8] + "…"


@admin.register(Broadcast)
class BroadcastAdmin(admin.ModelAdmin):
    list_display = ["session", "instructor", "cohort", "started", "ended"]
    list_filter = ["cohort"]
    search_fields = ["instructor__username", "session__name"]
    readonly_fields = ["token", "started"]
    raw_id_fields = ["session", "controller", "playlist"]


@admin.register(Playlist)
class PlaylistAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "updated"]
    search_fields = ["name", "owner__username"]
