"""`{% load broadcast_tags %}{% live_broadcasts %}`: the "Live now: <instructor>'s session" list a
page shows a signed-in visitor (their cohorts' live broadcasts and their own; nothing otherwise),
each linking to its watch page. For the cohort pages and the landing page (classroom.broadcast)."""
from __future__ import annotations

from typing import Any

from django import template

from classroom.broadcast import watchable_by

register = template.Library()


@register.inclusion_tag("classroom/broadcast_live_now.html", takes_context=True)
def live_broadcasts(context: dict[str, Any], cohort: Any = None) -> dict[str, Any]:
    """With `cohort`, only that cohort's broadcasts."""
    request = context.get("request")
    live = watchable_by(getattr(request, "user", None))
    if cohort is not None:
        live = live.filter(cohort=cohort)
    return {"live": list(live[:20])}
