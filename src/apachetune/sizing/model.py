"""Pure capacity formulas. Each states what it computes and where it comes from.

Units: memory in MiB, time in seconds, rates per second.
"""

from __future__ import annotations

import math


def usable_memory(available_mib: float, reserved_mib: float, headroom: float) -> float:
    """Memory httpd may use: MemAvailable - memory reserved for other services - a headroom
    fraction of MemAvailable (page cache, spikes). Never negative."""
    return max(0.0, available_mib - reserved_mib - headroom * available_mib)


def memory_bound_workers(usable_mib: float, per_worker_mib: float, per_process_mib: float = 0.0,
                         threads_per_child: int = 1) -> int:
    """The folklore made exact: MaxRequestWorkers = floor(usable / cost of one worker).

    For threaded MPMs a worker costs its own memory plus 1/ThreadsPerChild of its process's
    fixed base: usable >= n * per_worker + (n / TPC) * per_process.
    """
    cost = per_worker_mib + per_process_mib / max(1, threads_per_child)
    if cost <= 0:
        raise ValueError("per-worker memory must be positive")
    return max(0, math.floor(usable_mib / cost))


def closed_loop_throughput(workers: int, cpu_s: float, cores: float, away_s: float) -> float:
    """Requests a second of `workers` always-busy workers, each request `cpu_s` of CPU on
    `cores` CPUs and `away_s` off them (sleeping, waiting on a backend or disk): mean value
    analysis of that closed network, the CPUs taken as one queue of cores x the speed plus a
    delay of the rest (Seidmann's approximation: within 1% of the exact load-dependent
    analysis for 2 cores at 27 workers x 36 ms, 400 x 0.27 ms and 10 x 25 ms).

    Its bounds are min(workers / (cpu_s + away_s), cores / cpu_s), which it meets far from the
    knee and falls short of near it, where requests wait for a core while others are away:
    27 prefork workers of a php-like application (36 ms of CPU, 0.48 s away, 1.77 CPUs) give
    44.6 req/s, not the bounds' 49.2; httpd served 40.9."""
    if workers <= 0:
        return 0.0
    if cpu_s <= 0 or cores <= 0:
        return workers / away_s if away_s > 0 else math.inf
    queue_s = cpu_s / cores  # the CPUs as one server `cores` times as fast ...
    delay_s = away_s + cpu_s * max(0.0, cores - 1) / cores  # ... and the rest of a request's time on them
    queued = throughput = 0.0
    for n in range(1, workers + 1):
        at_cpus = queue_s * (1 + queued)
        throughput = n / (at_cpus + delay_s)
        queued = throughput * at_cpus
        if throughput >= 0.99999 * cores / cpu_s:
            break  # at the CPUs' bound: more workers only queue
    return throughput


def littles_law_busy(rate: float, service_time: float) -> float:
    """Little's law L = lambda * W: the mean number of busy workers (the offered load, Erlangs)."""
    return rate * service_time


def erlang_b(servers: int, offered: float) -> float:
    """Erlang B blocking probability, by the stable recursion B(0)=1, B(k)=aB(k-1)/(k+aB(k-1))."""
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    return b


def erlang_c(servers: int, offered: float) -> float:
    """Probability that a request waits for a worker in an M/M/c queue (Erlang C).

    C = B / (1 - rho (1 - B)) with B = Erlang B and rho = a / c; 1.0 when rho >= 1 (saturated).
    """
    if servers <= 0:
        return 1.0
    rho = offered / servers
    if rho >= 1:
        return 1.0
    b = erlang_b(servers, offered)
    return b / (1 - rho * (1 - b))


def mean_queue_wait(servers: int, offered: float, service_time: float) -> float:
    """Mean time a request waits for a worker, M/M/c: Wq = C(c, a) * S / (c - a); inf if saturated."""
    if offered >= servers:
        return math.inf
    return erlang_c(servers, offered) * service_time / (servers - offered)


def sample_path_waits(jobs: list[tuple[float, float]], servers: int) -> list[float]:
    """Each request's wait for a worker when `servers` workers serve `jobs` (arrival time,
    service time), first come first served: the M/M/c queue replayed on one realised sequence
    instead of averaged over all of them. A short run's mean wait scatters widely around the
    long-run mean_queue_wait (a 3 s run at 70% of 4 workers x 50 ms: 5-31 ms, p10-p90, for a
    mean of 17 ms), so a measurement is judged against its own sample path."""
    import heapq

    free = [0.0] * servers
    waits = []
    for arrival, service in sorted(jobs):
        start = max(arrival, heapq.heappop(free))
        waits.append(start - arrival)
        heapq.heappush(free, start + service)
    return waits


def workers_for(offered: float, service_time: float, max_utilisation: float = 0.8,
                max_mean_wait: float | None = None) -> int:
    """Fewest workers keeping utilisation <= max_utilisation (and the mean wait under a bound)."""
    c = max(1, math.ceil(offered / max_utilisation)) if offered > 0 else 1
    if max_mean_wait is not None and offered > 0:
        while mean_queue_wait(c, offered, service_time) > max_mean_wait:
            c += 1
    return c


def connection_occupancy(mpm: str, requests_per_connection: float, service_time: float,
                         gap: float, keepalive_timeout: float, keepalive: bool = True) -> float:
    """Seconds one client connection holds a worker.

    prefork and worker keep the worker for the whole connection: each request's service time,
    each gap between requests (up to KeepAliveTimeout), and the final idle KeepAliveTimeout
    before the server closes. event parks idle connections in its listener, so only service
    time counts. Without keep-alive every request is its own connection.
    """
    if not keepalive or requests_per_connection <= 1:
        return service_time
    k = requests_per_connection
    if mpm == "event":
        return k * service_time
    idle = (k - 1) * min(gap, keepalive_timeout) + keepalive_timeout
    return k * service_time + idle


def offered_load(mpm: str, rate: float, service_time: float, requests_per_connection: float,
                 gap: float, keepalive_timeout: float, keepalive: bool = True) -> float:
    """Busy workers needed on average (Erlangs): connection rate x occupancy per connection."""
    if not keepalive or requests_per_connection <= 1:
        return rate * service_time
    connections = rate / requests_per_connection
    return connections * connection_occupancy(mpm, requests_per_connection, service_time, gap,
                                              keepalive_timeout, keepalive)


def idle_keepalive_clients(rate: float, requests_per_connection: float, gap: float,
                           keepalive_timeout: float) -> float:
    """Connections idle in keep-alive at any moment, by Little's law: connections per second x
    the idle seconds each spends (its gaps, each cut at KeepAliveTimeout, and KeepAliveTimeout
    after its last response before the server closes it)."""
    if requests_per_connection <= 1 or rate <= 0:
        return 0.0
    idle = (requests_per_connection - 1) * min(gap, keepalive_timeout) + keepalive_timeout
    return rate / requests_per_connection * idle


# What one connection event holds beyond its workers costs httpd (its own pool and buckets):
# measured by `apachetune validate --mpm event --target httpd` on httpd 2.4.71 (MaxRequestWorkers
# idle keep-alive connections held, PSS above the idle server, per connection; docs/validate.md).
EVENT_CONNECTION_MIB = 32.8 / 1024


def recycled_pools(processes: int, threads_per_child: int, max_mem_free_kib: int | None = None) -> int | None:
    """The pools of closed connections httpd's event keeps for the next ones: up to 3/4 of
    ThreadsPerChild a process (event.c's child_main, when MaxMemFree is set, as it is by
    default: 2048 KiB; with MaxMemFree 0 they are not bounded, and None says so). Each keeps
    the memory its connection's requests grew it to. An idle server has them already (its
    connections closed); with every worker serving a live connection they are taken; beyond
    MaxRequestWorkers clients, while event closes keep-alive connections and their clients
    reconnect, live connections and a full list of recycled pools are there at once."""
    if max_mem_free_kib == 0:
        return None
    return processes * (threads_per_child * 3 // 4)


def kept_pool_mib(per_connection_mib: float, max_mem_free_kib: int | None = None) -> float:
    """What one kept pool of a closed connection costs: what a connection's pool grew to, but
    its allocator gives back all it holds free beyond MaxMemFree (KiB; 0 is no limit). Measured
    on httpd 2.4.71 event, 16 x 25 workers, at 2x MaxRequestWorkers clients: 288 kept pools took
    9 MiB by default (2048 KiB), 4.4 MiB with MaxMemFree 16, 15.6 KiB each."""
    if max_mem_free_kib:
        return min(per_connection_mib, max_mem_free_kib / 1024)
    return per_connection_mib


def peak_memory(max_request_workers: int, per_worker_mib: float, parent_mib: float = 0.0,
                per_process_mib: float = 0.0, threads_per_child: int = 1, app_mib: float = 0.0,
                held_connections: int = 0, per_connection_mib: float = 0.0, recycled: int = 0,
                recycled_mib: float | None = None) -> float:
    """Memory (PSS) of the whole server with every worker busy:

    parent + processes x per process + MaxRequestWorkers x (per worker + application memory
    a request holds) + the connections event holds beyond its workers x what each costs it +
    the pools of closed ones it keeps beside them (`recycled`, each `recycled_mib`, by default
    a connection's cost), with processes = MaxRequestWorkers for prefork (threads_per_child 1) and
    ceil(MaxRequestWorkers / ThreadsPerChild) for worker and event. The per-worker and
    per-process figures are those of facts.measure_httpd (prefork: a child's PSS and 0;
    threaded: USS per thread and PSS - USS per process). prefork and worker hold no connection
    beyond their workers (the rest wait in the kernel's backlog): `held_connections` is 0 there.
    """
    tpc = max(1, threads_per_child)
    processes = max_request_workers if tpc == 1 else math.ceil(max_request_workers / tpc)
    return (parent_mib + processes * per_process_mib + max_request_workers * (per_worker_mib + app_mib)
            + held_connections * per_connection_mib
            + recycled * (per_connection_mib if recycled_mib is None else recycled_mib))
