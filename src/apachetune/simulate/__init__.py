"""A discrete-event model of httpd's MPMs in motion (issue 17): `simulate` runs a configuration's
effective MPM section (after httpd's start-up adjustments) against a workload for minutes of
simulated time in seconds of real time.

clock.py     the event queue
workload.py  what the clients do: closed loop, open loop, an idle keep-alive crowd; service times
server.py    connections and workers: the accept queue, keep-alive, event's parked connections
parent.py    httpd's parent: StartServers, the once-a-second maintenance, MaxConnectionsPerChild
clients.py   the clients: SYN retries, timeouts, reconnecting
run.py       one simulation from a section and a workload, and its result
"""

from apachetune.simulate.run import SimResult, simulate

__all__ = ["SimResult", "simulate"]
