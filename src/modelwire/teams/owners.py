"""Who holds a reservation in the state file: a process on this machine, named so that a
reused pid is another owner, and whether it still runs (the SQLite limiter turns the
holds of one that does not into lost spend rows). Linux reads the start time from
/proc; elsewhere the pid alone names the process."""

from __future__ import annotations

import os

__all__ = ["is_alive", "process_owner"]


def process_owner(pid: int) -> str:
    """``pid:start`` (the start is the kernel's, so a reused pid is another owner)."""
    return f"{pid}:{_started(pid)}"


def _stat(pid: int) -> list[bytes]:
    """/proc/<pid>/stat's fields after the command (Linux; [] elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()
    except OSError:
        return []


def _started(pid: int) -> str:
    fields = _stat(pid)
    return fields[19].decode() if len(fields) > 19 else ""  # field 22: starttime


def is_alive(owner: str) -> bool:
    """Whether the process ``owner`` names still runs (a zombie does not)."""
    pid_text, _, started = owner.partition(":")
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (ValueError, OSError):
        return True  # another user's process, or not ours to judge: assume alive
    fields = _stat(pid)
    if not fields:
        return True
    return fields[0] not in (b"Z", b"X") and (not started or fields[19].decode() == started)
