"""Demo playlists (instructors): list and create, then edit one — add an item (a built-in scenario
or an uploaded scenario file, classroom.playlists checks it), change its title and speaker
notes, move it up or down, remove it. A playlist and its notes are its owner's alone: anyone
else's is a 404. Every change is a POST that redirects back to the edit page."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from classroom import playlists
from classroom.access import BROADCAST
from classroom.models import Playlist
from classroom.roles import require_perm
from classroom.views_broadcast import NOT_INSTRUCTOR
from engine.scenarios.runner import builtin_names

MAX_PLAYLISTS = 100
MAX_NAME_CHARS = 100


@require_perm(BROADCAST, NOT_INSTRUCTOR)
@require_http_methods(["GET", "POST"])
def playlist_list(request: HttpRequest) -> HttpResponse:
    error = ""
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not 0 < len(name) <= MAX_NAME_CHARS:
            error = _("A playlist needs a name of 1 to %(max)s characters.") % {"max": MAX_NAME_CHARS}
        elif Playlist.objects.filter(owner=request.user).count() >= MAX_PLAYLISTS:
            error = _("You have %(max)s playlists, the most one account may.") % {"max": MAX_PLAYLISTS}
        else:
            return redirect("classroom:playlist", pk=Playlist.objects.create(owner=request.user, name=name).pk)
    return render(request, "classroom/playlists.html", {
        "playlists": Playlist.objects.filter(owner=request.user), "error": error}, status=400 if error else 200)


@require_perm(BROADCAST, NOT_INSTRUCTOR)
def playlist_edit(request: HttpRequest, pk: int, error: str = "", status: int = 200) -> HttpResponse:
    playlist = Playlist.objects.filter(pk=pk, owner=request.user).first()
    if playlist is None:
        return render(request, "classroom/playlist_missing.html", status=404)
    return render(request, "classroom/playlist.html", {
        "playlist": playlist, "items": list(enumerate(playlist.items or [])), "builtins": builtin_names(),
        "error": error, "max_notes": playlists.MAX_NOTES_CHARS}, status=status)


@require_perm(BROADCAST, NOT_INSTRUCTOR)
@require_POST
def playlist_change(request: HttpRequest, pk: int) -> HttpResponse:
    """One change: action = add | edit | up | down | remove | delete."""
    playlist = Playlist.objects.filter(pk=pk, owner=request.user).first()
    if playlist is None:
        return render(request, "classroom/playlist_missing.html", status=404)
    items = list(playlist.items or [])
    action = request.POST.get("action", "")
    try:
        if action == "delete":
            playlist.delete()
            return redirect("classroom:playlists")
        if action == "add":
            items.append(_new_item(request, len(items)))
        elif action in ("edit", "up", "down", "remove"):
            index = _index(request, len(items))
            if action == "edit":
                fresh = playlists.new_item(request.POST.get("title", ""), request.POST.get("notes", ""),
                                           builtin=items[index].get("scenario", ""), inline=items[index].get("inline"))
                items[index] = fresh
            elif action == "remove":
                del items[index]
            else:
                other = index - 1 if action == "up" else index + 1
                if not 0 <= other < len(items):
                    raise playlists.ItemError(_("That item cannot move further."))
                items[index], items[other] = items[other], items[index]
        else:
            raise playlists.ItemError(_("Unknown action: add, edit, up, down, remove or delete."))
    except playlists.ItemError as error:
        return playlist_edit(request, pk, error=str(error), status=400)
    playlist.items = items
    playlist.save(update_fields=["items", "updated"])
    return redirect("classroom:playlist", pk=pk)


def _new_item(request: HttpRequest, count: int) -> dict:
    if count >= playlists.MAX_ITEMS:
        raise playlists.ItemError(_("A playlist has at most %(max)s items.") % {"max": playlists.MAX_ITEMS})
    upload = request.FILES.get("file")
    inline = playlists.parse_upload(upload.read(playlists.MAX_SCENARIO_BYTES + 1)) if upload is not None else None
    return playlists.new_item(request.POST.get("title", ""), request.POST.get("notes", ""),
                              builtin=request.POST.get("scenario", "") if inline is None else "", inline=inline)


def _index(request: HttpRequest, count: int) -> int:
    raw = request.POST.get("index", "")
    if not raw.isdigit() or int(raw) >= count:
        raise playlists.ItemError(_("No such item."))
    return int(raw)
