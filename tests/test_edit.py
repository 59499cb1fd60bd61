"""The edit API: minimal byte-range patches that keep everything else."""

from pathlib import Path

import pytest

from apachetune.config import Directive, Section, parse_text
from apachetune.generate.diff import unified_diff

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
MPM_CONF = CORPUS / "apache__httpd__docs_conf_extra_httpd-mpm.conf.in.conf"


def find(cf, name, section_arg=None):
    for node in cf.directives():
        if node.name.lower() == name.lower():
            parent = node.parent
            if section_arg is None or (isinstance(parent, Section) and parent.args == [section_arg]):
                return node
    raise KeyError(name)


def changed_lines(old: bytes, new: bytes):
    diff = unified_diff(old, new, "f").splitlines()
    return [ln for ln in diff if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def test_set_args_keeps_alignment_and_touches_one_line():
    text = b"<IfModule mpm_event_module>\n    StartServers             3\n    MaxRequestWorkers      400\n</IfModule>\n"
    cf = parse_text(text)
    cf.set_args(find(cf, "MaxRequestWorkers"), ["150"])
    out = cf.render()
    assert out == text.replace(b"MaxRequestWorkers      400", b"MaxRequestWorkers      150")
    assert parse_text(out).children[0].children[1].args == ["150"]


@pytest.mark.skipif(not MPM_CONF.exists(), reason="shared corpus not present")
def test_edit_real_httpd_mpm_conf_minimal_diff():
    data = MPM_CONF.read_bytes()
    cf = parse_text(data, str(MPM_CONF))
    cf.set_args(find(cf, "MaxRequestWorkers", "mpm_event_module"), ["300"])
    cf.set_args(find(cf, "ThreadsPerChild", "mpm_event_module"), ["30"])
    out = cf.render()
    assert changed_lines(data, out) == [
        "-    ThreadsPerChild         25",
        "-    MaxRequestWorkers      400",
        "+    ThreadsPerChild         30",
        "+    MaxRequestWorkers      300",
    ]
    # Everything else, comments included, is byte-identical.
    assert out.replace(b"ThreadsPerChild         30", b"ThreadsPerChild         25").replace(
        b"MaxRequestWorkers      300", b"MaxRequestWorkers      400") == data


def test_insert_uses_sibling_indentation_and_file_newline():
    text = b"<IfModule mpm_event_module>\r\n\tStartServers 3\r\n</IfModule>\r\n"
    cf = parse_text(text)
    sec = cf.children[0]
    cf.insert(sec, len(sec.children), "ServerLimit", ["8"])
    assert cf.render() == b"<IfModule mpm_event_module>\r\n\tStartServers 3\r\n\tServerLimit 8\r\n</IfModule>\r\n"


def test_insert_follows_a_neighbours_column_of_arguments():
    """Debian's mpm_*.conf align their values in a column; an added directive joins it (one space
    when its name is longer), and a file without a column gets one space."""
    cf = parse_text("<IfModule mpm_event_module>\n\tStartServers            2\n\tThreadsPerChild         25\n"
                    "</IfModule>\n")
    sec = cf.children[0]
    cf.insert(sec, len(sec.children), "ServerLimit", ["4"])
    cf.insert(sec, len(sec.children), "AsyncRequestWorkerFactor", ["6"])
    lines = cf.render().decode().splitlines()
    assert lines[3] == "\tServerLimit             4" and lines[4] == "\tAsyncRequestWorkerFactor 6", lines
    assert lines[3].index("4") == lines[2].index("25")
    plain = parse_text("StartServers 2\n")
    plain.insert(plain, 1, "ServerLimit", ["4"])
    assert plain.render() == b"StartServers 2\nServerLimit 4\n"


def test_insert_into_empty_section_indents_one_level():
    cf = parse_text("<IfModule mpm_worker_module>\n</IfModule>\n<Directory />\n    Require all denied\n</Directory>\n")
    cf.insert(cf.children[0], 0, "MaxRequestWorkers", ["64"])
    assert cf.render().decode().splitlines()[1] == "    MaxRequestWorkers 64"


def test_insert_at_end_of_file_without_newline():
    cf = parse_text("Listen 80")
    cf.insert(cf, 1, "KeepAlive", ["On"])
    assert cf.render() == b"Listen 80\nKeepAlive On\n"


def test_remove_and_quote_new_args():
    cf = parse_text("# keep\nTimeout 300\nDocumentRoot /srv\n")
    timeout, root = [n for n in cf.children if isinstance(n, Directive)]
    cf.remove(timeout)
    cf.set_args(root, ["/srv/my site"])
    assert cf.render() == b'# keep\nDocumentRoot "/srv/my site"\n'


def test_set_args_on_continued_line_rewrites_that_directive_only():
    cf = parse_text("Before 1\nMaxRequestWorkers \\\n   400\nAfter 2\n")
    cf.set_args(cf.children[1], ["100"])
    assert cf.render() == b"Before 1\nMaxRequestWorkers 100\nAfter 2\n"


def test_overlapping_edits_are_refused():
    cf = parse_text("Timeout 300\n")
    cf.set_args(cf.children[0], ["60"])
    with pytest.raises(ValueError):
        cf.remove(cf.children[0])
