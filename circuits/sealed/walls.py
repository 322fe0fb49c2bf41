"""The walls a learner's process puts up around itself before any learner's code runs (Linux; elsewhere, fewer).

Resource limits (soft = hard), death with its parent, root's capabilities given up, a seccomp filter against new
processes (threads still start), and a Landlock file system fence: read only what the parent allowed, write only the
scratch folder, no TCP, no signals outside. Each step says what it did in a few words, for the report's fence line.
"""

from __future__ import annotations

import ctypes
import os
import sys


def die_with_parent(parent: int) -> None:
    """Linux: this process is killed when the one that started it ends, however it ends (SIGTERM, a crash)."""
    if not sys.platform.startswith("linux"):
        return
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    if parent and os.getppid() != parent:  # it ended before the line above ran
        os._exit(1)


def limit(limits: dict) -> None:
    """Resource limits, soft = hard (a process without CAP_SYS_RESOURCE cannot raise them again)."""
    import resource
    import signal

    for name, value in limits.items():
        if value is not None:
            which = getattr(resource, f"RLIMIT_{name.upper()}")
            resource.setrlimit(which, (int(value), int(value) + (1 if name == "cpu" else 0)))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> str:
    """A grader run as root: give up every capability (no raising the limits, no overriding file permissions),
    and root's special powers on exec too. Nothing to do for an ordinary user."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return ""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(28, 0x2F, 0, 0, 0)  # PR_SET_SECUREBITS: noroot, no_setuid_fixup, each locked
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP (fails quietly past the last capability)
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()  # version 3: two 32-bit words, all zero
    if libc.capset(ctypes.byref(header), data) != 0:
        return f"; root's capabilities kept ({os.strerror(ctypes.get_errno())})"
    return "; root without capabilities"


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


_ARCH = {
    "x86_64": (0xC000003E, {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435}),
    "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435}),
}


def no_forks() -> str:
    """A seccomp filter: new processes fail with EPERM (threads still start), so no fork bomb — the process cap
    does not bind root. clone3 says ENOSYS, which sends the C library back to clone, whose flags can be read."""
    arch = _ARCH.get(os.uname().machine) if sys.platform.startswith("linux") else None
    if arch is None:
        return ""
    audit, nr = arch
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    code = [(ld, 0, 0, 4), (jeq, 1, 0, audit), (ret, 0, 0, allow), (ld, 0, 0, 0)]
    for name in ("fork", "vfork"):
        if name in nr:
            code += [(jeq, 0, 1, nr[name]), (ret, 0, 0, eperm)]
    code += [
        (jeq, 0, 1, nr["clone3"]),
        (ret, 0, 0, enosys),
        (jeq, 0, 4, nr["clone"]),
        (ld, 0, 0, 16),
        (jset, 0, 1, 0x00010000),  # clone: CLONE_THREAD?
        (ret, 0, 0, allow),
        (ret, 0, 0, eperm),
        (ret, 0, 0, allow),
    ]
    program = (_SockFilter * len(code))(*[_SockFilter(*c) for c in code])
    fprog = _SockFprog(len(code), program)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # no_new_privs, as seccomp requires of an unprivileged process
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return f"; forks allowed (seccomp: {os.strerror(ctypes.get_errno())})"
    return "; no forks"


# --- Landlock: the kernel's own file system fence for an unprivileged process (Linux 5.13+) -------------------
_FS = [
    1 << n for n in range(13)
]  # execute, write, read file, read dir, remove dir/file, make char/dir/reg/sock/fifo/block/sym
_READ = 1 | 4 | 8  # execute, read file, read dir


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]


def fence(readable: list[str], writable: str) -> str:
    """Allow reading only under `readable` and writing only under `writable`; say what was done, in a few words."""
    if not sys.platform.startswith("linux"):
        return "no Landlock (not Linux)"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # landlock_create_ruleset: ABI version
    if abi < 1:
        return "no Landlock (this kernel does not offer it)"
    fs = sum(_FS) | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0) | (1 << 15 if abi >= 5 else 0)
    net = 3 if abi >= 4 else 0  # bind and connect TCP: none
    scoped = 3 if abi >= 6 else 0  # abstract unix sockets and signals: none outside this process's domain
    attr = _RulesetAttr(fs, net, scoped)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(444, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"no Landlock (create_ruleset: {os.strerror(ctypes.get_errno())})"
    try:
        for path, allowed in [
            *((p, _READ) for p in readable),
            (writable, fs),
            (os.devnull, 2 | 4 | (1 << 14 if abi >= 3 else 0)),
        ]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                mask = allowed if os.path.isdir(path) else allowed & (1 | 2 | 4 | (1 << 14) | (1 << 15))
                rule = _PathBeneath(mask & fs, fd)
                if libc.syscall(445, ruleset, 1, ctypes.byref(rule), 0) < 0:
                    return f"no Landlock (add_rule {path}: {os.strerror(ctypes.get_errno())})"
            finally:
                os.close(fd)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, which restrict_self requires
            return "no Landlock (no_new_privs refused)"
        if libc.syscall(446, ruleset, 0) < 0:
            return f"no Landlock (restrict_self: {os.strerror(ctypes.get_errno())})"
    finally:
        os.close(ruleset)
    return f"Landlock ABI {abi}"
