"""The parser: httpd's line rules, positions, syntax errors, losslessness."""

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apachetune.config import Comment, Directive, Section, parse_file, parse_text
from apachetune.errors import ConfigSyntaxError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
BROKEN = ROOT / "fixtures" / "broken"


def real_files():
    files = sorted(CORPUS.glob("*.conf")) if CORPUS.is_dir() else []
    etc = Path("/etc/apache2")
    if etc.is_dir():
        files += sorted(p for p in etc.rglob("*") if p.is_file() and not p.is_symlink())
    files += sorted((ROOT / "fixtures").rglob("*.conf"))
    # broken fixtures (and the syntax-error rule's) are expected not to parse
    return [f for f in files if f.parent != BROKEN and "AT508" not in f.parts]


def assert_covers(cf):
    """Nodes cover the whole text, in order, with no gap: the tree is lossless."""
    def check(nodes, pos, end):
        for n in nodes:
            assert n.start == pos, (cf.path, n)
            if isinstance(n, Section):
                inner = n.open_end
                inner = check(n.children, inner, n.close_start)
                assert inner == n.close_start
            pos = n.end
        return pos

    assert check(cf.children, 0, len(cf.text)) == len(cf.text)


@pytest.mark.parametrize("path", real_files(), ids=lambda p: str(p)[-60:])
def test_real_files_round_trip(path):
    data = path.read_bytes()
    cf = parse_file(path)
    assert cf.to_bytes() == data
    assert cf.render() == data
    assert_covers(cf)


def test_real_file_list_is_not_empty():
    assert len(real_files()) > 5


def test_structure_and_positions():
    text = (
        "# comment\n"
        "ServerRoot \"/etc/apache2\"\n"
        "\n"
        "<IfModule mpm_event_module>\n"
        "\tStartServers 2\n"
        "    MaxRequestWorkers \\\n"
        "      150\n"
        "</ifmodule>\n"
        "Listen 80"
    )
    cf = parse_text(text, "t.conf")
    kinds = [type(n).__name__ for n in cf.children]
    assert kinds == ["Comment", "Directive", "Blank", "Section", "Directive"]
    sec = cf.children[3]
    assert (sec.name, sec.args, sec.line, sec.column, sec.close_line) == (
        "IfModule", ["mpm_event_module"], 4, 1, 8,
    )
    start, mrw = sec.children
    assert (start.name, start.args, start.line, start.column) == ("StartServers", ["2"], 5, 2)
    # A continuation joins the next line verbatim; httpd numbers the directive by its last line.
    assert (mrw.args, mrw.line, mrw.column, mrw.end_line) == (["150"], 6, 5, 7)
    assert cf.children[-1].args == ["80"]  # last line without newline


def test_continuation_has_no_space_and_comment_swallows_next_line():
    cf = parse_text("Options Indexes\\\nFollowSymLinks\n# note \\\nServerName x\nListen 1\n")
    opts, comment, listen = cf.children
    assert opts.args == ["IndexesFollowSymLinks"]
    assert isinstance(comment, Comment) and "ServerName" in comment.text
    assert listen.args == ["1"]


def test_hash_after_arguments_is_an_argument():
    (d,) = parse_text("ServerName example.com # not a comment\n").children
    assert d.args == ["example.com", "#", "not", "a", "comment"]


def test_section_tag_cut_at_last_bracket_and_rest_ignored():
    cf = parse_text('<VirtualHost *:80> junk\n</VirtualHost> </IfModule>\n')
    (vh,) = cf.children
    assert vh.args == ["*:80"] and vh.closed


def test_multiline_start_tag():
    cf = parse_text("<VirtualHost 10.0.0.1:80 \\\n  [::1]:80 \\\n  >\nServerName a\n</VirtualHost>\n")
    (vh,) = cf.children
    assert vh.args == ["10.0.0.1:80", "[::1]:80"]
    assert vh.open_end_line == 3


def test_crlf_bom_and_non_utf8_bytes_survive():
    data = b"\xef\xbb\xbfServerName a\r\nDocumentRoot /srv/\xff\xfe\r\n"
    cf = parse_text(data, "x.conf")
    assert cf.to_bytes() == data and cf.newline == "\r\n"
    first = cf.children[0]
    assert isinstance(first, Directive) and first.name == "\ufeffServerName"  # httpd does not strip a BOM
    assert cf.children[1].args == ["/srv/\udcff\udcfe"]


def test_unclosed_conditional_is_kept_open_for_the_resolver():
    cf = parse_text("<IfModule foo_module>\nListen 1\n")
    (sec,) = cf.children
    assert not sec.closed and len(sec.children) == 1
    assert cf.to_bytes() == b"<IfModule foo_module>\nListen 1\n"


def test_case_insensitive_tag_matching():
    cf = parse_text("<DIRECTORY />\n</directory>\n")
    assert cf.children[0].name == "DIRECTORY"


@pytest.mark.parametrize("name, expected", yaml.safe_load((BROKEN / "expected.yaml").read_text()).items())
def test_broken_files_report_httpds_error_at_the_right_place(name, expected):
    line, column, message = expected
    with pytest.raises(ConfigSyntaxError) as info:
        parse_file(BROKEN / name)
    err = info.value
    assert (err.position.line, err.position.column) == (line, column)
    assert err.message == message
    assert str(err).startswith(f"{BROKEN / name}:{line}:{column}: ")


def test_unreadable_file_is_a_positioned_error(tmp_path):
    with pytest.raises(ConfigSyntaxError) as info:
        parse_file(tmp_path / "missing.conf")
    # httpd's words: "Could not open configuration file ...: No such file or directory"
    assert "Could not open configuration file" in str(info.value) and "No such file" in str(info.value)


# -- properties ---------------------------------------------------------------

_word = st.one_of(
    st.from_regex(r"[A-Za-z0-9_/.:*\-]{1,12}", fullmatch=True),
    # (no NUL: httpd ends a line at its first NUL, so a quoted NUL is an unclosed quote there:
    # test_stray_bytes.py)
    st.from_regex(r'"[^"\n\\\x00]{0,10}"', fullmatch=True),
    st.sampled_from(["#", "'it\\'s'", '"a\\"b"', "a\\b", "${VAR}", "\udcff"]),
)
_ws = st.sampled_from([" ", "\t", "  ", " \\\n  "])
_nl = st.sampled_from(["\n", "\r\n"])
_name = st.sampled_from(["ServerName", "Listen", "KeepAlive", "MaxRequestWorkers", "Foo"])


@st.composite
def config(draw, depth=0):
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["dir", "dir", "comment", "blank", "section"] if depth < 3
                                    else ["dir", "comment", "blank"]))
        indent = draw(st.sampled_from(["", "  ", "\t"]))
        nl = draw(_nl)
        if kind == "dir":
            args = draw(st.lists(_word, max_size=4))
            seps = [draw(_ws) for _ in args]
            lines.append(indent + draw(_name) + "".join(s + a for s, a in zip(seps, args, strict=True)) + nl)
        elif kind == "comment":
            lines.append(indent + "# " + draw(st.text(alphabet="abc #\\", max_size=10)).rstrip("\\") + nl)
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t"])) + nl)
        else:
            name = draw(st.sampled_from(["VirtualHost", "Directory", "IfModule", "Location"]))
            arg = draw(_word)
            body = draw(config(depth + 1))
            lines.append(f"{indent}<{name} {arg}>{nl}{body}{indent}</{name.lower()}>{nl}")
    return "".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config())
def test_generated_configs_round_trip(text):
    cf = parse_text(text)
    assert cf.to_bytes() == text.encode("utf-8", "surrogateescape")
    assert_covers(cf)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_parse_or_fail_with_a_position(data):
    try:
        cf = parse_text(data, "fuzz.conf")
    except ConfigSyntaxError as e:
        assert e.position is not None and e.position.line >= 1 and e.position.column >= 1
    else:
        assert cf.to_bytes() == data


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="<>/ \n\\\"'#aIfModule\r\t", max_size=200))
def test_tag_soup_parses_or_fails_with_a_position(text):
    try:
        cf = parse_text(text, "soup.conf")
    except ConfigSyntaxError as e:
        assert e.position.line >= 1
    else:
        assert cf.to_bytes() == text.encode()
