"""A seccomp denylist for sandboxed runs, compiled to classic BPF without libseccomp.

bubblewrap loads the program from a file descriptor (``--seccomp FD``) just before it executes
the command. The denylist follows Flatpak's and isolate's: kernel keyrings, io_uring, ptrace and
``process_vm_*``, bpf, perf_event_open, userfaultfd, mounts (old and new API), unshare/setns,
clone with namespace flags, TIOCSTI/TIOCLINUX ioctls, vsock sockets, and every syscall made
through a non-native ABI (i386 ``int 0x80`` or x32), which would bypass a number-based list.
Denied calls fail with EPERM, ``clone3`` with ENOSYS (its flags live in memory that BPF cannot
read, and C libraries fall back to ``clone``, which is checked).

Only x86-64 is described here; on other machines ``denylist_program`` returns ``None`` and runs
go without a filter (namespaces, capabilities dropped and no-new-privileges still hold).
"""

from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little endian)
_NR, _ARCH = 0, 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_KILL_PROCESS = 0x80000000
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C
_AF_VSOCK = 40

X86_64_DENIED = {
    "ptrace": 101,
    "syslog": 103,
    "uselib": 134,
    "personality": 135,
    "vhangup": 153,
    "pivot_root": 155,
    "chroot": 161,
    "acct": 163,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "lookup_dcookie": 212,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "fanotify_init": 300,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
}
_X86_64 = {"clone": 56, "ioctl": 16, "socket": 41, "clone3": 435}


class _Program:
    """A tiny assembler: instructions with symbolic jump targets, resolved in ``encode``."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | int, str | int, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def emit(self, op: int, k: int, jt: str | int = 0, jf: str | int = 0) -> None:
        self.code.append((op, jt, jf, k))

    def encode(self) -> bytes:
        out = bytearray()
        for pc, (op, jt, jf, k) in enumerate(self.code):
            out += struct.pack("<HBBI", op, self._offset(pc, jt), self._offset(pc, jf), k)
        return bytes(out)

    def _offset(self, pc: int, target: str | int) -> int:
        if isinstance(target, int):
            return target
        offset = self.labels[target] - pc - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"seccomp jump to {target!r} out of range: {offset}")
        return offset


def denylist_program(machine: str | None = None) -> bytes | None:
    """The compiled BPF denylist for ``machine`` (default: this one), or None if unsupported."""
    if (machine or platform.machine()) not in ("x86_64", "amd64", "AMD64"):
        return None
    p = _Program()
    p.emit(_LD_ABS, _ARCH)
    p.emit(_JEQ, _AUDIT_ARCH_X86_64, 0, "kill")
    p.emit(_LD_ABS, _NR)
    p.emit(_JGE, _X32_BIT, "kill", 0)
    for number in sorted(X86_64_DENIED.values()):
        p.emit(_JEQ, number, "eperm", 0)
    p.emit(_JEQ, _X86_64["clone3"], "enosys", 0)
    p.emit(_JEQ, _X86_64["clone"], "clone", 0)
    p.emit(_JEQ, _X86_64["ioctl"], "ioctl", 0)
    p.emit(_JEQ, _X86_64["socket"], "socket", 0)
    p.emit(_RET, _ALLOW)
    p.label("clone")
    p.emit(_LD_ABS, _arg_low(0))
    p.emit(_JSET, _NAMESPACE_FLAGS, "eperm", "allow")
    p.label("ioctl")
    p.emit(_LD_ABS, _arg_low(1))
    p.emit(_JEQ, _TIOCSTI, "eperm", 0)
    p.emit(_JEQ, _TIOCLINUX, "eperm", "allow")
    p.label("socket")
    p.emit(_LD_ABS, _arg_low(0))
    p.emit(_JEQ, _AF_VSOCK, "eperm", "allow")
    p.label("allow")
    p.emit(_RET, _ALLOW)
    p.label("eperm")
    p.emit(_RET, _ERRNO | errno.EPERM)
    p.label("enosys")
    p.emit(_RET, _ERRNO | errno.ENOSYS)
    p.label("kill")
    p.emit(_RET, _KILL_PROCESS)
    return p.encode()
