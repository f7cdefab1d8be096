"""A bad field in the message browser (a time, an offset, a maximum) is said next to that field;
the answer is the form alone, swapped in place of the old form, so the records shown before stay."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.lab.test_explore_views import LabRun, _ten_records, lab_run  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("field", "value", "message"), [
    ("timestamp", "yesterday", "timestamp must be epoch milliseconds or a date-time like 2023-11-14T22:13:20, "
                               "not &#x27;yesterday&#x27;"),
    ("offset", "-3", "offset must be at least 0, not -3"),
    ("offset", "ten", "offset must be a whole number, not &#x27;ten&#x27;"),
    ("limit", "900", "limit must be from 1 to 500, not 900"),
    ("partition", "7", "t has partitions 0 to 0, not 7"),
])
def test_a_bad_field_is_said_next_to_it_and_the_results_stay(client: Client, lab_run: LabRun, field: str,
                                                             value: str, message: str) -> None:
    _ten_records(lab_run)

    response = client.get(lab_run.url("messages/"), {"topic": "t", field: value}, HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert response.status_code == 400
    assert response["HX-Retarget"] == "#messages-form-wrap" and response["HX-Reswap"] == "innerHTML"
    assert "data-messages-form" in html and "data-messages-partition" not in html   # the form alone
    note = re.search(rf'<span class="field-error" id="messages-error-{field}" data-field-error="{field}">(.*?)</span>',
                     html)
    assert note is not None and note.group(1) == message
    assert re.search(rf'name="{field}"[^>]*aria-invalid="true" aria-describedby="messages-error-{field}"', html)
    assert "data-panel-error" in html   # the page also says it in a toast


def test_the_form_keeps_what_was_typed(client: Client, lab_run: LabRun) -> None:
    _ten_records(lab_run)

    html = client.get(lab_run.url("messages/"), {"topic": "t", "timestamp": "yesterday", "q": "m1"}).content.decode()

    assert 'value="yesterday"' in html and 'value="m1"' in html


def test_a_good_answer_holds_the_form_wrap_and_the_results(client: Client, lab_run: LabRun) -> None:
    _ten_records(lab_run)

    html = client.get(lab_run.url("messages/"), {"topic": "t", "limit": "3"}).content.decode()

    assert '<div id="messages-form-wrap" data-messages-form-wrap>' in html
    assert 'data-messages-partition="0" data-count="3"' in html
    assert "field-error" not in html and "aria-invalid" not in html


def test_an_unknown_topic_is_said_at_the_topic(client: Client, lab_run: LabRun) -> None:
    _ten_records(lab_run)

    response = client.get(lab_run.url("messages/"), {"topic": "nope"})

    assert response.status_code == 400
    assert 'data-field-error="topic">Topic &#x27;nope&#x27; does not exist</span>' in response.content.decode()
