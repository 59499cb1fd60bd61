"""mod_macro, expanded as httpd expands it: DUMP_CONFIG byte for byte, httpd's errors word for
word, and lint sees the directives a `Use` produces (the issue: `Use Tune 130` gave "not a
number" instead of httpd's AH00513)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apachetune import httpd
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.errors import ResolveError
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings
from httpd_oracle import dump_config, needs_httpd, run_httpd


def head(tmp_path) -> str:
    return (f"{httpd.load_module_line('mpm_event')}\n{httpd.load_module_line('macro')}\n"
            f"ServerName x\nErrorLog {tmp_path}/e.log\n")


BODIES = {
    "tune": "<Macro Tune $n>\n  MaxRequestWorkers $n\n  ServerLimit ${n}\n</Macro>\nUse Tune 130\n",
    "vhost": ("<Macro VHost $name $port>\n# a comment line is dropped\n\n<VirtualHost *:$port>\n"
              "  ServerName $name\n  ServerAlias www.$name \\\n     $name.test\n</VirtualHost>\n</Macro>\n"
              "Use VHost a.example 8080\nUse VHost b.example 8081\nUndefMacro VHost\n"),
    "prefixes": ("<Macro P $a $ab @q>\n  ServerAdmin $ab-$a@x\n  Header set X-Q @q\n</Macro>\n"
                 "Use P one two \"say \\\"hi\\\"\"\n"),
    "nested": ("<Macro Inner $v>\n  ServerTokens $v\n</Macro>\n<Macro Outer $w>\n  Use Inner $w\n"
               "  TraceEnable Off\n</Macro>\nUse Outer Prod\n"),
    "case": "<Macro MiXeD>\n  KeepAlive On\n</Macro>\nuse mixed\n",
}


@needs_httpd
@pytest.mark.parametrize("name", sorted(BODIES))
def test_expansions_dump_as_httpd_dumps_them(tmp_path, name):
    main = tmp_path / "httpd.conf"
    extra = httpd.load_module_line("headers") + "\n" if name == "prefixes" else ""
    main.write_text(head(tmp_path) + extra + BODIES[name])
    ours = resolve(main, ResolveOptions(server_root=str(tmp_path), env={}, use_env_file=False))
    assert ours.dump_config() == dump_config(main, tmp_path, {})
    assert ours.generated_files and all(p.startswith("macro '") for p in ours.generated_files)


ERRORS = {
    "<Macro T $a>\n  KeepAlive $a\n</Macro>\nUse T\n":
        "macro 't' (defined on line 5 of \"{f}\") used with 0 arguments instead of 1",
    "Use Nothing 1\n": "no macro defined before Use",
    "<Macro T>\n  KeepAlive On\n</Macro>\nUse Other\n": "macro 'other' undefined",
    "<Macro T>\n  Use T\n</Macro>\nUse T\n": "recursive use of macro 't' is invalid",
    "<Macro T $a $a>\n  KeepAlive $a\n</Macro>\n":
        "argument name conflict in macro 't' (defined on line 5 of \"{f}\"): argument '$a': #1 and #2, "
        "change argument names!",
    "UndefMacro Nope\n<Macro T>\nKeepAlive On\n</Macro>\n": "no macro defined before UndefMacro",
    "<Macro T>\nKeepAlive On\n</Macro>\nUndefMacro Nope\n": "cannot remove undefined macro 'nope'",
    "<Macro T>\nKeepAlive On\n</Macro>\nUndefMacro T\nUse T\n": "macro 't' undefined",
}


@pytest.mark.parametrize("body", sorted(ERRORS))
def test_errors_in_httpds_words(tmp_path, body):
    main = tmp_path / "httpd.conf"
    main.write_text(head(tmp_path) + body)
    expected = ERRORS[body].format(f=main)
    with pytest.raises(ResolveError) as err:
        resolve(main, ResolveOptions(server_root=str(tmp_path), env={}, use_env_file=False))
    assert expected in str(err.value)
    if httpd.binary():
        proc = run_httpd("-t", "-f", str(main), "-d", str(tmp_path))
        assert proc.returncode != 0 and expected in proc.stderr, proc.stderr


def test_lint_sees_the_expansion_and_fix_leaves_it_alone(tmp_path):
    main = tmp_path / "httpd.conf"
    main.write_text(head(tmp_path) + BODIES["tune"])
    result = lint_file(main, LintOptions(ResolveOptions(env={}), Settings()))
    rules = {f.rule for f in result.findings}
    assert "AT108" in rules  # httpd's AH00513 for MaxRequestWorkers 130
    assert not any(f.rule == "AT507" and "'$n'" in f.message for f in result.findings)
    from apachetune.lint.fix import plan_fixes

    outcome = plan_fixes(str(main), LintOptions(ResolveOptions(env={}), Settings()))
    assert all(not p.startswith("macro '") for p in outcome.new)


def test_without_mod_macro_a_macro_is_an_unknown_section(tmp_path):
    main = tmp_path / "httpd.conf"
    main.write_text(f"{httpd.load_module_line('mpm_event')}\nServerName x\n" + BODIES["tune"])
    result = lint_file(main, LintOptions(ResolveOptions(env={}), Settings()))
    assert {"AT502"} <= {f.rule for f in result.findings} or {"AT501"} <= {f.rule for f in result.findings}


def _substitute_reference(line: str, names: tuple[str, ...], values: list[str]) -> str:
    """mod_macro.c's substitute_macro_args, transcribed: the earliest name (the longest of those
    starting there) is replaced, and the scan continues after it in the line."""
    out, pos = [], 0
    while True:
        chosen, which = -1, -1
        for i, name in enumerate(names):
            found = line.find(name, pos)
            if found >= 0 and (chosen < 0 or found < chosen or (found == chosen and len(names[which]) < len(name))):
                chosen, which = found, i
        if chosen < 0:
            return "".join(out) + line[pos:]
        value = values[which]
        if names[which].startswith("@"):
            value = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        out += [line[pos:chosen], value]
        pos = chosen + len(names[which])


_ARG = st.sampled_from(["$a", "$ab", "$b", "@a", "%x", "$"])
_TEXT = st.text(alphabet="$@%abx {}0\"\\", max_size=30)


@given(st.lists(_ARG, min_size=1, max_size=4, unique=True), st.lists(_TEXT, min_size=1, max_size=4),
       st.lists(_TEXT, min_size=4, max_size=4))
def test_the_precut_body_expands_as_mod_macro_substitutes(names, body, values):
    from apachetune.config.macros import define, expand

    macro = define(" ".join(["m", *names]), "".join(line.replace("\\", "") + "\n" for line in body), 1, "f")
    got = expand(macro, values[:len(names)], 5, "f")[1]
    assert got == "".join(_substitute_reference(line, tuple(names), values[:len(names)]) + "\n"
                          for line in macro.lines)
