"""No network: host loopback, abstract sockets, outside addresses, daemons' sockets, vsock."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from sandbox_fixtures import ROOTS
from sandbox_helpers import run_py

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.seccomp import denylist_program

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.parametrize("sandbox", ROOTS, indirect=True),
]


@pytest.fixture
def loopback_listener() -> Iterator[int]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


@pytest.fixture
def abstract_listener() -> Iterator[str]:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"proctor-host-{id(server)}"
    server.bind("\0" + name)
    server.listen(4)
    try:
        yield name
    finally:
        server.close()


def connect_code(family: str, address: str) -> str:
    return f"""
    import errno, socket
    s = socket.socket(socket.{family}, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect({address})
        print("CONNECTED")
    except OSError as exc:
        print(errno.errorcode.get(exc.errno, str(exc)))
    """


def test_a_host_listener_on_loopback_is_refused(
    sandbox: BwrapSandbox, loopback_listener: int
) -> None:
    client = socket.create_connection(("127.0.0.1", loopback_listener), timeout=2)
    client.close()  # the listener is really there on the host
    outcome = run_py(sandbox, connect_code("AF_INET", f"('127.0.0.1', {loopback_listener})"))
    assert outcome.stdout.strip() == "ECONNREFUSED", outcome


def test_a_host_abstract_unix_socket_is_refused(
    sandbox: BwrapSandbox, abstract_listener: str
) -> None:
    outcome = run_py(sandbox, connect_code("AF_UNIX", repr("\0" + abstract_listener)))
    assert outcome.stdout.strip() == "ECONNREFUSED", outcome


def test_outside_addresses_are_unreachable(sandbox: BwrapSandbox) -> None:
    # 192.0.2.1 is TEST-NET-1; with no interface but lo, nothing is ever sent.
    outcome = run_py(sandbox, connect_code("AF_INET", "('192.0.2.1', 80)"))
    assert outcome.stdout.strip() == "ENETUNREACH", outcome


def test_dns_does_not_resolve(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import socket
        try:
            socket.getaddrinfo("example.org", 443)
            print("RESOLVED")
        except socket.gaierror:
            print("NO DNS")
        """,
    )
    assert outcome.stdout.strip() == "NO DNS", outcome


def test_only_loopback_exists(sandbox: BwrapSandbox) -> None:
    outcome = run_py(sandbox, "import socket; print([n for _, n in socket.if_nameindex()])")
    assert outcome.stdout.strip() == "['lo']", outcome


@pytest.mark.parametrize(
    "path",
    [
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/run/podman/podman.sock",
        "/run/dbus/system_bus_socket",
        "/var/run/dbus/system_bus_socket",
        "/run/user",
    ],
)
def test_docker_and_dbus_sockets_are_absent(sandbox: BwrapSandbox, path: str) -> None:
    outcome = run_py(sandbox, f"import os; print(os.path.lexists({path!r}))")
    assert outcome.stdout.strip() == "False", outcome


@pytest.mark.skipif(denylist_program() is None, reason="seccomp filter is x86-64 only")
def test_vsock_sockets_are_denied(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import errno, socket
        try:
            socket.socket(40, socket.SOCK_STREAM)
            print("CREATED")
        except OSError as exc:
            print(errno.errorcode[exc.errno])
        """,
    )
    assert outcome.stdout.strip() == "EPERM", outcome
