"""The ``faceoff`` client commands against a real API (SQLite, real Redis broker on a unique
queue; a worker's effect is written with the ORM). Run as subprocesses against an API
process: the global --url, submit's existing job, status columns in 80 columns, references,
datasets upload and info (--url and local files), and the final state of progress bars.
Called in process against the API served by uvicorn in a thread (``server``): every
command's happy path and refusals, an unreachable server, and the machine a job ran on
with the warnings of unfair timings."""

from __future__ import annotations

import bz2
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from faceoff.cli.main import main
from faceoff.cli.up import free_port
from faceoff.core.db import session_scope
from faceoff.core.models import Job, TracePoint
from faceoff.core.references import record_reference
from tests.cli.test_cli import synthetic_table_args
from tests.client.test_client import finish, server  # noqa: F401
from tests.datasets import dataset_file
from tests.reliability.servers import api_env, running_api

REPO = Path(__file__).resolve().parents[2]
JOB = ["--dataset", "a1a", "--loss", "logistic", "--l2", "1e-4", "--solver", "dual_cd"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TINY = b"1 1:1 2:2\n-1 2:1 3:0.5\n1 1:0.5 3:2\n-1 1:1 2:1 3:1\n"


def faceoff(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "faceoff.cli.main", *map(str, args)],
        cwd=REPO,
        env={**os.environ, "COLUMNS": "80", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def service(sqlite_url, redis_url, settings_for, tmp_path):
    """(base URL of a running API process, its settings)."""
    settings = settings_for(sqlite_url, redis_url)
    with running_api(api_env(settings), tmp_path / "api.log") as api:
        yield api.base, settings


def test_global_url_and_submit_says_when_the_job_exists(service):
    url, _ = service
    first = faceoff("--url", url, "submit", *JOB)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("submitted job 1 (queued): dual_cd on a1a")
    again = faceoff("submit", "--url", url, *JOB)
    assert again.stdout.startswith("existing job 1 (queued): dual_cd on a1a; an identical")
    forced = faceoff("--url", url, "submit", *JOB, "--force")
    assert forced.stdout.startswith("submitted job 2 (queued)")
    # the option after the command wins; the global one applies to service commands only
    unreachable = "http://127.0.0.1:9"
    assert faceoff("--url", unreachable, "status", "--url", url).returncode == 0
    assert "cannot reach" in faceoff("--url", unreachable, "status").stderr
    # faceoff solvers --url: the server's catalogue, an installed peer said installed
    listed = faceoff("--url", url, "solvers", "--format", "table")
    assert listed.returncode == 0, listed.stderr
    assert f"faceoff solvers of {url}" in listed.stdout
    assert "peer of scikit-learn (installed)" in listed.stdout
    assert "needs scikit-learn" not in listed.stdout
    refused = faceoff("--url", url, "secret")
    assert refused.returncode == 2 and "--url does not apply to faceoff secret" in refused.stderr


def column(output: str, name: str, until: str) -> dict[str, str]:
    """{job id: the text of column ``name``, its folded lines joined} of a status table;
    the column ends where the header ``until`` starts."""
    lines = output.splitlines()
    header = next(line for line in lines if line.startswith("id "))
    start, end = header.index(name), header.index(until)
    cells: dict[str, str] = {}
    job = ""
    for line in lines[lines.index(header) + 1 :]:
        job = line[:2].strip() or job
        cells[job] = cells.get(job, "") + line[start:end].strip()
    return cells


def test_status_shows_params_and_seed_in_80_columns(service):
    url, settings = service
    for sampling, seed in (("auto", 0), ("permutation", 0), ("permutation", 7)):
        extra = ["--param", f"sampling={sampling}", "--seed", str(seed)]
        assert faceoff("submit", "--url", url, *JOB, *extra).returncode == 0
    submitted = faceoff(
        "submit", "--url", url, *JOB[:-1], "sklearn.liblinear", "--param", "formulation=primal"
    )
    assert submitted.returncode == 0, submitted.stderr
    finish(settings, 2, stop_reason="max_epochs")
    shown = faceoff("status", "--url", url)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert max(map(len, lines)) <= 80 and "…" not in shown.stdout, shown.stdout
    rows = {line.split()[0]: line.split() for line in lines if line[:2].strip().isdigit()}
    assert [rows[job][1] for job in "1234"] == ["queued", "succeeded", "queued", "queued"]
    assert rows["4"][2] == "sklearn.liblinear" and "max_epochs" in rows["2"]
    assert column(shown.stdout, "params", "seed") == {
        "1": "-",  # the solver's defaults (sampling=auto)
        "2": "sampling=permutation",
        "3": "sampling=permutation",
        "4": "formulation=primal",
    }
    # liblinear's primal formulation uses no seed: stored as none, shown so
    seeds = {"1": "0", "2": "0", "3": "7", "4": "none"}
    assert column(shown.stdout, "seed", "objective") == seeds
    assert "a1a" in shown.stdout and "l2=0.0001" in shown.stdout
    wide = faceoff("status", "--url", url, "--wide")
    assert "trace, wall s" in wide.stdout and "native, 0.25" in wide.stdout
    assert "sampling=permutation" in wide.stdout


def test_trace_follow_of_a_finished_job_shows_its_final_state(service):
    url, settings = service
    assert faceoff("submit", "--url", url, *JOB).returncode == 0
    finish(settings, 1, n_points=600, stop_reason="converged")  # more than one event batch
    follow = faceoff("trace", "--url", url, "1", "--follow", FORCE_COLOR="1", TERM="xterm")
    assert follow.returncode == 0, follow.stderr
    assert follow.stdout.startswith("job 1: succeeded (converged), epoch 599")
    final = last_frame(follow.stderr)
    plain = ANSI.sub("", final)
    assert "100%" in plain and "epoch 599  gap 1.000e-03  succeeded (converged)" in plain
    assert_bar_full(final)


def last_frame(stderr: str) -> str:
    """The last state of a progress bar drawn on a terminal (frames end in \\r or \\n)."""
    return [frame for frame in re.split(r"[\r\n]", stderr) if "━" in frame][-1]


def assert_bar_full(line: str) -> None:
    """The bar of ``line`` (16 colours) is all one colour, green: finished, and not the
    bright black of an empty bar, which is what rich's default finished green becomes."""
    bar = re.search(r"\x1b\[(\d+)m━+\x1b\[0m", line)
    assert bar is not None and bar.group(1) == "32", repr(line)
    assert line.count("━") == len(bar.group(0)) - len(bar.group(1)) - 7


def test_solve_bar_ends_full_with_the_stop_reason():
    run = faceoff(
        *synthetic_table_args("1e-4"),
        FORCE_COLOR="1",
        TERM="xterm",
    )
    assert run.returncode == 0, run.stderr
    assert "converged" in run.stdout
    final = last_frame(run.stderr)
    plain = ANSI.sub("", final)
    assert plain.startswith("done ") and "100% converged  epoch" in plain, plain
    assert_bar_full(final)


def test_references_listing(service):
    url, settings = service
    for l2 in ("1e-4", "1e-3"):
        assert faceoff("submit", "--url", url, *JOB[:-3], l2, "--solver", "dual_cd").returncode == 0
    for job_id, primal in ((1, 0.46), (2, 0.52)):
        with session_scope(settings.database_url) as session:
            job = session.get(Job, job_id)
            job.status, job.primal, job.gap, job.data_hash = "succeeded", primal, 1e-12, "d" * 64
            record_reference(session, job)
    table = faceoff("references", "--url", url)
    assert table.returncode == 0, table.stderr
    assert "reference optima P* (2 of 2)" in table.stdout
    assert max(map(len, table.stdout.splitlines())) <= 80
    assert "0.46" in table.stdout and "0.52" in table.stdout and "a1a" in table.stdout
    one = json.loads(faceoff("references", "--url", url, "--l2", "1e-3", "--format", "json").stdout)
    assert [r["primal"] for r in one["data"]] == [0.52] and one["count"] == 1
    refused = faceoff("references", "--url", url, "--objective-hash", "xyz")
    assert refused.returncode == 2 and "objective_hash" in refused.stderr


def test_datasets_upload_and_info_on_the_server_match_the_local_file(service, tmp_path):
    url, _ = service
    path = tmp_path / "tiny.svm"
    path.write_bytes(TINY)
    up = faceoff("datasets", "upload", path, "--url", url, "--name", "tiny", "--format", "table")
    assert up.returncode == 0, up.stderr
    assert up.stdout.strip() == "tiny.svm: uploaded as dataset 1 'tiny' (4 x 3, nnz 9)"
    again = faceoff("--url", url, "datasets", "upload", path, "--name", "tiny", "--format", "json")
    assert json.loads(again.stdout)["created"] is False
    remote = json.loads(
        faceoff("datasets", "info", "tiny", "--url", url, "--format", "json").stdout
    )
    local = json.loads(faceoff("datasets", "info", path, "--format", "json").stdout)
    assert remote["id"] == 1 and remote["name"] == "tiny" and local["name"] == "tiny.svm"
    assert remote["stats"] == local["stats"] and remote["labels"] == {"-1": 2, "1": 2}
    assert remote["advice"] == pytest.approx(local["advice"])
    assert remote["advice"]["l2"] == 0.25  # 1/n by default, as for a local file
    by_id = faceoff(
        "datasets",
        "info",
        "1",
        "--url",
        url,
        "--loss",
        "squared",
        "--l2",
        "0.1",
        "--format",
        "table",
    )
    assert by_id.returncode == 0, by_id.stderr
    assert "squared, l2 = 0.1" in by_id.stdout and "dataset 1, upload" in by_id.stdout
    listing = faceoff("datasets", "list", "--url", url, "--format", "json")
    assert [d["name"] for d in json.loads(listing.stdout)] == ["tiny"]
    missing = faceoff("datasets", "info", "nope", "--url", url)
    assert missing.returncode == 2 and "no dataset named 'nope'" in missing.stderr
    bad = tmp_path / "bad.svm"
    bad.write_bytes(b"1 1:1\n1 0:2\n")
    refused = faceoff("datasets", "upload", bad, "--url", url)
    assert refused.returncode == 2 and "bad.svm: line 2" in refused.stderr
    large = tmp_path / "large.svm"
    large.write_bytes(TINY * 40_000)  # 2 MB: a progress bar on a terminal
    table = ("--format", "table")
    sent = faceoff("datasets", "upload", large, "--url", url, *table, FORCE_COLOR="1", TERM="xterm")
    assert sent.returncode == 0, sent.stderr
    assert "large.svm: uploaded as dataset 2 'large' (160,000 x 3" in ANSI.sub("", sent.stdout)
    final = last_frame(sent.stderr)
    assert "2.0/2.0 MB" in ANSI.sub("", final)
    assert_bar_full(final)


def test_datasets_synthetic_and_features_register_on_the_server(service):
    """Issue 31 item 7: `faceoff datasets synthetic` and `features` register through POST
    /datasets; the server's refusals and bad options are one line with exit status 2."""
    url, _ = service
    made = ("--url", url, "--format", "table")
    shape = ("--n-samples", "60", "--n-features", "8")
    first = faceoff("datasets", "synthetic", "syn", "--generator", "classification", *shape, *made)
    assert first.returncode == 0, first.stderr
    assert (
        first.stdout.strip() == "synthetic classification: registered as dataset 1 'syn' (60 x 8)"
    )
    again = faceoff(
        "datasets", "synthetic", "syn", "--generator", "classification", *shape, "--url", url
    )
    assert json.loads(again.stdout)["created"] is False
    k_class = ("--generator", "multiclass", *shape, "--n-classes", "3", "--density", "0.5")
    multi = faceoff("datasets", "synthetic", "syn3", *k_class, "--seed", "4", "--url", url)
    assert multi.returncode == 0, multi.stderr
    source = json.loads(multi.stdout)["source"]
    assert source == {
        "kind": "synthetic",
        "generator": "multiclass",
        "n_samples": 60,
        "n_features": 8,
        "density": 0.5,
        "seed": 4,
        "n_classes": 3,
        "layout": "planted",  # the server's default
    }
    rf = ("--of", "syn", "--kind", "fourier", "--n-components", "16", "--gamma", "0.5")
    fourier = faceoff("datasets", "features", "syn-rf", *rf, *made)
    assert fourier.returncode == 0, fourier.stderr
    assert fourier.stdout.startswith("features fourier features of 'syn': registered as dataset")
    binning = faceoff(
        "datasets", "features", "syn-rb", "--of", "syn", "--kind", "binning", "--n-grids", "4",
        "--url", url,
    )  # fmt: skip
    assert json.loads(binning.stdout)["source"]["map"] == "binning", binning.stderr
    names = [d["name"] for d in json.loads(faceoff("datasets", "list", "--url", url).stdout)]
    assert sorted(names) == ["syn", "syn-rb", "syn-rf", "syn3"]
    refusals = [
        (("synthetic", "x", "--generator", "classification", *shape, "--n-classes", "3"),
         "n_classes applies to generator multiclass only"),
        (("features", "x", "--of", "nope", "--kind", "fourier"), "nope"),
        (("features", "x", "--of", "syn", "--kind", "binning", "--gamma", "1"),
         "gamma does not apply to map binning"),
        (("synthetic", "x", "--generator", "classification", *shape, "--density", "0"),
         "--density: expected a number in (0, 1]"),
        (("synthetic", "x", "--generator", "linear", *shape), "--generator: invalid choice"),
        (("features", "x", "--kind", "fourier"), "the following arguments are required: --of"),
    ]  # fmt: skip
    for args, words in refusals:
        refused = faceoff("datasets", *args, "--url", url)
        assert refused.returncode == 2, (args, refused.stdout, refused.stderr)
        assert words in refused.stderr and len(refused.stderr.strip().splitlines()) == 1, (
            args,
            refused.stderr,
        )
    gone = faceoff("datasets", "synthetic", "y", "--generator", "regression", *shape,
                   "--url", "http://127.0.0.1:9")  # fmt: skip
    assert gone.returncode == 1 and "cannot reach" in gone.stderr


def test_datasets_info_of_a_local_file(tmp_path):
    """A local copy of a registry file gives the registry name's statistics and advice;
    a bad file names its line; compressed files are read as the service reads uploads."""
    mushrooms = dataset_file("mushrooms")  # in the mirror or the cache, where the CLI looks
    named = json.loads(faceoff("datasets", "info", "mushrooms", "--format", "json").stdout)
    copy = tmp_path / ("mine.bz2" if mushrooms.suffix == ".bz2" else "mine.svm")
    copy.write_bytes(mushrooms.read_bytes())
    local = json.loads(faceoff("datasets", "info", copy, "--format", "json").stdout)
    assert local["stats"] == named["stats"] and local["advice"] == named["advice"]
    assert local["labels"] == {"1": 3916, "2": 4208} and local["path"] == str(copy)
    table = faceoff("datasets", "info", copy, "--l2", "1e-3", "--format", "table")
    assert "advice     logistic, l2 = 0.001" in table.stdout and "→ dual_cd" in table.stdout
    bad = tmp_path / "bad.svm.bz2"
    bad.write_bytes(bz2.compress(TINY + b"1 2:x\n"))
    refused = faceoff("datasets", "info", bad)
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "faceoff datasets info: error: bad.svm.bz2: line 5: value 'x' of feature 2 is not a number"
    )
    capped = faceoff("datasets", "info", copy, FACEOFF_MAX_NNZ="1000")
    assert capped.returncode == 2 and "FACEOFF_MAX_NNZ" in capped.stderr
    plain = tmp_path / "plain.svm"
    plain.write_bytes(TINY)
    for path in (copy, plain):  # past the upload cap: refused before any byte is parsed
        large = faceoff("datasets", "info", path, FACEOFF_MAX_UPLOAD_BYTES=str(len(TINY) - 1))
        assert large.returncode == 2 and large.stderr.count("\n") == 1
        assert "larger than the limit" in large.stderr
        assert "FACEOFF_MAX_UPLOAD_BYTES" in large.stderr


def test_non_utf8_arguments_are_refused_before_sending(tmp_path):
    """A command-line argument that is not UTF-8 (a lone surrogate in Python) is one line
    naming the field, exit 2, and no request: the URL answers nothing."""
    url = f"http://127.0.0.1:{free_port()}"
    path = tmp_path / "tiny.svm"
    path.write_bytes(TINY)
    for args, field in [
        (["submit", *JOB, "--host", "\udc80"], "host"),
        (["datasets", "upload", path, "--name", "x\udcff"], "name"),
    ]:
        run = faceoff(*args, "--url", url)
        assert run.returncode == 2, run.stderr
        command = " ".join(args[:2]) if args[0] == "datasets" else args[0]
        assert run.stderr == (
            f"faceoff {command}: error: {field}: not valid UTF-8 text; the request was not sent\n"
        )


def test_bad_url_or_token_is_one_line_exit_2():
    for url, why in [("http://[::1", "Invalid port"), ("http://\udcff", "Invalid IDNA hostname")]:
        run = faceoff("--url", url, "status")
        assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
        assert run.stderr.startswith("faceoff status: error: --url ") and why in run.stderr
    run = faceoff("status", "--url", "http://127.0.0.1:9", FACEOFF_TOKEN="tök\udcff")
    assert run.returncode == 2 and run.stderr == (
        "faceoff status: error: $FACEOFF_TOKEN is not a token: it holds non-ASCII characters\n"
    )


def test_cli_commands(server, tmp_path, capsys, monkeypatch):  # noqa: F811
    url, settings = server
    argv = ["--url", url, "--dataset", "a1a", "--loss", "logistic", "--l2", "1e-4"]
    assert main(["submit", *argv, "--solver", "spdc", "--param", "batch_size=8"]) == 0
    assert capsys.readouterr().out.startswith("submitted job 1 (queued): spdc on a1a")
    assert main(["submit", *argv, "--solver", "spdc", "--param", "batch_size=0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "params.batch_size" in err[0] and "outside [1" in err[0]
    assert main(["submit", *argv, "--solver", "agd", "--max-seconds", "1e9"]) == 2
    assert "max_seconds" in capsys.readouterr().err

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("datasets: [a1a]\nlosses: [logistic]\nl2: [1e-3, 1e-4]\nsolvers: [agd]\n")
    assert main(["sweep", "--url", url, str(sweep)]) == 0
    assert capsys.readouterr().out.strip() == "sweep 1: 2 jobs, 2 queued"
    sweep.write_text("datasets: [a1a\n")
    assert main(["sweep", "--url", url, str(sweep)]) == 2
    assert "is not valid YAML" in capsys.readouterr().err
    sweep.write_bytes(b"datasets: [a1a]\nname: \xff\n")
    assert main(["sweep", "--url", url, str(sweep)]) == 2
    assert capsys.readouterr().err == (
        f"faceoff sweep: error: {sweep} is not UTF-8 text (byte 23)\n"
    )

    assert main(["status", "--url", url, "--sweep", "1"]) == 0
    assert "sweep 1: 2 jobs" in capsys.readouterr().out
    assert main(["status", "--url", url, "--format", "json"]) == 0
    assert '"count": 3' in capsys.readouterr().out

    finish(settings, 1)
    assert main(["trace", "--url", url, "1"]) == 0
    assert "job 1: succeeded, 4 points; native trace, wall 0.25 s" in capsys.readouterr().out
    assert main(["trace", "--url", url, "1", "--follow"]) == 0
    assert capsys.readouterr().out.startswith(
        "job 1: succeeded (tol), epoch 3, gap 1.000e-03; native trace, wall 0.25 s"
    )
    assert main(["status", "--url", url, "1", "--wide"]) == 0
    header, row = capsys.readouterr().out.splitlines()[1:3]
    assert header.endswith("stop  trace, wall s")
    assert row.split()[-3:] == ["tol", "native,", "0.25"]

    assert main(["cancel", "--url", url, "2"]) == 0
    assert capsys.readouterr().out.strip() == "job 2: cancelled"
    assert main(["cancel", "--url", url, "1"]) == 2
    assert "only queued or running jobs" in capsys.readouterr().err
    assert main(["status", "--url", url, "99"]) == 2
    assert "job 99 not found" in capsys.readouterr().err


def test_cli_unreachable_server(capsys, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("FACEOFF_URL", url)
    assert main(["status"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"faceoff status: error: cannot reach the Faceoff API at {url}")


def test_cli_shows_the_machine_and_warns_of_unfair_timings(server, capsys, monkeypatch):  # noqa: F811
    url, settings = server
    argv = ["submit", "--url", url, "--dataset", "a1a", "--loss", "logistic", "--l2", "1e-4"]
    assert main([*argv, "--solver", "agd", "--host", "bad host"]) == 2
    assert "host" in capsys.readouterr().err
    assert main([*argv, "--solver", "agd", "--host", "vm-a"]) == 2  # no worker serves vm-a
    assert "no live worker serves host 'vm-a'" in capsys.readouterr().err
    for solver in ("agd", "dual_cd"):
        assert main([*argv, "--solver", solver, "--host", "vm-a", "--wait-for-host"]) == 0
    assert "(queued, waiting for host vm-a)" in capsys.readouterr().out
    with session_scope(settings.database_url) as session:
        first, second = session.get(Job, 1), session.get(Job, 2)
        assert first.pinned_host == second.pinned_host == "vm-a"
        first.machine = {"host": "vm-a", "cpu_model": "AMD EPYC", "physical_cores": 2}
        first.machine["versions"] = {"numpy": "2.4.6", "cyanure": None}
        first.concurrency, first.concurrency_max, first.load_start = 1, 3, 0.5
        second.machine = {"host": "vm-b", "cpu_model": "Intel Xeon", "physical_cores": 8}
        second.concurrency = second.concurrency_max = 1
    monkeypatch.setenv("COLUMNS", "300")  # one line per message
    assert main(["status", "--url", url]) == 0
    out = capsys.readouterr().out
    assert "warning: measured on 2 different CPU models: AMD EPYC; Intel Xeon" in out
    assert "warning: 1 job(s) ran with more concurrent jobs than physical cores" in out
    assert main(["status", "--url", url, "1"]) == 0
    out = capsys.readouterr().out
    assert "ran on vm-a (AMD EPYC, 2 physical cores): 1 jobs running at start, at most 3" in out
    assert "load 0.5; numpy 2.4.6" in out and "cyanure" not in out
    assert main(["status", "--url", url, "2"]) == 0
    assert "warning" not in capsys.readouterr().out


FOUR = b"1 1:1\n2 2:1\n3 1:1 2:1\n4 2:2\n1 1:2\n2 1:1 2:3\n"


def test_datasets_info_reports_k_and_the_class_counts(tmp_path):
    """A K > 2 file keeps its labels (no binarization): K and the count of each class."""
    path = tmp_path / "four.svm"
    path.write_bytes(FOUR)
    info = json.loads(faceoff("datasets", "info", path, "--format", "json").stdout)
    assert info["classes"] == {
        "kind": "classes",
        "n_classes": 4,
        "counts": {"1": 2, "2": 2, "3": 1, "4": 1},
    }
    assert info["labels"] == {"1": 2, "2": 2, "3": 1, "4": 1}
    table = faceoff("datasets", "info", path, "--format", "table")
    assert "classes    K = 4: 1 (2), 2 (2), 3 (1), 4 (1)" in table.stdout
    path.write_bytes(b"0.5 1:1\n2 2:1\n")
    table = faceoff("datasets", "info", path, "--format", "table")
    assert "regression targets (label 0.5 is not an integer)" in table.stdout


def test_cli_k_class_submit_sweep_and_status(server, tmp_path, capsys, monkeypatch):  # noqa: F811
    """submit --multiclass, a sweep file's multiclass axis, status naming K and the form,
    and the API's refusals as one line."""
    url, _ = server
    monkeypatch.setenv("COLUMNS", "160")  # an objective on one line
    path = tmp_path / "four.svm"
    path.write_bytes(FOUR)
    assert main(["datasets", "upload", "--url", url, str(path), "--format", "json"]) == 0
    capsys.readouterr()
    argv = ["--url", url, "--dataset", "four", "--loss", "logistic", "--l2", "1e-3"]
    assert main(["submit", *argv, "--solver", "lbfgs", "--multiclass", "ovr"]) == 0
    assert capsys.readouterr().out.startswith("submitted job 1 (queued): lbfgs on four")
    assert main(["submit", *argv, "--solver", "lbfgs"]) == 2
    (err,) = capsys.readouterr().err.strip().splitlines()
    assert err.startswith("faceoff submit: error: positive: dataset 'four' has 4 classes")
    assert main(["submit", *argv, "--solver", "dgpd", "--multiclass", "multinomial"]) == 2
    assert "multiclass: solver 'dgpd' does not solve" in capsys.readouterr().err
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        "datasets: [four]\nlosses: [logistic, smooth_hinge]\nl2: [1.0e-3]\n"
        "solvers: [lbfgs, agd]\nmulticlass: [ovr, multinomial]\n"
    )
    assert main(["sweep", "--url", url, str(sweep)]) == 0
    # lbfgs ovr logistic is job 1, adopted; smooth_hinge has no multinomial form
    assert capsys.readouterr().out.strip() == "sweep 1: 6 jobs, 6 queued"
    assert main(["status", "--url", url]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "four logistic (K = 4, one-vs-rest) l2=0.001" in shown
    assert "four logistic (K = 4, multinomial) l2=0.001" in shown
    assert "four smooth_hinge (K = 4, one-vs-rest)" in shown
    assert "smooth_hinge (K = 4, multinomial)" not in shown


def test_submit_a_path_and_read_it_by_lambda(service):
    url, settings = service
    lasso = ["--dataset", "a1a", "--loss", "squared", "--l2", "0", "--solver", "ws_cd"]
    given = faceoff("submit", "--url", url, *lasso, "--lambdas", "0.5,0.1,0.02")
    assert given.returncode == 0, given.stderr
    default = faceoff("submit", "--url", url, *lasso, "--path", "--max-seconds", "5")
    assert default.returncode == 0, default.stderr
    bad = faceoff("submit", "--url", url, *lasso, "--lambdas", "0.5,-1")
    assert bad.returncode == 2 and "each a number > 0, got '0.5,-1'" in bad.stderr
    fixed = faceoff("submit", "--url", url, *lasso, "--l1", "0.1", "--n-lambdas", "4")
    assert fixed.returncode == 2 and "l1 is what a path varies" in fixed.stderr
    with session_scope(settings.database_url) as session:
        specs = {job.id: job.spec for job in session.query(Job)}
    assert specs[1]["path"]["lambdas"] == [0.5, 0.1, 0.02]
    assert (specs[2]["path"]["n_lambdas"], specs[2]["stop"]["max_seconds"]) == (50, 5.0)
    # a worker's trace of job 1: 2 points at λ 0, 3 at λ 1, none yet at λ 2
    with session_scope(settings.database_url) as session:
        for seq, (index, l1, time_s, gap, nnz) in enumerate(
            [(0, 0.5, 0.01, 1e-2, 0), (0, 0.5, 0.02, 0.0, 0), (1, 0.1, 0.03, 1e-1, 2),
             (1, 0.1, 0.05, 1e-5, 3), (1, 0.1, 0.07, 1e-9, 3)]
        ):  # fmt: skip
            extras = {"path": {"index": index, "l1": l1, "lambda_max": 0.5}}
            session.add(
                TracePoint(job_id=1, seq=seq, iteration=seq, epoch=float(seq), time_s=time_s,
                           primal=2.0, dual=2.0 - gap, gap=gap, nnz_x=nnz, extras=extras)
            )  # fmt: skip
    table = faceoff("trace", "--url", url, "1", "--by-lambda", COLUMNS="160")
    assert table.returncode == 0, table.stderr
    text = " ".join(table.stdout.split())  # the title folds to the table's width
    assert "job 1: queued, ws_cd, 2 of 3 λs in 0.07 s (not every λ at tol yet)" in text
    assert "λ_max = 0.5" in text and "5.00e-10" in text
    listed = faceoff("trace", "--url", url, "1", "--by-lambda", "--format", "json")
    steps = json.loads(listed.stdout)["steps"]
    assert [(s["index"], s["l1"], s["nnz"], s["points"]) for s in steps] == [
        (0, 0.5, 0, 2),
        (1, 0.1, 3, 3),
    ]
    assert steps[1]["seconds"] == pytest.approx(0.05) and steps[1]["ratio"] == 0.2
    assert steps[1]["gap_rel"] == pytest.approx(1e-9 / 2)
    one = faceoff("submit", "--url", url, *JOB)
    assert one.returncode == 0
    refused = faceoff("trace", "--url", url, "3", "--by-lambda")
    assert refused.returncode != 0 and "solves one l1, not a path" in refused.stderr
