"""Report JSON text: the same value json.dumps writes, indented, with one finding a line."""

import json

from hypothesis import given
from hypothesis import strategies as st

from apachetune.report import jsontext

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.sampled_from(["findings", "a", "b", "é"]) | st.text(), inner,
                                        max_size=4), max_leaves=30)


@given(values)
def test_the_same_json_value_as_json_dumps(value):
    text = jsontext.dumps(value, frozenset({"findings"}))
    assert json.loads(text) == json.loads(json.dumps(value))
    assert text.endswith("\n")


def test_a_finding_a_line_and_the_frame_indented():
    doc = {"mpm": {"name": "event"}, "findings": [{"rule": "AT601", "line": 3}, {"rule": "AT101", "line": 9}],
           "summary": {"error": 0}}
    lines = jsontext.dumps(doc, frozenset({"findings"})).splitlines()
    assert lines[0] == "{" and lines[1] == '  "mpm": {' and lines[2] == '    "name": "event"'
    assert '    {"rule": "AT601", "line": 3},' in lines and '    {"rule": "AT101", "line": 9}' in lines
    assert json.loads("\n".join(lines)) == doc


def test_keys_that_are_not_strings_are_written_as_json_dumps_writes_them():
    value = {1: "a", None: "b", False: "c", 2.5: "d"}
    assert json.loads(jsontext.dumps(value)) == json.loads(json.dumps(value))
