"""A prose section becomes HTML through a deliberately tiny Markdown: paragraphs, "- " lists,
`code`, **bold**, *emphasis* and https links; everything else is escaped, so a lesson file can
never put markup on the page. `{answer}` becomes the engine's answer; the lines of a paragraph join
with a space, except between two Chinese characters."""
from __future__ import annotations

from lessons import text


def test_html_in_prose_comes_out_escaped() -> None:
    html = text.render('Before <script>alert("x")</script> after & <b>bold</b>')
    assert "<script" not in html
    assert "<b>" not in html
    assert html == ("<p>Before &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; after &amp; "
                    "&lt;b&gt;bold&lt;/b&gt;</p>")


def test_code_is_rendered_and_its_content_escaped() -> None:
    assert text.render("the `replication-offset-checkpoint` file") == \
        "<p>the <code>replication-offset-checkpoint</code> file</p>"
    assert text.render("`a<b>`") == "<p><code>a&lt;b&gt;</code></p>"


def test_bold_and_emphasis_are_rendered() -> None:
    assert text.render("A's LEO is **4**, the *next* offset") == \
        "<p>A&#x27;s LEO is <strong>4</strong>, the <em>next</em> offset</p>"


def test_a_lone_star_between_spaces_stays_a_star() -> None:
    assert text.render("2 * 3 * 4") == "<p>2 * 3 * 4</p>"


def test_blank_lines_separate_paragraphs() -> None:
    assert text.render("One.\n\nTwo.\n \nThree.") == "<p>One.</p><p>Two.</p><p>Three.</p>"


def test_a_block_of_dash_lines_is_a_list() -> None:
    assert text.render("Steps:\n\n- kill `A`\n- elect **B**") == \
        "<p>Steps:</p><ul><li>kill <code>A</code></li><li>elect <strong>B</strong></li></ul>"


def test_a_block_that_mixes_dash_lines_and_prose_is_a_paragraph() -> None:
    assert text.render("- one\nnot an item") == "<p>- one not an item</p>"


def test_an_https_link_is_rendered_opening_a_new_tab() -> None:
    assert text.render("see [KIP-101](https://cwiki.apache.org/KIP-101)") == (
        '<p>see <a href="https://cwiki.apache.org/KIP-101" rel="noopener" target="_blank">KIP-101</a></p>')


def test_links_that_are_not_https_stay_text() -> None:
    for url in ("http://example.com", "javascript:alert(1)", "data:text/html,x", "//example.com"):
        html = text.render(f"[click]({url})")
        assert "<a" not in html, url
        assert html.startswith("<p>[click](")


def test_a_quote_in_a_link_cannot_leave_the_href_attribute() -> None:
    html = text.render('[x](https://e.com/"onmouseover="alert(1))')
    assert 'href="https://e.com/&quot;onmouseover=&quot;alert(1"' in html
    assert '"onmouseover' not in html


def test_answer_is_replaced_by_the_engines_answer() -> None:
    assert text.render("A's LEO is **{answer}**.", answer="4") == "<p>A&#x27;s LEO is <strong>4</strong>.</p>"


def test_the_answer_is_escaped_like_the_prose_around_it() -> None:
    assert text.render("{answer}", answer="<img src=x>") == "<p>&lt;img src=x&gt;</p>"


def test_without_an_answer_the_placeholder_stays() -> None:
    assert text.render("It is {answer}.") == "<p>It is {answer}.</p>"


def test_two_chinese_lines_join_without_a_space() -> None:
    assert text.render("现在这个分区的\n高水位是多少？") == "<p>现在这个分区的高水位是多少？</p>"


def test_a_chinese_line_after_chinese_punctuation_joins_without_a_space() -> None:
    assert text.render("位移从 0 开始。\n下一个空位是 4。") == "<p>位移从 0 开始。下一个空位是 4。</p>"


def test_two_english_lines_join_with_one_space() -> None:
    assert text.render("The HW is\n   the smallest LEO") == "<p>The HW is the smallest LEO</p>"


def test_chinese_next_to_latin_across_a_line_break_gets_a_space() -> None:
    assert text.render("消息写入\nKafka") == "<p>消息写入 Kafka</p>"
    assert text.render("broker 1\n宕机") == "<p>broker 1 宕机</p>"


def test_plain_gives_one_line_without_markup_characters() -> None:
    assert text.plain("The **HW**\n  is `4`.") == "The HW is 4."
