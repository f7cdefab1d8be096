"""Signing in, out and up — by the sign-up page (when KAFKA_LAB_SELF_SIGNUP) or an invitation link.

Signing in or up keeps what the visitor made anonymously: the anonymous owner key is read *before*
``login()`` (which rotates the session key) and handed to ``lab.owners.adopt``; a message says
what was kept. After signing in the visitor goes to ``next`` only when it is on this site.
Failed sign-ins are counted per (username, visitor) and per visitor: too many lock the pair (or
the visitor) out for a while (classroom.throttle).
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth.forms import AuthenticationForm
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext
from django.views.decorators.http import require_http_methods

from classroom.forms_accounts import SignUpForm
from classroom.models import Invitation, Membership
from classroom.roles import LEARNER, ROLES, role_of, set_role
from classroom.throttle import SIGN_IN, SIGN_IN_ANY_NAME, visitor
from lab.owners import adopt, anonymous_key_before_login

MAX_NEXT = 2000
# Roles from the lowest up: accepting an invitation never lowers an account's role.
_RANK = {role: i for i, role in enumerate(ROLES)}


def safe_next(request: HttpRequest) -> str:
    """Where to go after signing in: `next` when it stays on this site, else LOGIN_REDIRECT_URL."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if (target and len(target) <= MAX_NEXT and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure())):
        return target
    return settings.LOGIN_REDIRECT_URL


def kept_message(moved: dict[str, int]) -> str:
    """'3 lab sessions, 2 lessons, 1 submission are now in your account.' ('' when nothing moved)."""
    parts = []
    if moved.get("sessions"):
        parts.append(ngettext("%(n)d lab session", "%(n)d lab sessions", moved["sessions"]) % {"n": moved["sessions"]})
    if moved.get("lessons"):
        parts.append(ngettext("%(n)d lesson", "%(n)d lessons", moved["lessons"]) % {"n": moved["lessons"]})
    if moved.get("submissions"):
        parts.append(ngettext("%(n)d submission", "%(n)d submissions", moved["submissions"])
                     % {"n": moved["submissions"]})
    if not parts:
        return ""
    total = sum(moved.values())
    return ngettext("%(items)s is now in your account.", "%(items)s are now in your account.", total) % {
        "items": pgettext("between the items of a list", ", ").join(parts)}


def sign_in_and_adopt(request: HttpRequest, user: Any) -> dict[str, int]:
    """Log `user` in, keeping what this browser made anonymously; say what was kept."""
    anonymous = anonymous_key_before_login(request)    # before login(): it rotates the session key
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    moved = adopt(anonymous, user)
    if text := kept_message(moved):
        messages.success(request, text)
    return moved


@require_http_methods(["GET", "POST"])
def sign_in(request: HttpRequest) -> HttpResponse:
    next_url = safe_next(request)
    form = AuthenticationForm(request, data=request.POST if request.method == "POST" else None)
    if request.method == "POST":
        who = ((request.POST.get("username") or "")[:150].lower(), visitor(request))
        # Locked out: the password is not even tried (a lockout must not confirm a guess).
        if SIGN_IN.locked(*who) or SIGN_IN_ANY_NAME.locked(who[1]):
            form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")[:150]})
            return render(request, "classroom/login.html", _sign_in_context(
                form, next_url, locked=SIGN_IN.minutes), status=429)
        if form.is_valid():
            SIGN_IN.clear(*who)
            sign_in_and_adopt(request, form.get_user())
            return redirect(next_url)
        SIGN_IN.failed(*who)
        SIGN_IN_ANY_NAME.failed(who[1])
        return render(request, "classroom/login.html", _sign_in_context(form, next_url), status=400)
    return render(request, "classroom/login.html", _sign_in_context(form, next_url))


def _sign_in_context(form: AuthenticationForm, next_url: str, locked: int = 0) -> dict[str, Any]:
    return {"form": form, "next": next_url, "locked_minutes": locked,
            "self_signup": settings.KAFKA_LAB_SELF_SIGNUP}


@require_http_methods(["GET", "POST"])
def sign_out(request: HttpRequest) -> HttpResponse:
    """GET asks (a link must not sign anyone out: only a POST with the CSRF token does)."""
    if request.method == "POST":
        logout(request)
        return redirect(settings.LOGOUT_REDIRECT_URL)
    return render(request, "classroom/logout.html")


@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    next_url = safe_next(request)
    if not settings.KAFKA_LAB_SELF_SIGNUP:
        return render(request, "classroom/signup.html", {"closed": True, "next": next_url}, status=403)
    form = SignUpForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        if form.is_valid():
            with transaction.atomic():
                user = form.save()
                set_role(user, LEARNER)
            sign_in_and_adopt(request, user)
            messages.success(request, _("Welcome, %(name)s: your account is ready.") % {"name": user.get_username()})
            return redirect(next_url)
        return render(request, "classroom/signup.html", {"form": form, "next": next_url}, status=400)
    return render(request, "classroom/signup.html", {"form": form, "next": next_url})


@require_http_methods(["GET", "POST"])
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """An invitation link: a new account in the invitation's role (and cohort), self-sign-up on
    or off; a signed-in visitor may take it for their own account instead."""
    invite = Invitation.objects.filter(token=token[:64]).select_related("cohort").first()
    if invite is None or invite.refusal():
        return render(request, "classroom/link_refused.html",
                      {"kind": "invitation", "refusal": invite.refusal() if invite else "unknown"}, status=410)
    if request.user.is_authenticated:
        if request.method == "POST":
            if not _claim(invite, request.user):
                return render(request, "classroom/link_refused.html",
                              {"kind": "invitation", "refusal": "used"}, status=410)
            _apply(invite, request.user, raise_only=True)
            messages.success(request, _("The invitation is now part of your account."))
            return redirect("classroom:cohorts")
        return render(request, "classroom/invitation.html", {"invite": invite})
    form = SignUpForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            user = form.save()
            if not _claim(invite, user):
                transaction.set_rollback(True)
                return render(request, "classroom/link_refused.html",
                              {"kind": "invitation", "refusal": "used"}, status=410)
            _apply(invite, user, raise_only=False)
        sign_in_and_adopt(request, user)
        messages.success(request, _("Welcome, %(name)s: your account is ready.") % {"name": user.get_username()})
        return redirect("classroom:cohorts")
    return render(request, "classroom/signup.html", {"form": form, "invite": invite},
                  status=400 if request.method == "POST" else 200)


def _claim(invite: Invitation, user: Any) -> bool:
    """Mark the invitation used by `user`, unless someone took it in the meantime (one UPDATE:
    two tabs cannot both use one link)."""
    return Invitation.objects.filter(pk=invite.pk, used_at__isnull=True).update(
        used_at=timezone.now(), used_by=user) == 1


def _apply(invite: Invitation, user: Any, *, raise_only: bool) -> None:
    role = invite.role if invite.role in ROLES else LEARNER
    if not raise_only or _RANK[role] > _RANK[role_of(user)]:
        set_role(user, role)
    if invite.cohort is None:
        return
    if role == LEARNER:
        Membership.objects.get_or_create(cohort=invite.cohort, user=user)
    else:
        invite.cohort.instructors.add(user)
