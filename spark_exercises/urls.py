"""Routes of the Spark exercises (see views.py). Mounted at the site root by lab/urls.py:
`path("", include("spark_exercises.urls"))`; every route starts with exercises/.

URL names: exercise_list, exercise_detail, exercise_file, submission_new, submission_detail,
gradebook, gradebook_learner, gradebook_csv.
"""
from __future__ import annotations

from django.urls import path

from spark_exercises import views

urlpatterns = [
    path("exercises/", views.exercise_list, name="exercise_list"),
    path("exercises/submit", views.submission_new, name="submission_new"),
    path("exercises/submissions/<int:pk>/", views.submission_detail, name="submission_detail"),
    path("exercises/gradebook/", views.gradebook, name="gradebook"),
    path("exercises/gradebook.csv", views.gradebook_csv, name="gradebook_csv"),
    path("exercises/gradebook/<str:learner>/", views.gradebook_learner, name="gradebook_learner"),
    path("exercises/<slug:slug>/", views.exercise_detail, name="exercise_detail"),
    path("exercises/<slug:slug>/<str:filename>", views.exercise_file, name="exercise_file"),
]
