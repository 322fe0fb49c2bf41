"""The learner's process: fence itself in, run each puzzle file, and hand back only the answer, as data.

Started by sandbox.py, either as `python -I -B -c …` (grading: a fresh folder of the submission's
files) or forked from a warm zygote (`circuits check`, `watch`, `list`, the pytest plugin: see
`zygote`). It sets its limits, restricts its own file system view with Linux Landlock when the kernel
offers it (read: Python, the circuits runtime and the puzzle's own folder; write: its scratch folder; no
network; no signals to processes outside), gives up root's capabilities, refuses itself new processes
(seccomp; threads still start), dies with its parent (walls.py), then executes each puzzle file and writes one JSON
line per file to the pipe it was given. Nothing here decides a verdict: whatever this process sends is
data for the parent to check, so a file that patches circuits or forges its output can only send
numbers, which it could have written in the first place.

A code puzzle's functions stay here: the parent calls them through `serve`, one JSON line each way.
"""

from __future__ import annotations

import json
import linecache
import os
import sys
import traceback
import types

from circuits.sealed.walls import die_with_parent, drop_capabilities, fence, limit, no_forks


def main(job_fd: int) -> None:
    """A cold start: the job is in a file the parent made outside this folder and opened for us."""
    with os.fdopen(job_fd, encoding="utf-8") as f:
        run_job(json.load(f))


def run_job(job: dict) -> None:
    """Fence this process in, then run the job's files, one JSON line out per message."""
    out = os.fdopen(int(job["fd"]), "w", encoding="utf-8")
    requests = os.fdopen(int(job["requests"]), encoding="utf-8") if job.get("requests") is not None else None

    def emit(message: dict) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    die_with_parent(int(job.get("parent") or 0))
    limit(job["limits"])
    walls = fence(job["read"], job.get("scratch") or os.getcwd())
    emit({"ready": True, "fence": walls + drop_capabilities() + no_forks()})
    sys.path.insert(0, os.getcwd())  # a helper module next to the puzzle files imports as it would at home
    for item in job["files"]:
        emit({"start": item["stem"]})
        result, names = run_file(item)
        _flush()  # what the file printed reaches the parent before this process is killed
        emit({"done": item["stem"], **result})
        if item.get("serve") and requests is not None and names is not None:
            serve(names, item, requests, emit)
    emit({"end": True})


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a file may have replaced or closed them
            pass


class _Exit(BaseException):
    """os._exit(code) called by the file: reported as a mistake in it, not as this process ending."""


def _raise_exit(code=0):
    raise _Exit(code)


def run_file(item: dict) -> tuple[dict, dict | None]:
    """Execute one puzzle file; its answer names (and givens, reads, warnings) as data, or why not; and its names."""
    from circuits.sealed import codec

    shown, filename = item["shown"], item.get("filename") or item["shown"]
    try:
        if "source" in item:
            source = item["source"]
        else:
            with open(os.path.abspath(item["file"]), "rb") as f:
                source = f.read().decode("utf-8-sig")
        code = compile(source, filename, "exec", dont_inherit=True)
        # its lines by the name it is compiled under, so a traceback can quote the line that raised
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    except SyntaxError as e:
        return {"error": f"{shown} line {e.lineno}: syntax error: {e.msg}"}, None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return {"error": f"{shown} cannot be read as a Python file: {e}"[:300]}, None
    module = types.ModuleType(f"circuits_puzzle_{item['stem']}")
    module.__file__ = item.get("path") or shown
    sys.modules[module.__name__] = module  # dataclasses look modules up by name
    reads: list[str] = []
    warned: list[list] = []
    saved = _watching(reads, warned, filename)
    try:
        exec(code, module.__dict__)
    except BaseException as e:  # noqa: BLE001 - whatever the file raises (exit() included) is one line
        return {"error": _raised(e, shown, filename, "on import")}, None
    finally:
        _restore(saved)
        sys.modules.pop(module.__name__, None)
    names = vars(module)
    answer = {}
    for name in item["names"]:
        if name in names:
            answer[name] = _function(names[name]) if item["code"] else codec.answer_value(name, names[name])
        elif name not in item["optional"]:
            answer[name] = {"absent": True}
    calls = [
        [_call(names.get(name), name, codec.to_value(args), filename) for name, args in batch]
        for batch in item.get("calls", [])
    ]
    givens = {name: fingerprint_digest(names[name]) if name in names else None for name in item.get("givens", [])}
    return {"answer": answer, "calls": calls, "givens": givens, "reads": reads, "warnings": warned}, names


def _watching(reads: list, warned: list, filename: str):
    """While the file runs: the files it opens, the warnings its own lines raise, and os._exit as an exception."""
    import warnings

    def opened(event: str, args: tuple) -> None:
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)) and len(reads) < 1000:
            reads.append(os.path.abspath(os.fsdecode(args[0])))

    def shown(message, category, file, lineno, f=None, line=None):
        if file == filename and len(warned) < 100:
            warned.append([file, int(lineno), category.__name__, " ".join(str(message).split())])
        else:
            previous(message, category, file, lineno, f, line)

    if not _HOOKED:
        sys.addaudithook(lambda event, args: _HOOKED[0](event, args) if _HOOKED[0] else None)
        _HOOKED.append(None)
    _HOOKED[0] = opened
    previous = warnings.showwarning
    warnings.showwarning = shown
    posix = sys.modules.get("posix")
    saved = (previous, os._exit)
    os._exit = _raise_exit
    if posix is not None:
        posix._exit = _raise_exit
    return saved


_HOOKED: list = []


def _restore(saved) -> None:
    import warnings

    _HOOKED[0] = None
    warnings.showwarning, os._exit = saved
    posix = sys.modules.get("posix")
    if posix is not None:
        posix._exit = saved[1]


def fingerprint_digest(value) -> str:
    """A given's value as a digest the parent compares with the shipped one's (checking.givens.fingerprint)."""
    import hashlib

    from circuits.checking import givens

    try:
        return hashlib.sha256(repr(givens.fingerprint(givens.compared(value))).encode()).hexdigest()
    except Exception:  # noqa: BLE001 - an object no fingerprint can read is a changed given
        return "unreadable"


def _function(value) -> dict:
    from circuits.checking.puzzle import Stub
    from circuits.checking.reference import LIBRARY

    if isinstance(value, Stub):
        return {"stub": value.hint}
    if not callable(value):
        kind = type(value).__name__
        return {"unreadable": f"{'an' if kind[0].lower() in 'aeiou' else 'a'} {kind}, not a function"}
    return {"function": True, "library": any(value is f for f in LIBRARY)}


def serve(names: dict, item: dict, requests, emit) -> None:
    """A code puzzle: call the learner's functions on what the parent sends, until it says `next` or closes."""
    from circuits.sealed import codec

    filename = item.get("filename") or item["shown"]
    for line in requests:
        try:
            message = json.loads(line)
            if message.get("next"):
                return
            name = str(message["call"])
            args = codec.to_value(message["args"])
        except (ValueError, KeyError, TypeError, codec.Unreadable) as e:
            emit({"reply": {"unreadable": f"a request this process cannot read ({e})"}})
            continue
        emit({"reply": _call(names.get(name), name, args, filename)})
        _flush()


def _circuits_root() -> str:
    """The circuits package this process imports (the runtime copy): this file is in circuits/sealed/."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _call(fn, name: str, args, filename: str) -> dict:
    """fn(*args) on the parent's inputs: the output as data, or what it raised and where in the file; a function
    that runs any of circuits' own code (the reference, functional.softmax, …) is refused, named by what it ran."""
    from circuits.sealed import codec

    root, ran = _circuits_root(), []

    def watch(frame, event, arg):
        if event == "call" and not ran and frame.f_code.co_filename.startswith(root):
            ran.append([frame.f_globals.get("__name__", "circuits"), frame.f_code.co_name])

    sys.setprofile(watch)
    try:
        got = fn(*args)
    except BaseException as e:  # noqa: BLE001 - the learner's code raising is a finding
        sys.setprofile(None)
        if ran:
            return {"library": ran[0]}
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == filename]
        line = frames[-1].line if frames else ""
        where = (f" at line {frames[-1].lineno}" + (f" ({line})" if line else "")) if frames else ""
        return {
            "raised": {
                "type": type(e).__name__,
                "message": str(e)[:2000],
                "where": where,
                "line": frames[-1].lineno if frames else None,
                "code": line or None,
            }
        }
    finally:
        sys.setprofile(None)
    if ran:
        return {"library": ran[0]}
    try:
        return {"value": codec.value(got)}
    except codec.Unreadable as e:
        return {"unreadable": str(e)}


def _raised(e: BaseException, shown: str, filename: str, when: str) -> str:
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == filename]
    at = f" at line {frames[-1].lineno}" if frames else (f" at line {e.lineno}" if getattr(e, "lineno", None) else "")
    said = f": {e}" if str(e) else ""
    if isinstance(e, _Exit):
        return f"{shown} called os._exit() {when}{at}; remove it"
    if isinstance(e, SystemExit):
        return f"{shown} called exit() {when}{at}; remove it"
    if type(e).__name__ == "CircuitError":  # the library's own one-line message, from a call the file made
        return f"{shown}: {e}"
    return f"{shown} raised {type(e).__name__} {when}{at}{said}"[:300]


def zygote(sock_fd: int) -> None:
    """A warm parent for learner processes: Python, numpy and circuits imported once, then one fork per job.

    Each job arrives on the socket with its pipes (out, requests, printed); the fork fences itself in and runs
    it (run_job), and this process says its pid, and later how it ended. It ends, killing every fork still
    running, when the socket closes: when the process that started it ends, however it ends."""
    import select
    import signal
    import socket

    from circuits.checking import givens, puzzle  # noqa: F401 - what every job needs, paid for once (the
    from circuits.sealed import codec  # noqa: F401 - boot line imports numpy, sympy and circuits)

    _imported_late()

    sock = socket.socket(fileno=sock_fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()

    def send(message: dict) -> None:
        sock.send(json.dumps(message).encode())

    try:
        send({"ready": True})  # (its starter may be gone already: then it ends here, its folder removed)
        while True:
            ready = select.select([sock, wake_r], [], [])[0]
            if wake_r in ready:
                os.read(wake_r, 4096)
                _reap(children, send)
            if sock in ready:
                data, fds, _, _ = socket.recv_fds(sock, 1 << 22, 5)
                if not data:
                    return
                job = json.loads(data)
                pid = os.fork()
                if pid == 0:
                    _forked(job, fds, [sock.fileno(), wake_r, wake_w])
                for fd in fds:
                    os.close(fd)
                children.add(pid)
                send({"pid": pid})
    except (OSError, ValueError):
        return
    finally:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        _leave_folder()


def _imported_late() -> None:
    """What a job would import the first time it handed back an answer, imported here once instead (0.08 s of
    every job): numpy.ma (codec's masked arrays), the modules sympy imports at its first symbolic sum, and the
    codec of a file saved with a byte-order mark."""
    import importlib

    for name in ("numpy.ma", "sympy.tensor.tensor", "sympy.sets.setexpr", "encodings.utf_8_sig"):
        try:
            importlib.import_module(name)
        except ImportError:  # another sympy: then a job imports what it needs, as before
            pass


def _leave_folder() -> None:
    """The zygote's own empty folder (its cwd, made for it by sealed/processes.py), removed as it ends: the process
    that started it may have been killed with no chance to."""
    here = os.getcwd()
    if os.path.basename(here).startswith("circuits-zygote-"):
        try:
            os.rmdir(here)
        except OSError:  # gone already (its starter removed it), or not empty: left as it is
            pass


def _reap(children: set, send) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        send({"exit": pid, "code": os.waitstatus_to_exitcode(status)})


def _forked(job: dict, fds: list[int], close: list[int]) -> None:
    """In the fork: a session of its own, the job's pipes in place, then the job; never returns."""
    import signal

    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in close:
            os.close(fd)
        os.setsid()
        out, requests, stdout, stderr = fds
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        os.close(stdout)
        os.close(stderr)
        os.chdir(job["cwd"])
        os.environ.clear()
        os.environ.update(job["env"])
        job.update(fd=out, requests=requests, parent=os.getppid())
        run_job(job)
    except BrokenPipeError:  # the parent has what it needs, and closed the pipe: nothing to say
        pass
    except BaseException:  # noqa: BLE001 - said in what it printed; the parent sees the pipe close
        traceback.print_exc()
    finally:
        _flush()
        os._exit(0)
