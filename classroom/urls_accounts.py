"""Routes of accounts and cohorts (mounted by classroom.urls, namespace "classroom").

/accounts/: login, logout, signup, invitation (a link's sign-up), invitations (make them),
reset_link (make one), password_reset_confirm, password_reset_complete.
/cohorts/: cohorts (yours), cohort_new, cohort (an instructor's page), cohort_code, cohort_remove,
cohort_leave. /join/: join (type a code), join_code (a join link).
"""
from __future__ import annotations

from django.urls import URLPattern, path

from classroom import views_accounts, views_cohorts, views_invitations

urlpatterns: list[URLPattern] = [
    path("accounts/login/", views_accounts.sign_in, name="login"),
    path("accounts/logout/", views_accounts.sign_out, name="logout"),
    path("accounts/signup/", views_accounts.sign_up, name="signup"),
    path("accounts/invitation/<str:token>/", views_accounts.invitation, name="invitation"),
    path("accounts/invitations/", views_invitations.invitations, name="invitations"),
    path("accounts/reset-link/", views_invitations.reset_link, name="reset_link"),
    path("accounts/reset/<uidb64>/<token>/", views_invitations.ResetConfirm.as_view(),
         name="password_reset_confirm"),
    path("accounts/reset/done/", views_invitations.reset_complete, name="password_reset_complete"),
    path("cohorts/", views_cohorts.cohort_list, name="cohorts"),
    path("cohorts/new", views_cohorts.cohort_new, name="cohort_new"),
    path("cohorts/<id:pk>/", views_cohorts.cohort_detail, name="cohort"),
    path("cohorts/<id:pk>/code", views_cohorts.cohort_code, name="cohort_code"),
    path("cohorts/<id:pk>/remove/<id:user_pk>", views_cohorts.cohort_remove, name="cohort_remove"),
    path("cohorts/<id:pk>/leave", views_cohorts.cohort_leave, name="cohort_leave"),
    path("join/", views_cohorts.join, name="join"),
    path("join/<str:code>/", views_cohorts.join_code, name="join_code"),
]
