import pytest
from hypothesis import given
from hypothesis import strategies as st

from apachetune.config.words import join_words, quote_word, split_words


@pytest.mark.parametrize(
    "text, words",
    [
        ("a b\tc", ["a", "b", "c"]),
        ('"/var/www/my site" x', ["/var/www/my site", "x"]),
        ("'single quoted' y", ["single quoted", "y"]),
        (r'"a \"quoted\" word"', ['a "quoted" word']),
        (r"'it\'s'", ["it's"]),
        (r'"back\\slash"', ["back\\slash"]),
        (r'"keep \n as is"', ["keep \\n as is"]),
        (r"bare\\word", ["bare\\word"]),
        (r"bare\"q", ['bare\\"q']),  # only \\ is unescaped outside quotes
        ('"unterminated runs to end', ["unterminated runs to end"]),
        ('"a"b', ["a", "b"]),  # no space needed after a closing quote
        ('x"y z"', ['x"y', 'z"']),  # a quote opens only at the start of a word
        ('""', [""]),
        ("# is an argument", ["#", "is", "an", "argument"]),
        ("  ", []),
        ("", []),
    ],
)
def test_split_words_follows_ap_getword_conf(text, words):
    assert split_words(text) == words


@given(st.lists(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00")), max_size=6))
def test_join_then_split_gives_the_words_back(words):
    assert split_words(join_words(words)) == words


def test_quote_only_when_needed():
    assert quote_word("150") == "150"
    assert quote_word("/var/www/a b") == '"/var/www/a b"'
    assert quote_word("") == '""'
