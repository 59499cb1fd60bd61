"""One sizing run: read the config (optional), measure or replay facts, build inputs, recommend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apachetune.config.effective import EffectiveConfig
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.errors import UsageError
from apachetune.sizing.errorlog import ErrorLogEvidence
from apachetune.sizing.facts import HostFacts
from apachetune.sizing.php import PhpSetup
from apachetune.sizing.plan import Given, build_inputs
from apachetune.sizing.recommend import Recommendation, SizingInputs, choose_mpm, recommend
from apachetune.sizing.workload import LoadSample


@dataclass
class SizingRequest:
    file: str | None
    resolve: ResolveOptions | None
    given: Given
    facts_path: str | None = None
    save_facts: str | None = None
    pid: int | None = None
    pidfile: str | None = None
    sample_seconds: int = 1
    no_measure: bool = False
    target_mpm: str | None = None
    access_log: str | None = None
    log_format: str = "combined"
    status_url: str | None = None
    error_log: str | None = None  # default: the configuration's ErrorLog, when readable
    php_ini: str | None = None
    php_fpm_confs: tuple[str, ...] = ()

    @classmethod
    def from_cli(cls, file: str | None, resolve_options: ResolveOptions | None, *, facts_path: str | None = None,
                 save_facts: str | None = None, pid: int | None = None, pidfile: str | None = None,
                 sample_seconds: int = 1, no_measure: bool = False, target_mpm: str | None = None,
                 access_log: str | None = None, log_format: str = "combined", status_url: str | None = None,
                 error_log: str | None = None, php_ini: str | None = None,
                 php_fpm_confs: tuple[str, ...] = (), **given: Any) -> SizingRequest:
        if target_mpm:
            given["mpm"] = target_mpm
        return cls(file, resolve_options, Given(**given), facts_path, save_facts, pid, pidfile,
                   sample_seconds, no_measure, target_mpm, access_log, log_format, status_url, error_log,
                   php_ini, tuple(php_fpm_confs))


@dataclass
class SizingSession:
    request: SizingRequest
    eff: EffectiveConfig | None
    host: HostFacts | None
    inputs: SizingInputs
    recommendation: Recommendation
    load: LoadSample | None = None  # from an access log or mod_status
    evidence: ErrorLogEvidence | None = None  # from the error log
    php: PhpSetup | None = None  # mod_php's memory_limit, php-fpm pools httpd hands requests to

    def inputs_for(self, mpm: str) -> SizingInputs:
        """The inputs `size --target-mpm MPM` would use (each MPM has its own defaults: a prefork
        child carries a whole process, a thread only its stack)."""
        inputs, _ = build_inputs(Given(**{**self.request.given.__dict__, "mpm": mpm}), self.host, self.eff,
                                 self.load, self.evidence)
        return inputs

    def for_mpm(self, mpm: str) -> Recommendation:
        return recommend(self.inputs_for(mpm), mpm)

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.request.file,
            "inputs": self.inputs.to_json(),
            "host": self.host.to_json() if self.host else None,
            "recommendation": self.recommendation.to_json(),
            "error_log": self.evidence.to_json() if self.evidence is not None else None,
            "php": self.php.to_json() if self.php is not None else None,
        }


def run_sizing(req: SizingRequest) -> SizingSession:
    eff = resolve(req.file, req.resolve or ResolveOptions()) if req.file else None
    # The load first: a bad --access-log is refused before the machine is measured (which reads
    # whatever httpd runs here, and may take --sample seconds).
    load = None
    pid = req.pid
    pidfile = req.pidfile if req.pidfile or req.pid else _configured_pidfile(eff)
    if req.access_log:
        from apachetune.sizing.workload import from_access_log

        load = from_access_log(req.access_log, req.log_format)
    elif req.status_url:
        load, pid = _status_sample(req, pidfile)
        pidfile = None if pid else pidfile
    host = None
    passed_over: list[str] = []  # servers found by name that run another configuration
    if req.facts_path:
        host = HostFacts.load(req.facts_path)
    elif not req.no_measure:
        from apachetune.sizing.facts import SeveralHttpd, gather

        try:
            # found by name only when no pid or pid file says which: then only a server of this
            # configuration (the configuration's own PidFile names none running)
            host = gather(pid, pidfile, samples=req.sample_seconds, interval=1.0,
                          config_file=eff.main_file if eff is not None and not (pid or pidfile) else None,
                          passed_over=passed_over)
        except SeveralHttpd as e:
            missing = _missing_pidfile(eff) if not (req.pid or req.pidfile) else None
            if missing is None:
                raise
            raise SeveralHttpd(f"the configuration's PidFile {missing} names no running server, and {e}",
                               e.listed) from None
    if host is not None and req.save_facts:
        host.save(req.save_facts)
    evidence = _error_log(req, eff)
    given = req.given
    assumed = req.resolve.mpm if req.resolve else None
    # --mpm names the server's MPM wherever no configuration says it (one meaning in every
    # command): with nothing loaded to argue for another, the section is for that MPM.
    mpm_from_option = bool(assumed) and not given.mpm and (eff is None or not eff.mpm)
    if mpm_from_option:
        given = Given(**{**given.__dict__, "mpm": assumed})
    inputs, reasons = build_inputs(given, host, eff, load, evidence)
    if mpm_from_option:
        better, why = choose_mpm(frozenset(eff.modules) if eff else frozenset(), assumed)
        reasons = [f"the server's MPM, given with --mpm ({assumed})"]
        if better != assumed:
            reasons.append(f"--target-mpm {better} to size for {better} instead: {why[0]}")
    rec = recommend(inputs)
    rec.mpm_reasons = reasons
    if passed_over:
        missing = _missing_pidfile(eff)
        rec.notes.append("no httpd of this configuration was measured" + (
            f" (its PidFile {missing} names no running server)" if missing else "") + ": "
            + "; ".join(passed_over) + ", not this configuration (--pid or --pidfile to measure one anyway)")
    from apachetune.sizing.php import find_php, judge

    php = find_php(eff, req.php_ini, list(req.php_fpm_confs), search_host=not req.no_measure)
    if php is not None:
        rec.notes += judge(php, rec.mpm, rec.max_request_workers, rec.load_workers, rec.usable_mib,
                           inputs.per_worker_mib.num)
    elif eff is not None and (req.php_ini or req.php_fpm_confs):
        given_files = " and ".join(f for f in (req.php_ini and f"--php-ini {req.php_ini}",
                                               req.php_fpm_confs and "--php-fpm-conf") if f)
        rec.notes.append(f"{given_files} not read: the configuration loads no PHP module and hands no request "
                         "to php-fpm (no SetHandler or ProxyPass to an fcgi:// or unix: socket)")
    return SizingSession(req, eff, host, inputs, rec, load, evidence, php)


def _status_sample(req: SizingRequest, pidfile: str | None) -> tuple[LoadSample, int | None]:
    """mod_status read over the sample; when the status page is this machine's and its httpd is
    found here, the CPU that httpd used meanwhile gives the CPU a request (and its pid, measured next)."""
    from apachetune.sizing.workload import from_status

    url = str(req.status_url)
    seconds = max(2, req.sample_seconds)
    parent = None
    if not req.no_measure and not req.facts_path and _is_local(url):
        from apachetune.sizing.facts import find_httpd

        parent = find_httpd(req.pid, pidfile)
    if parent is None:
        return from_status(url, seconds=seconds), req.pid
    from apachetune.sizing.facts import cpu_seconds

    server = f"httpd (pid {parent.pid})"
    return from_status(url, seconds=seconds, cpu_clock=lambda: cpu_seconds(parent), server=server), parent.pid


def _is_local(url: str) -> bool:
    """Whether `url` names this machine (loopback, or one of its own names or addresses)."""
    import socket
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "::1") or host.startswith("127."):
        return True
    try:
        own = {socket.gethostname().lower(), socket.getfqdn().lower()}
        if host in own:
            return True
        mine = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None)}
        return any(a[4][0] in mine for a in socket.getaddrinfo(host, None))
    except OSError:
        return False


def _error_log(req: SizingRequest, eff: EffectiveConfig | None) -> ErrorLogEvidence | None:
    """--error-log, else the configuration's own ErrorLog when it can be read (not in CI's
    --no-measure runs: that reads this machine)."""
    from apachetune.sizing.errorlog import configured_error_log, read_error_log

    if req.error_log:
        return read_error_log(req.error_log)
    path = None if req.no_measure else configured_error_log(eff)
    if path is None:
        return None
    try:
        return read_error_log(path)
    except UsageError:  # not there or not readable here: the default is best effort
        return None


def _pidfile_path(eff: EffectiveConfig | None) -> str | None:
    """The configuration's PidFile, under its ServerRoot when relative; None when it has none."""
    import os

    d = eff.get("PidFile") if eff is not None else None
    if eff is None or d is None or not d.args:
        return None
    return d.args[0] if os.path.isabs(d.args[0]) else os.path.join(eff.server_root, d.args[0])


def _missing_pidfile(eff: EffectiveConfig | None) -> str | None:
    """The configuration's PidFile when it names no file: its server is not running."""
    import os

    path = _pidfile_path(eff)
    return path if path is not None and not os.path.isfile(path) else None


def _configured_pidfile(eff: EffectiveConfig | None) -> str | None:
    """The configuration's PidFile when it names a running server's file: the httpd this
    configuration describes, not whichever httpd runs on the machine."""
    import os

    path = _pidfile_path(eff)
    return path if path is not None and os.path.isfile(path) else None
