"""When a client's kernel sends a SYN again, after the server's full accept queue dropped it.

A dropped SYN is not an error the client sees: its kernel sends it again after the retransmission
timeout, and the request's latency jumps by that much. The schedule depends on the client's
kernel, and it changed twice in Linux:
- RFC 1122's initial timeout of 3 s, doubling (3, 6, 12 ... s): the 3 s and 9 s steps of the
  ab runs published before 2011;
- RFC 6298's 1 s, doubling (1, 2, 4 ... s: steps at 1, 3, 7, 15 s), `tcp_syn_retries` 6;
- since Linux 6.5, `tcp_syn_linear_timeouts` (default 4): the first retransmissions 1 s apart,
  then doubling, and that many retransmissions more before it gives up (tcp_write_timeout:
  tcp_syn_retries + tcp_syn_linear_timeouts): steps at 1, 2, 3, 4, 5, 7, 11, 19, 35, 67 s, given
  up at 131 s. Measured on 6.18 (an open loop of 260 connections a second on 10 prefork
  children): connections made 1, 2, 3, 4, 5, 7, 11 and 19 s after their first SYN, none given up.
The default is this machine's (validate's clients run here); `--syn-schedule` names another.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from apachetune.errors import UsageError

PROC = Path("/proc/sys/net/ipv4")
RTO_MAX = 120.0  # TCP_RTO_MAX: no retransmission timeout is longer


@dataclass(frozen=True)
class SynSchedule:
    """`gaps`: seconds before each retransmission of a dropped SYN, then, last, how long after
    the final one the client gives up (connect timeout)."""

    gaps: tuple[float, ...]
    label: str

    @classmethod
    def linux(cls, initial: float = 1.0, retries: int = 6, linear: int = 0, label: str = "") -> SynSchedule:
        # tcp_retransmit_timer on a SYN_SENT socket: the timeout stays `initial` for the first
        # `linear` retransmissions, then doubles (the first doubling from `initial` itself), at
        # most TCP_RTO_MAX; tcp_write_timeout gives up after `retries` + `linear` of them.
        sent = retries + linear
        gaps = tuple(min(RTO_MAX, initial if i <= linear + 1 else initial * 2 ** (i - linear - 1))
                     for i in range(1, sent + 2))
        return cls(gaps, label or f"initial {initial:g} s, {linear} linear, {retries} retries")

    @classmethod
    def parse(cls, text: str) -> SynSchedule:
        presets = {
            "machine": this_machine,
            "linux": lambda: cls.linux(1.0, 6, 0, "Linux 1 s doubling (RFC 6298, before 6.5)"),
            "linux-6.5": lambda: cls.linux(1.0, 6, 4, "Linux 6.5+ (4 linear timeouts)"),
            "rfc1122": lambda: cls.linux(3.0, 5, 0, "3 s doubling (RFC 1122, Linux before 2011)"),
        }
        if text in presets:
            return presets[text]()
        try:
            gaps = tuple(float(x) for x in text.split(","))
        except ValueError:
            raise UsageError(f"--syn-schedule {text!r}: expected {', '.join(presets)} or seconds between "
                             "retransmissions, e.g. 1,2,4,8") from None
        if not gaps or any(not 0 < g <= 600 for g in gaps):
            raise UsageError(f"--syn-schedule {text!r}: each gap must be above 0 and at most 600 s")
        return cls(gaps, "retransmissions after " + ", ".join(f"{g:g}" for g in gaps) + " s")

    def steps(self) -> list[float]:
        """When each retransmission is sent, seconds after the first SYN."""
        out, t = [], 0.0
        for gap in self.gaps[:-1]:
            t += gap
            out.append(t)
        return out


def _read_int(name: str) -> int | None:
    try:
        return int((PROC / name).read_text().strip())
    except (OSError, ValueError):
        return None


@lru_cache(maxsize=1)
def this_machine() -> SynSchedule:
    """This kernel's schedule: tcp_syn_retries and tcp_syn_linear_timeouts (absent before 6.5)."""
    retries = _read_int("tcp_syn_retries")
    linear = _read_int("tcp_syn_linear_timeouts")
    schedule = SynSchedule.linux(1.0, 6 if retries is None else max(1, min(retries, 127)),
                                 0 if linear is None else max(0, linear))
    steps = ", ".join(f"{s:g}" for s in schedule.steps()[:6])
    return SynSchedule(schedule.gaps, f"this machine's (retransmissions at {steps} s)")


@lru_cache(maxsize=4)
def half_open_schedule(synack_retries: int | None = None, rto: float = 0.2) -> tuple[tuple[float, ...], float]:
    """A half-open connection: the client's last ACK met a full accept queue, so the server
    holds it in SYN-RECV while the client believes it is connected and has sent its request.
    It gets in when one of its retransmissions reaches the server while the queue has room:
    the client's data (RTO 200 ms on loopback, doubling: 0.2, 0.6, 1.4, 3.0 ... s) and the
    server's SYN-ACK (`tcp_synack_retries`, 5: at 1, 3, 7, 15, 31 s). The server drops it after
    the last SYN-ACK's timeout (63 s); the client's next data retransmission is then answered
    with a reset (102.2 s). Returns (the chances, seconds after the half-open ACK; the reset).
    (Measured on httpd 2.4.71, ab -k -c 1000 on 6 worker threads: 422 resets about 110 s into
    the run, after SYN retries of a few seconds; one connection got in about 61 s later.)"""
    if synack_retries is None:
        read = _read_int("tcp_synack_retries")
        synack_retries = 5 if read is None else max(1, min(read, 20))
    given_up = 2.0 ** (synack_retries + 1) - 1  # the SYN-ACK timeouts, 1 s doubling, end to end
    synacks = {2.0 ** k - 1 for k in range(1, synack_retries + 1)}
    data, k = set(), 1
    while rto * (2 ** k - 1) < given_up:
        data.add(round(rto * (2 ** k - 1), 6))
        k += 1
    reset = round(rto * (2 ** k - 1), 6)
    return tuple(sorted(synacks | data)), reset
