"""One DNS lookup per host per run, for the HTTP client's direct connections.

A cold resolve opens many connections at once (up to 16 per host, io/index/http.py) and httpcore
looks each one's host name up again (`socket.create_connection`). A burst of identical lookups is
what some resolvers drop (this machine's; a corporate resolver, a VPN, a Kubernetes node's ndots
search list), and every dropped lookup costs the resolver's 5 s retry (issue 31: a cold resolve
6.6-12.1 s, 1.4-2.3 s with the lookup memoised). So `HostMemo` looks a (host, port) up once: the
first connection asks, concurrent ones wait for that one answer, later ones reuse it.

A failed lookup is memoised for the run too, like the HTTP client's hosts that could not be
reached (`_down`): the system resolver has already retried it (its own attempts and timeouts), and
a run that cannot resolve the index's name does not get better by asking again for every page. The
memo lives as long as the process (one lockguard command); DNS time-to-live is not honoured, which
is right for a command that runs for seconds to minutes.

`MemoBackend` is the httpcore network backend that uses it: it connects to the memoised addresses
in order (as `socket.create_connection` does) through httpcore's own `SyncBackend`. TLS is not
done here: httpcore starts it on the stream returned, with the request's host name as the server
name, so SNI and certificate checks see the name, never the address.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any

import httpcore

# socket.getaddrinfo's shape: (host, port, family, type, proto, flags) -> [(family, type, proto,
# canonname, sockaddr), ...]
Lookup = Callable[..., list[tuple[Any, ...]]]


def system_lookup(host: str, port: int, family: int = 0, type: int = 0) -> list[tuple[Any, ...]]:  # noqa: A002
    """socket.getaddrinfo, looked up when called (a test that replaces it is honoured)."""
    return socket.getaddrinfo(host, port, family, type)


class UnresolvedHost(httpcore.ConnectError):
    """The host name has no address (the lookup failed); memoised for the run."""


class _Entry:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.addresses: list[tuple[Any, ...]] = []
        self.error: UnresolvedHost | None = None


class HostMemo:
    """Addresses per (host, port), looked up once per run (concurrent first askers share one
    lookup); `lookups` counts the lookups made."""

    def __init__(self, lookup: Lookup = system_lookup) -> None:
        self._lookup = lookup
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, int], _Entry] = {}
        self.lookups = 0

    def addresses(self, host: str, port: int) -> list[tuple[Any, ...]]:
        """(family, sockaddr) of each address of `host`, in the resolver's order; UnresolvedHost
        when it has none."""
        with self._lock:
            entry = self._entries.get((host, port))
            mine = entry is None
            if entry is None:
                entry = self._entries[(host, port)] = _Entry()
                self.lookups += 1
        if mine:
            try:
                infos = self._lookup(host, port, 0, socket.SOCK_STREAM)
                entry.addresses = [(info[0], info[4]) for info in infos]
                if not entry.addresses:
                    entry.error = UnresolvedHost(f"cannot resolve {host}: no address")
            except (OSError, UnicodeError) as exc:  # gaierror; a name IDNA cannot encode
                entry.error = UnresolvedHost(f"cannot resolve {host}: {exc}")
            finally:
                entry.done.set()
        else:
            entry.done.wait()
        if entry.error is not None:
            raise UnresolvedHost(str(entry.error))
        return entry.addresses


class MemoBackend(httpcore.NetworkBackend):
    """httpcore's SyncBackend, connecting to the addresses `memo` holds for the host."""

    def __init__(self, memo: HostMemo) -> None:
        self.memo = memo
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        options = list(socket_options or [])
        error: Exception | None = None
        # each address in turn, as socket.create_connection does (an IPv6 address first, say,
        # on a machine without an IPv6 route)
        for _family, sockaddr in self.memo.addresses(host, port):
            try:
                return self._inner.connect_tcp(
                    str(sockaddr[0]), port, timeout, local_address, options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None  # addresses() returns at least one address or raises
        raise error

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return self._inner.connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


PROCESS_HOSTS = HostMemo()  # the run's memo: every HttpClient of the process shares it
