"""ErrorLogFormat's format strings, read as httpd reads them at start-up (AT510, in its words).

Facts: server/core.c (set_errorlog_format, parse_errorlog_string, parse_errorlog_item,
parse_errorlog_misc_string) and the handlers server/log.c registers (httpd 2.4.x). A format is a
run of items: a constant string (a backslash escapes the next character; a space after other
text ends it), or % with modifiers ({arg}, +, -, a log level) and one letter."""

from __future__ import annotations

from apachetune.config.effective import ResolvedDirective
from apachetune.lint.context import LintContext

# ap_register_errorlog_handler's letters in server/log.c (no stock module registers more)
HANDLERS = frozenset("aAeEFiklLmnPtTvV")
TRACE8 = 15  # APLOG_TRACE8: the highest level a modifier may name
_RAN_OFF = "Ran off end of error log format parsing args to some directive"


def _constant_end(s: str, i: int) -> int:
    """parse_errorlog_misc_string: where a constant string ends (at %, or at a space once
    something other than spaces was read; a backslash takes the next character with it)."""
    at_start = True
    while i < len(s) and s[i] != "%" and (s[i] != " " or at_start):
        if s[i] != "\\":
            if s[i] != " ":
                at_start = False
            i += 1
        else:
            i += 2 if i + 1 < len(s) else 1  # "\" at the end is kept as itself
    return i


def _to_int(value: int) -> int:
    """A C int's wrap-around (the level's digits are summed in an int)."""
    value &= 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value


class _Item:
    __slots__ = ("message", "required", "level")

    def __init__(self) -> None:
        self.message = self.required = False
        self.level = 0


def _item(s: str, i: int, item: _Item) -> tuple[int, str | None]:
    """parse_errorlog_item from s[i]: (where the next item starts, httpd's refusal or None)."""
    while True:
        if i >= len(s) or s[i] != "%":
            return _constant_end(s, i), None
        i += 1
        if i < len(s) and s[i] == " ":  # "% ": a field separator, then the item after it
            i += 1
            continue
        if i < len(s) and s[i] == "%":
            return i + 1, None
        break
    while i < len(s):
        c = s[i]
        if c == "{":  # ap_getword(..., '}'): up to the brace, then past every brace there
            close = s.find("}", i + 1)
            i = len(s) if close < 0 else close
            while i < len(s) and s[i] == "}":
                i += 1
        elif c in "+-":
            item.required = item.required or c == "+"
            i += 1
        elif "0" <= c <= "9":
            j = i
            while j < len(s) and "0" <= s[j] <= "9":
                j += 1
            item.level = _to_int(int(s[i:j]))
            i = j
        elif c == "M":
            item.message = True
            return i + 1, None
        elif c in HANDLERS:
            return i + 1, None
        else:
            return i, f"Unrecognized error log format directive %{c}"
    return i, _RAN_OFF


def format_error(text: str, main: bool) -> str | None:
    """parse_errorlog_string: httpd's refusal of a format, or None. `main`: the error log's own
    format (not a once-per-request or once-per-connection one)."""
    i, seen_message = 0, False
    while i < len(text):
        item = _Item()
        i, err = _item(text, i, item)
        if err:
            return err
        if item.message:
            if not main:
                return "%M cannot be used in once-per-request or once-per-connection formats"
            seen_message = True
        if main and item.required:
            return "The '+' flag cannot be used in the main error log format"
        if not main and item.level:
            return "The loglevel cannot be used as a condition in once-per-request or once-per-connection formats"
        if item.level > TRACE8:
            return "The specified loglevel modifier is out of range"
    if main and not seen_message:
        return "main ErrorLogFormat must contain message format string '%M'"
    return None


def error_log_format(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_errorlog_format (TAKE12: an empty second word counts as none): one word is the main
    format; two are a type (request or connection, any case) and its format. Not judged when a
    module apachetune has no table for is loaded (it may register more letters)."""
    if not 1 <= len(item.args) <= 2 or ctx.third_party_may_register("error log items"):
        return None
    first, second = item.args[0], (item.args[1] if len(item.args) == 2 and item.args[1] else None)
    if second is None:
        return format_error(first, main=True)
    if first.lower() not in ("request", "connection"):
        return "ErrorLogFormat type must be one of request, connection"
    return format_error(second, main=False)
