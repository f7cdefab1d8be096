"""Password reset links, shown to the admin or instructor who made them (no e-mail): who may make
one for whom, and a link that works once."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.classroom.accounts_helpers import (  # noqa: F401
    PASSWORD,
    admin,
    cohort,
    fast_passwords,
    fresh_counts,
    instructor,
    learner,
    signed_in,
)

pytestmark = pytest.mark.django_db
NEW = "An0ther-long-secret"


def link_for(maker_client: Client, username: str) -> str:
    response = maker_client.post("/accounts/reset-link/", {"username": username})
    assert response.status_code == 200, response.content.decode()
    return re.search(r'value="http://testserver(/accounts/reset/[^"]+)" data-reset-link', response.content.decode())[1]


def set_password(link: str, password: str = NEW) -> Client:
    client = Client()
    form = client.get(link, follow=True)
    assert form.status_code == 200 and 'name="new_password1"' in form.content.decode()
    response = client.post(form.redirect_chain[-1][0], {"new_password1": password, "new_password2": password})
    assert response.status_code == 302 and response["Location"] == "/accounts/reset/done/"
    return client


def test_an_admin_makes_a_link_and_the_learner_sets_a_new_password() -> None:
    learner()
    link = link_for(signed_in(admin()), "lea")
    set_password(link)
    client = Client()
    assert client.post("/accounts/login/", {"username": "lea", "password": NEW}).status_code == 302
    assert Client().post("/accounts/login/", {"username": "lea", "password": PASSWORD}).status_code == 400


def test_a_used_link_is_a_clear_page_not_a_form() -> None:
    learner()
    link = link_for(signed_in(admin()), "lea")
    set_password(link)
    again = Client().get(link, follow=True)
    assert again.status_code == 410 and "This reset link does not work" in again.content.decode()
    assert 'name="new_password1"' not in again.content.decode()


@pytest.mark.parametrize("link", ["/accounts/reset/MQ/not-a-token/", "/accounts/reset/%%%/x/",
                                  "/accounts/reset/" + "A" * 300 + "/x/", "/accounts/reset/NaN/NaN/"])
def test_a_mangled_link_is_a_clear_page(link: str) -> None:
    learner()
    response = Client().get(link)
    assert response.status_code == 410 and "does not work" in response.content.decode()


def test_a_weak_new_password_is_refused() -> None:
    learner()
    link = link_for(signed_in(admin()), "lea")
    client = Client()
    form = client.get(link, follow=True)
    response = client.post(form.redirect_chain[-1][0], {"new_password1": "short", "new_password2": "short"})
    assert response.status_code == 400 and "too short" in response.content.decode()


def test_an_instructor_makes_links_for_the_learners_of_their_cohorts_only() -> None:
    teacher = instructor()
    lea, lou = learner("lea"), learner("lou")
    colleague = instructor("colleague")
    cohort(teacher=teacher, learners=(lea,))
    other = cohort("Other", teacher=instructor("other"), learners=(lou,))
    other.memberships.create(user=colleague)         # an instructor who is also a member somewhere
    cohort("Mine too", teacher=teacher, learners=(colleague,))
    client = signed_in(teacher)
    assert link_for(client, "lea")
    for name in ("lou", "colleague", "other", "nobody", "ines"):
        response = client.post("/accounts/reset-link/", {"username": name})
        assert response.status_code == 404, name
        assert "No account by that name that you may reset" in response.content.decode()


def test_only_a_superuser_makes_a_link_for_a_superuser() -> None:
    get_user_model().objects.create_superuser("root", password=PASSWORD)
    assert signed_in(admin()).post("/accounts/reset-link/", {"username": "root"}).status_code == 404
    root2 = get_user_model().objects.create_superuser("root2", password=PASSWORD)
    assert link_for(signed_in(root2), "root")


def test_learners_may_not_make_reset_links(client: Client) -> None:
    learner("lou")
    assert client.post("/accounts/reset-link/", {"username": "lou"})["Location"].startswith("/accounts/login/")
    response = signed_in(learner()).post("/accounts/reset-link/", {"username": "lou"})
    assert response.status_code == 403


def test_the_cohort_page_offers_a_reset_link_per_learner() -> None:
    teacher = instructor()
    c = cohort(teacher=teacher, learners=(learner(),))
    html = signed_in(teacher).get(f"/cohorts/{c.pk}/").content.decode()
    assert 'action="/accounts/reset-link/"' in html and 'name="username" value="lea"' in html
