"""Cohorts: an instructor makes one and manages its join code; a learner joins with the code
(a /join/<code>/ link or typed into the join form) and may leave.

Who sees a cohort's page is classroom.access.cohorts_visible_to (its instructors, and admins);
anyone else signed in gets the 403 page. Wrong codes are counted per visitor
(classroom.throttle.JOIN_CODE): past the limit, no code is looked up for a while.
"""
from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from classroom.access import cohorts_visible_to, learners_of
from classroom.forms_accounts import CohortForm, JoinForm, code_is_well_formed, normalize_code
from classroom.models import Cohort, Membership, new_code
from classroom.roles import TEACH, forbidden, require_perm
from classroom.throttle import JOIN_CODE, visitor

NOT_TEACHING = gettext_lazy("Only instructors may do this: ask an admin to make your account an instructor.")
NOT_YOURS = gettext_lazy("This cohort is not one you teach.")
CODE_ACTIONS = ("close", "reopen", "regenerate", "expiry")


@login_required
def cohort_list(request: HttpRequest) -> HttpResponse:
    return _list_page(request, CohortForm(), JoinForm())


def _list_page(request: HttpRequest, cohort_form: CohortForm, join_form: JoinForm, status: int = 200) -> HttpResponse:
    user = request.user
    teaching = (cohorts_visible_to(user).annotate(learner_count=Count("memberships", distinct=True))
                if user.has_perm(TEACH) else [])
    memberships = Membership.objects.filter(user=user).select_related("cohort")
    return render(request, "classroom/cohorts.html", {
        "teaching": teaching, "memberships": memberships, "may_teach": user.has_perm(TEACH),
        "cohort_form": cohort_form, "join_form": join_form}, status=status)


@require_POST
@require_perm(TEACH, NOT_TEACHING)
def cohort_new(request: HttpRequest) -> HttpResponse:
    form = CohortForm(request.POST)
    if not form.is_valid():
        return _list_page(request, form, JoinForm(), status=400)
    cohort = _create_with_fresh_code(name=form.cleaned_data["name"], join_expires_at=form.expires_at(),
                                     created_by=request.user)
    cohort.instructors.add(request.user)
    messages.success(request, _("Cohort %(name)s is ready: give your learners its join link or code.")
                     % {"name": cohort.name})
    return redirect("classroom:cohort", pk=cohort.pk)


def _create_with_fresh_code(**fields: Any) -> Cohort:
    for _attempt in range(5):   # 27^8 codes: a collision is rare, five in a row is a broken generator
        try:
            with transaction.atomic():
                return Cohort.objects.create(code=new_code(), **fields)
        except IntegrityError:
            continue
    raise RuntimeError("no free join code after 5 tries")


def _taught(request: HttpRequest, pk: int) -> Cohort | HttpResponse:
    """The cohort if the visitor may manage it, else the page that says why not."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not request.user.has_perm(TEACH):
        return forbidden(request, str(NOT_TEACHING))
    cohort = get_object_or_404(Cohort, pk=pk)
    if not cohorts_visible_to(request.user).filter(pk=cohort.pk).exists():
        return forbidden(request, str(NOT_YOURS))
    return cohort


def cohort_detail(request: HttpRequest, pk: int) -> HttpResponse:
    cohort = _taught(request, pk)
    if isinstance(cohort, HttpResponse):
        return cohort
    join_url = request.build_absolute_uri(reverse("classroom:join_code", kwargs={"code": cohort.code}))
    return render(request, "classroom/cohort.html", {
        "cohort": cohort, "join_url": join_url, "learners": learners_of(cohort),
        "refusal": cohort.join_refusal(), "instructors": cohort.instructors.order_by("username"),
        "code_display": f"{cohort.code[:4]}-{cohort.code[4:]}", "expiry_form": CohortForm()})


@require_POST
def cohort_code(request: HttpRequest, pk: int) -> HttpResponse:
    """close / reopen / regenerate the join code, or set its expiry (`code_days`, empty: none)."""
    cohort = _taught(request, pk)
    if isinstance(cohort, HttpResponse):
        return cohort
    action = request.POST.get("action", "")
    if action not in CODE_ACTIONS:
        return render(request, "classroom/bad_request.html",
                      {"reason": _("Unknown action: close, reopen, regenerate or expiry.")}, status=400)
    if action == "expiry":
        form = CohortForm({"name": cohort.name, "code_days": request.POST.get("code_days", "")})
        if not form.is_valid():
            return render(request, "classroom/bad_request.html",
                          {"reason": "; ".join(str(e) for e in form.errors.get("code_days", []))}, status=400)
        cohort.join_expires_at = form.expires_at()
    elif action == "regenerate":
        cohort.code = _fresh_code()
    else:
        cohort.join_open = action == "reopen"
    cohort.save()
    messages.success(request, _("Saved."))
    return redirect("classroom:cohort", pk=cohort.pk)


def _fresh_code() -> str:
    while Cohort.objects.filter(code=(code := new_code())).exists():
        pass
    return code


@require_POST
def cohort_remove(request: HttpRequest, pk: int, user_pk: int) -> HttpResponse:
    cohort = _taught(request, pk)
    if isinstance(cohort, HttpResponse):
        return cohort
    learner = get_object_or_404(get_user_model(), pk=user_pk)
    Membership.objects.filter(cohort=cohort, user=learner).delete()
    messages.success(request, _("%(name)s is no longer in this cohort.") % {"name": learner.get_username()})
    return redirect("classroom:cohort", pk=cohort.pk)


@require_POST
@login_required
def cohort_leave(request: HttpRequest, pk: int) -> HttpResponse:
    membership = Membership.objects.filter(cohort_id=pk, user=request.user).select_related("cohort").first()
    if membership is None:
        return render(request, "classroom/bad_request.html",
                      {"reason": _("You are not in this cohort.")}, status=404)
    membership.delete()
    messages.success(request, _("You left %(name)s.") % {"name": membership.cohort.name})
    return redirect("classroom:cohorts")


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest) -> HttpResponse:
    """The join form: a typed code joins at once (typing it was the intent)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if request.method == "GET":
        return render(request, "classroom/join.html", {"form": JoinForm()})
    form = JoinForm(request.POST)
    if not form.is_valid():
        return render(request, "classroom/join.html", {"form": form}, status=400)
    return _join(request, form.cleaned_data["code"], confirm=False)


@require_http_methods(["GET", "POST"])
def join_code(request: HttpRequest, code: str) -> HttpResponse:
    """A join link: GET shows the cohort and a Join button (joining takes a POST with the CSRF
    token); an anonymous visitor signs in or up first and comes back here."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return _join(request, normalize_code(code[:40]), confirm=request.method == "GET")


def _join(request: HttpRequest, code: str, *, confirm: bool) -> HttpResponse:
    who = visitor(request)
    if JOIN_CODE.locked(who):
        return render(request, "classroom/join.html", {"form": JoinForm(), "locked_minutes": JOIN_CODE.minutes},
                      status=429)
    cohort = Cohort.objects.filter(code=code).first() if code_is_well_formed(code) else None
    if cohort is None:
        JOIN_CODE.failed(who)
        return render(request, "classroom/join.html", {"form": JoinForm(initial={"code": code}), "unknown": code},
                      status=404)
    if refusal := cohort.join_refusal():
        return render(request, "classroom/join.html", {"form": JoinForm(), "cohort": cohort, "refusal": refusal},
                      status=403)
    if Membership.objects.filter(cohort=cohort, user=request.user).exists():
        messages.info(request, _("You are already in %(name)s.") % {"name": cohort.name})
        return redirect("classroom:cohorts")
    if confirm:
        return render(request, "classroom/join.html", {"cohort": cohort, "confirm": True})
    Membership.objects.get_or_create(cohort=cohort, user=request.user)
    messages.success(request, _("You joined %(name)s.") % {"name": cohort.name})
    return redirect("classroom:cohorts")
