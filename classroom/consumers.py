"""The watch socket of a broadcast: ws/watch/<token>/ (docs/lab-protocol.md, "Broadcast").

A WatchConsumer is a lab tab (lab.consumers.LabConsumer) attached to the broadcast session's
LiveSession, so it is sent exactly the frames the instructor's tab is sent. It refuses every
message that would change the session (command, clock, load_scenario, reset, undo) with an
`error` (NOT_CONTROLLER) unless its visitor is the instructor or the learner holding the controls,
and adds:
- for anyone watching: `view` (the session at an earlier step, replayed aside) and `fork` (a lab
  session of their own at that step) — classroom.broadcast_replay;
- for the instructor: `controller` (hand the controls to a signed-in watcher, or take them back),
  `pointer`, `next_item` (the playlist's next scenario; its speaker notes come back to this socket
  only), `watchers` and `stop`.
What the sockets of one broadcast share (controller, pointer) lives on the LiveSession; nothing
is kept in this module.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from django.urls import reverse
from django.utils.translation import gettext as _

from classroom import broadcast as service
from classroom import playlists, pointer
from classroom.broadcast_replay import fork, line_of_time, replay
from classroom.lesson_beat import beat_of
from classroom.models import Broadcast
from lab import fairness
from lab.consumers import LabConsumer, ProtocolError
from lab.fairness import Refused
from lab.host import HostError
from lab.owners import scope_owner
from lab.registry import message, registry
from lab.send_queue import TabQueue, head_of, transport_backlog

logger = logging.getLogger(__name__)

NOT_CONTROLLER = "NOT_CONTROLLER"


class WatchConsumer(LabConsumer):
    HANDLERS = {**LabConsumer.HANDLERS, "view": "on_view", "fork": "on_fork", "controller": "on_controller",
                "next_item": "on_next_item", "watchers": "on_watchers", "stop": "on_stop"}

    broadcast_id: int | None = None
    is_owner = False
    user_pk: int | None = None
    name = ""
    group: str | None = None
    lesson_beat: dict[str, Any] | None = None
    _beat_task: asyncio.Task | None = None

    async def connect(self) -> None:
        await self.accept()
        found = await _admission(self.scope["url_route"]["kwargs"]["token"], self.scope.get("user"))
        if isinstance(found, str):
            code = service.CLOSE_NO_BROADCAST if found == "BROADCAST_NOT_FOUND" else service.CLOSE_REFUSED
            text = (_("This watch link is not valid, or its broadcast has ended") if code == service.CLOSE_NO_BROADCAST
                    else _("This broadcast is for the members of its cohort: sign in with your account"))
            await self._send_now(json.dumps(message("error", message=text, kafka_error=found)))
            await self.close(code=code, reason=text)
            return
        row, state, session_owner = found
        user = self.scope.get("user")
        signed_in = user is not None and user.is_authenticated
        self.broadcast_id, self.is_owner = row.pk, signed_in and user.pk == row.instructor_id
        self.user_pk, self.name = (user.pk, service.display_name(user)) if signed_in else (None, "")
        # An anonymous watcher without a session cookie still has a rate of its own.
        self.visitor = scope_owner(self.scope) or f"watch:{self.channel_name}"
        self.outbox = TabQueue(self._send_now, self._resync, self._close_slow, transport_backlog(self.base_send))
        if self.channel_layer is not None:
            self.group = service.group_name(row.pk)
            await self.channel_layer.group_add(self.group, self.channel_name)
        try:
            self.live = await registry.attach(row.session_id, self, visitor=session_owner)
        except Refused as refused:
            await self._send_now(json.dumps(message("error", message=refused.message,
                                                    kafka_error="THROTTLING_QUOTA_EXCEEDED")))
            await self.close(code=refused.close_code)
            return
        if self.live.broadcast is None or self.live.broadcast.broadcast_id != row.pk:
            self.live.broadcast = state
        await self.send(text_data=self._role_text())
        if self.live.pointer is not None:
            await self._reply(message("pointer", target=self.live.pointer))
        await self._refresh_lesson_beat()
        await self._watchers_changed()

    async def deliver(self, text: str) -> None:
        """A frame of the session; a new line of time or a clock change may be a lesson's next beat."""
        await super().deliver(text)
        if head_of(text)[0] in ("hello", "clock") and (self._beat_task is None or self._beat_task.done()):
            self._beat_task = asyncio.ensure_future(self._refresh_lesson_beat())

    async def _refresh_lesson_beat(self) -> None:
        """Send `lesson_beat` when the session is a lesson's and its beat changed."""
        if self.live is None:
            return
        try:
            beat = await database_sync_to_async(beat_of)(self.live.session_id)
        except Exception:  # noqa: BLE001 - a missing lesson must not take the watcher down
            logger.exception("watch socket: reading the lesson beat failed")
            return
        if beat is not None and beat != self.lesson_beat:
            self.lesson_beat = beat
            await self._reply(message("lesson_beat", **beat))

    async def disconnect(self, code: int) -> None:
        if self._beat_task is not None:
            self._beat_task.cancel()
        live = self.live
        await super().disconnect(code)
        if self.group is not None and self.channel_layer is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
        if live is not None:
            await self._watchers_changed(live)

    # -- who may do what ----------------------------------------------------------------------------
    def may_control(self) -> bool:
        state = self.live.broadcast if self.live is not None else None
        if state is None or state.broadcast_id != self.broadcast_id:
            return False
        return self.is_owner or (self.user_pk is not None and state.controller == user_key_of(self.user_pk))

    def _require_control(self) -> None:
        if not self.may_control():
            raise HostError(_("You are watching: only the instructor, or the learner they hand the controls to, "
                              "can change this session"), NOT_CONTROLLER)

    def _require_owner(self, what: str) -> None:
        if not self.is_owner:
            raise HostError(_("Only the instructor who started this broadcast can %(what)s") % {"what": what},
                            NOT_CONTROLLER)

    async def on_command(self, request: dict[str, Any]) -> None:
        self._require_control()
        await super().on_command(request)

    async def on_clock(self, request: dict[str, Any]) -> None:
        self._require_control()
        await super().on_clock(request)

    async def on_load_scenario(self, request: dict[str, Any]) -> None:
        self._require_control()
        await super().on_load_scenario(request)

    async def on_reset(self, request: dict[str, Any]) -> None:
        self._require_control()
        await super().on_reset(request)

    async def on_undo(self, request: dict[str, Any]) -> None:
        self._require_control()
        await super().on_undo(request)

    async def on_pointer(self, request: dict[str, Any]) -> None:
        self._require_owner(_("point at something"))
        await pointer.place(self.live, request.get("target"))

    # -- a watcher's own view ---------------------------------------------------------------------
    async def on_view(self, request: dict[str, Any]) -> None:
        """The session at an earlier step, replayed aside: the live session is not touched."""
        line = await asyncio.to_thread(line_of_time, self.live.host, "")
        step = _step(request, line.step)
        async with fairness.call_slot(self.visitor):
            view = await asyncio.to_thread(replay, line, step)
        await self.send(text_data=json.dumps(message("view", id=request.get("id"), step=view.step,
                                                     time_ms=view.time_ms, live_step=line.step, model=view.model,
                                                     notices=view.notices)))

    async def on_fork(self, request: dict[str, Any]) -> None:
        """A lab session of the watcher's own: the broadcast session at its current step, or at `step`."""
        owner = scope_owner(self.scope)
        if not owner:
            raise ProtocolError(_("Open the watch page in your browser to fork: your browser's session owns the fork"))
        line = await asyncio.to_thread(line_of_time, self.live.host, self.live.info.get("name", ""))
        step = line.step if request.get("step") is None else _step(request, line.step)
        time_ms = line.time_ms
        if step != line.step:
            async with fairness.call_slot(self.visitor):
                time_ms = (await asyncio.to_thread(replay, line, step)).time_ms
        name = _("%(name)s — fork at step %(step)s") % {"name": line.name or _("Lab session"), "step": step}
        session = await _fork(line, owner, name, step, time_ms)
        if session is None:
            raise HostError(_("You created as many lab sessions in the last minute as a visitor may: wait a minute"),
                            "THROTTLING_QUOTA_EXCEEDED")
        await self._reply(message("forked", id=request.get("id"), session_id=str(session.id), step=step,
                                     url=reverse("session_open", args=[session.id])))

    # -- the instructor's ---------------------------------------------------------------------------
    async def on_controller(self, request: dict[str, Any]) -> None:
        """Hand the controls to a signed-in watcher (`user`: their id), or take them back (null)."""
        self._require_owner(_("hand the controls"))
        pk = request.get("user")
        if pk is not None and (isinstance(pk, bool) or not isinstance(pk, int)):
            raise ProtocolError(_("'user' must be a watcher's user id, or null to take the controls back"))
        chosen = None
        if pk is not None:
            chosen = next((t for t in self._watch_tabs() if t.user_pk == pk and not t.is_owner), None)
            if chosen is None:
                raise ProtocolError(_("That learner is not watching now (only a signed-in watcher can take the controls)"))
        state = self.live.broadcast
        if state is None or state.broadcast_id != self.broadcast_id:
            raise HostError(_("This broadcast has ended"), "BROADCAST_ENDED")
        await _set_controller(self.broadcast_id, pk)
        old = state.controller
        state.controller = user_key_of(pk) if pk is not None else None
        state.controller_name = chosen.name if chosen is not None else ""
        if old is not None and old != state.controller:
            await self._close_lab_tabs_of(old)
        for tab in self._watch_tabs():
            await tab.deliver(tab._role_text())
        await self._watchers_changed()
        await self.send(text_data=json.dumps(message("ack", id=request.get("id"), command=None, warnings=[])))

    async def on_next_item(self, request: dict[str, Any]) -> None:
        """Load the playlist's next item (or item `index`) into the session; its notes come back here only."""
        self._require_owner(_("play the playlist"))
        index = request.get("index")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise ProtocolError(_("'index' must be an item's number (from 0)"))
        found = await _playlist_item(self.broadcast_id, index)
        if isinstance(found, str):
            raise ProtocolError(found)
        at, count, item = found
        try:
            scenario = playlists.scenario_of(item)
        except playlists.ItemError as error:
            raise ProtocolError(str(error)) from None
        await LabConsumer.on_load_scenario(self, {"scenario": scenario})
        await _set_playlist_index(self.broadcast_id, at)
        await self._reply(message("playlist_item", id=request.get("id"), index=at, count=count,
                                     title=item.get("title", ""), notes=item.get("notes", "")))

    async def on_watchers(self, request: dict[str, Any]) -> None:
        self._require_owner(_("see who watches"))
        await self._reply(message("watchers", id=request.get("id"), **self._watchers()))

    async def on_stop(self, request: dict[str, Any]) -> None:
        self._require_owner(_("stop the broadcast"))
        await _end(self.broadcast_id)
        await service.tell_ended(self.broadcast_id)

    async def broadcast_ended(self, event: dict[str, Any]) -> None:
        """The broadcast was stopped (here or by the HTTP view): say so, close."""
        live = self.live
        if live is not None and live.broadcast is not None and live.broadcast.broadcast_id == self.broadcast_id:
            old, live.broadcast, live.pointer = live.broadcast.controller, None, None
            if old is not None:
                await self._close_lab_tabs_of(old)
        text = _("The instructor ended this broadcast")
        await self._send_now(json.dumps(message("error", message=text, kafka_error="BROADCAST_ENDED")))
        await self.close(code=service.CLOSE_ENDED, reason=text)

    # -- helpers -----------------------------------------------------------------------------------
    async def _reply(self, answer: dict[str, Any]) -> None:
        """Through the tab's queue, after the frames before it (send_json would jump the queue)."""
        await self.send(text_data=json.dumps(answer))

    def _watch_tabs(self) -> list[WatchConsumer]:
        live = self.live
        return [t for t in (live.sockets if live is not None else ()) if isinstance(t, WatchConsumer)
                and t.broadcast_id == self.broadcast_id]

    def _role_text(self) -> str:
        state = self.live.broadcast if self.live is not None else None
        role = "instructor" if self.is_owner else "controller" if self.may_control() else "watcher"
        return json.dumps(message("broadcast", broadcast=self.broadcast_id, role=role,
                                  instructor=state.owner_name if state else "",
                                  controller=state.controller_name if state and state.controller else None))

    def _watchers(self, tabs: list[WatchConsumer] | None = None) -> dict[str, Any]:
        tabs = self._watch_tabs() if tabs is None else tabs
        named: dict[int, str] = {}
        anonymous = 0
        for tab in tabs:
            if tab.is_owner:
                continue
            if tab.user_pk is None:
                anonymous += 1
            else:
                named[tab.user_pk] = tab.name
        state = self.live.broadcast if self.live is not None else None
        controller = state.controller if state else None
        return {"watchers": [{"user": pk, "name": name, "controls": controller == user_key_of(pk)}
                             for pk, name in sorted(named.items(), key=lambda kv: kv[1].lower())],
                "anonymous": anonymous, "count": len(named) + anonymous}

    async def _watchers_changed(self, live: Any = None) -> None:
        """Tell the instructor's watch tabs who watches now."""
        live = live or self.live
        if live is None:
            return
        tabs = [t for t in live.sockets if isinstance(t, WatchConsumer) and t.broadcast_id == self.broadcast_id]
        owners = [t for t in tabs if t.is_owner]
        if not owners:
            return
        text = json.dumps(message("watchers", **owners[0]._watchers(tabs)))
        for tab in owners:
            await tab.deliver(text)

    async def _close_lab_tabs_of(self, owner: str) -> None:
        """Controls taken back: the learner's lab-page tabs of this session close at once (their
        watch tabs stay, read-only again). The session's owner is never closed out."""
        live = self.live
        if live is None or owner == live.visitor:
            return
        for tab in list(live.sockets):
            if isinstance(tab, LabConsumer) and not isinstance(tab, WatchConsumer) and tab.visitor == owner:
                await registry.detach(live, tab)
                await tab.end(service.CLOSE_REFUSED)


def user_key_of(pk: int) -> str:
    return f"user:{pk}"


def _step(request: dict[str, Any], live_step: int) -> int:
    step = request.get("step")
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= live_step:
        raise ProtocolError(_("'step' must be a step from 0 to %(max)s (where the session stands), not %(step)r")
                            % {"max": live_step, "step": step})
    return step


@database_sync_to_async
def _admission(token: str, user: Any) -> tuple[Broadcast, service.BroadcastState, str] | str:
    """The live broadcast of this link, its shared state and its session's owner; or why not."""
    row = service.live_broadcast(token)
    if row is None:
        return "BROADCAST_NOT_FOUND"
    if not service.may_watch(user, row):
        return "NOT_A_MEMBER"
    return row, service.state_of(row), row.session.owner


@database_sync_to_async
def _set_controller(broadcast_id: int, pk: int | None) -> None:
    Broadcast.objects.filter(pk=broadcast_id).update(controller_id=pk)


@database_sync_to_async
def _end(broadcast_id: int) -> None:
    row = Broadcast.objects.filter(pk=broadcast_id).first()
    if row is not None:
        service.end(row)


@database_sync_to_async
def _playlist_item(broadcast_id: int, index: int | None) -> tuple[int, int, dict] | str:
    row = Broadcast.objects.select_related("playlist").filter(pk=broadcast_id).first()
    if row is None or row.playlist is None:
        return _("This broadcast has no playlist")
    items = row.playlist.items or []
    at = row.playlist_index + 1 if index is None else index
    if at >= len(items):
        return (_("That was the playlist's last item") if index is None
                else _("The playlist has items 0 to %(last)s") % {"last": len(items) - 1})
    return at, len(items), items[at]


@database_sync_to_async
def _set_playlist_index(broadcast_id: int, index: int) -> None:
    Broadcast.objects.filter(pk=broadcast_id).update(playlist_index=index)


@database_sync_to_async
def _fork(line: Any, owner: str, name: str, step: int, time_ms: int) -> Any:
    if fairness.too_many_sessions_created(owner) is not None:
        return None
    return fork(line, owner, name, step, time_ms)
