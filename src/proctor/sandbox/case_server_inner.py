"""The trusted case server that runs inside one sandbox and starts each case on request.

Standard library only: the host passes this file's source to the sandbox's ``python3 -I -S -c``
(never imported by Proctor itself), so it runs with whatever Python the root filesystem has.
Its start is on the path of a job's first case, so it imports only modules that load fast
(``_socket`` and ``marshal``, not ``socket``, ``json`` or ``shutil``: 20 ms less per server).
It runs as pid 1 of the sandbox's pid namespace, so no process inside can kill it (init ignores
signals it has no handler for) and it reaps every orphan.

Protocol on the ``SOCK_SEQPACKET`` socket named by ``PROCTOR_CASE_SERVER_FD`` (one message each):

1. host → server: a request (a ``marshal``-ed dict written by the trusted host alone: ``argv``,
   ``env``, ``cwd``, ``rlimits``, ``clock``) with the
   write ends of the case's stdout and stderr pipes, with ``clock`` the write end of its clock
   pipe (kept open in the case as descriptor ``CLOCK_FD``), and the case cgroup's ``tasks``
   (v1) or ``cgroup.procs`` (v2) files, opened by the host (``SCM_RIGHTS``);
2. the server forks the case, which moves itself into the case cgroup through those files
   (writing ``0``: a single-threaded process moving itself skips the kernel's threadgroup lock
   and its RCU wait), closes them, sets its rlimits and execs; if it cannot join, it sends
   ``nojoin`` and exits without running anything;
3. server → host: ``exit STATUS`` (a raw wait status) when the case's first process ends.

Before each case the server empties ``/tmp`` and ``/dev/shm`` and removes every System V IPC
object (shared memory, message queues, semaphores) of the server's IPC namespace, so every
case starts with them empty, as a sandbox of its own would. (POSIX message queues, which
cannot be listed without mounting ``mqueue``, stay; they are capped by ``RLIMIT_MSGQUEUE``
and the namespace's ``queues_max``, 800 KiB per uid by default.) Every limit is the host's
to enforce: it kills the case's cgroup at the wall clock and at the case's end, and kills
this whole sandbox when the server stops answering.
"""

from __future__ import annotations

import _socket
import array
import ctypes
import errno
import marshal
import os
import resource
import signal
import sys

FD_VARIABLE = "PROCTOR_CASE_SERVER_FD"
CLOCK_FD = 3
PR_SET_DUMPABLE = 4
MAX_REQUEST = 1 << 20
MAX_FDS = 8
SCRATCH = ("/tmp", "/dev/shm")  # noqa: S108 - the sandbox's own tmpfs, emptied
SYSV_IPC = ("shm", "msg", "sem")  # /proc/sysvipc/KIND: the IPC namespace's objects
IPC_RMID = 0


def _undumpable(libc: ctypes.CDLL) -> None:
    """Keep cases (same uid) from reading or writing this process through ``/proc/1/mem``."""
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        sys.exit(f"case server: prctl failed: {os.strerror(ctypes.get_errno())}")


def _remove_sysv_ipc(libc: ctypes.CDLL) -> None:
    """Remove every System V shared memory segment, message queue and semaphore set.

    They outlive the processes that made them (a segment's memory stays charged until it is
    removed), and the cases of a server share its IPC namespace: without this a case could
    pin memory for good or leave a message for the next case.
    """
    for kind in SYSV_IPC:
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as listing:
                ids = [int(line.split()[1]) for line in list(listing)[1:] if line.strip()]
        except OSError:
            continue
        for ident in ids:
            if kind == "shm":
                libc.shmctl(ident, IPC_RMID, None)
            elif kind == "msg":
                libc.msgctl(ident, IPC_RMID, None)
            else:
                libc.semctl(ident, 0, IPC_RMID)


def _receive(ctl: _socket.socket) -> tuple[dict[str, object], list[int]] | None:
    """The next request and its descriptors, or None when the host closed the socket."""
    fds = array.array("i")
    data, ancillary, _, _ = ctl.recvmsg(MAX_REQUEST, _socket.CMSG_SPACE(MAX_FDS * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if not data:
        return None
    request = marshal.loads(data)  # noqa: S302 - only the host can write on this socket
    if not isinstance(request, dict):
        sys.exit("case server: a request that is not a dict")
    return request, list(fds)


def _join(files: list[int], ctl: _socket.socket) -> None:
    """Move this (single-threaded) process into the case cgroup, or tell the host and leave."""
    try:
        for fd in files:
            os.write(fd, b"0")
    except OSError as err:
        os.write(2, f"case server: cannot join the case's cgroup: {err}\n".encode())
        ctl.send(b"nojoin")
        os._exit(125)


def _child(request: dict[str, object], fds: list[int], ctl: _socket.socket) -> None:
    """In the forked case: join the case cgroup, set the limits, exec the command."""
    try:
        os.setsid()
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        clocked = bool(request.get("clock"))
        _join(fds[3:] if clocked else fds[2:], ctl)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        if clocked:
            if fds[2] != CLOCK_FD:
                os.dup2(fds[2], CLOCK_FD)
            os.set_inheritable(CLOCK_FD, True)
        # every other descriptor (the control socket, the cgroup files) is closed *before* the
        # case's RLIMIT_NOFILE is set: a lower limit would leave those above it open
        first_closed = CLOCK_FD + 1 if clocked else 3
        os.closerange(first_closed, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
        for number, soft, hard in request["rlimits"]:  # type: ignore[attr-defined]
            resource.setrlimit(number, (soft, hard))
        argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
        env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
        os.chdir(str(request["cwd"]))
        _exec(argv, env)
    except BaseException as err:
        os.write(2, f"case server: {err}\n".encode())
    os._exit(127)


def _exec(argv: list[str], env: dict[str, str]) -> None:
    """``execvp`` as bubblewrap does it (a file without ``#!`` runs under ``/bin/sh``)."""
    try:
        os.execvpe(argv[0], argv, env)  # noqa: S606 - the case is the program to run
    except OSError as err:
        if err.errno == errno.ENOEXEC:
            os.execve("/bin/sh", ["/bin/sh", *argv], env)  # noqa: S606
        os.write(2, f"case server: execvp {argv[0]}: {err.strerror}\n".encode())
        os._exit(1)


def _wait(pid: int) -> int:
    """Reap children (orphans included) until ``pid`` ends; its raw wait status."""
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        if done == pid:
            return status


def _wipe(folder: str, mode: int) -> None:
    """Empty ``folder`` (the last case's scratch files), whatever modes the case left.

    Iterative (a case may nest folders deeper than Python's recursion limit); links are
    removed, never followed. A tree nested past ``PATH_MAX`` cannot be walked by path: the
    server then stops, and the host runs the next case in a sandbox of its own.
    """
    os.chmod(folder, mode)  # as the sandbox made it: a case may have taken its rights away
    folders: list[str] = []
    pending = [folder]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    os.chmod(entry.path, 0o700)  # readable and writable before it is opened
                    folders.append(entry.path)
                    pending.append(entry.path)
                else:
                    os.unlink(entry.path)
    for path in reversed(folders):  # found parents first: removed children first
        os.rmdir(path)


def _serve(ctl: _socket.socket, libc: ctypes.CDLL) -> None:
    """Answer requests until the host closes the socket."""
    modes = {folder: os.stat(folder).st_mode & 0o7777 for folder in SCRATCH}
    while True:
        received = _receive(ctl)
        if received is None:
            return
        request, fds = received
        for scratch, mode in modes.items():  # the previous case's processes are all dead now
            _wipe(scratch, mode)
        _remove_sysv_ipc(libc)
        if len(fds) < (4 if request.get("clock") else 3):
            sys.exit("case server: a request without its pipes and cgroup files")
        pid = os.fork()
        if pid == 0:
            _child(request, fds, ctl)
        for fd in fds:
            os.close(fd)
        ctl.send(f"exit {_wait(pid)}".encode())


def main() -> None:
    """Serve cases on the descriptor the host passed."""
    libc = ctypes.CDLL(None, use_errno=True)
    _undumpable(libc)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # pid 1: ignored from inside unless handled
    ctl = _socket.socket(fileno=int(os.environ.pop(FD_VARIABLE)))
    os.set_inheritable(ctl.fileno(), False)  # closed by every exec, whatever a case does
    _serve(ctl, libc)


if __name__ == "__main__":
    main()
