"""Forms of accounts, cohorts, join codes, invitations and reset links: every field bounded here,
at the edge (lengths, ranges, whole numbers — 'NaN' is not one)."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth import password_validation as pv
from django.contrib.auth.forms import SetPasswordForm, UserCreationForm, UsernameField
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from classroom.access import cohorts_visible_to
from classroom.models import CODE_ALPHABET, CODE_LENGTH, Cohort
from classroom.roles import ADMIN, INSTRUCTOR, LEARNER, MANAGE_USERS, ROLE_LABELS, TEACH

# Submission.learner (100 characters) takes the username on adoption; a short name also fits the
# pages' tables.
MAX_USERNAME = 40
MAX_CODE_INPUT = 40        # a code typed with spaces and dashes, e.g. "ABCD - EFGH"
MAX_CODE_DAYS = 365
MAX_INVITATION_DAYS = 30

# lab.settings sets no AUTH_PASSWORD_VALIDATORS (the lab started without accounts): the accounts'
# own rules, applied wherever a password is chosen here.
PASSWORD_VALIDATORS = pv.get_password_validators([
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
])
PASSWORD_HELP = _("At least 8 characters, not a common password, not only digits, not like your username.")


class _PasswordRules:
    """Checks the chosen password with PASSWORD_VALIDATORS (Django's SetPasswordMixin hook)."""

    def validate_password_for_user(self, user: Any, password_field_name: str = "password2") -> None:
        password = self.cleaned_data.get(password_field_name)
        if password:
            try:
                pv.validate_password(password, user, password_validators=PASSWORD_VALIDATORS)
            except ValidationError as error:
                self.add_error(password_field_name, error)

    def _password_help(self) -> None:
        self.fields["password1"].help_text = PASSWORD_HELP


class SignUpForm(_PasswordRules, UserCreationForm):
    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username",)
        field_classes = {"username": UsernameField}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        username = self.fields["username"]
        username.max_length = MAX_USERNAME
        username.widget.attrs["maxlength"] = str(MAX_USERNAME)
        username.validators.append(MaxLengthValidator(MAX_USERNAME))
        username.help_text = _("Up to %(n)d letters, digits and @/./+/-/_ only.") % {"n": MAX_USERNAME}
        self._password_help()


class LabSetPasswordForm(_PasswordRules, SetPasswordForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["new_password1"].help_text = PASSWORD_HELP


class CohortForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100)
    code_days = forms.IntegerField(label=_("The join code works for (days)"), required=False,
                                   min_value=1, max_value=MAX_CODE_DAYS,
                                   help_text=_("Leave empty: the code works until you close it."))

    def expires_at(self) -> Any:
        days = self.cleaned_data.get("code_days")
        return timezone.now() + timedelta(days=days) if days else None


def normalize_code(text: str) -> str:
    """A typed code as stored: upper case, no spaces or dashes."""
    return "".join(ch for ch in text.upper() if ch not in " -\t")


def code_is_well_formed(code: str) -> bool:
    return len(code) == CODE_LENGTH and all(ch in CODE_ALPHABET for ch in code)


class JoinForm(forms.Form):
    code = forms.CharField(label=_("Join code"), max_length=MAX_CODE_INPUT,
                           help_text=_("The code your instructor gave you, e.g. ABCD-EFGH."))

    def clean_code(self) -> str:
        code = normalize_code(self.cleaned_data["code"])
        if not code:
            raise ValidationError(_("Type the code your instructor gave you."))
        return code


class InvitationForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"))
    cohort = forms.ModelChoiceField(label=_("Cohort"), queryset=Cohort.objects.none(), required=False)
    days = forms.IntegerField(label=_("The link works for (days)"), min_value=1, max_value=MAX_INVITATION_DAYS,
                              initial=7)

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        # Only those who manage accounts may invite instructors and admins.
        roles = [LEARNER, INSTRUCTOR, ADMIN] if user.has_perm(MANAGE_USERS) else [LEARNER]
        self.fields["role"].choices = [(r, ROLE_LABELS[r]) for r in roles]
        cohorts = self.fields["cohort"].queryset = cohorts_visible_to(user)
        if "cohort" not in self.initial and len(cohorts[:2]) == 1:
            self.initial["cohort"] = cohorts[0].pk    # an instructor with one cohort: that one

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if (not self.user.has_perm(MANAGE_USERS) and self.user.has_perm(TEACH)
                and "cohort" in data and data["cohort"] is None):
            self.add_error("cohort", _("Choose one of your cohorts: the new learner joins it."))
        return data


class ResetLinkForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
