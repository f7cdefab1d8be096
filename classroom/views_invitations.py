"""Links an instructor or admin makes and hands over by hand (no e-mail server is assumed):
invitations (one-time sign-up links) and password reset links.

- An instructor invites learners into the cohorts they teach; only those who manage accounts
  (auth.change_user: admins) invite instructors and admins, or learners without a cohort.
- A reset link is Django's (default_token_generator, the uidb64 pattern): an admin makes one for
  any account (a superuser's only by a superuser); an instructor for the learners of their cohorts.
  It stops working once used (the password it sets changes the token) or after
  PASSWORD_RESET_TIMEOUT.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.views import PasswordResetConfirmView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from classroom.access import can_see_user
from classroom.forms_accounts import InvitationForm, LabSetPasswordForm, ResetLinkForm
from classroom.models import Invitation
from classroom.roles import LEARNER, MANAGE_USERS, TEACH, require_perm, role_of

NOT_INVITING = gettext_lazy("Only instructors and admins make invitations and reset links.")


@require_http_methods(["GET", "POST"])
@require_perm(TEACH, NOT_INVITING)
def invitations(request: HttpRequest) -> HttpResponse:
    # ?cohort=<pk> (the cohort page's link) chooses the cohort; the field's queryset still decides.
    initial = {"cohort": request.GET["cohort"]} if request.GET.get("cohort", "").isdigit() else {}
    form = InvitationForm(request.user, request.POST if request.method == "POST" else None, initial=initial)
    made = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            made = Invitation.objects.create(
                role=form.cleaned_data["role"], cohort=form.cleaned_data["cohort"], created_by=request.user,
                expires_at=timezone.now() + timedelta(days=form.cleaned_data["days"]))
            form = InvitationForm(request.user)
        else:
            status = 400
    mine = Invitation.objects.filter(created_by=request.user).select_related("cohort", "used_by").order_by("-created")
    rows = [{"invite": i, "url": _invitation_url(request, i), "refusal": i.refusal()} for i in mine[:50]]
    return render(request, "classroom/invitations.html", {
        "form": form, "made": made, "made_url": _invitation_url(request, made) if made else "", "rows": rows},
        status=status)


def _invitation_url(request: HttpRequest, invite: Invitation) -> str:
    return request.build_absolute_uri(reverse("classroom:invitation", kwargs={"token": invite.token}))


def may_reset(viewer: Any, target: Any) -> bool:
    """`viewer` may make a reset link for `target`'s password (see the module's docstring)."""
    if target.is_superuser and not viewer.is_superuser:
        return False
    if viewer.has_perm(MANAGE_USERS):
        return True
    return (viewer.has_perm(TEACH) and viewer.pk != target.pk and role_of(target) == LEARNER
            and can_see_user(viewer, target))


@require_http_methods(["GET", "POST"])
@require_perm(TEACH, NOT_INVITING)
def reset_link(request: HttpRequest) -> HttpResponse:
    form = ResetLinkForm(request.POST if request.method == "POST" else None)
    if request.method == "GET" or not form.is_valid():
        return render(request, "classroom/reset_link.html", {"form": form},
                      status=400 if request.method == "POST" else 200)
    target = get_user_model().objects.filter(username=form.cleaned_data["username"]).first()
    # The same answer for "no such account" and "not yours": the page must not probe for names.
    if target is None or not may_reset(request.user, target):
        form.add_error("username", _("No account by that name that you may reset."))
        return render(request, "classroom/reset_link.html", {"form": form}, status=404)
    path = reverse("classroom:password_reset_confirm", kwargs={
        "uidb64": urlsafe_base64_encode(force_bytes(target.pk)), "token": default_token_generator.make_token(target)})
    return render(request, "classroom/reset_link.html", {
        "form": ResetLinkForm(), "target": target, "link": request.build_absolute_uri(path)})


class ResetConfirm(PasswordResetConfirmView):
    """Django's confirm view with the lab's password rules; a used, expired or mangled link is a
    clear page answered with 410, not a form."""
    template_name = "classroom/password_reset_confirm.html"
    form_class = LabSetPasswordForm
    success_url = reverse_lazy("classroom:password_reset_complete")

    def render_to_response(self, context: dict[str, Any], **kwargs: Any) -> HttpResponse:
        if not context.get("validlink"):
            kwargs["status"] = 410
        elif self.request.method == "POST":
            kwargs["status"] = 400    # a POST renders only when the form was wrong
        return super().render_to_response(context, **kwargs)


def reset_complete(request: HttpRequest) -> HttpResponse:
    return render(request, "classroom/password_reset_complete.html")
