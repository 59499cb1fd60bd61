"""Reports are linear in findings: each file's text is split into lines once, not per finding."""

from __future__ import annotations

from apachetune.config.resolver import ResolveOptions
from apachetune.lint.engine import LintOptions, lint
from apachetune.lint.settings import Settings
from apachetune.report import FORMATS


class CountingStr(str):
    splits = 0

    def split(self, *args, **kwargs):
        CountingStr.splits += 1
        return super().split(*args, **kwargs)


def test_text_report_splits_each_file_once(tmp_path):
    conf = tmp_path / "many.conf"
    conf.write_text("LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\nServerName x\n"
                    + "<VirtualHost *:80>\nHostnameLookups On\n</VirtualHost>\n" * 500)
    result = lint(str(conf), LintOptions(ResolveOptions(env={}), Settings(), only={"AT601"}))
    assert len(result.findings) == 500
    cf = result.files[str(conf)]
    cf.text = CountingStr(cf.text)
    CountingStr.splits = 0
    text = FORMATS["text"](result)
    assert text.count("HostnameLookups On") >= 500
    assert CountingStr.splits <= 1
