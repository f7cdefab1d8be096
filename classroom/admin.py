"""Django's admin for the classroom: admins manage cohorts (with their learners), invitations,
broadcasts and playlists here; accounts and their roles (groups) are Django's own User and Group
pages."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils.translation import gettext as _

from classroom.forms_accounts import code_is_well_formed, normalize_code
from classroom.models import CODE_ALPHABET, CODE_LENGTH, Broadcast, Cohort, Invitation, Membership, Playlist
from classroom.roles import ROLE_LABELS


class _MadeBy:
    """created_by is whoever made the row here (not a field to fill in)."""

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change and obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    readonly_fields = ["joined"]


class CohortAdminForm(forms.ModelForm):
    class Meta:
        model = Cohort
        fields = "__all__"

    def clean_code(self) -> str:
        """A code typed here obeys the same alphabet as a generated one (learners type it)."""
        code = normalize_code(self.cleaned_data["code"])
        if not code_is_well_formed(code):
            raise forms.ValidationError(_("%(n)d characters from %(alphabet)s") % {"n": CODE_LENGTH,
                                                                                  "alphabet": CODE_ALPHABET})
        return code


@admin.register(Cohort)
class CohortAdmin(_MadeBy, admin.ModelAdmin):
    form = CohortAdminForm
    list_display = ["name", "code", "join_open", "join_expires_at", "created_by", "created"]
    list_filter = ["join_open"]
    search_fields = ["name", "code", "instructors__username"]
    filter_horizontal = ["instructors"]
    readonly_fields = ["created_by", "created"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "cohort", "joined"]
    list_filter = ["cohort"]
    search_fields = ["user__username", "cohort__name", "cohort__code"]
    autocomplete_fields = ["user", "cohort"]


@admin.register(Invitation)
class InvitationAdmin(_MadeBy, admin.ModelAdmin):
    list_display = ["token_start", "role", "cohort", "created_by", "created", "expires_at", "used_by", "used_at"]
    list_filter = ["role", "cohort"]
    search_fields = ["created_by__username", "used_by__username", "cohort__name"]
    readonly_fields = ["token", "created_by", "created", "used_by", "used_at"]

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "role":   # one of the roles, not free text
            return forms.ChoiceField(choices=list(ROLE_LABELS.items()), initial="learner", label="role")
        return super().formfield_for_dbfield(db_field, request, **kwargs)

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
