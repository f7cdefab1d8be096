"""Function views of lab sessions: create, list, open (resume), reset, delete.

A visitor is their Django session (no accounts yet): the session key owns the lab sessions they
create, and every view below answers 404 for a lab session someone else owns — with the lab's
own page (`lab/session_not_found.html`), in DEBUG too, since a link opened in another browser is
an everyday mistake, not a bug. Opening a session renders `lab/session.html`; its page then talks
to the server over the WebSocket in lab.consumers.
"""
from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import async_to_sync
from django import forms
from django.db.models import Count, F, Q
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

import lab
from engine.cluster import MAX_BROKERS, Cluster, ClusterError
from engine.scenarios import schema
from engine.scenarios.runner import ScenarioError, builtin_names, load_scenario
from engine.sim import budget as call_budget
from engine.sim.budget import BudgetExceeded, CallBudget
from engine.storage.errors import InvalidConfigError
from lab.consumers import CLOSE_DELETED
from lab.fairness import too_many_sessions_created
from lab.host import Shape
from lab.host_types import CallBudgets
from lab.limits import LimitExceeded, Limits
from lab.models import LabSession
from lab.owners import owner_key
from lab.registry import DatabaseJournal, journal_writer, registry, session_dir, shape_of

MAX_SEED = 2**63 - 1          # LabSession.seed is a BIGINT
MAX_CONFIG_CHARS = 20_000     # the config's JSON text (200 settings, engine.scenarios.schema)
# The step arguments' bounds the control forms check before sending (engine.scenarios.schema).
STEP_BOUNDS = {"max_broker_id": MAX_BROKERS, "max_delay_ms": schema.MAX_DELAY_MS,
               "min_poll_every_ms": schema.MIN_POLL_EVERY_MS, "max_wait_ms": schema.MAX_WAIT_MS,
               "max_client_name": schema.MAX_CLIENT_NAME, "max_group_id": schema.MAX_GROUP_ID}


# lab.models.TRUNCATION_CHOICES, in the visitor's language.
TRUNCATION_LABELS = [
    ("leader-epoch", gettext_lazy("leader epoch (KIP-101, Kafka ≥ 0.11)")),
    ("high-watermark", gettext_lazy("high watermark (Kafka before KIP-101)")),
]


# Where the cluster keeps its metadata (engine/config.py METADATA_MODES): KRaft by default, as in Kafka 4.
METADATA_LABELS = [
    ("kraft", gettext_lazy("KRaft (Kafka 4: a Raft quorum of controllers)")),
    ("zookeeper", gettext_lazy("ZooKeeper (the notes' Kafka, before 4.0)")),
]
CONTROLLER_LABELS = [
    ("combined", gettext_lazy("combined: the first brokers are controllers too")),
    ("dedicated", gettext_lazy("dedicated: controller nodes of their own (101, 102, 103)")),
]
DEFAULT_METADATA = "kraft"


class ShapeForm(forms.Form):
    """A cluster's shape: what a session (or a reset) starts from."""
    brokers = forms.IntegerField(label=gettext_lazy("Brokers"), min_value=1, initial=3,
                                 help_text=gettext_lazy("1 to 9 brokers"))
    seed = forms.IntegerField(label=gettext_lazy("Seed"), min_value=0, max_value=MAX_SEED, initial=1,
                              help_text=gettext_lazy("every random choice (network delays, elections) follows from it"))
    truncation = forms.ChoiceField(label=gettext_lazy("Truncation"), choices=TRUNCATION_LABELS, initial="leader-epoch",
                                   help_text=gettext_lazy("how a returning follower truncates its log"))
    metadata = forms.ChoiceField(
        label=gettext_lazy("Metadata"), choices=METADATA_LABELS, initial=DEFAULT_METADATA, required=False,
        error_messages={"invalid_choice": gettext_lazy("metadata must be kraft or zookeeper, not %(value)s")},
        help_text=gettext_lazy("where the cluster keeps what it knows about itself: a KRaft quorum or ZooKeeper"))
    controllers = forms.ChoiceField(
        label=gettext_lazy("Controllers"), choices=CONTROLLER_LABELS, initial="combined", required=False,
        error_messages={"invalid_choice": gettext_lazy("controllers must be combined or dedicated, not %(value)s")},
        help_text=gettext_lazy("KRaft only: where the controller quorum runs"))
    config = forms.CharField(label=gettext_lazy("Config"), required=False, max_length=MAX_CONFIG_CHARS,
                             widget=forms.Textarea(attrs={"rows": 3}),
                             help_text=gettext_lazy('optional Kafka settings as JSON, e.g. {"min.insync.replicas": 2}'))

    def clean_brokers(self) -> int:
        brokers = self.cleaned_data["brokers"]
        limit = Limits.from_settings().max_brokers
        if brokers > limit:
            raise forms.ValidationError(_("A lab session has at most %(limit)s brokers.") % {"limit": limit})
        return brokers

    def clean_config(self) -> dict:
        text = (self.cleaned_data.get("config") or "").strip()
        if not text:
            return {}
        try:
            config = json.loads(text, parse_constant=_not_a_number)
        except ValueError as error:
            raise forms.ValidationError(_("Not valid JSON: %(error)s") % {"error": error}) from None
        if not isinstance(config, dict):
            raise forms.ValidationError(_('The config is a JSON object, like {"min.insync.replicas": 2}.'))
        return config

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        if not self._metadata_into_config(data):
            return data
        try:    # the fields' bounds and the settings' first: a 0 ms timer would hang the trial cluster
            self._shape = Limits.from_settings().check_shape(data["brokers"], data["seed"], data["truncation"],
                                                             data.get("config") or {})
        except LimitExceeded as refused:
            self.add_error(refused.field if refused.field in self.fields else "config", str(refused))
            return data
        error = _cluster_error(self._shape)
        if error:
            self.add_error("config", error)
        return data

    def shape(self) -> Shape:
        return self._shape

    def _metadata_into_config(self, data: dict[str, Any]) -> bool:
        """The metadata mode (and KRaft's controller mode) go into the cluster's config, where the
        engine reads them (`metadata`, `controller.mode`). Left out, the config's own keys decide, then
        the default (KRaft, combined); given, they must agree with the config's. False on an error."""
        config = dict(data.get("config") or {})
        mode = data.get("metadata") or config.get("metadata") or DEFAULT_METADATA
        if config.get("metadata", mode) != mode:
            self.add_error("metadata", _("metadata is %(field)s but the config says metadata %(config)s")
                           % {"field": mode, "config": config["metadata"]})
            return False
        controllers = data.get("controllers") or ""
        if mode == "kraft":
            controllers = controllers or config.get("controller.mode") or "combined"
            if config.get("controller.mode", controllers) != controllers:
                self.add_error("controllers",
                               _("controllers is %(field)s but the config says controller.mode %(config)s")
                               % {"field": controllers, "config": config["controller.mode"]})
                return False
            config["controller.mode"] = controllers
        elif controllers == "dedicated":
            self.add_error("controllers", _("dedicated controllers are KRaft's: choose metadata kraft for them"))
            return False
        config["metadata"] = mode
        data["config"] = config
        return True


class NewSessionForm(ShapeForm):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=100, initial=gettext_lazy("My Kafka lab"))
    field_order = ["name", "brokers", "seed", "truncation", "metadata", "controllers", "config"]


# What a landing-page card asks the new session to open with (static/js/start-options.js acts on
# it once): a built-in scenario, the segment view's topic, the panels to show.
START_OPENS = {"segments": gettext_lazy("a topic made for the segment view (1 KiB segments), forty records in it")}
START_TABS = frozenset({"c-topic", "c-produce", "c-faults", "c-consumers", "c-scenario",
                        "x-segments", "x-group", "x-messages", "x-charts", "x-events", "x-metadata"})


def _start_options(data: QueryDict) -> dict[str, str]:
    """The card's start options from a query string or the form's hidden fields; anything unknown
    is dropped (a link cannot make the page do something else)."""
    out = {}
    if data.get("scenario") in builtin_names():
        out["scenario"] = data["scenario"]
    if data.get("open") in START_OPENS:
        out["open"] = data["open"]
    tabs = [t for t in (data.get("tab") or "").split(",") if t in START_TABS]
    if tabs:
        out["tab"] = ",".join(dict.fromkeys(tabs))
    return out


def _start_initial(start: dict[str, str]) -> dict[str, Any]:
    """The form's first values for a card: a scenario brings its own cluster (its shape is what
    loading it sets anyway) and a name."""
    if "scenario" not in start:
        return {"name": _("The partition log")} if start.get("open") == "segments" else {}
    try:
        cluster = load_scenario(start["scenario"]).get("cluster") or {}
    except ScenarioError:
        return {}
    config = cluster.get("config") or {}
    return {"name": start["scenario"], "brokers": cluster.get("brokers", 3), "seed": cluster.get("seed", 0),
            "truncation": cluster.get("truncation") or "leader-epoch",
            # a scenario keeps its own metadata mode: ZooKeeper unless it says otherwise
            "metadata": cluster.get("metadata") or config.get("metadata") or "zookeeper",
            "controllers": config.get("controller.mode") or "combined",
            "config": json.dumps(cluster["config"]) if cluster.get("config") else ""}


@require_http_methods(["GET", "POST"])
def new_session(request: HttpRequest) -> HttpResponse:
    """The new-session form. A landing-page card's start options (`?scenario=…&open=…&tab=…`) ride
    along in hidden fields and on to the session page's address."""
    start = _start_options(request.POST if request.method == "POST" else request.GET)
    if request.method == "POST" and (refusal := too_many_sessions_created(_visitor_key(request))):
        return refusal
    form = NewSessionForm(request.POST or None, initial=_start_initial(start))
    if request.method == "POST" and form.is_valid():
        shape = form.shape()
        session = LabSession.objects.create(owner=_visitor_key(request), name=form.cleaned_data["name"],
                                            brokers=shape.brokers, seed=shape.seed, truncation=shape.truncation,
                                            config=shape.config)
        target = reverse("session_open", kwargs={"session_id": session.id})
        return redirect(f"{target}?{urlencode(start)}" if start else target)
    status = 400 if request.method == "POST" else 200
    return render(request, "lab/new_session.html", _context(form=form, start=start,
                                                            start_open=START_OPENS.get(start.get("open", ""))),
                  status=status)


def session_list(request: HttpRequest) -> HttpResponse:
    key = owner_key(request)
    sessions = LabSession.objects.filter(owner=key).annotate(
        command_count=Count("commands", filter=Q(commands__generation=F("generation")))) if key else []
    return render(request, "lab/sessions.html", _context(sessions=sessions))


def session_open(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    session = _owned(request, session_id)
    if session is None:
        return _not_found(request, session_id)
    scheme = "wss" if request.is_secure() else "ws"
    # ?session=: what a balancer may hash to send every socket of a session to one worker
    # (deploy/nginx.conf, docs/placement.md "Balancing by session"); the route ignores it.
    ws_url = f"{scheme}://{request.get_host()}/ws/lab/{session.id}/?session={session.id}"
    return render(request, "lab/session.html", _context(session=session, ws_url=ws_url,
                                                        metadata_mode=metadata_mode(session.config or {}),
                                                        limits=Limits.from_settings().to_dict(),
                                                        step_bounds=STEP_BOUNDS))


@require_POST
def session_reset(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """A fresh cluster: same shape unless the form says otherwise; the old log is kept as history."""
    session = _owned(request, session_id)
    if session is None:
        return _not_found(request, session_id)
    current = shape_of(session)
    data = {"brokers": current.brokers, "seed": current.seed, "truncation": current.truncation,
            "config": json.dumps(current.config), **request.POST.dict()}
    form = ShapeForm(data)
    if not form.is_valid():
        return render(request, "lab/sessions.html", _context(
            sessions=[session], reset_errors=form.errors), status=400)
    if registry.get(session.id) is None or not async_to_sync(registry.reset)(session.id, form.shape()):
        DatabaseJournal(session.id, session.generation).restarted(form.shape())
    return redirect("session_open", session_id=session.id)


@require_POST
def session_delete(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    session = _owned(request, session_id)
    if session is None:
        return _not_found(request, session_id)
    if registry.get(session.id) is not None:
        async_to_sync(registry.drop)(session.id, close_code=CLOSE_DELETED)
    journal_writer.flush()  # nothing of this session may be written after it is gone
    session.delete()
    shutil.rmtree(session_dir(session_id), ignore_errors=True)
    return redirect("session_list")


def metadata_mode(config: dict) -> str:
    """The session's metadata mode as its page's header says it: "zookeeper", "kraft (combined)"…
    (static/js/session.js says it the same way after a reset or a scenario)."""
    mode = config.get("metadata") or "zookeeper"
    return f"{mode} ({config.get('controller.mode') or 'combined'})" if mode == "kraft" else mode


def _owned(request: HttpRequest, session_id: uuid.UUID) -> LabSession | None:
    """The visitor's own lab session, or None (someone else's looks like none at all)."""
    return LabSession.objects.filter(pk=session_id, owner=owner_key(request) or "-").first()


def _not_found(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """The lab's 404 for a session that is not the visitor's: it may be another browser's (the
    session cookie owns it) or deleted; either way, say so and offer the way on."""
    return render(request, "lab/session_not_found.html", _context(session_id=session_id), status=404)


def _visitor_key(request: HttpRequest) -> str:
    """The visitor's owner key (lab.owners): their account, or their Django session key, made
    (with its cookie) on first use."""
    return owner_key(request, create=True)


def _context(**extra: Any) -> dict[str, Any]:
    return {"version": lab.__version__, "limits": Limits.from_settings().to_dict(),
            "new_url": reverse("session_new"), **extra}


def _not_a_number(name: str) -> None:
    """JSON has no NaN or Infinity; Python's reader takes them unless told otherwise."""
    raise ValueError(f"{name} is not a number JSON allows")


def _cluster_error(shape: Shape) -> str:
    """Why a cluster of this shape cannot be built ("" if it can): try it, in a scratch dir."""
    scratch = tempfile.mkdtemp(prefix="lab-shape-")
    # The trial start-up runs under a call's budget, as a host's would (lab/host.py): a shape
    # whose cluster cannot start in it is refused here rather than holding the request's thread.
    budgets = CallBudgets()
    trial = CallBudget(max_actions=Limits.from_settings().max_actions_per_call, wall_ms=budgets.wall_ms,
                       what="starting a cluster of this shape")
    try:
        with call_budget.spending(trial):
            Cluster(brokers=shape.brokers, data_dir=scratch, seed=shape.seed, config=dict(shape.config),
                    truncation=shape.truncation).close()
    except (ClusterError, InvalidConfigError, ValueError, TypeError) as error:
        return str(error)
    except BudgetExceeded as error:
        return f"A cluster of this shape does not start within a call's budget: {error.message}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return ""
