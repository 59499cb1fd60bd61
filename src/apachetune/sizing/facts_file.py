"""Reading a facts file (`size --save-facts`, `size --facts`, `lint --facts`): JSON that a person
may have edited, or written on another machine, checked value by value before anything sizes
from it. A wrong value is named by its key path, the line it is on and what was expected, not
found later as a traceback in the middle of the arithmetic (a string where a number of MiB
belongs, a negative core count, NaN, an object where a list goes).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from typing import Any

from apachetune.errors import UsageError
from apachetune.inputs import read_small

MPMS = (None, "prefork", "worker", "event")
Check = Callable[[Any], bool]


# Far beyond any machine (an exbibyte of MiB, a million CPUs), short of overflowing the arithmetic.
MOST = float(1 << 40)


def _number(low: float = 0.0, high: float = MOST) -> Check:
    return lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and low <= v <= high


def _integer(low: int = 0, high: int = 1 << 40) -> Check:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def _optional(check: Check) -> Check:
    return lambda v: v is None or check(v)


def _string(v: Any) -> bool:
    return isinstance(v, str)


MIB = (_number(), "a number of MiB, from 0 to 2^40")
WORKER_SAMPLE: dict[str, tuple[Check, str]] = {
    "pid": (_integer(1), "a process id"), "threads": (_integer(1), "a thread count, at least 1"),
    "rss_mib": MIB, "pss_mib": MIB, "uss_mib": MIB,
}
HTTPD: dict[str, tuple[Check, str]] = {
    "parent_pid": (_integer(1), "a process id"),
    "mpm": (lambda v: v in MPMS, "null, \"prefork\", \"worker\" or \"event\""),
    "parent_pss_mib": MIB, "per_worker_mib": MIB, "per_process_mib": MIB,
    "threads_per_child": (_integer(1), "a thread count, at least 1"),
    "idle": (_optional(_string), "null or a reason (text)"),
}
TOP: dict[str, tuple[Check, str]] = {
    "total_mib": MIB,
    "available_mib": MIB,
    "cpus": (_integer(1, 1 << 20), "a whole number of CPUs, from 1 to 2^20"),
    "memory_source": (_string, "text"),
    "cpu_source": (_string, "text"),
    "cpus_online": (_optional(_integer(1, 1 << 20)), "null or a whole number of CPUs, from 1 to 2^20"),
    "task_limit": (_optional(_integer()), "null or a whole number of workers"),
    "cpu_quota": (_optional(_number(0.001)), "null or CPUs' worth of time (a number from 0.001)"),
    "cpu_period": (_optional(_number(0.001, 1.0)), "null or a CFS period in seconds, from 0.001 to 1"),
    "cpu_runs_on": (_optional(_integer(1, 1 << 20)), "null or a whole number of CPUs, from 1 to 2^20"),
}
LIMITS: dict[str, tuple[Check, str]] = {
    "somaxconn": (_optional(_integer()), "null or a whole number"),
    "nofile": (_optional(_integer()), "null or a whole number of descriptors"),
}
# What `size --facts` cannot do without; `lint --facts` reads whatever is there.
SIZE_NEEDS = ("total_mib", "available_mib", "cpus")


class FactsFile:
    """One facts file's text, for errors that point into it."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self.text = read_small(self.path, "--facts", limit=16 << 20)

    def fail(self, where: str, expected: str, got: Any = None, *, missing: bool = False) -> UsageError:
        # a wrong value is pointed at by its key, a missing key by the object that lacks it
        parts = where.split(".")
        key = parts[-2] if missing and len(parts) > 1 else "" if missing else parts[-1]
        line, col = self._locate(key.split("[", 1)[0]) if key else (1, 1)
        at = f"{self.path}:{line}:{col}" if line else self.path
        if missing:
            return UsageError(f"{at}: \"{where}\" is missing: expected {expected} (a facts file written by "
                              "apachetune size --save-facts)")
        shown = json.dumps(got, allow_nan=True)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return UsageError(f"{at}: \"{where}\" is {shown}: expected {expected}")

    def _locate(self, key: str, pattern: str | None = None) -> tuple[int, int]:
        """Where `"key":` (or `pattern`) first appears (line, column, 1-based), or (0, 0)."""
        m = re.search(pattern or r'"' + re.escape(key) + r'"\s*:', self.text)
        if not m:
            return 0, 0
        line = self.text.count("\n", 0, m.start()) + 1
        return line, m.start() - (self.text.rfind("\n", 0, m.start()) + 1) + 1

    def parse(self) -> dict[str, Any]:
        try:
            data = json.loads(self.text, parse_constant=self._constant)
        except json.JSONDecodeError as e:
            raise UsageError(f"{self.path}:{e.lineno}:{e.colno}: not a facts file written by apachetune: "
                             f"{e.msg}") from None
        if not isinstance(data, dict):
            raise UsageError(f"{self.path}:1:1: expected a JSON object (a facts file written by apachetune "
                             "size --save-facts)")
        return data

    def _constant(self, name: str) -> Any:
        line, col = self._locate(name, r"(?<![\w\"])" + re.escape(name))
        raise UsageError(f"{self.path}:{line}:{col}: {name} is not a number a facts file may hold")


def _check_fields(f: FactsFile, obj: dict[str, Any], fields: dict[str, tuple[Check, str]], prefix: str) -> None:
    for key, (check, expected) in fields.items():
        if key in obj and not check(obj[key]):
            raise f.fail(prefix + key, expected, obj[key])


def _object(f: FactsFile, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise f.fail(where, "an object", value)
    return value


def read_facts(path: str | os.PathLike[str], *, for_sizing: bool) -> dict[str, Any]:
    """The facts file's JSON, every value it holds checked. `for_sizing`: the memory and CPU
    figures `size` works from must be there."""
    f = FactsFile(path)
    data = f.parse()
    if for_sizing:
        for key in SIZE_NEEDS:
            if key not in data:
                raise f.fail(key, TOP[key][1], missing=True)
    _check_fields(f, data, TOP, "")
    services = _object(f, {} if data.get("services") is None else data["services"], "services")
    check, expected = MIB
    for name, mib in services.items():
        if not check(mib):
            raise f.fail(f"services.{name}", expected, mib)
    if data.get("httpd") is not None:
        _check_httpd(f, _object(f, data["httpd"], "httpd"), for_sizing)
    if data.get("limits") is not None:
        _check_limits(f, _object(f, data["limits"], "limits"))
    return data


def _check_httpd(f: FactsFile, httpd: dict[str, Any], for_sizing: bool) -> None:
    if for_sizing:
        for key in (*HTTPD, "children"):
            if key not in httpd and key != "idle":
                raise f.fail(f"httpd.{key}", HTTPD[key][1] if key in HTTPD else "a list of children", missing=True)
    _check_fields(f, httpd, HTTPD, "httpd.")
    children = httpd.get("children", [])
    if not isinstance(children, list):
        raise f.fail("httpd.children", "a list of children", children)
    for i, child in enumerate(children):
        where = f"httpd.children[{i}]"
        child = _object(f, child, where)
        for key in WORKER_SAMPLE:
            if key not in child:
                raise f.fail(f"{where}.{key}", WORKER_SAMPLE[key][1], missing=True)
        _check_fields(f, child, WORKER_SAMPLE, where + ".")


def _check_limits(f: FactsFile, limits: dict[str, Any]) -> None:
    _check_fields(f, limits, LIMITS, "limits.")
    mounts = limits.get("mounts", [])
    ok = isinstance(mounts, list) and all(
        isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m) for m in mounts)
    if not ok:
        raise f.fail("limits.mounts", "a list of [mount point, file system type] pairs", mounts)
