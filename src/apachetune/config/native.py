"""The C line splitter and tree builder (fastlex.c): built on first use, loaded if it can be.

parser.parse_text hands each file to it first; it builds the same tree as the Lark path, or
answers None for anything unusual (then the Lark path parses the file and reports any error). When
there is no C compiler or no Python headers, or APACHETUNE_PURE_PYTHON is set, everything runs in
Python: the same trees, slower (docs/benchmarks.md).

The build is the one command below, run like mpmd's (validate/mpmd_server.py): into the package
directory when it is writable (a source checkout; `make native` runs it there), otherwise into the
user's cache, named by a hash of the source and the interpreter's ABI, so a stale build is never
loaded. A failed build leaves a note beside it and is not retried until the source changes.
"""

from __future__ import annotations

import dataclasses
import importlib.machinery
import importlib.util
import os
import sys
import zlib
from functools import lru_cache
from pathlib import Path
from types import ModuleType

SOURCE = Path(__file__).with_name("fastlex.c")
MODULE = "apachetune.config._fastlex"
CFLAGS = ["-O2", "-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-Werror",
          "-Wno-missing-field-initializers", "-Wno-unused-parameter"]


def disabled() -> bool:
    return os.environ.get("APACHETUNE_PURE_PYTHON", "") not in ("", "0")


def _target_name() -> str:
    # EXT_SUFFIX without importing sysconfig (its data module costs a cold lint 5 ms)
    # Two checksums of the source and the interpreter (64 bits; hashlib's OpenSSL import alone
    # costs a cold lint 3 ms): an edited fastlex.c or another Python is another build.
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    data = SOURCE.read_bytes() + suffix.encode() + sys.version.encode()
    return f"_fastlex-{zlib.crc32(data):08x}{zlib.adler32(data):08x}{suffix}"


def _places() -> list[Path]:
    """Where a build may be: beside the source, then the user's cache."""
    places = [SOURCE.parent]
    try:
        from apachetune.paths import cache_dir

        places.append(cache_dir() / "native")
    except OSError:
        pass
    return places


def build(directory: Path) -> Path:
    """Compile fastlex.c into `directory` (atomically); raises OSError or CalledProcessError."""
    directory.mkdir(parents=True, exist_ok=True)
    import shutil
    import subprocess

    out = directory / _target_name()
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise OSError("no C compiler (cc)")
    import sysconfig

    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        raise OSError(f"no Python headers in {include}")
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    try:
        subprocess.run([cc, *CFLAGS, f"-I{include}", "-o", str(tmp), str(SOURCE)], check=True,
                       capture_output=True, text=True)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def _find_or_build() -> Path | None:
    name = _target_name()
    for place in _places():
        if (place / name).exists():
            return place / name
    import subprocess  # building: the first run only

    for place in _places():
        failed = place / f"{name}.failed"
        if failed.exists():
            return None
        try:
            return build(place)
        except subprocess.CalledProcessError as e:  # the compiler refused: note why, once
            try:
                failed.write_text(e.stderr or str(e))
            except OSError:
                pass
            return None
        except OSError:
            continue  # not writable here, or no compiler: the next place, or pure Python
    return None


def _load(path: Path) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(path))
    spec = importlib.util.spec_from_file_location(MODULE, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@lru_cache(maxsize=1)
def fastlex() -> ModuleType | None:
    """The configured C module, or None (pure Python)."""
    if disabled():
        return None
    try:
        path = _find_or_build()
        if path is None:
            return None
        module = _load(path)
        from apachetune.config.parser import _logical
        from apachetune.config.tree import Blank, Comment, Directive, Section

        module.configure(tuple((cls, tuple(f.name for f in dataclasses.fields(cls)))
                               for cls in (Blank, Comment, Directive, Section)), _logical)
        return module
    except (ImportError, OSError, ValueError, TypeError):
        return None  # a build this interpreter cannot load, or node classes it does not know


if __name__ == "__main__":  # `make native`: build beside the source now
    print(build(SOURCE.parent))
