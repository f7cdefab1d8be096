"""Broadcast pages: the instructor starts and stops a broadcast; watchers open its watch page.

- /broadcasts/ (instructors, classroom.broadcast_session): their broadcasts and the form that
  starts one (a session of theirs; a cohort they teach and/or the watch link; a playlist).
- /broadcasts/<pk>/stop (POST): ends it; its watchers' sockets close with a message.
- /watch/: the live broadcasts a signed-in visitor may watch ("live now").
- /watch/<token>/: the lab's session page, read-only, on the watch socket (ws/watch/<token>/);
  for the instructor the same page with the broadcast's panel (watchers, controls, pointer,
  playlist and its notes). What happens live is the socket's (classroom.consumers).
"""
from __future__ import annotations

import uuid
from typing import Any

from asgiref.sync import async_to_sync
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

import lab
from classroom import broadcast as service
from classroom.access import BROADCAST
from classroom.models import Broadcast, Cohort, Playlist
from classroom.roles import forbidden, require_perm
from lab.limits import Limits
from lab.models import LabSession
from lab.owners import owner_key, user_key
from lab.views_sessions import STEP_BOUNDS

NOT_INSTRUCTOR = gettext_lazy("Broadcasting a lab session is for instructors.")


@require_perm(BROADCAST, NOT_INSTRUCTOR)
@require_http_methods(["GET", "POST"])
def broadcasts(request: HttpRequest) -> HttpResponse:
    errors: list[str] = []
    if request.method == "POST":
        started = _start(request, errors)
        if started is not None:
            return redirect("classroom:watch", token=started.token)
    mine = Broadcast.objects.filter(instructor=request.user).select_related("session", "cohort")[:50]
    return render(request, "classroom/broadcasts.html", {
        "broadcasts": mine, "errors": errors,
        "sessions": LabSession.objects.filter(owner=user_key(request.user)).order_by("-updated")[:200],
        "cohorts": Cohort.objects.filter(instructors=request.user),
        "playlists": Playlist.objects.filter(owner=request.user)}, status=400 if errors else 200)


def _start(request: HttpRequest, errors: list[str]) -> Broadcast | None:
    """The start form, checked field by field (each problem named in `errors`)."""
    session = _by_id(LabSession.objects.filter(owner=user_key(request.user)), request.POST.get("session", ""), uuid.UUID)
    if session is None:
        errors.append(_("Choose one of your lab sessions."))
    cohort, cohort_id = None, request.POST.get("cohort", "")
    if cohort_id:
        cohort = _by_id(Cohort.objects.filter(instructors=request.user), cohort_id, int)
        if cohort is None:
            errors.append(_("Choose a cohort you teach, or none."))
    playlist, playlist_id = None, request.POST.get("playlist", "")
    if playlist_id:
        playlist = _by_id(Playlist.objects.filter(owner=request.user), playlist_id, int)
        if playlist is None:
            errors.append(_("Choose one of your playlists, or none."))
    link_open = request.POST.get("link") in ("on", "1", "true")
    if not link_open and not cohort_id:
        errors.append(_("Share it with a cohort, by its watch link, or both."))
    if errors:
        return None
    row = service.start(request.user, session, cohort=cohort, link_open=link_open)
    if playlist is not None and row.playlist_id != playlist.pk:
        row.playlist, row.playlist_index = playlist, -1
        row.save(update_fields=["playlist", "playlist_index"])
    return row


def _by_id(queryset: Any, raw: str, kind: type) -> Any:
    try:
        value = kind(raw)
    except (TypeError, ValueError):
        return None
    return queryset.filter(pk=value).first()


@require_perm(BROADCAST, NOT_INSTRUCTOR)
@require_POST
def broadcast_stop(request: HttpRequest, pk: int) -> HttpResponse:
    row = Broadcast.objects.filter(pk=pk, instructor=request.user).first()
    if row is None:
        return render(request, "classroom/watch_missing.html", status=404)
    service.end(row)
    async_to_sync(service.tell_ended)(row.pk)
    return redirect("classroom:broadcasts")


@require_GET
def watch_list(request: HttpRequest) -> HttpResponse:
    return render(request, "classroom/watch_list.html", {
        "live": service.watchable_by(request.user),
        "may_broadcast": service.may_broadcast(request.user)})


@require_GET
def watch(request: HttpRequest, token: str) -> HttpResponse:
    row = service.live_broadcast(token)
    if row is None:
        return render(request, "classroom/watch_missing.html", status=404)
    if not service.may_watch(request.user, row):
        if not request.user.is_authenticated:
            return redirect(f"{reverse('classroom:login')}?next={request.get_full_path()}")
        return forbidden(request, _("This broadcast is for the members of its cohort."))
    owner_key(request, create=True)   # a fork made from this page is owned by this browser (or account)
    is_owner = request.user.is_authenticated and request.user.pk == row.instructor_id
    scheme = "wss" if request.is_secure() else "ws"
    context = {
        "session": row.session, "broadcast": row, "is_owner": is_owner, "version": lab.__version__,
        # ?session=: a balancer hashing on it puts the watchers on the session's worker
        # (docs/placement.md, "Balancing by session"); the route ignores it.
        "ws_url": f"{scheme}://{request.get_host()}/ws/watch/{row.token}/?session={row.session_id}",
        "watch_url": request.build_absolute_uri(reverse("classroom:watch", kwargs={"token": row.token})),
        "limits": Limits.from_settings().to_dict(), "step_bounds": STEP_BOUNDS,
        "instructor_name": service.display_name(row.instructor),
        "items": (row.playlist.items or []) if is_owner and row.playlist else [],
    }
    return render(request, "classroom/watch.html", context)
