"""A visitor switches the lab between English and Simplified Chinese (issue 12, "Two languages").

The switch is Django's set_language (POST, CSRF token, back to the page); the choice stays in a
cookie; templates, Python messages and the session page's scripts (Django's JavaScript catalogue)
follow it. The catalogues under locale/ are complete — every string the sources mark has its
translation — and lab/tools/compile_messages.py, which compiles them at install, refuses one
that is not.
"""
from __future__ import annotations

import ast
import gettext
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from pytest_django.fixtures import Settings

from lab.models import LabSession
from lab.tools import compile_messages
from lab.tools.compile_messages import CatalogueError, compile_catalogue, mo_bytes, parse_po, read_po

pytestmark = pytest.mark.django_db

REPO = Path(settings.BASE_DIR)
CATALOGUES = REPO / "locale" / "zh_Hans" / "LC_MESSAGES"
CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.fixture(autouse=True)
def lab_settings(settings: Settings, tmp_path: Path) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"


def _switch(client: Client, language: str, next_url: str = "/") -> object:
    page = client.get(next_url).content.decode()
    form = re.search(r'<form class="language-switch" action="([^"]+)" method="post" data-language-switch>(.*?)</form>', page, re.S)
    assert form, "the page header has the language switch"
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.group(2)).group(1)
    return client.post(form.group(1), {"csrfmiddlewaretoken": token, "language": language, "next": next_url},
                       HTTP_ORIGIN="http://testserver")


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_switch_changes_the_language_and_it_stays() -> None:
    client = Client(enforce_csrf_checks=True)   # the switch's own CSRF token and the page's origin pass the check

    response = _switch(client, "zh-hans", "/lab/sessions")

    assert response.status_code == 302 and response["Location"] == "/lab/sessions"
    cookie = response.cookies[settings.LANGUAGE_COOKIE_NAME]
    assert cookie.value == "zh-hans" and int(cookie["max-age"]) >= 365 * 24 * 3600
    for url in ("/", "/lab/sessions", "/lab/new", "/exercises/"):
        html = client.get(url).content.decode()
        assert '<html lang="zh-hans">' in html, url
        assert "我的实验会话" in html and "My lab sessions" not in html, url
    assert _switch(client, "en").status_code == 302
    assert '<html lang="en">' in client.get("/").content.decode()


def test_a_switch_without_the_csrf_token_is_refused() -> None:
    client = Client(enforce_csrf_checks=True)

    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"}, HTTP_ORIGIN="http://testserver")

    assert response.status_code == 403
    assert '<html lang="en">' in client.get("/").content.decode()


def test_the_landing_page_is_english_by_default_and_chinese_when_chosen(client: Client) -> None:
    english = client.get("/").content.decode()
    assert '<html lang="en">' in english
    assert "Start the lessons" in english and "开始学习课程" not in english

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    chinese = client.get("/").content.decode()

    assert '<html lang="zh-hans">' in chinese
    for words in ("开始学习课程", "你能看到什么", "试一试：高水位截断的故事", "打开全部 6 个练习", "PySpark 练习"):
        assert words in chinese, words
    assert "Start the lessons" not in chinese and "What you can watch" not in chinese


def test_the_browser_language_is_followed_until_the_visitor_chooses(client: Client) -> None:
    assert '<html lang="zh-hans">' in client.get("/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    assert '<html lang="en">' in client.get("/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()


def test_a_session_page_shows_its_controls_in_the_chosen_language(client: Client) -> None:
    response = client.post("/lab/new", {"name": "lab", "brokers": 3, "seed": 1, "truncation": "leader-epoch", "config": ""})
    session = LabSession.objects.get(pk=response["Location"].split("/")[2])
    english = client.get(f"/lab/{session.id}/").content.decode()
    assert "Create a topic" in english and "Step ›" in english and not CHINESE.search(_text(english).replace("简体中文", ""))

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    html = client.get(f"/lab/{session.id}/").content.decode()

    assert '<html lang="zh-hans">' in html
    for words in ("创建 topic", "单步 ›", "▶ 播放", "杀死 leader", "加入消费者组", "日志段", "事件日志", "副本因子", "3 个 broker"):
        assert words in html, words
    for english_words in ("Create a topic", "Step ›", "Kill the leader", "Join a consumer group", "Event log"):
        assert english_words not in html, english_words
    # Kafka's own names stay as they are
    for kafka in ("acks", "min.insync.replicas", "segment.bytes", "ISR", "OSR", "HW", "LeaderAndIsr, UpdateMetadata"):
        assert kafka in html, kafka
    # the page's scripts get their words before they run
    assert html.index('src="/jsi18n/?l=zh-hans"') < html.index("js/session.js")


def test_a_form_refusal_is_said_in_the_chosen_language(client: Client) -> None:
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"

    response = client.post("/lab/new", {"name": "x", "brokers": 3, "seed": 1, "truncation": "leader-epoch", "config": "[1]"})

    assert response.status_code == 400
    assert "配置应是一个 JSON 对象" in response.content.decode()


def _catalogue_of(response: object) -> dict[str, object]:
    found = re.search(r"const newcatalog = (\{.*?\});\n", response.content.decode(), re.S)
    return json.loads(found.group(1)) if found else {}


def test_the_javascript_catalogue_is_served_in_the_chosen_language(client: Client) -> None:
    english = client.get("/jsi18n/")
    assert english.status_code == 200 and _catalogue_of(english) == {}

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    chinese = client.get("/jsi18n/")

    catalogue = _catalogue_of(chinese)
    assert chinese.status_code == 200 and chinese["Content-Type"].startswith("text/javascript")
    assert catalogue["connected"] == "已连接"
    assert catalogue["broker %(broker)s crashed"] == "broker %(broker)s 崩溃"
    assert catalogue["%(count)s record"] == ["%(count)s 条消息"]   # one plural form in Chinese
    assert len(catalogue) >= len([e for e in read_po(CATALOGUES / "djangojs.po") if e.msgid]) - 1
    assert "django.gettext" in chinese.content.decode() and "pluralidx" in chinese.content.decode()


# -- the catalogues -------------------------------------------------------------------------
GETTEXT_CALLS = {"gettext", "gettext_lazy", "gettext_noop", "_", "pgettext", "pgettext_lazy", "ngettext", "ngettext_lazy",
                 "npgettext", "npgettext_lazy"}
JS_STRING = r'"(?:[^"\\]|\\.)*"'
JS_CALL = re.compile(rf"\b(gettext|ngettext)\(\s*((?:{JS_STRING}\s*\+\s*)*{JS_STRING})(?:\s*,\s*((?:{JS_STRING}\s*\+\s*)*{JS_STRING}))?")
PY_STRING = r"""u(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""    # as templatize() writes them
TEMPLATE_CALL = re.compile(rf"\b(n?p?gettext)\(((?:{PY_STRING}(?:, )?)+)")


def _key(context: str | None, msgid: str, plural: str | None) -> tuple:
    return (context, msgid, plural)


def _python_msgids() -> set[tuple]:
    found = set()
    for path in [*(REPO / "lab").rglob("*.py"), *(REPO / "spark_exercises").rglob("*.py"), *(REPO / "lessons").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(node, "func", None)
            name = getattr(name, "id", None) or getattr(name, "attr", None)
            if not isinstance(node, ast.Call) or name not in GETTEXT_CALLS:
                continue
            strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if name.startswith("np"):
                found.add(_key(strings[0], strings[1], strings[2]))
            elif name.startswith("p"):
                found.add(_key(strings[0], strings[1], None))
            elif name.startswith("n"):
                found.add(_key(None, strings[0], strings[1]))
            elif strings:
                found.add(_key(None, strings[0], None))
    return found


def _template_msgids() -> set[tuple]:
    from django.utils.translation.template import templatize
    found = set()
    for path in (REPO / "templates").rglob("*.html"):
        for name, args in TEMPLATE_CALL.findall(templatize(path.read_text(encoding="utf-8"))):
            strings = [ast.literal_eval(s) for s in re.findall(PY_STRING, args)]
            context = strings.pop(0) if "p" in name else None
            found.add(_key(context, strings[0], strings[1] if name.startswith("n") else None))
    return found


def _js_msgids() -> set[tuple]:
    found = set()
    def literal(expression: str) -> str:
        return "".join(json.loads(s) for s in re.findall(JS_STRING, expression))
    for path in (REPO / "static" / "js").glob("*.js"):
        code = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("//"))
        for name, first, second in JS_CALL.findall(code):
            found.add(_key(None, literal(first), literal(second) if name == "ngettext" else None))
    return found


def _po_keys(name: str) -> set[tuple]:
    return {_key(e.msgctxt, e.msgid, e.msgid_plural) for e in read_po(CATALOGUES / name) if e.msgid}


@pytest.mark.parametrize(("domain", "sources"), [("django.po", "templates and Python"), ("djangojs.po", "static/js")])
def test_every_string_the_sources_mark_has_its_translation(domain: str, sources: str) -> None:
    marked = _template_msgids() | _python_msgids() if domain == "django.po" else _js_msgids()
    assert len(marked) > 300

    missing = sorted(marked - _po_keys(domain), key=str)

    assert not missing, (f"{len(missing)} string(s) of {sources} are not in locale/zh_Hans/LC_MESSAGES/{domain}: run "
                         f"`python manage.py makemessages -l zh_Hans` (-d djangojs for the scripts), translate them, "
                         f"then `make messages`. First: {missing[:5]}")


@pytest.mark.parametrize("domain", ["django.po", "djangojs.po"])
def test_every_msgid_has_a_translation(domain: str) -> None:
    entries = read_po(CATALOGUES / domain)
    header = entries[0]

    assert header.msgid == "" and "Plural-Forms: nplurals=1; plural=0;" in header.msgstr[0]
    assert not compile_messages.check(CATALOGUES / domain, entries)
    for e in entries[1:]:
        assert "fuzzy" not in e.flags and e.msgstr and all(e.msgstr.values()), e.msgid
        assert sorted(e.msgstr) == [0], e.msgid       # Chinese: one plural form
    # Kafka's names stay as they are ("Topic", "LEADER"), but nearly every string is Chinese
    assert sum(bool(CHINESE.search(e.translation)) for e in entries[1:]) >= 0.95 * (len(entries) - 1)


@pytest.mark.parametrize("domain", ["django.po", "djangojs.po"])
def test_the_compiled_catalogues_are_those_of_the_po_files(domain: str) -> None:
    po = CATALOGUES / domain
    mo = po.with_suffix(".mo")

    assert mo.exists() and mo.read_bytes() == mo_bytes(read_po(po)), f"{mo.name} is stale: run `make messages`"


# -- the compile tool ---------------------------------------------------------------------------
HEADER = '''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: nplurals=1; plural=0;\\n"
'''


def _po(tmp_path: Path, body: str) -> Path:
    po = tmp_path / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
    po.parent.mkdir(parents=True)
    po.write_text(HEADER + body, encoding="utf-8")
    return po


def test_the_compile_tool_writes_what_gettext_reads(tmp_path: Path) -> None:
    po = _po(tmp_path, '''
#: templates/x.html:1
msgid "Step"
msgstr "单步"

msgctxt "submission status"
msgid "queued"
msgstr "排队中"

msgid "%(count)s record"
msgid_plural "%(count)s records"
msgstr[0] "%(count)s 条"

msgid ""
"a long "
"line with \\"quotes\\""
msgstr "很长的一行，带\\"引号\\""
''')

    mo = compile_catalogue(po)

    translations = gettext.GNUTranslations(mo.open("rb"))
    assert translations.gettext("Step") == "单步"
    assert translations.pgettext("submission status", "queued") == "排队中"
    assert translations.ngettext("%(count)s record", "%(count)s records", 5) == "%(count)s 条"
    assert translations.gettext('a long line with "quotes"') == '很长的一行，带"引号"'
    if shutil.which("msgfmt"):   # GNU gettext's own compiler, where installed, reads the same catalogue
        expected = tmp_path / "msgfmt.mo"
        subprocess.run(["msgfmt", "-c", "-o", str(expected), str(po)], check=True)
        assert gettext.GNUTranslations(expected.open("rb"))._catalog == translations._catalog


@pytest.mark.parametrize(("body", "problem"), [
    ('msgid "Step"\nmsgstr ""\n', "untranslated"),
    ('#, fuzzy\nmsgid "Step"\nmsgstr "单步"\n', "fuzzy"),
    ('msgid "%(n)s record"\nmsgid_plural "%(n)s records"\nmsgstr[0] ""\n', "untranslated"),
    ('#, python-format\nmsgid "broker %(id)s"\nmsgstr "broker"\n', "placeholders"),
    ('msgid "<code>poll()</code> fails"\nmsgstr "poll() 失败"\n', "tags"),
])
def test_the_compile_tool_refuses_an_untranslated_or_broken_entry(tmp_path: Path, body: str, problem: str,
                                                                     capsys: pytest.CaptureFixture) -> None:
    po = _po(tmp_path, "\n" + body)

    with pytest.raises(CatalogueError) as refused:
        compile_catalogue(po)
    status = compile_messages.main([str(po)])

    assert problem in str(refused.value) and f"{po}:" in str(refused.value)
    assert status == 1 and problem in capsys.readouterr().err
    assert not po.with_suffix(".mo").exists()


def test_the_compile_tool_reads_what_makemessages_writes() -> None:
    entries = parse_po((CATALOGUES / "djangojs.po").read_text(encoding="utf-8"))
    plural = next(e for e in entries if e.msgid == "%(count)s record")

    assert plural.msgid_plural == "%(count)s records" and plural.msgstr == {0: "%(count)s 条消息"}
    assert len(entries) == len(re.findall(r"^msgid ", (CATALOGUES / "djangojs.po").read_text(encoding="utf-8"), re.M))
