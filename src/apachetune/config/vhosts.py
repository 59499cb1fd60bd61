"""Virtual hosts as httpd maps them: address:port → server names → file:line (`httpd -S`).

Follows server/vhost.c (ap_fini_vhost_config, add_name_vhost_config, dump_a_vhost): httpd walks
the <VirtualHost> sections in reverse configuration order; a wildcard address (`*`, `_default_`,
0.0.0.0) joins the default list, any other address the IP hash table (256 buckets); a second
virtual host on the same address:port turns it into a name-based chain whose default server is
the first one in the file. `dump()` prints what `httpd -t -D DUMP_VHOSTS` prints.

Host names in <VirtualHost> are resolved from /etc/hosts only (a linter must not hang on DNS);
anything else is reported as unresolved, where httpd would log AH00547 and ignore it too when its
resolver fails.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apachetune.config.effective import EffectiveConfig, ResolvedDirective, ResolvedSection
from apachetune.config.words import split_words

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

IPHASH_TABLE_SIZE = 256
UNRESOLVED_REVERSE = "bogus_host_without_reverse_dns"


@dataclass
class VirtualHost:
    section: ResolvedSection
    server_name: str | None  # ServerName's host part, None when not set
    port: int  # the server's port (ServerName's, else the main server's)
    aliases: list[str] = field(default_factory=list)
    wild_aliases: list[str] = field(default_factory=list)
    addresses: list[tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    hostname: str = ""  # server_hostname after httpd's defaults

    @property
    def file(self) -> str:
        return self.section.node.file

    @property
    def line(self) -> int:
        return self.section.node.open_end_line or self.section.node.line


@dataclass
class AddressChain:
    """ipaddr_chain: one address:port and the virtual hosts that answer on it."""

    addr: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int
    server: VirtualHost  # the default server for this address
    # name_chain: (virtual host, the port of the address that put it here); None: IP-based
    names: list[tuple[VirtualHost, int]] | None = None
    initial: list[tuple[VirtualHost, int]] = field(default_factory=list)

    @property
    def wildcard(self) -> bool:
        return self.addr.packed == bytes(len(self.addr.packed))

    def label(self) -> str:
        if self.wildcard:
            text = f"*:{self.port}"
        elif self.addr.version == 6:
            text = f"[{self.addr}]:{self.port}"
        else:
            text = f"{self.addr}:{self.port}"
        return text[:-1] + "*" if self.port == 0 else text


@dataclass
class VhostMap:
    main_hostname: str
    main_port: int
    vhosts: list[VirtualHost]
    ip_chains: list[AddressChain]  # in httpd's dump order (hash buckets)
    default_chains: list[AddressChain]

    @property
    def chains(self) -> list[AddressChain]:
        return [*self.ip_chains, *self.default_chains]

    def dump(self) -> str:
        """dump_vhost_config(): exactly what `httpd -t -D DUMP_VHOSTS` prints."""
        out = ["VirtualHost configuration:\n"]
        for ic in self.chains:
            where = f"({ic.server.file}:{ic.server.line})"
            if ic.names is None:
                out.append(f"{ic.label():<22} {ic.server.hostname} {where}\n")
                continue
            out.append(f"{ic.label():<22} is a NameVirtualHost\n")
            out.append(f"{'':8} default server {ic.server.hostname} {where}\n")
            for vh, port in ic.names:
                out.append(f"{'':8} port {port if port else '*'} namevhost {vh.hostname} ({vh.file}:{vh.line})\n")
                out += [f"{'':16} alias {a}\n" for a in vh.aliases]
                out += [f"{'':16} wild alias {a}\n" for a in vh.wild_aliases]
        return "".join(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "main_server": {"name": self.main_hostname, "port": self.main_port},
            "addresses": [
                {"address": ic.label(), "name_based": ic.names is not None,
                 "default_server": _vh_json(ic.server),
                 "servers": [_vh_json(v) for v, _ in (ic.names or [(ic.server, ic.port)])]}
                for ic in self.chains],
        }


def _vh_json(vh: VirtualHost) -> dict[str, Any]:
    return {"name": vh.hostname, "aliases": vh.aliases + vh.wild_aliases, "file": vh.file, "line": vh.line}


def split_host_port(text: str) -> tuple[str, int]:
    """ServerName's `[scheme://]host[:port]`."""
    if "://" in text:
        text = text.split("://", 1)[1]
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else 0
    host, sep, port = text.rpartition(":")
    if sep and port.isdigit() and host:
        return host, int(port)
    return text, 0


def _etc_hosts(path: str = "/etc/hosts") -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return table
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        for name in words[1:]:
            table.setdefault(name.lower(), []).append(words[0])
    return table


Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_addresses(text: str, default_port: int,
                    hosts: dict[str, list[str]]) -> tuple[list[tuple[Address, int]], list[str]]:
    """get_addresses(): each word of <VirtualHost ...> → (address, port) pairs, or unresolved."""
    found: list[tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]] = []
    unresolved: list[str] = []
    for word in split_words(text):
        wild_port = False
        w = word
        if w.endswith("*") and (len(w) < 2 or w[-2] == ":"):
            wild_port = True
            w = w[:-2] if len(w) >= 2 else w
        host, port = (w, 0) if w == "*" else split_host_port(w)
        if not port and not wild_port:
            port = default_port
        if host in ("*", "") or host.lower() == "_default_":
            found.append((ipaddress.IPv4Address("0.0.0.0"), port))
            continue
        try:
            found.append((ipaddress.ip_address(host), port))
        except ValueError:
            addrs = hosts.get(host.lower())
            if not addrs:
                unresolved.append(word)
            found += [(ipaddress.ip_address(a), port) for a in addrs or []]
    return found, unresolved


def hash_addr(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> int:
    """vhost.c hash_addr: the address's last four bytes read as a native (x86: little-endian) int."""
    key: int = struct.unpack("<I", addr.packed[-4:])[0]
    key ^= key >> 16
    return ((key >> 8) ^ key) % IPHASH_TABLE_SIZE


def local_hostname() -> str:
    """ap_get_local_host(): what httpd calls itself without a global ServerName (AH00558)."""
    name = socket.gethostname()
    hosts = _etc_hosts()
    addrs = hosts.get(name.lower())
    if addrs:
        for alias, ips in hosts.items():
            if addrs[0] in ips and "." in alias:
                return alias
        return name if "." in name else addrs[0]
    return name if "." in name else "127.0.0.1"


def reverse_name(addr: Address, hosts: dict[str, list[str]]) -> str:
    for name, ips in hosts.items():
        if str(addr) in ips:
            return name
    return UNRESOLVED_REVERSE


def _directives(section: ResolvedSection, name: str) -> list[ResolvedDirective]:
    lname = name.lower()
    return [c for c in section.children if isinstance(c, ResolvedDirective) and c.lname == lname]


def build(eff: EffectiveConfig, hosts: dict[str, list[str]] | None = None) -> VhostMap:
    hosts = _etc_hosts() if hosts is None else hosts
    main_name = eff.get("ServerName")
    main_host, main_port = split_host_port(main_name.args[0]) if main_name and main_name.args else ("", 0)
    main_host = main_host or local_hostname()
    vhosts = [_read_vhost(s, main_port, hosts) for s in eff.sections if s.lname == "virtualhost"]
    chains = _Chains()
    for vh in reversed(vhosts):  # as httpd, walking backwards (ap_init_vhost_config's order)
        has_default = chains.add(vh)
        vh.hostname = _hostname(vh, has_default, main_host, hosts)
    ip_chains = [ic for b in sorted(chains.buckets) for ic in chains.buckets[b]]
    return VhostMap(main_host, main_port, vhosts, ip_chains, chains.default_list)


def _read_vhost(section: ResolvedSection, main_port: int, hosts: dict[str, list[str]]) -> VirtualHost:
    names = _directives(section, "ServerName")
    host, port = split_host_port(names[-1].args[0]) if names and names[-1].args else (None, 0)
    vh = VirtualHost(section, host, main_port)
    vh.addresses, vh.unresolved = parse_addresses(section.args_text.rstrip(">"), main_port, hosts)
    if port:
        vh.port = port
    elif vh.addresses and vh.addresses[0][1]:
        vh.port = vh.addresses[0][1]
    for d in _directives(section, "ServerAlias"):
        for name in d.args:
            (vh.wild_aliases if any(c in name for c in "*?") else vh.aliases).append(name)
    return vh


def _hostname(vh: VirtualHost, has_default: bool, main_host: str, hosts: dict[str, list[str]]) -> str:
    """The name a vhost without ServerName gets (fix_hostname in server/vhost.c)."""
    if vh.server_name:
        return vh.server_name
    if has_default:
        return main_host
    if not vh.addresses:
        return "bogus_host_without_forward_dns"
    return reverse_name(vh.addresses[0][0], hosts)


def _is_any(addr: IPAddress) -> bool:
    return addr.packed == bytes(len(addr.packed))


class _Chains:
    """httpd's name-based vhost chains: one per IP address and port (hashed into buckets), and
    the `_default_`/`*` list (server/vhost.c: add_name_vhost_config)."""

    def __init__(self) -> None:
        self.buckets: dict[int, list[AddressChain]] = {}
        self.default_list: list[AddressChain] = []

    def add(self, vh: VirtualHost) -> bool:
        """Chain every address of `vh`; returns whether one of them is a wildcard address."""
        has_default = False
        prev = None
        for addr, port in vh.addresses:
            if _is_any(addr):
                # the same wildcard address and port twice in a row in one vhost is chained once
                self._add_default(vh, addr, port, repeated=prev is not None and _is_any(prev[0]) and prev[1] == port)
                has_default = True
            else:
                self._add_ip(vh, addr, port)
            prev = (addr, port)
        return has_default

    def _add_default(self, vh: VirtualHost, addr: IPAddress, port: int, repeated: bool) -> None:
        ic = next((c for c in self.default_list if c.port == port), None) or \
            next((c for c in self.default_list if c.port == 0), None)
        if ic and port == ic.port:
            if not repeated:
                _add_name(vh, port, ic)
            return
        ic = AddressChain(addr, port, vh)
        self.default_list.insert(0, ic)
        _add_name(vh, port, ic)

    def _add_ip(self, vh: VirtualHost, addr: IPAddress, port: int) -> None:
        bucket = self.buckets.setdefault(hash_addr(addr), [])
        ic = next((c for c in bucket if c.addr == addr and c.port == port), None) or \
            next((c for c in bucket if c.addr == addr and (c.port == 0 or port == 0)), None)
        if ic is None or port != ic.port:
            ic = AddressChain(addr, port, vh)
            bucket.insert(0, ic)
        _add_name(vh, port, ic)


def _add_name(vh: VirtualHost, port: int, ic: AddressChain) -> None:
    ic.server = vh  # walking backwards: the last one seen is the first in the file
    if ic.names is None:
        if not ic.initial:
            ic.initial = [(vh, port)]
        else:
            ic.names = [(vh, port), *ic.initial]
            ic.initial = []
    else:
        ic.names.insert(0, (vh, port))
