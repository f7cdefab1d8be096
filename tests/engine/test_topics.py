"""Topic names as Kafka's org.apache.kafka.common.internals.Topic allows them."""
from __future__ import annotations

import pytest

from engine.common.topics import (
    MAX_NAME_LENGTH,
    InvalidTopicError,
    check_collision,
    collision_warning,
    validate_topic_name,
)

WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
           "could collide. To avoid issues it is best to use either, but not both.")


@pytest.mark.parametrize("name", ["orders", "Orders-2024", "a", "a.b", "a_b", "__consumer_offsets", "...",
                                  "-", "0", "x" * 249])
def test_it_accepts_legal_names(name):
    validate_topic_name(name)


def test_it_allows_exactly_249_characters_and_no_more():
    assert MAX_NAME_LENGTH == 249
    validate_topic_name("t" * 249)
    with pytest.raises(InvalidTopicError, match="can't be longer than 249 characters"):
        validate_topic_name("t" * 250)


def test_it_rejects_an_empty_name():
    with pytest.raises(InvalidTopicError, match="can't be empty"):
        validate_topic_name("")


@pytest.mark.parametrize("name", [".", ".."])
def test_it_rejects_dot_and_dot_dot(name):
    with pytest.raises(InvalidTopicError) as error:
        validate_topic_name(name)
    assert str(error.value) == 'Topic name cannot be "." or ".."'


@pytest.mark.parametrize("name", ["my topic", "a/b", "a:b", "a,b", "tópico", "a\tb", "a*", "emoji🙂"])
def test_it_rejects_characters_other_than_ascii_alphanumerics_dot_underscore_and_dash(name):
    with pytest.raises(InvalidTopicError) as error:
        validate_topic_name(name)
    assert str(error.value) == (f'Topic name "{name}" is illegal, it contains a character other than '
                                "ASCII alphanumerics, '.', '_' and '-'")


def test_it_rejects_a_trailing_newline():
    with pytest.raises(InvalidTopicError, match="contains a character other than"):
        validate_topic_name("orders\n")


def test_it_reports_invalid_names_under_kafkas_error_name():
    assert InvalidTopicError.kafka_name == "INVALID_TOPIC_EXCEPTION"


@pytest.mark.parametrize("new, existing", [("a_b", "a.b"), ("a.b", "a_b"), ("x.y_z", "x_y.z")])
def test_it_refuses_a_name_that_collides_with_an_existing_one_once_dots_become_underscores(new, existing):
    with pytest.raises(InvalidTopicError) as error:
        check_collision(new, ["other", existing])
    assert f"Topic '{new}' collides with existing topic" in str(error.value)
    assert existing in str(error.value)


def test_it_does_not_count_a_name_as_colliding_with_itself_or_with_unrelated_names():
    check_collision("a.b", ["a.b", "ab", "a-b", "a.bc"])


@pytest.mark.parametrize("name", ["a.b", "a_b", "a.b_c"])
def test_it_warns_about_names_with_a_dot_or_an_underscore(name):
    assert collision_warning(name) == WARNING


def test_it_does_not_warn_about_names_without_them():
    assert collision_warning("orders-2024") is None
