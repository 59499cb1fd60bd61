"""httpd's expression parser (ap_expr) replayed: does httpd accept this <If> condition, this
`Require expr`, this `expr=` clause, and if not, in which words does it refuse it?

Three parts, each httpd's own behaviour:
- the scanner (server/util_expr_scan.l, a flex scanner): longest match first, then the rule
  listed first; exclusive start conditions for strings, %{...} variables and regexes;
- the parser (server/util_expr_parse.y): bison's tables, copied from httpd's generated parser
  (config/ap_expr_tables.py), driven as bison's yacc.c skeleton drives them, so that a syntax
  error names the tokens bison names (they depend on its default reductions);
- the lookups made while reducing (server/util_expr_eval.c core_expr_lookup and
  expr_lookup_not_found; mod_ssl's and mod_proxy_hcheck's hooks when those modules are loaded):
  an unknown variable, function or operator is refused by name, and -R / -ipmatch read their
  subnet argument then.

`expr_error(text)` returns None or httpd's message, the text ap_expr_parse returns; each caller
wraps it in its own words ("Cannot parse condition clause: ...")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from apachetune.config import ap_expr_tables as T
from apachetune.config.apr import ip_subnet_error
from apachetune.config.conditions import Version, at_least

_SYMBOL = {name: i for i, name in enumerate(T.YYTNAME[:T.YYNTOKENS])}
_MAX_STRING_LEN = 8192  # httpd's MAX_STRING_LEN: the scanner's string and regex buffers


class _Jammed(Exception):
    """Input no rule of the scanner matches (%option nodefault): httpd exits with flex's
    "flex scanner jammed"."""


@dataclass(frozen=True)
class Lookups:
    """Who answers ap_expr_lookup: core always; mod_ssl and mod_proxy_hcheck when loaded."""

    ssl: bool = False
    hcheck: bool = False
    version: str = "2.4.71"
    others: bool = False  # a module apachetune has no table for is loaded: it may answer any name
    # AP_EXPR_FLAG_RESTRICTED (mod_authnz_fcgi's UserExpr, mod_include): core's file functions
    # and file tests are refused
    restricted: bool = False

    def has(self, name: str) -> bool:
        """Whether core's table has `name` (lower case) in this version."""
        since = _SINCE.get(name)
        return since is None or at_least(Version.parse(self.version), since)


# server/util_expr_eval.c's providers (2.4.62, same in 2.4.71).
_CORE_VARIABLES = frozenset(n.lower() for n in (
    "TIME_YEAR", "TIME_MON", "TIME_DAY", "TIME_HOUR", "TIME_MIN", "TIME_SEC", "TIME_WDAY", "TIME",
    "SERVER_SOFTWARE", "API_VERSION",
    "HTTP_USER_AGENT", "HTTP_PROXY_CONNECTION", "HTTP_REFERER", "HTTP_COOKIE", "HTTP_FORWARDED",
    "HTTP_HOST", "HTTP_ACCEPT",
    "REQUEST_METHOD", "REQUEST_SCHEME", "REQUEST_URI", "REQUEST_FILENAME", "REMOTE_HOST", "REMOTE_IDENT",
    "REMOTE_USER", "SERVER_ADMIN", "SERVER_NAME", "SERVER_PORT", "SERVER_PROTOCOL", "SCRIPT_FILENAME",
    "PATH_INFO", "QUERY_STRING", "IS_SUBREQ", "DOCUMENT_ROOT", "AUTH_TYPE", "THE_REQUEST", "CONTENT_TYPE",
    "HANDLER", "REQUEST_LOG_ID", "SCRIPT_USER", "SCRIPT_GROUP", "DOCUMENT_URI", "LAST_MODIFIED",
    "CONTEXT_PREFIX", "CONTEXT_DOCUMENT_ROOT", "REQUEST_STATUS", "REMOTE_ADDR", "REMOTE_PORT",
    "HTTPS", "IPV6", "CONN_LOG_ID", "CONN_REMOTE_ADDR", "HTTP2"))
_CORE_FUNCTIONS = frozenset(("osenv", "env", "resp", "req", "http", "note", "reqenv", "req_novary", "tolower",
                             "toupper", "escape", "unescape", "file", "filesize", "base64", "unbase64", "sha1",
                             "md5", "ldap"))
_SINCE = {"remote_port": "2.4.26", "http2": "2.4.19", "ldap": "2.4.53"}  # the names core added later
_CORE_UNARY = frozenset("nzRTdefsLhxFUA")  # compared case-sensitively, unlike the rest
_CORE_BINARY = frozenset(("ipmatch", "fnmatch", "strmatch", "strcmatch"))
_SUBNET_OPERATORS = {("unary", "R"), ("binary", "ipmatch")}
_FILE_FUNCTIONS = frozenset(("file", "filesize"))  # the providers marked restricted
_FILE_TESTS = frozenset("defsLhx")

_KIND_WORDS = {"var": "Variable", "func": "Function", "list": "List-returning function",
               "unary": "Unary operator", "binary": "Binary operator"}


def _lookup(kind: str, name: str, arg: str | None, lookups: Lookups) -> str | None:
    """ap_run_expr_lookup: None when a provider takes the name, else the error it leaves."""
    lower = name.lower()
    if kind == "var":
        if lower in _CORE_VARIABLES and lookups.has(lower):
            return None
        if lookups.ssl and lower.startswith("ssl_"):  # mod_ssl's strcEQn: case-insensitive
            return None
        if lookups.hcheck and lower.startswith("hc_"):
            return None
    elif kind == "func":
        if lower in _CORE_FUNCTIONS and lookups.has(lower):
            return f"{lower} not available in restricted context" if lookups.restricted and lower in _FILE_FUNCTIONS \
                else None
        if (lookups.ssl and lower == "ssl") or (lookups.hcheck and lower == "hc"):
            return None
    elif kind == "list":
        if lookups.ssl and lower == "peerextlist":
            return None
    elif kind == "unary":
        if name in _CORE_UNARY:
            if lookups.restricted and name in _FILE_TESTS:
                return f"-{name} not available in restricted context"
            return _subnet_error(name, arg) if name == "R" else None
    elif lower in _CORE_BINARY:
        return _subnet_error(name, arg) if lower == "ipmatch" else None
    if lookups.others:
        return None
    prefix = "-" if kind in ("unary", "binary") else ""
    return f"{_KIND_WORDS[kind]} '{prefix}{name}' does not exist"


def _subnet_error(name: str, arg: str | None) -> str | None:
    """subnet_parse_arg: the operand must be a constant string, an address with an optional mask."""
    if arg is None:
        return f"-{name} requires subnet/netmask as constant argument"
    addr, slash, mask = arg.partition("/")
    return None if ip_subnet_error(addr, mask if slash else None) is None else "parsing of subnet/netmask failed"


# --- the scanner -------------------------------------------------------------------------------

_OPERATORS = (  # INITIAL's fixed-text rules, in the order listed (a tie goes to the first)
    ("==", "T_OP_STR_EQ"), ("=", "T_OP_STR_EQ"), ("!=", "T_OP_STR_NE"), ("<", "T_OP_STR_LT"),
    ("<=", "T_OP_STR_LE"), (">", "T_OP_STR_GT"), (">=", "T_OP_STR_GE"), ("=~", "T_OP_REG"),
    ("!~", "T_OP_NRE"), ("and", "T_OP_AND"), ("&&", "T_OP_AND"), ("or", "T_OP_OR"), ("||", "T_OP_OR"),
    ("not", "T_OP_NOT"), ("!", "T_OP_NOT"), (".", "T_OP_CONCAT"), ("-in", "T_OP_IN"), ("-eq", "T_OP_EQ"),
    ("-ne", "T_OP_NE"), ("-ge", "T_OP_GE"), ("-le", "T_OP_LE"), ("-gt", "T_OP_GT"), ("-lt", "T_OP_LT"),
    ("lt", "T_OP_LT"), ("le", "T_OP_LE"), ("gt", "T_OP_GT"), ("ge", "T_OP_GE"), ("ne", "T_OP_NE"),
    ("eq", "T_OP_EQ"), ("in", "T_OP_IN"))
_REGEX_DELIMITERS = "/#$%^,;:_?|^-!.'\""
_UNARY = re.compile(r"-[a-zA-Z_]")
_BINARY = re.compile(r"-[a-zA-Z_][a-zA-Z_0-9]+")
_DIGITS = re.compile(r"-?[0-9]+")
_IDENT = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*")
_OCTAL = re.compile(r"\\[0-7]{1,3}")
_BAD_ESCAPE = re.compile(r"\\[0-9]+")
_RUN = re.compile(r"[^\\\n\"'%}$]+")
_CONTROL = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


@dataclass
class _Token:
    kind: str  # a name of yytname: "T_DIGIT", "'('", "$end"
    value: object = None
    error: str | None = None  # the message a T_ERROR carries (PERROR sets ctx->error2)


def _longest_match(text: str, pos: int) -> tuple[int, str, object]:
    """INITIAL's remaining rules at `pos`: the longest match wins, the rule listed first on a tie.
    (length, token name or "regex", value); length 0 when none matches."""
    best: tuple[int, str, object] = (0, "", None)

    def offer(length: int, kind: str, value: object = None) -> None:
        nonlocal best
        if length > best[0]:
            best = (length, kind, value)

    c = text[pos]
    if c == "m" and text[pos + 1:pos + 2] and text[pos + 1] in _REGEX_DELIMITERS:
        offer(2, "regex")
    if c == "/":
        offer(1, "regex")
    for op, kind in _OPERATORS:
        if text.startswith(op, pos):
            offer(len(op), kind)
    for pattern, kind in ((_UNARY, "T_OP_UNARY"), (_BINARY, "T_OP_BINARY")):
        if m := pattern.match(text, pos):
            offer(len(m.group()), kind, m.group()[1:])
    for word, kind in (("true", "T_TRUE"), ("false", "T_FALSE")):
        if text.startswith(word, pos):
            offer(len(word), kind)
    for pattern, kind in ((_DIGITS, "T_DIGIT"), (_IDENT, "T_ID")):
        if m := pattern.match(text, pos):
            offer(len(m.group()), kind, m.group())
    if c in "(){},:":
        offer(1, f"'{c}'")
    return best


def _pending_rule(text: str, pos: int, in_var: bool) -> str | None:
    """The rules of <str> and <vararg> that first return the text read so far: $N, %{, and (in
    <vararg>) the closing }."""
    if text[pos] == "$" and text[pos + 1:pos + 2].isdigit() and text[pos + 1].isascii():
        return "T_REGEX_BACKREF"
    if text.startswith("%{", pos):
        return "T_VAR_BEGIN"
    return "T_VAR_END" if in_var and text[pos] == "}" else None


class _Scanner:
    """util_expr_scan.l, one token a call."""

    def __init__(self, text: str, string_result: bool) -> None:
        self.text, self.pos = text, 0
        self.string_result = string_result
        self.at_start = True
        self.state = "INITIAL"
        self.stack: list[str] = []
        self.buf: list[str] = []
        self.delim = ""

    def _flush(self) -> _Token:
        value, self.buf = "".join(self.buf), []
        return _Token("T_STRING", value)

    def _append(self, chars: str) -> _Token | None:
        self.buf.extend(chars)
        return _Token("T_ERROR", error="String too long") if len(self.buf) >= _MAX_STRING_LEN else None

    def next(self) -> _Token:
        if self.at_start:
            self.at_start = False
            if self.string_result:
                self.state = "str"
                return _Token("T_EXPR_STRING")
            return _Token("T_EXPR_BOOL")
        while True:
            token: _Token | None = getattr(self, "_" + self.state.lower())()
            if token is not None:
                return token

    def _initial(self) -> _Token | None:
        text, pos = self.text, self.pos
        if pos >= len(text):
            return _Token("$end")
        c = text[pos]
        if c in " \t\n":
            while self.pos < len(text) and text[self.pos] in " \t\n":
                self.pos += 1
            return None
        if c in "\"'":
            self.pos += 1
            self.buf, self.delim, self.state = [], c, "str"
            return _Token("T_STR_BEGIN")
        two = text[pos:pos + 2]
        if two == "%{":
            self.pos += 2
            self.stack.append(self.state)
            self.state = "var"
            return _Token("T_VAR_BEGIN")
        if c == "$" and two[1:].isdigit() and two[1:].isascii():
            self.pos += 2
            return _Token("T_REGEX_BACKREF", int(two[1]))
        length, kind, value = _longest_match(text, pos)
        if not length:
            self.pos += 1
            return _Token("T_ERROR", error=f"Parse error near '{_first_byte(c)}'")
        self.pos += length
        if kind == "regex":
            self.delim, self.buf, self.state = text[self.pos - 1], [], "regex"
            return None
        return _Token(kind, value)

    def _str(self) -> _Token | None:
        return self._string_part(in_var=False)

    def _vararg(self) -> _Token | None:
        return self._string_part(in_var=True)

    def _string_part(self, in_var: bool) -> _Token | None:
        """<str> and <vararg>: a quoted string, or the argument of %{func:arg}."""
        text, pos = self.text, self.pos
        if pos >= len(text):
            if in_var or not self.string_result:
                return _Token("T_ERROR", error="Unterminated string or variable")
            token = self._flush()
            self.state = "INITIAL"
            return token
        c = text[pos]
        if c in "\"'" and not in_var:
            if c != self.delim:
                self.pos += 1
                return self._append(c)
            if not self.buf:
                self.pos += 1
                self.state = "INITIAL"
                return _Token("T_STR_END")
            return self._flush()  # what there is so far; the delimiter is read again
        if c == "\n":
            self.pos += 1
            return _Token("T_ERROR", error="Unterminated string or variable")
        if c == "\\":
            return self._escape(text, pos)
        if kind := _pending_rule(text, pos, in_var):
            if self.buf:
                return self._flush()  # what there is so far; the rest is read again
            self.pos += 1 if kind == "T_VAR_END" else 2
            if kind == "T_VAR_BEGIN":
                self.stack.append(self.state)
                self.state = "var"
            elif kind == "T_VAR_END":
                self.state = self.stack.pop()
            return _Token(kind, int(text[pos + 1]) if kind == "T_REGEX_BACKREF" else None)
        if c in "%$" or (c == "}" and not in_var):
            self.pos += 1
            return self._append(c)
        if c in "\"'":  # a quote inside %{func:arg}: no rule of <vararg> takes it
            raise _Jammed
        m = _RUN.match(text, pos)
        assert m is not None
        self.pos += len(m.group())
        return self._append(m.group())

    def _escape(self, text: str, pos: int) -> _Token | None:
        """\\ooo (octal, at most 0377), \\n \\r \\t \\b \\f, or the character itself; digits that
        are not octal are refused (the longer of the two digit rules wins)."""
        octal, bad = _OCTAL.match(text, pos), _BAD_ESCAPE.match(text, pos)
        if octal and (bad is None or len(bad.group()) <= len(octal.group())):
            self.pos += len(octal.group())
            value = int(octal.group()[1:], 8)
            if value > 0xFF:
                return _Token("T_ERROR", error="Escape sequence out of bound")
            return self._append(chr(value))
        if bad:
            self.pos += len(bad.group())
            return _Token("T_ERROR", error="Bad escape sequence")
        if pos + 1 >= len(text):
            raise _Jammed
        self.pos += 2
        return self._append(_CONTROL.get(text[pos + 1], text[pos + 1]))

    def _var(self) -> _Token | None:
        text, pos = self.text, self.pos
        if pos >= len(text) or text[pos] == "\n":
            self.pos += 1
            return _Token("T_ERROR", error="Unterminated string or variable")
        if m := _IDENT.match(text, pos):
            self.pos += len(m.group())
            return _Token("T_ID", m.group())
        c = text[pos]
        self.pos += 1
        if c == "}":
            self.state = self.stack.pop()
            return _Token("T_VAR_END")
        if c == ":":
            self.state = "vararg"
            return _Token("':'")
        return _Token("T_ERROR", error=f"Invalid character in variable name '{c}'")

    def _regex(self) -> _Token | None:
        text, pos = self.text, self.pos
        if pos >= len(text):
            return _Token("$end")  # no <<EOF>> rule: flex's yyterminate()
        c = text[pos]
        self.pos += 1
        if c == self.delim:
            self.state = "regex_flags"
            return None
        self.buf.append(c)
        if len(self.buf) >= _MAX_STRING_LEN:
            return _Token("T_ERROR", error="Regexp too long")
        return None

    def _regex_flags(self) -> _Token | None:
        pattern, self.buf = "".join(self.buf), []
        self.state = "INITIAL"
        if self.text[self.pos:self.pos + 1] == "i":
            self.pos += 1
            return _Token("T_REGEX_I", pattern)
        return _Token("T_REGEX", pattern)


# --- the parser --------------------------------------------------------------------------------

@dataclass
class _Node:
    """What the grammar's actions build, as far as the lookups need it: a constant string's text
    (ap_expr_info_make passes an argument on only when it is one op_String node)."""

    constant: str | None = None


_ABORT_ON_ERROR_TOKEN = {4, 14, 36}  # root/expr/string: T_ERROR { YYABORT; }
_REGEX_RULES = {49, 50}


class _Parse:
    def __init__(self, lookups: Lookups, regex_invalid: Callable[[str], bool]) -> None:
        self.lookups = lookups
        self.regex_invalid = regex_invalid
        self.error: str | None = None  # ctx->error: bison's message, or the regex action's
        self.error2: str | None = None  # ctx->error2: the scanner's or a lookup's (the last wins)

    def _look(self, kind: str, name: object, arg: object) -> _Node | None:
        constant = arg.constant if isinstance(arg, _Node) else None
        if (message := _lookup(kind, str(name), constant, self.lookups)) is not None:
            self.error2 = message
            return None
        return _Node()

    def reduce(self, rule: int, rhs: list[object]) -> tuple[bool, object]:
        """The rule's action: (go on, $$). False stops the parse (YYABORT, YYERROR)."""
        if rule in _ABORT_ON_ERROR_TOKEN:
            return False, None
        if rule in _REGEX_RULES:
            if self.regex_invalid(str(rhs[0])):
                self.error = "Failed to compile regular expression"
                return False, None
            return True, _Node()
        if rule == 37:  # strpart: T_STRING
            return True, _Node(str(rhs[0]))
        if rule == 48:  # word: T_STR_BEGIN T_STR_END
            return True, _Node("")
        if rule == 47:  # word: T_STR_BEGIN string T_STR_END
            return True, rhs[1]
        if rule in (35, 38, 39, 44, 45, 46):  # one symbol passed on as it is
            return True, rhs[0]
        if rule == 40:
            return True, self._look("var", rhs[1], None)
        if rule == 41:
            return True, self._look("func", rhs[1], rhs[3])
        if rule == 52:
            return True, self._look("list", rhs[0], rhs[2])
        if rule == 53:
            return True, self._look("func", rhs[0], rhs[2])
        if rule == 11:
            return True, self._look("unary", rhs[0], rhs[1])
        if rule == 12:
            return True, self._look("binary", rhs[1], rhs[2])
        return True, _Node()

    def run(self, scanner: _Scanner) -> bool:
        """yacc.c's yyparse over the tables: True when the text was accepted."""
        states: list[int] = [0]
        values: list[object] = [None]
        token: _Token | None = None
        while True:
            state = states[-1]
            if state == T.YYFINAL:
                return True
            n = T.YYPACT[state]
            rule = 0
            if n != T.YYPACT_NINF:
                if token is None:
                    token = scanner.next()
                    if token.kind == "T_ERROR":
                        self.error2 = token.error
                symbol = _SYMBOL[token.kind]
                n += symbol
                if 0 <= n <= T.YYLAST and T.YYCHECK[n] == symbol:
                    action = T.YYTABLE[n]
                    if action > 0:
                        states.append(action)
                        values.append(token.value)
                        token = None
                        continue
                    rule = -action
            if not rule:
                rule = T.YYDEFACT[state]
                if rule == 0:
                    self.error = _syntax_error(state, token)
                    return False
            length = T.YYR2[rule]
            rhs = values[len(values) - length:] if length else []
            go_on, value = self.reduce(rule, rhs)
            if not go_on:
                return False
            del states[len(states) - length:], values[len(values) - length:]
            lhs = T.YYR1[rule] - T.YYNTOKENS
            goto = T.YYPGOTO[lhs] + states[-1]
            states.append(T.YYTABLE[goto] if 0 <= goto <= T.YYLAST and T.YYCHECK[goto] == states[-1]
                          else T.YYDEFGOTO[lhs])
            values.append(value)


def _syntax_error(state: int, token: _Token | None) -> str:
    """yysyntax_error: the unexpected token and, when there are at most four, the expected ones."""
    if token is None:
        return "syntax error"
    names = [token.kind]
    n = T.YYPACT[state]
    if n != T.YYPACT_NINF:
        for x in range(max(-n, 0), min(T.YYLAST - n + 1, T.YYNTOKENS)):
            if T.YYCHECK[x + n] == x and x != _SYMBOL["error"]:
                if len(names) == 5:
                    names = names[:1]
                    break
                names.append(T.YYTNAME[x])
    if len(names) == 1:
        return f"syntax error, unexpected {names[0]}"
    return f"syntax error, unexpected {names[0]}, expecting " + " or ".join(names[1:])


def expr_error(text: str, *, string_result: bool = False, lookups: Lookups = Lookups(),
               regex_invalid: Callable[[str], bool] = lambda pattern: False) -> str | None:
    """ap_expr_parse's verdict on `text`: None when httpd takes it, else its message.
    `regex_invalid(pattern)` says whether PCRE refuses a pattern (the caller knows how surely)."""
    parse = _Parse(lookups, regex_invalid)
    try:
        accepted = parse.run(_Scanner(text, string_result))
    except _Jammed:
        return "flex scanner jammed"
    if parse.error:
        return f"{parse.error}: {parse.error2}" if parse.error2 else parse.error
    if parse.error2:
        return parse.error2
    return None if accepted else "syntax error"


def tokens(text: str, string_result: bool = False) -> Iterator[str]:
    """The scanner's token names for `text` (for tests and for explaining a refusal)."""
    scanner = _Scanner(text, string_result)
    while True:
        try:
            token = scanner.next()
        except _Jammed:
            yield "jammed"
            return
        yield token.kind
        if token.kind in ("$end", "T_ERROR"):
            return


def _first_byte(c: str) -> str:
    """httpd's lexer reads bytes: a character beyond ASCII is named by its first UTF-8 byte
    ('\xc3' for 'é'), kept as a lone surrogate so that the log's escaping writes that byte."""
    if c.isascii():
        return c
    first = c.encode("utf-8", "surrogateescape")[0]
    return chr(0xDC00 + first) if first >= 0x80 else chr(first)
