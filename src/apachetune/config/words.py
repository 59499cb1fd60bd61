"""Splitting a logical line into words exactly like httpd's ap_getword_conf.

Facts (server/util.c): leading white space is skipped; a word that starts with
a double or single quote runs to the matching quote (or to the end of the line
if there is none), and inside it only backslash-backslash and backslash-quote
are unescaped; any other word runs to the next white space, with the same
unescaping of backslash-backslash only. No white space is needed after a
closing quote. "White space" is C's isspace: space, \\t, \\n, \\v, \\f, \\r.
"""

from __future__ import annotations

import re

WHITESPACE = " \t\n\v\f\r"

_LEADING_WS = re.compile(r"[ \t\n\v\f\r]*")
_BARE = re.compile(r"[^ \t\n\v\f\r]*")
_BARE_WORDS = re.compile(r"[^ \t\n\v\f\r]+").findall


def _unescape(text: str, quote: str) -> str:
    # substring_conf: a backslash before a backslash (or before the quote char
    # of a quoted word) is dropped; every other backslash stays.
    if "\\" not in text:
        return text
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and (text[i + 1] == "\\" or (quote and text[i + 1] == quote)):
            out.append(text[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _skip_ws(text: str, pos: int) -> int:
    """The position after the white space at `pos` (none: `pos`)."""
    m = _LEADING_WS.match(text, pos)
    return m.end() if m else pos


def next_word(text: str, pos: int = 0) -> tuple[str, int]:
    """One ap_getword_conf step: (word, position after the word and its trailing space)."""
    pos = _skip_ws(text, pos)
    n = len(text)
    if pos >= n:
        return "", n
    quote = text[pos]
    if quote == '"' or quote == "'":
        end = pos + 1
        while end < n and text[end] != quote:
            if text[end] == "\\" and end + 1 < n and text[end + 1] in (quote, "\\"):
                end += 2
            else:
                end += 1
        word = _unescape(text[pos + 1 : end], quote)
        if end < n:  # skip the closing quote
            end += 1
    else:
        m = _BARE.match(text, pos)
        end = m.end() if m else pos
        word = _unescape(text[pos:end], "")
    return word, _skip_ws(text, end)


def split_words(text: str) -> list[str]:
    """All words of `text`, as httpd's directive handlers see them (no ${VAR} expansion).

    httpd's loop stops at the end of the string; an empty quoted word ("") is a word.
    """
    if '"' not in text and "'" not in text and "\\" not in text:
        return _BARE_WORDS(text)  # fast path: no quoting, no escapes
    words = []
    pos, n = 0, len(text)
    pos = _skip_ws(text, pos)
    while pos < n:
        word, pos = next_word(text, pos)
        words.append(word)
    return words


def needs_quotes(word: str) -> bool:
    return word == "" or any(c in WHITESPACE for c in word) or word[0] in "\"'" or "\\" in word


def quote_word(word: str) -> str:
    """The text that split_words turns back into `word` (quoted only where needed)."""
    if not needs_quotes(word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def join_words(words: list[str]) -> str:
    return " ".join(quote_word(w) for w in words)


def is_url(text: str) -> bool:
    """ap_is_url: a scheme (letters, digits, + - .) and a colon."""
    scheme, colon, _ = text.partition(":")
    return bool(colon) and bool(scheme) and all(c.isascii() and (c.isalnum() or c in "+-.") for c in scheme)


def take_argv(words: list[str]) -> list[str]:
    """A TAKE_ARGV handler's words (invoke_cmd): an empty word is kept unless it ends the line."""
    return words[:-1] if words and words[-1] == "" else words
