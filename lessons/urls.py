"""/lessons/: the course index, a lesson's page, starting a lesson over (lessons/views.py)."""
from __future__ import annotations

from django.urls import path

from lessons import views

app_name = "lessons"

urlpatterns = [
    path("", views.index, name="index"),
    path("<slug:slug>/", views.lesson_page, name="lesson"),
    path("<slug:slug>/restart", views.restart, name="restart"),
]
