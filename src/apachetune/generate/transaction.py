"""All-or-nothing writes of a user's configuration files (generate, wizard, lint --fix, restore).

httpd reads every file of an included directory, dot-files and `.bak` files included, so nothing
this module leaves behind may sit where httpd reads: backups, staged copies and the journal live
in a per-run directory under the backup root (default /var/backups/apachetune as root, else
~/.local/state/apachetune/backups; `--backup-dir` or APACHETUNE_BACKUP_DIR), never beside the
configuration.

A commit, step by step (each step durable before the next; a failure at any step leaves the tree
as it was, and a kill -9 is undone by `recover_pending`, which every transaction runs first):
  1. check each target (a regular file, writable, not a symlink to replace unless forced) and that
     its content is still what the plan was made from;
  2. copy the originals into the run directory and write the journal (state "prepared");
  3. stage each new content (same file system as its target, owner/group/mode/xattrs copied);
  4. check the originals are unchanged once more (an edit made meanwhile is never lost);
  5. journal "committing", then rename each staged file over its target (a file with several
     hard links is rewritten through its inode so every link sees it);
  6. journal "done". An error in 5 restores what was already replaced.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apachetune.errors import ApachetuneError

JOURNAL = "journal.json"
STATES_TO_RECOVER = ("prepared", "committing")


class TransactionError(ApachetuneError):
    """The write was refused or failed; the tree is exactly as it was."""


@dataclass
class FileChange:
    path: Path  # the file httpd reads (symlinks in the include path already followed)
    new: bytes
    old: bytes | None  # what the plan was made from; None: the file must not exist yet


@dataclass
class LinkChange:
    """A symbolic link made, retargeted or removed (Debian's mods-enabled/*.load and *.conf)."""

    path: Path  # the link itself (never followed)
    new: str | None  # its target after the change; None: the link is removed
    old: str | None  # its target when the plan was made; None: no link there yet


def _link_target(path: Path) -> str | None:
    """The link's target; None when nothing is there; refuses anything that is not a link."""
    if path.is_symlink():
        return os.readlink(path)
    if os.path.lexists(path):
        raise TransactionError(f"{path} is not a symbolic link; nothing was written")
    return None


def _set_link(path: Path, target: str | None, staging: Path | None = None) -> None:
    """Make `path` a link to `target` (atomically: made aside, renamed over), or remove it."""
    if target is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    where = staging if staging is not None and staging.is_dir() \
        and staging.stat().st_dev == path.parent.stat().st_dev else path.parent
    tmp = where / f".~apachetune-{os.getpid()}-{path.name}~"
    tmp.unlink(missing_ok=True)
    os.symlink(target, tmp)
    os.replace(tmp, path)


@dataclass
class CommitResult:
    run_dir: Path
    written: list[Path] = field(default_factory=list)
    created: list[Path] = field(default_factory=list)
    backups: dict[Path, Path] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)  # "PATH -> TARGET" made, "PATH removed"


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def default_backup_root() -> Path:
    env = os.environ.get("APACHETUNE_BACKUP_DIR")
    if env:
        return Path(env)
    if os.geteuid() == 0:
        return Path("/var/backups/apachetune")
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "apachetune" / "backups"


def _failpoint(step: str) -> None:
    """Tests kill the process here (APACHETUNE_CRASH_AT=step) to prove recovery works."""
    if os.environ.get("APACHETUNE_CRASH_AT") == step:
        os.kill(os.getpid(), signal.SIGKILL)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_durable(path: Path, data: bytes, mode: int = 0o600) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_metadata(src: os.stat_result, src_path: Path, dest: Path) -> None:
    """Owner, group, mode and extended attributes (ACLs and SELinux labels are xattrs)."""
    try:
        os.chown(dest, src.st_uid, src.st_gid)
    except PermissionError:
        pass  # not root: the file stays ours, as any editor would leave it
    os.chmod(dest, src.st_mode & 0o7777)
    try:
        names = os.listxattr(src_path)
    except OSError:
        return
    for name in names:
        try:
            os.setxattr(dest, name, os.getxattr(src_path, name))
        except OSError as e:
            if e.errno not in (errno.ENOTSUP, errno.EPERM, errno.EACCES):
                raise


def _write_journal(run_dir: Path, data: dict[str, Any]) -> None:
    tmp = run_dir / (JOURNAL + ".tmp")
    tmp.unlink(missing_ok=True)
    _write_durable(tmp, json.dumps(data, indent=1).encode())
    os.replace(tmp, run_dir / JOURNAL)
    _fsync_dir(run_dir)


def _describe(e: OSError) -> str:
    return f"{e.filename}: {e.strerror}" if e.filename else str(e)


class Transaction:
    def __init__(self, changes: list[FileChange | LinkChange], *, force: bool = False, backup_root: Path | None = None,
                 label: str = "apachetune"):
        self.changes = changes
        self.force = force
        self.backup_root = backup_root or default_backup_root()
        self.label = label
        self._staging: Path | None = None

    # -- 1: preflight --------------------------------------------------------------------------

    def preflight(self) -> None:
        seen = set()
        for ch in self.changes:
            path = ch.path
            if path in seen:
                raise TransactionError(f"{path}: changed twice in one transaction")
            seen.add(path)
            if isinstance(ch, LinkChange):
                if not path.parent.is_dir():
                    raise TransactionError(f"{path}: directory {path.parent} does not exist")
                self._check_unchanged(ch)
                continue
            if path.is_symlink() and not self.force:
                target = os.readlink(path)
                raise TransactionError(f"{path} is a symbolic link (to {target}); pass --force to write "
                                       "through it")
            if not path.parent.is_dir():
                raise TransactionError(f"{path}: directory {path.parent} does not exist")
            exists = path.exists()
            if ch.old is None and exists and not self.force:
                raise TransactionError(f"{path} exists; pass --force to replace it (a backup is kept)")
            if exists:
                st = path.stat()
                if not path.is_file():
                    raise TransactionError(f"{path} is not a regular file")
                if not st.st_mode & 0o222 and not self.force:
                    raise TransactionError(f"{path} is read-only (mode {st.st_mode & 0o777:o}); pass "
                                           "--force to replace it")
            self._check_unchanged(ch)

    def _check_unchanged(self, ch: FileChange | LinkChange) -> None:
        if isinstance(ch, LinkChange):
            if _link_target(ch.path) != ch.old:
                raise TransactionError(f"{ch.path} was changed by someone else since it was read; nothing "
                                       "was written (run the command again)")
            return
        if ch.old is None:
            return
        try:
            current = ch.path.read_bytes()
        except FileNotFoundError:
            raise TransactionError(f"{ch.path} was removed since it was read; nothing was written") from None
        if current != ch.old:
            raise TransactionError(f"{ch.path} was changed by someone else since it was read; nothing "
                                   "was written (run the command again)")

    # -- the commit ------------------------------------------------------------------------------

    def commit(self) -> CommitResult:
        recover_pending(self.backup_root)
        self.preflight()
        run_dir = self._make_run_dir()
        self._staging = run_dir / "staging"
        result = CommitResult(run_dir)
        journal: dict[str, Any] = {"label": self.label, "state": "prepared", "created": time.time(),
                                   "files": []}
        staged: list[tuple[FileChange, Path | None, dict[str, Any]]] = []
        try:
            for ch in self.changes:  # 2: backups and the journal
                if isinstance(ch, LinkChange):  # the journal itself keeps the old target
                    journal["files"].append({"path": str(ch.path), "kind": "link", "old_link": ch.old,
                                             "new_link": ch.new})
                    continue
                entry: dict[str, Any] = {"path": str(ch.path), "old_sha256": sha256(ch.old),
                                         "new_sha256": sha256(ch.new), "backup": None, "links": 1}
                if ch.path.exists():
                    st = ch.path.stat()
                    entry["links"] = st.st_nlink
                    backup = run_dir / "files" / str(ch.path).lstrip("/")
                    backup.parent.mkdir(parents=True, exist_ok=True)
                    _write_durable(backup, ch.path.read_bytes())
                    _copy_metadata(st, ch.path, backup)
                    entry["backup"] = str(backup)
                    result.backups[ch.path] = backup
                journal["files"].append(entry)
            _write_journal(run_dir, journal)
            _failpoint("prepared")
            for ch, entry in zip(self.changes, journal["files"], strict=True):  # 3: stage
                staged.append((ch, self._stage(ch, run_dir), entry))
            _failpoint("staged")
            for ch in self.changes:  # 4
                self._check_unchanged(ch)
            journal["state"] = "committing"
            _write_journal(run_dir, journal)
        except (OSError, TransactionError) as e:
            self._discard(staged, run_dir, journal)
            if isinstance(e, TransactionError):
                raise
            raise TransactionError(f"nothing was written: {_describe(e)}") from None
        done: list[tuple[FileChange, dict[str, Any]]] = []
        try:  # 5
            for n, (ch, tmp, entry) in enumerate(staged, 1):
                self._install(ch, tmp, entry)
                done.append((ch, entry))
                if isinstance(ch, LinkChange):
                    result.links.append(f"{ch.path} -> {ch.new}" if ch.new else f"{ch.path} removed")
                else:
                    (result.written if ch.old is not None else result.created).append(ch.path)
                _failpoint(f"installed-{n}")
            for parent in {ch.path.parent for ch in self.changes}:
                _fsync_dir(parent)
            journal["state"] = "done"
            _write_journal(run_dir, journal)
        except OSError as e:
            _roll_back(journal)
            journal["state"] = "rolled back"
            _write_journal(run_dir, journal)
            raise TransactionError(f"nothing was written (what was replaced is restored): {_describe(e)}") \
                from None
        shutil.rmtree(run_dir / "staging", ignore_errors=True)
        return result

    def _make_run_dir(self) -> Path:
        try:
            self.backup_root.mkdir(parents=True, exist_ok=True, mode=0o700)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            for n in range(1, 1000):
                run_dir = self.backup_root / (f"{stamp}-{os.getpid()}-{self.label}" + (f"-{n}" if n > 1 else ""))
                try:
                    run_dir.mkdir(mode=0o700)
                    break
                except FileExistsError:
                    continue
        except OSError as e:
            raise TransactionError(f"cannot create the backup directory: {_describe(e)}") from None
        return run_dir

    def _stage(self, ch: FileChange | LinkChange, run_dir: Path) -> Path | None:
        """The new content, fsynced, on the target's file system; None for a write through
        the inode (several hard links). Staged files live in the run directory when it is on
        the same file system, else beside the target under a name no Include pattern matches."""
        if isinstance(ch, LinkChange):
            return None  # made at install time, aside then renamed over
        if ch.path.exists() and ch.path.stat().st_nlink > 1:
            return None
        target_dev = ch.path.parent.stat().st_dev
        staging = run_dir / "staging"
        staging.mkdir(exist_ok=True)
        if staging.stat().st_dev == target_dev:
            tmp = staging / f"{len(list(staging.iterdir()))}-{ch.path.name}"
        else:
            tmp = ch.path.parent / f".~apachetune-{os.getpid()}-{ch.path.name}~"
        _write_durable(tmp, ch.new, 0o600)
        if ch.path.exists():
            _copy_metadata(ch.path.stat(), ch.path, tmp)
        else:
            os.chmod(tmp, 0o644)
        return tmp

    def _install(self, ch: FileChange | LinkChange, tmp: Path | None, entry: dict[str, Any]) -> None:
        if isinstance(ch, LinkChange):
            _set_link(ch.path, ch.new, self._staging)
            return
        if tmp is None:  # several hard links: rewrite the inode so every name sees the new text
            fd = os.open(ch.path, os.O_WRONLY | os.O_TRUNC)
            try:
                view = memoryview(ch.new)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            return
        target = Path(os.path.realpath(ch.path)) if ch.path.is_symlink() else ch.path
        os.replace(tmp, target)

    def _discard(self, staged, run_dir: Path, journal: dict[str, Any]) -> None:
        for _ch, tmp, _entry in staged:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
        shutil.rmtree(run_dir / "staging", ignore_errors=True)
        journal["state"] = "abandoned"
        try:
            _write_journal(run_dir, journal)
        except OSError:
            pass


def _roll_back(journal: dict[str, Any]) -> list[str]:
    """Put back every file of the journal that no longer has its old content."""
    restored = []
    for entry in journal["files"]:
        path = Path(entry["path"])
        if entry.get("kind") == "link":
            current_link = os.readlink(path) if path.is_symlink() else None
            if current_link != entry["old_link"]:
                _set_link(path, entry["old_link"])
                restored.append(str(path))
            continue
        current = path.read_bytes() if path.exists() else None
        if sha256(current) == entry["old_sha256"]:
            continue
        if entry["backup"] is None:
            path.unlink(missing_ok=True)  # a file the transaction created
        else:
            data = Path(entry["backup"]).read_bytes()
            if entry.get("links", 1) > 1:
                with open(path, "r+b") as fh:
                    fh.truncate(0)
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
            else:
                tmp = Path(entry["backup"] + ".restore")
                tmp.unlink(missing_ok=True)
                _write_durable(tmp, data)
                _copy_metadata(Path(entry["backup"]).stat(), Path(entry["backup"]), tmp)
                os.replace(tmp, path)
        restored.append(str(path))
    return restored


def _owner_alive(run_dir: Path) -> bool:
    """The run directory is named <stamp>-<pid>-<label>: is that process still writing?"""
    try:
        pid = int(run_dir.name.split("-")[2])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover_pending(backup_root: Path | None = None) -> list[str]:
    """Undo any transaction a crash left half done (and remove its staged files)."""
    root = backup_root or default_backup_root()
    restored: list[str] = []
    if not root.is_dir():
        return restored
    for journal_path in sorted(root.glob(f"*/{JOURNAL}")):
        try:
            journal = json.loads(journal_path.read_text())
        except (OSError, ValueError):
            continue
        if journal.get("state") not in STATES_TO_RECOVER or _owner_alive(journal_path.parent):
            continue
        for entry in journal["files"]:
            leftover = Path(entry["path"]).parent.glob(f".~apachetune-*-{Path(entry['path']).name}~")
            for tmp in leftover:
                tmp.unlink(missing_ok=True)
        restored += _roll_back(journal)
        shutil.rmtree(journal_path.parent / "staging", ignore_errors=True)
        journal["state"] = "recovered"
        _write_journal(journal_path.parent, journal)
    return restored


def restore_run(run_dir: Path, *, backup_root: Path | None = None) -> CommitResult:
    """`apachetune restore DIR`: put back the files a run replaced, as one transaction."""
    try:
        journal = json.loads((run_dir / JOURNAL).read_text())
    except (OSError, ValueError) as e:
        raise TransactionError(f"{run_dir}: not an apachetune backup ({e})") from None
    changes: list[FileChange | LinkChange] = []
    for entry in journal["files"]:
        path = Path(entry["path"])
        if entry.get("kind") == "link":
            current_link = os.readlink(path) if path.is_symlink() else None
            if current_link != entry["old_link"]:
                changes.append(LinkChange(path, entry["old_link"], current_link))
            continue
        current = path.read_bytes() if path.exists() else None
        if entry["backup"] is None:
            continue  # a created file: restore leaves it (remove it by hand if unwanted)
        old = Path(entry["backup"]).read_bytes()
        if current != old:
            changes.append(FileChange(path, old, current))
    if not changes:
        return CommitResult(run_dir)
    return Transaction(changes, force=True, backup_root=backup_root or run_dir.parent, label="restore").commit()
