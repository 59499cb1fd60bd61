"""httpd's expression parser replayed (config/ap_expr.py): its scanner's longest-match rules, the
lookups each module answers, bison's messages, and that no text makes it raise or hang. What httpd
itself says about each case is in test_reading_rules_oracle.py (EXPRESSION_CASES) and
test_expression_mutations.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apachetune.config.ap_expr import Lookups, expr_error, tokens
from apachetune.config.pcre import regex_surely_invalid
from apachetune.lint.checks.core_readers import as_logged


@pytest.mark.parametrize("text, expected", [
    ("android", ["T_EXPR_BOOL", "T_ID"]),  # the longest match, not the operator "and"
    ("and", ["T_EXPR_BOOL", "T_OP_AND"]),  # a tie: the rule listed first
    ("-in -inx -e -1", ["T_EXPR_BOOL", "T_OP_IN", "T_OP_BINARY", "T_OP_UNARY", "T_DIGIT"]),
    ("m#a#i m_a /x/ m_", ["T_EXPR_BOOL", "T_REGEX_I", "T_ID", "T_REGEX", "$end"]),  # "m_": a regex, "m_a": a name
    ("'a%{X}b$1'", ["T_EXPR_BOOL", "T_STR_BEGIN", "T_STRING", "T_VAR_BEGIN", "T_ID", "T_VAR_END", "T_STRING",
                    "T_REGEX_BACKREF", "T_STR_END"]),
    ("%{f:a}b}", ["T_EXPR_BOOL", "T_VAR_BEGIN", "T_ID", "':'", "T_STRING", "T_VAR_END", "T_ID", "'}'"]),
    ("'\\12' '\\8'", ["T_EXPR_BOOL", "T_STR_BEGIN", "T_STRING", "T_STR_END", "T_STR_BEGIN", "T_ERROR"]),
    ("\r", ["T_EXPR_BOOL", "T_ERROR"]),
])
def test_the_scanner_takes_the_longest_match_then_the_first_rule(text, expected):
    assert list(tokens(text))[:len(expected)] == expected


@pytest.mark.parametrize("text, message", [
    ("%{HTTP_HOST} = x", "syntax error, unexpected $end, expecting '('"),
    ("'a' in {'a',}", "syntax error, unexpected '}'"),
    ("%{HTTP_HOST", "syntax error, unexpected T_ERROR, expecting T_VAR_END or ':': Unterminated string or variable"),
    ("'\\9' == 'a'", "Bad escape sequence"),  # string: T_ERROR { YYABORT; } takes it, no syntax error
    ("%{X} == 'a' &&", "syntax error, unexpected $end: Variable 'X' does not exist"),  # both kept
    ("%{X} == %{Y}", "Variable 'Y' does not exist"),  # the last lookup's error wins
    ("'a' =~ /(/", "Failed to compile regular expression"),
    ("-R %{REMOTE_ADDR}", "-R requires subnet/netmask as constant argument"),
    ("%{REMOTE_ADDR} -IPMATCH '10.0.0.0/8'", None),  # binary operators: any case
    ("-r 'x'", "Unary operator '-r' does not exist"),  # unary ones: exact
    ("%{tolower:'a'} == 'a'", "flex scanner jammed"),  # no rule of <vararg> takes a quote
    ("true", None), ("%{http_host} =~ m#^www\\.#i && -n %{QUERY_STRING}", None),
])
def test_bison_and_the_lookups_say_what_httpd_says(text, message):
    assert expr_error(text, regex_invalid=regex_surely_invalid) == message


def test_string_expressions_take_any_text_but_variables_are_looked_up():
    assert expr_error("50% off, 'quoted' {braces} $ (", string_result=True) is None
    assert expr_error("", string_result=True) is None
    assert expr_error("/a/%{REQUEST_URI}$1", string_result=True) is None
    assert expr_error("/a/%{NOPE}", string_result=True) == "Variable 'NOPE' does not exist"
    assert expr_error("/a/%{REQUEST_URI", string_result=True) == (
        "syntax error, unexpected T_ERROR, expecting T_VAR_END or ':': Unterminated string or variable")


def test_the_modules_loaded_and_the_version_decide_the_names():
    ssl = "%{SSL_PROTOCOL} == 'TLSv1.3' && 'x' in PeerExtList('1.2.3') && ssl('x') == ''"
    assert expr_error(ssl) == "Function 'ssl' does not exist"
    assert expr_error(ssl, lookups=Lookups(ssl=True)) is None
    assert expr_error("%{HC_BODY} == ''") == "Variable 'HC_BODY' does not exist"
    assert expr_error("%{hc_body} == ''", lookups=Lookups(hcheck=True)) is None
    assert expr_error("ldap('x') == ''", lookups=Lookups(version="2.4.52")) == "Function 'ldap' does not exist"
    assert expr_error("ldap('x') == ''", lookups=Lookups(version="2.4.53")) is None
    assert expr_error("%{REMOTE_PORT} -eq 1", lookups=Lookups(version="2.4.25")) == "Variable 'REMOTE_PORT' does not exist"
    # a third-party module may hook ap_expr_lookup: unknown names pass, the syntax is still judged
    assert expr_error("%{GEOIP_COUNTRY} == 'x' && geo('a') == ''", lookups=Lookups(others=True)) is None
    assert expr_error("%{GEOIP_COUNTRY} = x", lookups=Lookups(others=True)) == "syntax error, unexpected $end, expecting '('"
    assert expr_error("-R 'x'", lookups=Lookups(others=True)) == "parsing of subnet/netmask failed"


def test_a_restricted_parse_refuses_core_s_file_functions_and_tests():
    """AP_EXPR_FLAG_RESTRICTED (mod_authnz_fcgi's UserExpr): file() and filesize(), any case,
    and the unary file tests, case-sensitive as those are; the rest as usual."""
    restricted = Lookups(restricted=True)
    assert expr_error("%{FILE:/x}", string_result=True, lookups=restricted) == "file not available in restricted context"
    assert expr_error("filesize('/x') -gt 1", lookups=restricted) == "filesize not available in restricted context"
    assert expr_error("-x '/bin/sh'", lookups=restricted) == "-x not available in restricted context"
    assert expr_error("-F '/x' && -n %{md5:a}", lookups=restricted) is None
    assert expr_error("%{FILE:/x}", string_result=True) is None


def test_the_error_log_escapes_what_it_prints():
    assert as_logged("Parse error near '\\'") == "Parse error near '\\\\'"
    # httpd's lexer reads bytes: a character beyond ASCII is named by its first byte
    assert as_logged(expr_error("é")) == "Parse error near '\\xc3'"
    assert as_logged(expr_error("-n é")) == "syntax error, unexpected T_ERROR: Parse error near '\\xc3'"
    assert as_logged(expr_error("\udcff")) == "Parse error near '\\xff'"  # a byte not UTF-8, as the parser keeps it
    assert as_logged("tab\there \"quoted\" \x01 é") == "tab\\there \"quoted\" \\x01 \\xc3\\xa9"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("%{}()'\"$\\/m#:,.=!<>&|-_ \tRdinx019aAT") + ["\n", "é"]), max_size=40),
       st.booleans())
def test_no_text_makes_the_parser_raise(text, string_result):
    message = expr_error(text, string_result=string_result, regex_invalid=regex_surely_invalid)
    assert message is None or (isinstance(message, str) and message)
