"""Topic names as Kafka allows them (org.apache.kafka.common.internals.Topic).

Legal: ASCII letters, digits, '.', '_' and '-'; 1 to 249 characters; not "." or "..".
Because metric names turn '.' into '_', two topics differing only there would collide: Kafka
refuses the second, and warns about any name that holds either character.
"""
from __future__ import annotations

import re

from engine.common.errors import Errors, KafkaError

MAX_NAME_LENGTH = 249
LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")


# ValueError / LookupError stay among the bases: callers that catch those still do.
class InvalidTopicError(KafkaError, ValueError):
    error = Errors.INVALID_TOPIC_EXCEPTION


class TopicExistsError(KafkaError, ValueError):
    error = Errors.TOPIC_ALREADY_EXISTS


class UnknownTopicError(KafkaError, LookupError):
    error = Errors.UNKNOWN_TOPIC_OR_PARTITION


def validate_topic_name(name: str) -> None:
    if not isinstance(name, str) or not name:
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopicError("Topic name cannot be \".\" or \"..\"")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidTopicError(
            f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, "
            f"topic name: {name[:40]}…")
    if not LEGAL.fullmatch(name):  # not match: "$" would let a trailing newline through
        raise InvalidTopicError(
            f"Topic name \"{name}\" is illegal, it contains a character other than "
            "ASCII alphanumerics, '.', '_' and '-'")


def collision_warning(name: str) -> str | None:
    if "." in name or "_" in name:
        return ("WARNING: Due to limitations in metric names, topics with a period ('.') or "
                "underscore ('_') could collide. To avoid issues it is best to use either, but not both.")
    return None


def check_collision(name: str, existing: list[str]) -> None:
    unified = name.replace(".", "_")
    for other in existing:
        if other != name and other.replace(".", "_") == unified:
            raise InvalidTopicError(f"Topic '{name}' collides with existing topic: {other}")


# Topic.INTERNAL_TOPICS: the topics only the brokers write (the group and transaction coordinators).
# Kafka 4's __share_group_state is left out: the engine has no share groups.
GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME})


def is_internal(topic: str) -> bool:
    """Topic.isInternal: a client's Produce to such a topic is refused with INVALID_TOPIC_EXCEPTION."""
    return topic in INTERNAL_TOPICS
