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
