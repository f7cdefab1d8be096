"""Routes of the explorer's panels (htmx partials) and the files the session page loads; see
lab/urls.py and lab/views_explore.py."""
from __future__ import annotations

from django.urls import path

from lab import views_cleaning, views_compare
from lab import views_explore as views

urlpatterns = [
    path(f"lab/explore/plotly-{views.PLOTLY_VERSION}.min.js", views.plotly_js, name="plotly_js"),
    path("lab/explore/scenarios/", views.scenario_options, name="explore_scenarios"),
    path("lab/explore/scenarios/<slug:name>.json", views.scenario_json, name="explore_scenario_json"),
    path("lab/explore/scenarios/<slug:name>/compare/", views_compare.compare_modes, name="explore_compare_modes"),
    path("lab/explore/event-kinds/", views.event_kinds, name="explore_event_kinds"),
    path("lab/<uuid:session_id>/explore/segments/", views.segments, name="explore_segments"),
    path("lab/<uuid:session_id>/explore/segments/dump/", views.segment_dump, name="explore_segment_dump"),
    path("lab/<uuid:session_id>/explore/segments/lookup/", views.segment_lookup, name="explore_lookup"),
    path("lab/<uuid:session_id>/explore/segments/cleaning/", views_cleaning.segment_cleaning,
         name="explore_segment_cleaning"),
    path("lab/<uuid:session_id>/explore/messages/", views.messages, name="explore_messages"),
]
