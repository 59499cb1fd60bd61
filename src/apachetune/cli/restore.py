"""`apachetune restore`: put back the files a generate/wizard/fix run replaced."""

from __future__ import annotations

import json
from pathlib import Path

import click

from apachetune.console import out
from apachetune.generate.transaction import (
    JOURNAL,
    default_backup_root,
    recover_pending,
    restore_run,
)


@click.command("restore")
@click.argument("run_dir", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--list", "list_runs", is_flag=True, help="List the backups, newest last.")
@click.option("--backup-dir", type=click.Path(file_okay=False), default=None,
              help="The backup root (default: where generate puts backups).")
def command(run_dir, list_runs, backup_dir):
    """Restore the files of one backup RUN_DIR (all or nothing), or list the backups.

    A run that was interrupted (kill -9, power loss) is undone before anything else."""
    root = Path(backup_dir) if backup_dir else default_backup_root()
    for path in recover_pending(root):
        out.print(f"recovered {path} (an interrupted write was undone)")
    if list_runs or not run_dir:
        for journal in sorted(root.glob(f"*/{JOURNAL}")) if root.is_dir() else []:
            data = json.loads(journal.read_text())
            files = ", ".join(f["path"] for f in data.get("files", []))
            out.print(f"{journal.parent}  {data.get('label', '?')}  {data.get('state', '?')}  {files}")
        return 0
    result = restore_run(Path(run_dir), backup_root=root)
    if not result.written and not result.created:
        out.print("every file already has its backed-up content; nothing to restore")
    for path in result.written:
        out.print(f"restored {path}")
    if result.backups:
        out.print(f"what was replaced is kept in {result.run_dir}")
    return 0
