"""Routes of broadcasts and demo playlists (classroom.views_broadcast, classroom.views_playlists;
mounted by classroom.urls). The watch socket is ws/watch/<token>/ (lab/routing.py)."""
from __future__ import annotations

from django.urls import URLPattern, path

from classroom import views_broadcast, views_playlists

urlpatterns: list[URLPattern] = [
    path("broadcasts/", views_broadcast.broadcasts, name="broadcasts"),
    path("broadcasts/<id:pk>/stop", views_broadcast.broadcast_stop, name="broadcast_stop"),
    path("watch/", views_broadcast.watch_list, name="watch_list"),
    path("watch/<str:token>/", views_broadcast.watch, name="watch"),
    path("playlists/", views_playlists.playlist_list, name="playlists"),
    path("playlists/<id:pk>/", views_playlists.playlist_edit, name="playlist"),
    path("playlists/<id:pk>/change", views_playlists.playlist_change, name="playlist_change"),
]
