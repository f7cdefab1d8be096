"""Classrooms and teams: cohorts of learners, invitations, an instructor's broadcast, playlists.

Roles are Django groups holding permissions (classroom.roles): a *learner* joins cohorts; an
*instructor* also creates cohorts, sees their learners' progress and broadcasts sessions; an
*admin* manages everyone through Django's admin. Views ask for permissions, never for a group's
name. Owned items (lab sessions, lesson progress, submissions) stay keyed by an owner key
(lab.owners): ``user:<pk>`` for an account.
"""
from __future__ import annotations

import secrets
import string

from django.conf import settings
from django.db import models
from django.utils import timezone

# Short codes are read aloud in a classroom and typed on phones: no 0/O, 1/I/L.
CODE_ALPHABET = "".join(c for c in string.ascii_uppercase + string.digits if c not in "01OIL")
CODE_LENGTH = 8


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_token() -> str:
    return secrets.token_urlsafe(24)


class Cohort(models.Model):
    """A class or a team: its instructors and, through Membership, its learners."""
    name = models.CharField(max_length=100)
    code = models.CharField(max_length=16, unique=True, default=new_code,
                            help_text="the short join code (and the join link's key)")
    join_open = models.BooleanField(default=True, help_text="learners may join with the code")
    join_expires_at = models.DateTimeField(null=True, blank=True, help_text="the code stops working then")
    instructors = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="teaching", blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                                   related_name="cohorts_created")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        permissions = [
            ("teach_cohort", "Can create cohorts and see their learners' progress and items"),
            ("broadcast_session", "Can broadcast a lab session to watchers"),
            ("see_every_cohort", "Can see every cohort (admins)"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"

    def join_refusal(self) -> str:
        """Why the code does not admit anyone now ('' when it does)."""
        if not self.join_open:
            return "closed"
        if self.join_expires_at is not None and self.join_expires_at <= timezone.now():
            return "expired"
        return ""


class Membership(models.Model):
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    joined = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cohort", "user"], name="membership_unique")]
        ordering = ["cohort", "user__username"]


class Invitation(models.Model):
    """A one-time sign-up link, shown to the instructor or admin who made it (no e-mail is
    assumed): it works when self-sign-up is off, and can put the new account in a cohort and role."""
    token = models.CharField(max_length=64, unique=True, default=new_token)
    role = models.CharField(max_length=20, default="learner")
    cohort = models.ForeignKey(Cohort, null=True, blank=True, on_delete=models.CASCADE, related_name="invitations")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                                   related_name="invitations_made")
    created = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")
    used_at = models.DateTimeField(null=True, blank=True)

    def role_label(self) -> str:
        from classroom.roles import ROLE_LABELS  # the labels live with the roles
        return str(ROLE_LABELS.get(self.role, self.role))

    def refusal(self) -> str:
        if self.used_at is not None:
            return "used"
        if self.expires_at <= timezone.now():
            return "expired"
        return ""


class Broadcast(models.Model):
    """An instructor's lab session shared read-only with a cohort or by a watch link."""
    session = models.ForeignKey("lab.LabSession", on_delete=models.CASCADE, related_name="broadcasts")
    instructor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="broadcasts")
    cohort = models.ForeignKey(Cohort, null=True, blank=True, on_delete=models.SET_NULL, related_name="broadcasts")
    token = models.CharField(max_length=64, unique=True, default=new_token, help_text="the watch link's key")
    link_open = models.BooleanField(default=True, help_text="anyone holding the watch link may watch (else: "
                                                            "only the cohort's members, signed in)")
    controller = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+", help_text="the learner the instructor handed the controls to")
    pointer = models.JSONField(default=dict, blank=True, help_text="what the instructor points at")
    playlist = models.ForeignKey("Playlist", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    playlist_index = models.IntegerField(default=-1)
    started = models.DateTimeField(auto_now_add=True)
    ended = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started"]

    @property
    def live(self) -> bool:
        return self.ended is None


class Playlist(models.Model):
    """An instructor's demo: scenarios in order, each with speaker notes only the instructor sees.
    `items` is [{"title", "scenario": built-in name or "", "inline": scenario JSON or null,
    "notes"}]."""
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="playlists")
    name = models.CharField(max_length=100)
    items = models.JSONField(default=list, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
