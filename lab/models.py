"""Lab sessions and their command logs: what survives a server restart.

A lab session's cluster is never stored: it is rebuilt by replaying the command log of the
session's current generation into a fresh run dir (the engine is deterministic: same shape, same
commands at the same steps ⇒ same state and bytes). A reset starts a new generation; the older
generations' commands stay in the table and their shapes in `LabSession.history`.
"""
from __future__ import annotations

import uuid

from django.db import models

TRUNCATION_CHOICES = [
    ("leader-epoch", "leader epoch (KIP-101, Kafka ≥ 0.11)"),
    ("high-watermark", "high watermark (Kafka before KIP-101)"),
]


class LabSession(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.CharField(max_length=40, db_index=True, help_text="the visitor's Django session key")
    name = models.CharField(max_length=100)
    brokers = models.PositiveSmallIntegerField(default=3)
    seed = models.BigIntegerField(default=0)
    truncation = models.CharField(max_length=20, choices=TRUNCATION_CHOICES, default="leader-epoch")
    config = models.JSONField(default=dict, blank=True)
    generation = models.PositiveIntegerField(default=1)
    history = models.JSONField(default=list, blank=True,
                               help_text="earlier generations: [{generation, brokers, seed, truncation, config}]")
    position_step = models.BigIntegerField(default=0, help_text="where the clock stood when last saved")
    position_time_ms = models.BigIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated"]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"

    def info(self) -> dict:
        """The protocol's `hello.session`."""
        return {"id": str(self.id), "name": self.name, "brokers": self.brokers, "seed": self.seed,
                "truncation": self.truncation, "config": self.config, "generation": self.generation,
                "created": self.created.isoformat()}


class LabCommand(models.Model):
    """One command of a session's log: a scenario step applied at scheduler step `at_step`."""
    session = models.ForeignKey(LabSession, on_delete=models.CASCADE, related_name="commands")
    generation = models.PositiveIntegerField(default=1)
    index = models.PositiveIntegerField()
    at_step = models.BigIntegerField()
    at_time_ms = models.BigIntegerField()
    command = models.CharField(max_length=40)
    args = models.JSONField(default=dict)
    tag = models.IntegerField(help_text="the step number the step function was given")
    error = models.TextField(blank=True, default="", help_text="the engine's error, when the command failed")
    kafka_error = models.CharField(max_length=60, blank=True, default="")
    first_seq = models.BigIntegerField(default=-1, help_text="the number of the first event the command caused")

    class Meta:
        ordering = ["session", "generation", "index"]
        constraints = [models.UniqueConstraint(fields=["session", "generation", "index"],
                                               name="lab_command_unique_index")]

    def __str__(self) -> str:
        return f"{self.session_id} #{self.index} {self.command} @ step {self.at_step}"


# -- several worker processes (lab.workers, lab.placement; docs/placement.md) -----------------------
class LabWorker(models.Model):
    """A server process that may host lab sessions, with a shared channel layer: its name, its
    channel on the layer (where tunnels reach it) and its last heartbeat. A worker whose heartbeat
    is older than lab.workers.DEAD_AFTER_S is dead: its sessions may be taken over."""

    name = models.CharField(max_length=100, primary_key=True)
    channel = models.CharField(max_length=200)
    heartbeat_at = models.DateTimeField(db_index=True)
    started_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.name


class SessionPlacement(models.Model):
    """Which worker hosts a lab session's engine (one at a time). Claimed atomically by the first
    worker that needs the session, taken over when that worker is dead (lab.placement.claim).
    Not a foreign key: a placement may be claimed while its session is being checked, and a
    deleted session's row is harmless (nothing routes to it)."""

    session_id = models.UUIDField(primary_key=True)
    worker = models.CharField(max_length=100, db_index=True)
    claimed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.session_id} on {self.worker}"
