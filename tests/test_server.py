"""The warm server (circuits/cli/server.py): a command answered by it as by its own process, a server of another
version or in a folder others can read never used, no server a fallback that starts one, a killed or idle server
leaving nothing behind; and the thin client (`import circuits.cli`) imports none of numpy, sympy, rich or
hypothesis."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import ctrl_c_default
from test_sealed import FORGES, WRONG_01, answered, project

from circuits.checking import curriculum
from circuits.cli import prime, server

pytestmark = pytest.mark.skipif(not hasattr(server.socket, "SO_PEERCRED"), reason="the server needs SO_PEERCRED")

ROOT = Path(__file__).resolve().parent.parent
CHECK = ["check", "1", "--solution", "--no-margins", "--json", "--no-cache"]


def settings(run: Path, idle: str = "120") -> dict:
    """What decides a server's stamp, for a server of the test's own (its socket in `run`)."""
    run.mkdir(mode=0o700, exist_ok=True)
    return {"XDG_RUNTIME_DIR": str(run), "PYTHONPATH": str(ROOT), "CIRCUITS_SERVER_IDLE": idle, "CIRCUITS_SERVER": "1"}


def environment(run: Path, idle: str = "120") -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}  # (under pytest it never serves)
    return env | settings(run, idle)


def waited(condition, seconds: float = 90.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return False


def started(env: dict, first: dict | None = None) -> tuple[subprocess.Popen, str]:
    code = (
        "from circuits.cli import main; from circuits.cli.server import address, serve, stamp; "
        f"serve(address(stamp()), main, first={first!r})"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdin=subprocess.DEVNULL)
    path = subprocess.run(
        [sys.executable, "-c", "from circuits.cli.server import address, stamp; print(address(stamp()))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert waited(lambda: os.path.exists(path) or proc.poll() is not None) and proc.poll() is None
    return proc, path


def ended(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def short():
    """A folder with a short path: a socket's path ends near 108 bytes, and pytest's tmp_path can be longer."""
    where = Path(tempfile.mkdtemp(prefix="cs-"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


@pytest.fixture(scope="module")
def running():
    """One server for the module's tests, and the settings that reach it."""
    where = Path(tempfile.mkdtemp(prefix="cs-"))
    run = where / "run"
    proc, path = started(environment(run))
    yield proc, path, settings(run)
    ended(proc)
    shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
def as_client(running, monkeypatch):
    """This process as a client of `running`: its settings, and outside pytest's `never serve`."""
    for k, v in running[2].items():
        monkeypatch.setenv(k, v)
    return running


def test_the_command_imports_none_of_what_a_verb_needs():
    code = "import sys, circuits.cli; print(sorted({m.split('.')[0] for m in sys.modules}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert not {"numpy", "sympy", "rich", "hypothesis"} & set(json.loads(out.replace("'", '"')))


def test_the_puzzle_api_is_still_one_import_away():
    code = "from circuits import Puzzle, Vocab, functional, Head; import circuits; print(circuits.Trace.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "Trace"


def test_under_pytest_a_command_never_goes_to_a_server():
    assert os.environ.get("PYTEST_CURRENT_TEST") and not server.wanted(CHECK)


def test_a_command_is_answered_by_the_server_as_by_its_own_process(as_client, capfd):
    proc, _, env = as_client
    got = [server._client(CHECK) for _ in range(2)]  # reused: one server, a fork per command
    served = capfd.readouterr().out.splitlines()
    assert got == [0, 0] and proc.poll() is None
    assert [untimed(line) for line in served] == [untimed(own_check())] * 2


def own_check() -> str:
    """What CHECK prints in a process of its own (no server)."""
    own = subprocess.run(
        [sys.executable, "-m", "circuits", *CHECK],
        cwd=ROOT,
        env=os.environ | {"CIRCUITS_SERVER": "0"},
        capture_output=True,
        text=True,
    )
    assert own.returncode == 0
    return own.stdout


def untimed(said: str) -> dict:
    """A check's JSON without its wall time (the one field two runs of a check never share)."""
    result = json.loads(said)
    assert result.pop("seconds") >= 0
    return result


def test_a_mistake_is_the_same_one_line_and_exit_code(as_client, capfd):
    assert server._client(["check", "no_such_puzzle"]) == 2
    said = capfd.readouterr()
    assert said.out == "" and said.err.startswith("circuits: ") and len(said.err.splitlines()) == 1


def test_a_server_of_another_version_is_refused(as_client, capfd):
    _, path, _ = as_client
    conn = server._connect(path)
    assert conn is not None
    with conn:
        assert server._handshake(conn, "0" * 32, CHECK) is None  # the fork never runs it
    assert capfd.readouterr().out == ""


def test_without_a_server_the_command_runs_here_and_starts_one(short, monkeypatch):
    for k, v in settings(short / "run").items():
        monkeypatch.setenv(k, v)
    asked = []
    monkeypatch.setattr(server, "start", lambda path, first: asked.append(path))
    assert server._client(CHECK) is None
    assert asked == [server.address(server.stamp())]


def test_a_folder_others_can_read_is_never_used(tmp_path, monkeypatch):
    (tmp_path / "circuits").mkdir(mode=0o755)
    os.chmod(tmp_path / "circuits", 0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setattr(server, "start", lambda path, first: pytest.fail("started a server in an open folder"))
    assert server.address(server.stamp()) is None and server._client(CHECK) is None


def test_a_killed_server_is_replaced_and_nothing_hangs(short, monkeypatch):
    env = environment(short / "run")
    proc, path = started(env)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert os.path.exists(path)  # its socket is left behind: nobody answers it
    for k, v in settings(short / "run").items():
        monkeypatch.setenv(k, v)
    begun = time.monotonic()
    assert server._client(CHECK) is None  # refused at once: run here, and a new server started
    assert time.monotonic() - begun < server.ACCEPT_SECONDS + 30  # (a bound, not a measurement: nothing waits)
    lock = Path(path + ".lock")
    assert waited(lambda: lock.read_text().strip() not in ("", str(proc.pid)) and server._connect(path) is not None)
    os.kill(int(lock.read_text()), signal.SIGTERM)


def test_an_idle_server_ends_and_takes_its_socket_along(short):
    proc, path = started(environment(short / "run", idle="1"))
    proc.wait(timeout=90)
    assert proc.returncode == 0 and not os.path.exists(path)


def test_a_second_server_for_the_same_socket_leaves_at_once(running):
    _, path, env = running
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from circuits.cli import main; from circuits.cli.server import serve; serve({path!r}, main)",
        ],
        env=os.environ | env,
        timeout=60,
    )
    assert other.returncode == 0 and running[0].poll() is None


def _stat(pid: int) -> tuple[str, int]:
    """A process's state letter and parent, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return fields[0], int(fields[1])


def _processes() -> list[tuple[int, int, bytes, bytes]]:
    """Every process: pid, parent, command line, name."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            pid = int(entry.name)
            found.append((pid, _stat(pid)[1], (entry / "cmdline").read_bytes(), (entry / "comm").read_bytes().strip()))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _templates_of(pid: int, names=(prime.PRIMING, prime.READY)) -> list[int]:
    """The server's primed templates (cli/prime.py): its children so named."""
    return [p for p, parent, _, name in _processes() if parent == pid and name in names]


def _forks_of(pid: int) -> list[int]:
    """The server's forks running commands: its own, or its template's, with its command line."""
    mine = Path(f"/proc/{pid}/cmdline").read_bytes()
    parents = {pid, *_templates_of(pid)}
    return [p for p, parent, cmd, name in _processes() if parent in parents and cmd == mine and p not in parents]


def watch(where: Path, env: dict, **popen) -> subprocess.Popen:
    """`circuits watch` as a client of the server `env` names, in a new workspace under `where`, once its first
    check is on screen (it then waits for a save)."""
    subprocess.run(
        [sys.executable, "-m", "circuits", "init", str(where / "ws")],
        env=os.environ | {"CIRCUITS_SERVER": "0"},
        check=True,
        capture_output=True,
    )
    client = subprocess.Popen(
        [sys.executable, "-m", "circuits", "watch"],
        cwd=where / "ws",
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        **popen,
    )
    said = b""
    try:
        while b"watching" not in said:
            assert select.select([client.stdout], [], [], 90)[0], said
            chunk = os.read(client.stdout.fileno(), 4096)
            assert chunk, said
            said += chunk
    except BaseException:
        client.kill()
        raise
    return client


@pytest.mark.parametrize("how", ["interrupt", "kill"])
def test_the_client_gone_or_interrupted_ends_its_command(running, tmp_path, how):
    proc, _, env = running
    client = watch(
        tmp_path, environment(Path(env["XDG_RUNTIME_DIR"])), stderr=subprocess.PIPE, preexec_fn=ctrl_c_default
    )
    try:
        assert _forks_of(proc.pid)  # a fork runs it: this client was served
        client.send_signal(signal.SIGINT if how == "interrupt" else signal.SIGKILL)
        client.wait(timeout=60)
        if how == "interrupt":
            assert client.returncode == 130 and b"interrupted" in client.stderr.read().lower()
        assert waited(lambda: not _forks_of(proc.pid), 30)
    finally:
        if client.poll() is None:
            client.kill()


def test_a_checked_puzzle_is_primed_and_its_next_check_forked_by_the_template(as_client, capfd):
    proc, path, env = as_client
    assert server._client(CHECK) == 0
    assert waited(lambda: _templates_of(proc.pid, [prime.READY]))  # it names itself so once it said it is ready
    template = _templates_of(proc.pid, [prime.READY])[0]
    conn = server._connect(path)
    assert conn is not None
    with conn:
        fork = server._handshake(conn, server.stamp(), CHECK)
        assert fork is not None and _stat(fork)[1] == template
        assert server._wait(conn) == 0
    served = capfd.readouterr().out.splitlines()
    assert [untimed(line) for line in served] == [untimed(own_check())] * 2


@pytest.mark.parametrize("n", range(len(FORGES)), ids=list(FORGES))
def test_a_forge_fails_in_a_check_the_primed_template_forks(as_client, tmp_path, monkeypatch, capfd, n):
    """The sealed verdict through the server: a check of 01 forked by the template primed for 01 (which has checked
    01's reference in its own process) still runs the learner's file sealed, and the forge earns its real verdict."""
    proc = as_client[0]
    assert server._client(CHECK) == 0  # 01 is primed from here on (if an earlier test had not already)
    assert waited(lambda: _templates_of(proc.pid, [prime.READY]))
    project(tmp_path, {"01_consonants.py": answered("01_consonants", FORGES[list(FORGES)[n]], WRONG_01)})
    monkeypatch.chdir(tmp_path)
    capfd.readouterr()
    template = _templates_of(proc.pid, [prime.READY])[0]
    conn = server._connect(as_client[1])
    assert conn is not None
    with conn:
        fork = server._handshake(conn, server.stamp(), ["check", "1", "--no-cache", "--no-margins"])
        assert fork is not None and _stat(fork)[1] == template
        assert server._wait(conn) == 1
    said = capfd.readouterr().out
    assert "(±0.1)" in said and "not sharp enough" in said and "Traceback" not in said


def test_the_command_that_started_the_server_is_primed_once_it_has_ended(short):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # (its pid is gone: the server primes at once)
    first = {"argv": ["check", "9", "--solution"], "cwd": str(ROOT), "pid": gone.pid}
    proc, _ = started(environment(short / "run"), first)
    try:
        assert waited(lambda: _templates_of(proc.pid, [prime.READY]))
    finally:
        ended(proc)


def test_a_killed_server_takes_its_socket_and_its_template_along(short, monkeypatch):
    proc, path = started(environment(short / "run"))
    try:
        for k, v in settings(short / "run").items():
            monkeypatch.setenv(k, v)
        assert server._client(CHECK) == 0
        assert waited(lambda: _templates_of(proc.pid))
        template = _templates_of(proc.pid)[0]
    finally:
        ended(proc)  # SIGTERM, as `kill $(cat …lock)`
    assert proc.returncode == 0 and not os.path.exists(path) and not os.path.exists(path + ".lock")
    assert waited(lambda: not Path(f"/proc/{template}").exists() or _stat(template)[0] == "Z")


def test_a_watch_waiting_for_a_save_does_not_keep_a_check_from_being_primed(short, tmp_path, monkeypatch):
    """`watch` in one terminal, `check N` in another: the check is primed while `watch` waits for a save."""
    env = environment(short / "run")
    proc, _ = started(env)
    try:
        client = watch(tmp_path, env, stderr=subprocess.DEVNULL)
        for k, v in settings(short / "run").items():
            monkeypatch.setenv(k, v)
        assert server._client(CHECK) == 0
        assert waited(lambda: _templates_of(proc.pid, [prime.READY]))
        assert client.poll() is None  # (primed while it still runs)
        client.kill()
        client.wait(timeout=60)
    finally:
        ended(proc)


PRIMER = """
import os, select, sys, time
from circuits.checking import curriculum
from circuits.cli import main, server

def state(pid):
    return open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[0]

def until(condition):
    end = time.monotonic() + 90
    while not condition():
        assert time.monotonic() < end
        time.sleep(0.05)

primer = server._Primer(main)
primer.want(["check", "8", "--solution"], sys.argv[1])
print(primer.wanted.name, curriculum.is_shipped(primer.wanted))
children = set()
primer.start(children)
print(primer.pid in children, primer.ready, primer.wanted)
primer.pause()
until(lambda: state(primer.pid) == "T")
print("paused")
primer.resume()
until(lambda: state(primer.pid) != "T")
print("going on")
while not primer.ready:
    ready = select.select(primer.fds(), [], [], 120)[0]
    assert ready, "the template never said it was ready"
    primer.heard(ready)
print("ready", primer.path.name)
pid = primer.pid
primer.end()
os.waitpid(pid, 0)
print("ended")
"""


def test_a_template_still_priming_is_paused_while_a_command_runs_and_goes_on_after(short):
    """What the server does when a command comes before its template is ready: it stops the template (and the
    copies it forked) for as long as the command runs here, then lets it go on, and hands it commands once it
    said it is ready (in a process of its own: the template is a fork of it)."""
    done = subprocess.run(
        [sys.executable, "-c", PRIMER, str(ROOT)],
        cwd=ROOT,
        env=environment(short / "run"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "08_induction_repeated.py True",
        "True False None",
        "paused",
        "going on",
        "ready 08_induction_repeated.py",
        "ended",
    ]


@pytest.mark.parametrize(
    "argv, primed",
    [
        (["check", "9"], "09_duplicate_token.py"),
        (["check", "09_duplicate_token", "--solution", "--json"], "09_duplicate_token.py"),
        (["list"], None),
        (["watch", "9"], None),
        (["check"], None),
        (["check", "no_such_puzzle"], None),
        (["check", "mine/99_my_own.py"], None),
    ],
)
def test_only_a_check_of_a_shipped_puzzle_is_primed_from_its_reference(argv, primed, tmp_path):
    got = prime.reference(argv, str(tmp_path))
    assert (got.name if got is not None else None) == primed
    assert got is None or curriculum.is_shipped(got)


def test_a_reference_reached_by_two_names_is_one_template(tmp_path):
    """`check 1 --solution` in the clone reaches 01 through solutions/ (a link), `check 1` elsewhere through the
    package: one file, so one template (it used to be retired and primed again at each switch)."""
    assert prime.reference(["check", "1", "--solution"], str(ROOT)) == prime.reference(["check", "1"], str(tmp_path))


def test_a_template_primes_the_puzzle_after_its_own_too():
    ids = curriculum.ids()
    assert prime.following(curriculum.folder() / f"{ids[8]}.py") == curriculum.folder() / f"{ids[9]}.py"
    assert prime.following(curriculum.folder() / f"{ids[-1]}.py") is None
