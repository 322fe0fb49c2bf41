"""A warm `circuits` per user: `check`, `list` and `watch` answered by a fork of a process that has imported
everything already, so the command pays for a connection instead of Python's imports.

The first such command starts the server in the background (and runs as it always did); the next ones connect.
Each command is one fork of the server: it takes the command's working directory, environment and terminal
(stdin, stdout and stderr, passed over the socket), runs `circuits.cli.main` exactly as the command would, and
sends back the exit code. A learner's file still runs in a fenced child of its own (sealed/): the fork
that makes the verdict is circuits' code only, as in a fresh `circuits` process.

Trusted only when nothing is in doubt: the socket lives in a folder of this user's alone (mode 0700), the peer
is this user (SO_PEERCRED), and the server runs the same Python and the same library — the same files, byte
for byte as stamped by size and modification time — under the same settings (the environment variables that
change a verdict). A server whose files changed since it started refuses and ends; anything else (no server,
a stale socket, a timeout before the fork accepted the command) and the command runs in its own process, as
before. The server ends after CIRCUITS_SERVER_IDLE seconds without a command (default 900); CIRCUITS_SERVER=0
turns it off, and so does running under pytest.

Between commands, the server primes a template for the puzzle the last `check` named (prime.py): a fork of
itself that has checked that puzzle's shipped reference, which then forks the commands in its place.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import socket
import stat
import sys

from circuits.cli.fork import fork_command, reap
from circuits.cli.wire import ACCEPT_SECONDS, line

SERVED = ("check", "list", "watch")  # the verbs that check puzzles: what the server answers
IDLE_SECONDS = 900.0
PRIME_AFTER = 0.5  # seconds without a command before a template starts priming: never between a script's commands
INTERRUPT_SECONDS = 10.0  # after a Ctrl-C, how long a client waits for its fork to say it ended
SETTINGS = ("HOME", "PYTHONPATH", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONHASHSEED")
SETTING_PREFIXES = ("CIRCUITS_", "XDG_", "HYPOTHESIS", "OMP_", "OPENBLAS_", "MKL_", "NUMPY_")


# --- who the server is: the library's files, this Python, the settings -------------------------------------
def stamp(env: dict | None = None) -> str:
    """A hash of what decides every verdict: this Python, the circuits package's files (path, size, modification
    time), and the environment variables that change a check. Two processes with the same stamp check alike."""
    env = os.environ if env is None else env
    package = os.path.dirname(os.path.abspath(__file__)).rpartition(os.sep)[0]  # circuits/
    flags = f"{sys.flags}\0{sys.warnoptions}\0{sys._xoptions}"  # -W, -X, -O, …: the server is started with them
    h = hashlib.sha256(f"{sys.executable}\0{sys.version}\0{package}\0{flags}".encode())
    for top, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".toml")):
                st = os.stat(os.path.join(top, name))
                h.update(f"\0{top}/{name}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    for key in sorted(env):
        if key in SETTINGS or key.startswith(SETTING_PREFIXES):
            h.update(f"\0{key}={env[key]}".encode())
    return h.hexdigest()[:32]


def folder() -> str | None:
    """This user's folder for the socket ($XDG_RUNTIME_DIR/circuits, else the cache folder's servers/): made
    with mode 0700, or None if it exists with any other owner or mode."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        where = os.path.join(runtime, "circuits")
    else:
        where = os.path.join(_cache_root(), "servers")
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        st = os.lstat(where)
    except OSError:
        return None
    private = stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700
    return where if private else None


def _cache_root() -> str:
    """checking.library.cache_root, without importing circuits.checking (and numpy) into the thin client."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return os.path.join(base if base and os.path.isabs(base) else os.path.expanduser("~/.cache"), "circuits")


def address(key: str) -> str | None:
    """The socket's path for the stamp `key`, or None when there is no private folder or the path is too long."""
    where = folder()
    path = None if where is None else os.path.join(where, f"{key}.sock")
    return path if path is not None and len(path.encode()) < 100 else None  # AF_UNIX paths end near 108 bytes


def wanted(argv: list[str]) -> bool:
    """Whether `argv` may go to a server: a served verb, the server allowed, and a terminal of real descriptors."""
    if not argv or argv[0] not in SERVED or os.environ.get("CIRCUITS_SERVER", "1") == "0":
        return False
    if "PYTEST_CURRENT_TEST" in os.environ or not hasattr(socket, "SO_PEERCRED") or not hasattr(socket, "send_fds"):
        return False
    streams = (sys.stdin, sys.stdout, sys.stderr)
    if streams != (sys.__stdin__, sys.__stdout__, sys.__stderr__):  # replaced (captured): answered here
        return False
    try:
        return all(s is not None and s.fileno() == fd and os.fstat(fd) for fd, s in enumerate(streams))
    except (OSError, ValueError, AttributeError):
        return False


# --- the client: the `circuits` command, thin ----------------------------------------------------------------
def client(argv: list[str]) -> int | None:
    """The exit code of `argv` as the warm server ran it, or None: run it in this process (no server yet, one
    that cannot be trusted, or any doubt before the server accepted it). Starts a server when there is none."""
    if not wanted(argv):
        return None
    try:
        return _client(argv)
    except KeyboardInterrupt:  # before the server took the command: nothing ran
        from circuits.errors import INTERRUPTED

        print(INTERRUPTED, file=sys.stderr)
        return 130


def _client(argv: list[str]) -> int | None:
    key = stamp()
    path = address(key)
    if path is None:
        return None
    conn = _connect(path)
    if conn is None:
        start(path, {"argv": argv, "cwd": os.getcwd(), "pid": os.getpid()})
        return None
    with conn:
        pid = _handshake(conn, key, argv)
        if pid is None:
            return None
        return _wait(conn)


def _peer(conn: socket.socket) -> int | None:
    """The user id of the process at the other end, as the kernel says (SO_PEERCRED: pid, uid, gid)."""
    try:
        return int.from_bytes(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)[4:8], sys.byteorder)
    except OSError:
        return None


def _connect(path: str) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(ACCEPT_SECONDS)
        conn.connect(path)
        uid = _peer(conn)
    except OSError:
        conn.close()
        return None
    if uid != os.getuid():  # a foreign server: never trusted
        conn.close()
        return None
    return conn


def _handshake(conn: socket.socket, key: str, argv: list[str]) -> int | None:
    """Send the command with this terminal; the fork's pid once it accepts, or None (it refused, or timed out:
    then it never runs the command, as it waits for `go`)."""
    request = {"stamp": key, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
    try:
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
        reply = line(conn)
        if not isinstance(reply, dict) or not isinstance(reply.get("pid"), int):
            return None
        conn.sendall(b'{"go": true}\n')
    except (OSError, ValueError):
        return None
    return reply["pid"]


def _wait(conn: socket.socket) -> int:
    """The command's exit code; Ctrl-C here is passed on to the fork (which says it was interrupted and ends). A
    fork that has not answered INTERRUPT_SECONDS after it is ended from here: the connection closes, and a fork
    whose client is gone ends at once (fork.py)."""
    conn.settimeout(None)
    buffer = bytearray()  # what came before a Ctrl-C is kept
    while True:
        try:
            reply = line(conn, buffer)
            break
        except KeyboardInterrupt:
            try:
                conn.sendall(b"int\n")
                conn.settimeout(INTERRUPT_SECONDS)
            except OSError:
                return 130
        except TimeoutError:  # only after a Ctrl-C: the fork did not answer it in time
            from circuits.errors import INTERRUPTED

            print(INTERRUPTED, file=sys.stderr)
            return 130
        except (OSError, ValueError):
            reply = None
            break
    if reply is None or not isinstance(reply.get("exit"), int):
        print("circuits: the warm server ended during the command (CIRCUITS_SERVER=0 runs without it)", file=sys.stderr)
        return 2
    return reply["exit"]


def start(path: str, first: dict | None = None) -> None:
    """Start a server for `path` in the background, with this command's environment; nothing if that fails.
    `first`: the command that starts it ({argv, cwd, pid}), whose puzzle the server primes once it has ended."""
    import subprocess

    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (
        f"import sys; sys.path.insert(0, {package_parent!r}); from circuits.cli import main; "
        f"from circuits.cli.server import serve; serve({path!r}, main, first={first!r})"
    )
    try:
        subprocess.Popen(
            [sys.executable, *subprocess._args_from_interpreter_flags(), "-c", code],
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


# --- the server ----------------------------------------------------------------------------------------------
def serve(path: str, main, idle: float | None = None, first: dict | None = None) -> None:
    """Answer commands on `path` with `main` (circuits.cli.main, handed in: cli imports this module) until idle for
    `idle` seconds (CIRCUITS_SERVER_IDLE) or its files change. `first`: the command that started it (see start)."""
    idle = float(os.environ.get("CIRCUITS_SERVER_IDLE", IDLE_SECONDS)) if idle is None else idle
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # one server per socket; a second one leaves at once
    except OSError:
        return
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())  # who holds it: `kill $(cat …lock)` ends the server
    key = stamp()
    if os.path.basename(path) != f"{key}.sock":  # started for another library or other settings
        return
    signal.signal(signal.SIGTERM, _ended(path))  # `kill`: it still takes its socket along
    _sweep(os.path.dirname(path), path)
    from circuits.cli.fork import warm_up

    warm_up()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(path)  # a dead server's socket: ours now, under the lock
    except FileNotFoundError:
        pass
    listener.bind(path)
    listener.listen(8)
    try:
        _loop(listener, key, idle, main, first)
    finally:
        listener.close()
        for name in (path, path + ".lock"):
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass


def _ended(path: str):
    """The server's SIGTERM handler: its socket and lock removed, and the process ended there and then (an exception
    raised for it could be caught on its way up; its template and warm process end with it, PDEATHSIG)."""
    server = os.getpid()

    def ended(*_) -> None:
        if os.getpid() == server:  # (a fork that has not yet taken its command's signals leaves them alone)
            for name in (path, path + ".lock"):
                try:
                    os.unlink(name)
                except OSError:
                    pass
        os._exit(0)

    return ended


def _sweep(where: str, mine: str) -> None:
    """The sockets and locks that ended servers left behind (killed: no chance to remove them): each whose lock
    nobody holds."""
    for name in os.listdir(where):
        lock = os.path.join(where, name)
        if not name.endswith(".sock.lock") or lock == mine + ".lock":
            continue
        try:
            fd = os.open(lock, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            for stale in (lock.removesuffix(".lock"), lock):
                try:
                    os.unlink(stale)
                except FileNotFoundError:
                    pass
        except OSError:
            pass
        finally:
            os.close(fd)


def _loop(listener: socket.socket, key: str, idle: float, main, first: dict | None = None) -> None:
    import select
    import time

    children: set[int] = set()  # this process's children: its forks, its templates
    spent: set = set()  # warm processes handed to forks, reaped as they end
    running = _Running()  # every command running (forked here or by the template), and the first command
    primer = _Primer(main, listener)
    if first is not None:  # primed once it has ended (it may have already)
        running.add(first.get("pid"), first.get("argv"))
        primer.want(first.get("argv"), first.get("cwd"))
    last = calm = time.monotonic()  # the last command's arrival; since when none runs
    try:
        while True:
            reap(children)
            reap(spent)
            running.update()
            now, wait = time.monotonic(), 1.0
            if running.busy:
                calm = now
            else:  # (a `watch` waiting for a save leaves the cores to the template)
                primer.resume()
                if now - calm >= PRIME_AFTER:  # not between two commands of a script
                    primer.start(children)
                elif primer.wanted is not None:
                    wait = PRIME_AFTER - (now - calm)
            if not running and now - last > idle:
                return
            ready = select.select([listener, *primer.fds(), *running.fds()], [], [], wait)[0]
            primer.heard(ready)
            if listener not in ready:
                if stamp() != key:  # its library was edited (or reinstalled): it ends, within a second
                    return
                continue
            conn, _ = listener.accept()
            last = time.monotonic()
            with conn:
                if _peer(conn) != os.getuid():  # only this user's commands (the folder already keeps others out)
                    continue
                if stamp() != key:  # the library changed under it: refuse, and end (the next command starts anew)
                    _refuse(conn)
                    return
                request, fds = _request(conn)
                try:
                    if request is None or request.get("stamp") != key:
                        _refuse(conn)
                        continue
                    pid = primer.hand(request, conn, fds)  # the primed template forks it, if there is one
                    if pid is None:
                        if not _Running.waits(request["argv"]):
                            primer.pause()  # one still priming waits: the command has the cores
                        pid = fork_command(conn, request, fds, main, spent, listener)
                        children.add(pid)
                    running.add(pid, request["argv"])
                    primer.want(request["argv"], request["cwd"])
                finally:
                    for fd in fds:
                        os.close(fd)
    finally:
        primer.end()


class _Running:
    """The commands running now (any process: a template's forks are not this process's children), each watched
    through a pidfd, which reads as ready when the process ends. Without pidfds (Linux < 5.3) only this process's
    own forks are known, and no template is started.

    A command that waits on the learner (`watch`: for a save, most of its life) keeps the server up but leaves the
    cores to a template: only the others make it `busy`."""

    WAITING = ("watch",)  # the verbs that mostly wait on the learner

    def __init__(self):
        self.pidfds: dict[int, int] = {}
        self.waiting: set[int] = set()

    def add(self, pid, argv=None) -> bool:
        if not isinstance(pid, int) or not hasattr(os, "pidfd_open"):
            return False
        try:
            self.pidfds[pid] = os.pidfd_open(pid)
        except OSError:  # ended already, or no pidfds here
            return False
        if self.waits(argv):
            self.waiting.add(pid)
        return True

    @classmethod
    def waits(cls, argv) -> bool:
        """Whether the command `argv` mostly waits on the learner (it never pauses a template)."""
        return isinstance(argv, list) and bool(argv) and argv[0] in cls.WAITING

    @property
    def busy(self) -> bool:
        """A command runs that wants the cores now (not one waiting on the learner)."""
        return any(pid not in self.waiting for pid in self.pidfds)

    def update(self) -> None:
        import select

        ended = set(select.select(self.fds(), [], [], 0)[0]) if self.pidfds else set()
        for pid, fd in list(self.pidfds.items()):
            if fd in ended:
                os.close(fd)
                del self.pidfds[pid]
                self.waiting.discard(pid)

    def fds(self) -> list[int]:
        return list(self.pidfds.values())

    def __bool__(self) -> bool:
        return bool(self.pidfds)


class _Primer:
    """The server's primed template (prime.py): the puzzle the last `check` named, started once no command runs,
    paused while a command runs here, handed the commands once it is ready, and replaced when a check names
    another puzzle."""

    def __init__(self, main, listener: socket.socket | None = None):
        self.main, self.listener = main, listener
        self.wanted = None  # the shipped reference to prime next, or None
        self.failed: set = set()  # references whose template ended before it was ready: not tried again
        self.pid = self.chan = self.path = None
        self.ready = self.paused = False

    def want(self, argv, cwd) -> None:
        from circuits.cli import prime

        if not (hasattr(os, "pidfd_open") and isinstance(argv, list) and isinstance(cwd, str)):
            return
        try:
            path = prime.reference(argv, cwd)
        except Exception:  # noqa: BLE001 - priming is only a head start: never the server's end
            return
        if path is not None and path != self.path and path not in self.failed:
            self.wanted = path

    def resume(self) -> None:
        """No command runs: a paused template goes on."""
        if self.paused:
            self._signal(signal.SIGCONT)
            self.paused = False

    def start(self, children: set[int]) -> None:
        """No command has run for a while: the wanted template is started (retiring the last), a child of this
        process (in `children`)."""
        if self.wanted is None:
            return
        path, self.wanted = self.wanted, None
        self.end()
        parent, (mine, theirs) = os.getpid(), socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            from circuits.cli.prime import template

            mine.close()
            if self.listener is not None:
                self.listener.close()  # commands reach a template through the server only
            template(theirs, path, self.main, parent)
        theirs.close()
        with _suppressed():
            os.setpgid(pid, pid)  # (the template does it too: whichever runs first)
        children.add(pid)
        self.pid, self.chan, self.path, self.ready = pid, mine, path, False

    def fds(self) -> list:
        return [self.chan] if self.chan is not None and not self.ready else []

    def heard(self, ready: list) -> None:
        """The template said it is ready, or ended before it was."""
        if self.chan is None or self.ready or self.chan not in ready:
            return
        try:
            said = json.loads(self.chan.recv(4096) or b"null")
        except (OSError, ValueError):
            said = None
        if isinstance(said, dict) and said.get("ready") == str(self.path):
            self.ready = True
        else:
            self.failed.add(self.path)
            self.end()

    def hand(self, request: dict, conn: socket.socket, fds: list[int]) -> int | None:
        """The pid of the template's fork running the command, or None: fork it here (no template ready, or it
        failed before it took the command)."""
        if not self.ready:
            return None
        try:
            self.chan.settimeout(ACCEPT_SECONDS)
            socket.send_fds(self.chan, [json.dumps(request).encode()], [conn.fileno(), *fds])
        except (OSError, ValueError):
            self.end()
            return None
        try:
            pid = json.loads(self.chan.recv(4096) or b"null").get("pid")
        except (OSError, ValueError, AttributeError):
            pid = None
        if not isinstance(pid, int):  # it may have forked: the client is answered, or runs the command itself
            self.end()
            return -1
        return pid

    def pause(self) -> None:
        if self.pid is not None and not self.ready and not self.paused:
            self._signal(signal.SIGSTOP)
            self.paused = True

    def end(self) -> None:
        """Retire the template: one that is ready ends when its socket closes (its running forks go on), one
        still priming is killed with its forked copies."""
        if self.pid is not None and not self.ready:
            self._signal(signal.SIGKILL)
        if self.chan is not None:
            self.chan.close()
        self.pid = self.chan = self.path = None
        self.ready = self.paused = False

    def _signal(self, sig: int) -> None:
        with _suppressed():
            os.killpg(self.pid, sig)
            return
        with _suppressed():
            os.kill(self.pid, sig)


def _suppressed():
    import contextlib

    return contextlib.suppress(OSError)


def _refuse(conn: socket.socket) -> None:
    try:
        conn.sendall(b'{"refused": "stale"}\n')
    except OSError:
        pass


def _request(conn: socket.socket) -> tuple[dict | None, list[int]]:
    conn.settimeout(ACCEPT_SECONDS)
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    buffer = bytearray(data)
    try:
        while b"\n" not in buffer:
            chunk = conn.recv(1 << 20)
            if not chunk:
                return None, fds
            buffer += chunk
        request = json.loads(bytes(buffer).partition(b"\n")[0])
    except (OSError, ValueError):
        return None, fds
    valid = isinstance(request, dict) and len(fds) == 3 and isinstance(request.get("argv"), list)
    return (request if valid else None), fds
