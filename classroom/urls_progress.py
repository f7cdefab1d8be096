"""Routes of classroom.views_progress (mounted by classroom.urls, namespace "classroom").

URL names: cohort_progress, cohort_progress_csv, cohort_learner, cohort_submission, my_progress.
"""
from __future__ import annotations

from django.urls import URLPattern, path

from classroom import views_copies
from classroom import views_progress as views

urlpatterns: list[URLPattern] = [
    path("cohorts/<id:cohort_id>/progress/", views.cohort_progress, name="cohort_progress"),
    path("cohorts/<id:cohort_id>/progress.csv", views.cohort_progress_csv, name="cohort_progress_csv"),
    path("cohorts/<id:cohort_id>/learners/<id:user_id>/", views.cohort_learner, name="cohort_learner"),
    path("cohorts/<id:cohort_id>/learners/<id:user_id>/submissions/<id:pk>/", views.cohort_submission,
         name="cohort_submission"),
    path("me/progress/", views.my_progress, name="my_progress"),
    path("cohorts/<id:cohort_id>/learners/<id:user_id>/sessions/<uuid:session_id>/copy",
         views_copies.copy_learner_session, name="copy_learner_session"),
]
