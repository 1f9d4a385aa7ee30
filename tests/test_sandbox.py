"""The hostile suite: scripts that try to escape or exhaust the real sandbox.

Each hostile test runs a real script through ``tasks.runner.run_script`` with every backend
this machine can run (``box`` fixture: bubblewrap, and docker when a daemon and the test image
``reprobot-sandbox-test`` are there; skipped with the reason otherwise) and asserts what the
script could NOT do, that the run is reported with the right outcome fields (limit_hit,
timed_out, signal...), and that the worker (this test process) is unharmed and can run the next
script. Small limits keep the suite fast. Backend-specific tests (command lines, bwrap's own
set-up) follow the shared ones.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from bot.config import SandboxConfig
from bot.errors import InfraError
from bot.models import RunLimits, RunResult
from tasks import sandbox as sb
from tasks.backends import BACKENDS, make_sandbox
from tasks.runner import check_sandbox, run_script

pytestmark = [pytest.mark.sandbox]
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap (bwrap) not installed")

PY = sys.executable
REPO_DIR = Path(__file__).resolve().parents[1]
LIMITS = RunLimits(
    timeout_s=3.0,
    memory_bytes=256 * 1024**2,
    max_processes=64,
    output_bytes=64 * 1024,
    disk_bytes=16 * 1024**2,
)
CFG = SandboxConfig(backend="bwrap", limits=LIMITS)
# The docker backend's test image: the first of these that has Debian's python3. CI
# (.ci/run -> deploy/ci-docker.sh) imports the local debootstrap base reprobot-base:bookworm,
# with python3; deploy/Dockerfile.sandbox-test makes the lighter reprobot-sandbox-test from a
# base without it. REPROBOT_TEST_DOCKER_IMAGE names another.
DOCKER_IMAGES = tuple(x for x in (os.environ.get("REPROBOT_TEST_DOCKER_IMAGE"),
                                  "reprobot-sandbox-test:latest", "reprobot-base:bookworm") if x)
DOCKER_PY = "/usr/bin/python3"
# Docker starts a container in ~1 s: its time limit leaves room for that.
DOCKER_LIMITS = replace(LIMITS, timeout_s=8.0)

# Prepended to scripts: try(label, fn) records what happened as JSON lines on stdout.
PRELUDE = textwrap.dedent(
    """
    import json, os, sys
    def attempt(label, fn):
        try:
            value = fn()
        except BaseException as e:
            print(json.dumps({"label": label, "ok": False, "error": type(e).__name__ + ": " + str(e)}), flush=True)
        else:
            print(json.dumps({"label": label, "ok": True, "value": repr(value)[:300]}), flush=True)
    """
)


@functools.cache
def docker_image() -> tuple[str, str]:
    """(image, '') for the docker backend's tests, or ('', why they cannot run here)."""
    docker = shutil.which("docker")
    if docker is None:
        return "", "no docker command (apt-get install docker.io)"
    try:
        info = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"],
                              capture_output=True, text=True, timeout=30)
        if info.returncode != 0:
            return "", f"dockerd is not reachable: {info.stderr.strip()[-200:]}"
        for image in DOCKER_IMAGES:
            has = subprocess.run([docker, "run", "--rm", "--network", "none", "--entrypoint",
                                  DOCKER_PY, image, "-c", "pass"],
                                 capture_output=True, text=True, timeout=120)
            if has.returncode == 0:
                return image, ""
    except (OSError, subprocess.TimeoutExpired) as e:
        return "", f"docker does not answer: {e}"
    return "", (f"no image with {DOCKER_PY} among {', '.join(DOCKER_IMAGES)} (CI imports "
                "reprobot-base:bookworm with deploy/ci-docker.sh; or build "
                "deploy/Dockerfile.sandbox-test)")


@dataclass(frozen=True)
class Box:
    """One backend under test: its config, the interpreter its scripts run with."""

    name: str
    cfg: SandboxConfig
    python: str

    @property
    def limits(self) -> RunLimits:
        return self.cfg.limits

    def run(self, body: str, *, args: tuple[str, ...] = (), limits: RunLimits | None = None,
            pass_env: dict[str, str] | None = None, gpu: bool = False) -> RunResult:
        return self.run_raw(PRELUDE + textwrap.dedent(body), args=args, limits=limits,
                            pass_env=pass_env, gpu=gpu)

    def run_raw(self, script: str, *, args: tuple[str, ...] = (),
                limits: RunLimits | None = None, pass_env: dict[str, str] | None = None,
                gpu: bool = False, python: str | None = None) -> RunResult:
        cfg = replace(self.cfg, limits=limits or self.cfg.limits)
        return run_script(script, python=python or self.python, args=args, sandbox=cfg,
                          pass_env=pass_env or {}, gpu=gpu)

    def with_limits(self, **kw: object) -> RunLimits:
        return replace(self.limits, **kw)  # type: ignore[arg-type]

    def fine(self) -> None:
        """The backend still runs a script after a hostile run, and left nothing behind."""
        res = self.run_raw("print('still here')")
        assert res.exit_code == 0 and res.stdout_tail == "still here\n", res
        if self.name == "docker":
            left = subprocess.run(
                ["docker", "ps", "-aq", "--filter", f"label={sb.DOCKER_OWNER_LABEL}={os.getpid()}"],
                capture_output=True, text=True, timeout=60).stdout.split()
            assert left == [], left  # every container of this worker is gone
        else:
            assert_worker_fine()


@pytest.fixture(params=sorted(BACKENDS.keys() - {"none"}))
def box(request: pytest.FixtureRequest) -> Box:
    name = str(request.param)
    if name == "bwrap":
        if shutil.which("bwrap") is None:
            pytest.skip("bubblewrap (bwrap) not installed")
        return Box("bwrap", CFG, PY)
    image, why = docker_image()
    if why:
        pytest.skip(f"docker backend not testable here: {why}")
    return Box("docker", SandboxConfig(backend="docker", limits=DOCKER_LIMITS,
                                       docker_image=image), DOCKER_PY)


def run(body: str, *, args: tuple[str, ...] = (), limits: RunLimits = LIMITS,
        pass_env: dict[str, str] | None = None) -> RunResult:
    """bwrap only (for the bwrap-specific tests)."""
    return run_script(PRELUDE + textwrap.dedent(body), python=PY, args=args,
                      sandbox=replace(CFG, limits=limits), pass_env=pass_env or {})


def attempts(res: RunResult) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for line in res.stdout_tail.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            out[d["label"]] = d
    return out


def assert_worker_fine() -> None:
    """The runner still works after a hostile run, and left no cgroup behind."""
    res = run_script("print('still here')", python=PY, sandbox=CFG)
    assert res.exit_code == 0 and res.stdout_tail == "still here\n", res
    s = sb.cgroup_support()
    for parent in s.parents.values():
        mine = f"reprobot-{os.getpid()}-"  # (other workers may be running their own)
        leftovers = [p.name for p in parent.iterdir() if p.name.startswith(mine)]
        assert leftovers == [], leftovers


def processes_with(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmd:
            found.append(int(name))
    return found


def test_check_sandbox_reports_what_it_checked(box: Box) -> None:
    summary = check_sandbox(box.cfg)
    if box.name == "bwrap":
        assert "bubblewrap" in summary and "namespaces ok" in summary
        assert "cgroup" in summary or "polled" in summary
    else:
        assert f"docker image {box.cfg.docker_image}" in summary and "no network" in summary
    assert f"nofile {sb.SANDBOX_NOFILE}" in summary


def test_the_backend_is_chosen_once_from_the_config() -> None:
    for name, cls in BACKENDS.items():
        assert isinstance(make_sandbox(replace(CFG, backend=name)), cls)
        assert cls.name == name
    with pytest.raises(InfraError, match="unknown sandbox backend 'chroot'"):
        make_sandbox(replace(CFG, backend="chroot"))


# --------------------------------------------------------------------------- secrets


def test_cannot_read_bot_environment_or_secret_files(
    box: Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-" + uuid.uuid4().hex
    home = tmp_path / "home"
    (home / ".config" / "reprobot").mkdir(parents=True)
    secret_file = home / ".config" / "reprobot" / "app-key.pem"
    secret_file.write_text(f"-----BEGIN PRIVATE KEY-----\n{secret}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", secret)
    monkeypatch.setenv("REDIS_URL", f"redis://:{secret}@127.0.0.1:6379/0")
    config = tmp_path / "reprobot.yml"
    config.write_text(f"github:\n  webhook_secret: {secret}\n")
    monkeypatch.setenv("REPROBOT_CONFIG", str(config))
    # bwrap shows the interpreter's own directories; docker shows the image, nothing of the host
    binds = sb.interpreter_layout(PY).binds if box.name == "bwrap" else ()

    res = box.run(
        """
        attempt("environ", lambda: dict(os.environ))
        attempt("secret_file", lambda: open(sys.argv[1]).read())
        attempt("home", lambda: os.listdir(sys.argv[2]))
        attempt("config", lambda: open(sys.argv[3]).read())
        attempt("repo", lambda: os.listdir(sys.argv[4]))
        attempt("init_environ", lambda: open("/proc/1/environ", "rb").read())
        attempt("root_home", lambda: os.listdir("/root"))
        attempt("top", lambda: sorted(os.listdir("/")))
        # search every readable file outside /usr, /proc and the interpreter for the secret
        skip = set(json.loads(sys.argv[6]))
        def grep():
            hits = []
            for top in sorted(os.listdir("/")):
                if top in ("usr", "proc", "sys", "dev") or os.path.islink("/" + top):
                    continue
                for d, dirs, files in os.walk("/" + top):
                    dirs[:] = [x for x in dirs if os.path.join(d, x) not in skip]
                    for f in files:
                        try:
                            with open(os.path.join(d, f), "rb") as fh:
                                if sys.argv[5].encode() in fh.read(1 << 20):
                                    hits.append(os.path.join(d, f))
                        except OSError:
                            pass
            return hits
        attempt("grep", grep)
        attempt("repo_parent", lambda: os.listdir(os.path.dirname(sys.argv[4])))
        """,
        args=(str(secret_file), str(home), str(config), str(REPO_DIR), secret,
              json.dumps(binds)),
        # The config may name variables to pass; the bot's own secrets are dropped anyway.
        pass_env={"GITHUB_TOKEN": secret, "REDIS_URL": "x", "TVM_NUM_THREADS": "1"},
    )
    assert res.exit_code == 0, res.stderr_tail
    a = attempts(res)
    env = a["environ"]["value"]
    assert isinstance(env, str)
    assert "GITHUB" not in env and "REDIS" not in env and "REPROBOT" not in env
    assert "TVM_BACKTRACE" in env and "TVM_NUM_THREADS" in env
    for label in ("secret_file", "home", "config"):
        assert a[label]["ok"] is False, (label, a[label])
        assert "FileNotFoundError" in str(a[label]["error"]) or \
            "PermissionError" in str(a[label]["error"]), a[label]
    assert secret.encode().hex() not in str(a["init_environ"])
    assert a["grep"]["ok"] is True and a["grep"]["value"] == "[]"
    # Only the sandbox's skeleton and the interpreter's own directories are visible (bwrap),
    # or the image's own root (docker; its /home is the image's, empty).
    if box.name == "bwrap":
        assert "home" not in str(a["top"]["value"])
    # The repo and /root show at most the way to the interpreter (e.g. the venv inside the
    # repo, a pyenv under /root), none of their own files.
    for label, where in (("repo", str(REPO_DIR)), ("root_home", "/root")):
        inside = sorted({d[len(where) + 1:].split("/")[0]
                         for d in binds if d.startswith(f"{where}/")})
        if inside:
            assert a[label]["value"] == repr(inside), a[label]
        else:
            assert a[label]["ok"] is False, a[label]
    # The secret appears in the argv we passed on purpose (sys.argv[5]) only: nowhere else.
    assert res.stdout_tail.count(secret) == 0
    assert secret not in res.stderr_tail


# --------------------------------------------------------------------------- network


class _Handler(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        _Handler.hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"host service reached")

    def log_message(self, *a: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[int]:
    _Handler.hits = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield int(srv.server_address[1])
    srv.shutdown()
    srv.server_close()


def test_no_network_not_even_host_loopback(box: Box, http_server: int, redis_server: object) -> None:
    redis_port = redis_server.port  # type: ignore[attr-defined]
    client = redis_server.client()  # type: ignore[attr-defined]
    client.delete("pwned")
    res = box.run(
        """
        import socket, urllib.request
        hport, rport = int(sys.argv[1]), int(sys.argv[2])
        attempt("http_loopback", lambda: urllib.request.urlopen(f"http://127.0.0.1:{hport}/x", timeout=2).read())
        def redis_set():
            s = socket.create_connection(("127.0.0.1", rport), timeout=2)
            s.sendall(b"SET pwned 1\\r\\n")
            return s.recv(100)
        attempt("redis_loopback", redis_set)
        attempt("http_internet", lambda: urllib.request.urlopen("http://example.com/", timeout=2).read())
        attempt("tcp_ip", lambda: socket.create_connection(("1.1.1.1", 80), timeout=2))
        def udp_dns():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(2)
            s.sendto(b"x", ("8.8.8.8", 53))
            return s.recv(10)
        attempt("udp", udp_dns)
        attempt("dns", lambda: socket.getaddrinfo("github.com", 443))
        attempt("ifaces", lambda: [n for _, n in socket.if_nameindex()])
        attempt("abstract_unix", lambda: socket.socket(socket.AF_UNIX).connect("\\0/tmp/.X11-unix/X0"))
        """,
        args=(str(http_server), str(redis_port)),
    )
    assert res.exit_code == 0, res.stderr_tail
    a = attempts(res)
    for label in ("http_loopback", "redis_loopback", "http_internet", "tcp_ip", "udp", "dns",
                  "abstract_unix"):
        assert a[label]["ok"] is False, (label, a[label])
    assert a["ifaces"]["value"] == "['lo']"
    assert _Handler.hits == []
    assert client.get("pwned") is None


# --------------------------------------------------------------------------- filesystem


def test_cannot_write_outside_scratch(box: Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    marker = "w-" + uuid.uuid4().hex
    venv_site = [d for d in sb.interpreter_layout(PY).binds if d.endswith("site-packages")]
    if box.name == "docker":
        venv_site = ["/usr/lib/python3/dist-packages"]  # the image's own
    targets = {
        "home": str(home / marker),
        "repo": str(REPO_DIR / marker),
        "etc": f"/etc/{marker}",
        "etc_passwd": "/etc/passwd",
        "usr": f"/usr/lib/{marker}",
        "root": f"/{marker}",
        "interp": f"{(venv_site or [sb.interpreter_layout(PY).binds[0]])[0]}/{marker}.pth",
        "proc_sys": "/proc/sys/kernel/hostname",
        "dev": f"/dev/{marker}",
    }
    res = box.run(
        """
        targets = json.loads(sys.argv[1])
        for label, path in targets.items():
            attempt(label, lambda p=path: open(p, "a").write("pwned"))
        attempt("scratch", lambda: open("ok.txt", "w").write("fine"))
        attempt("tmp", lambda: open("/tmp/ok.txt", "w").write("fine"))
        attempt("cwd", lambda: os.getcwd())
        attempt("mkdir_root", lambda: os.mkdir("/newdir"))
        """,
        args=(json.dumps(targets),),
    )
    assert res.exit_code == 0, res.stderr_tail
    a = attempts(res)
    for label, path in targets.items():
        if label == "repo" and sb._under(path, sb.SANDBOX_TMP):
            # A checkout under /tmp: inside the sandbox that path lies in its private tmpfs, so
            # a write there may succeed but never reaches the host (checked below).
            continue
        assert a[label]["ok"] is False, (label, a[label])
    assert a["mkdir_root"]["ok"] is False
    assert a["scratch"]["ok"] is True and a["tmp"]["ok"] is True
    assert a["cwd"]["value"] == repr(sb.SANDBOX_SCRATCH)
    for path in (home / marker, REPO_DIR / marker, Path(targets["interp"])):
        assert not path.exists()
    assert "pwned" not in Path("/etc/passwd").read_text()


def test_symlink_from_scratch_to_host_file(box: Box, tmp_path: Path) -> None:
    secret = "link-secret-" + uuid.uuid4().hex
    host_file = tmp_path / "host-secret.txt"
    host_file.write_text(secret)
    res = box.run(
        """
        os.symlink(sys.argv[1], "link")
        os.symlink("/proc/1/root/" + sys.argv[1], "link2")
        os.symlink(os.path.dirname(sys.argv[1]), "dirlink")
        attempt("read", lambda: open("link").read())
        attempt("read_proc_root", lambda: open("link2").read())
        attempt("write", lambda: open("link", "w").write("pwned"))
        attempt("write_dir", lambda: open("dirlink/new.txt", "w").write("pwned"))
        attempt("hardlink", lambda: os.link(sys.argv[1], "hard"))
        """,
        args=(str(host_file),),
    )
    assert res.exit_code == 0, res.stderr_tail
    a = attempts(res)
    for label in ("read", "read_proc_root", "write", "write_dir", "hardlink"):
        assert a[label]["ok"] is False, (label, a[label])
    assert secret not in res.stdout_tail
    assert host_file.read_text() == secret
    assert not (tmp_path / "new.txt").exists()


# --------------------------------------------------------------------------- processes


def test_cannot_kill_or_ptrace_processes_outside(box: Box) -> None:
    victim = subprocess.Popen(["sleep", "60"])
    try:
        res = box.run(
            """
            import ctypes, signal
            libc = ctypes.CDLL(None, use_errno=True)
            victim, me = int(sys.argv[1]), int(sys.argv[2])
            attempt("visible_pids", lambda: sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
            for label, pid in (("victim", victim), ("worker", me)):
                attempt("kill_" + label, lambda p=pid: os.kill(p, signal.SIGKILL))
                def ptrace(p=pid):
                    r = libc.ptrace(16, p, None, None)  # PTRACE_ATTACH
                    if r != 0:
                        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
                    return r
                attempt("ptrace_" + label, ptrace)
            # everything this uid may signal: in its pid namespace, nothing but itself
            attempt("kill_all", lambda: os.kill(-1, signal.SIGKILL))
            """,
            args=(str(victim.pid), str(os.getpid())),
        )
        a = attempts(res)
        for label in ("kill_victim", "ptrace_victim", "kill_worker", "ptrace_worker", "kill_all"):
            assert a[label]["ok"] is False, (label, a[label])
            assert "ProcessLookupError" in str(a[label]["error"]) or "No such process" in str(
                a[label]["error"]
            ), a[label]
        # Only the sandbox's own processes exist in its pid namespace.
        visible = json.loads(str(a["visible_pids"]["value"]).replace("'", '"'))
        assert max(visible) < 10, visible
        assert victim.poll() is None  # the sleep outside is alive
        assert res.exit_code == 0 and res.limit_hit is None and not res.timed_out
    finally:
        victim.kill()
        victim.wait()
    box.fine()


def test_fork_bomb_is_contained(box: Box) -> None:
    res = box.run(
        """
        import time
        print("bomb", flush=True)
        while True:
            try:
                os.fork()
            except OSError:
                time.sleep(0.001)
        """
    )
    assert res.limit_hit == "processes", res
    assert not res.timed_out
    assert res.exit_code is None and res.signal == signal.SIGKILL
    box.fine()


def test_setsid_double_fork_daemon_dies_with_the_run(box: Box) -> None:
    marker = "daemon-" + uuid.uuid4().hex
    res = box.run(
        """
        import time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                # the grandchild: a daemon holding stdout open, under a unique name
                os.execv(sys.executable, [sys.executable, "-c",
                         "import time\\nwhile True: time.sleep(1)", sys.argv[1]])
            os._exit(0)
        time.sleep(0.3)
        print("parent leaves", flush=True)
        """,
        args=(marker,),
    )
    assert res.exit_code == 0 and "parent leaves" in res.stdout_tail
    assert not res.timed_out and res.limit_hit is None
    assert processes_with(marker) == []
    box.fine()


# --------------------------------------------------------------------------- limits


def test_memory_hog_is_killed_and_reported(box: Box) -> None:
    res = box.run(
        """
        chunks = []
        while True:
            chunks.append(bytearray(16 << 20))  # touched: resident
        """
    )
    assert res.limit_hit == "memory", res
    assert res.signal == signal.SIGKILL and res.exit_code is None
    assert not res.timed_out
    box.fine()


def test_memory_hog_in_a_child_process_counts_for_the_tree(box: Box) -> None:
    # 3 processes of ~150 MiB each: every one is under 256 MiB, the tree is not.
    res = box.run(
        """
        import time
        for _ in range(3):
            if os.fork() == 0:
                x = bytearray(150 << 20)
                time.sleep(30)
        time.sleep(30)
        """
    )
    assert res.limit_hit == "memory", res
    assert not res.timed_out
    box.fine()


def test_infinite_output_flood_on_both_streams(box: Box) -> None:
    res = box.run(
        """
        line = "flood " * 100 + "\\n"
        while True:
            sys.stdout.write(line)
            sys.stderr.write(line)
        """
    )
    assert res.limit_hit == "output", res
    assert not res.timed_out
    assert res.stdout_truncated and res.stderr_truncated
    assert 0 < len(res.stdout_tail.encode()) <= box.limits.output_bytes
    assert 0 < len(res.stderr_tail.encode()) <= box.limits.output_bytes
    assert "flood" in res.stdout_tail and "flood" in res.stderr_tail
    box.fine()


def test_large_finite_output_keeps_the_tail_without_stalling(box: Box) -> None:
    # 4x the kept size on each stream: truncated, not a limit, and the end is kept.
    res = box.run(
        """
        for i in range(4 * 64 * 1024 // 16):
            print(f"{i:015d}")
            print(f"{i:015d}", file=sys.stderr)
        print("THE END")
        print("ERR END", file=sys.stderr)
        """
    )
    assert res.exit_code == 0 and res.limit_hit is None, res
    assert res.stdout_truncated and res.stderr_truncated
    assert res.stdout_tail.endswith("THE END\n")
    assert res.stderr_tail.endswith("ERR END\n")
    assert len(res.stdout_tail.encode()) <= box.limits.output_bytes


def test_binary_garbage_output_is_text(box: Box) -> None:
    res = box.run("sys.stdout.buffer.write(bytes(range(256)) * 4); sys.stdout.flush()")
    assert res.exit_code == 0
    assert "\ufffd" in res.stdout_tail  # undecodable bytes replaced, not an exception


def test_endless_sleep_times_out(box: Box) -> None:
    res = box.run("import time\ntime.sleep(3600)")
    assert res.timed_out and res.limit_hit == "time"
    assert res.exit_code is None and res.signal == signal.SIGKILL
    assert box.limits.timeout_s <= res.seconds


def test_sigterm_ignored_and_busy_loop_still_killed(box: Box) -> None:
    marker = "stubborn-" + uuid.uuid4().hex
    res = box.run(
        """
        import signal
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        if os.fork() == 0:
            os.setsid()
            os.execv(sys.executable, [sys.executable, "-c",
                     "import signal\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\nwhile True: pass",
                     sys.argv[1]])
        while True:
            pass
        """,
        args=(marker,),
    )
    assert res.timed_out and res.limit_hit == "time"
    assert processes_with(marker) == []
    box.fine()


def test_filling_the_scratch_disk(box: Box) -> None:
    res = box.run(
        """
        i = 0
        while True:
            with open(f"fill{i}", "wb") as f:
                f.write(b"x" * (1 << 20))
            i += 1
        """
    )
    assert res.limit_hit == "disk", res
    assert not res.timed_out
    box.fine()


@pytest.mark.parametrize("where", ["/tmp/fill", "/dev/shm/fill"])
def test_filling_tmp_and_shm_is_the_disk_limit_too(box: Box, where: str) -> None:
    res = box.run(f"open({where!r}, 'wb').write(b'x' * (64 << 20))")
    assert res.limit_hit == "disk", res
    assert "No space left on device" in res.stderr_tail or res.signal == signal.SIGKILL


def test_huge_file_names_and_deep_paths(box: Box) -> None:
    res = box.run(
        """
        attempt("long_name", lambda: open("n" * 5000, "w"))
        def deep():
            p = "."
            for _ in range(2000):
                p = os.path.join(p, "d" * 200)
                os.makedirs(p)
            return p
        attempt("deep", deep)
        attempt("many_files", lambda: [open(f"f{i}", "w").close() for i in range(2000)])
        print("survived", flush=True)
        """
    )
    a = attempts(res)
    assert a["long_name"]["ok"] is False and "File name too long" in str(a["long_name"]["error"])
    assert a["deep"]["ok"] is False
    assert "survived" in res.stdout_tail
    box.fine()


def test_huge_command_line_is_refused_cleanly_and_big_args_pass(box: Box) -> None:
    ok = box.run("print(len(sys.argv), sum(map(len, sys.argv[1:])))", args=("a" * 1000,) * 50)
    assert ok.exit_code == 0 and ok.stdout_tail.split()[-2:] == ["51", "50000"]
    with pytest.raises(InfraError, match="too long"):
        box.run("print(1)", args=("x" * (1 << 20),))
    box.fine()


def test_huge_script(box: Box) -> None:
    body = "# " + "padding " * 1000 + "\n"
    script = body * 2000 + "print('big script ran', __name__)\n"  # ~16 MB
    res = run_script(script, python=PY, sandbox=replace(CFG, limits=replace(
        box.limits, disk_bytes=64 * 1024**2)))
    assert res.exit_code == 0, res.stderr_tail
    assert "big script ran __main__" in res.stdout_tail


def test_sandbox_user_is_not_root_and_has_no_capabilities(box: Box) -> None:
    res = box.run(
        """
        attempt("ids", lambda: (os.getuid(), os.geteuid(), os.getgid()))
        attempt("caps", lambda: [l for l in open("/proc/self/status") if l.startswith("CapEff")])
        attempt("setuid0", lambda: os.setuid(0))
        attempt("chroot", lambda: os.chroot("/tmp"))
        attempt("mount", lambda: __import__("ctypes").CDLL(None).mount(b"none", b"/tmp", b"tmpfs", 0, None))
        attempt("userns", lambda: os.unshare(os.CLONE_NEWUSER) if hasattr(os, "unshare") else None)
        attempt("hostname", lambda: open("/proc/sys/kernel/hostname").read())
        """
    )
    a = attempts(res)
    if box.name == "bwrap":
        assert a["ids"]["value"] == repr((CFG.uid, CFG.uid, CFG.uid))
    else:  # a host uid of its own from the pool
        uid = int(str(a["ids"]["value"]).strip("()").split(",")[0])
        assert sb.UID_POOL_START <= uid < sb.UID_POOL_START + sb.UID_POOL_SIZE
        assert a["ids"]["value"] == repr((uid, uid, uid))
    assert "0000000000000000" in str(a["caps"]["value"])
    assert a["setuid0"]["ok"] is False and a["chroot"]["ok"] is False
    assert "reprobot-sandbox" in str(a["hostname"]["value"])


def test_no_nested_user_namespace_to_raise_its_own_limits(box: Box) -> None:
    # Inside a nested user namespace the script holds every capability over new mount and
    # cgroup namespaces: it could mount the cgroup hierarchy rooted at its own per-run cgroup
    # and, as the owner of those files, raise its own memory limit, then hog memory.
    res = box.run(
        """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def check(r):
            if r != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        def escape():
            check(libc.unshare(0x10000000 | 0x00020000 | 0x02000000))  # USER | NS | CGROUP
            os.makedirs("/tmp/cg", exist_ok=True)
            check(libc.mount(b"none", b"/tmp/cg", b"cgroup", 0, b"memory"))
            for name in ("memory.memsw.limit_in_bytes", "memory.limit_in_bytes"):
                if os.path.exists("/tmp/cg/" + name):
                    with open("/tmp/cg/" + name, "w") as f:
                        f.write(str(8 * 1024**3))
            return open("/tmp/cg/memory.limit_in_bytes").read()
        attempt("nested_userns", escape)
        attempt("unshare_cmd", lambda: __import__("subprocess").run(
            ["unshare", "-Ur", "id"], capture_output=True, text=True).returncode)
        hog = bytearray(400 * 1024 * 1024)
        for i in range(0, len(hog), 4096):
            hog[i] = 1
        print("ALLOCATED", flush=True)
        """
    )
    a = attempts(res)
    assert a["nested_userns"]["ok"] is False, a["nested_userns"]
    assert a["unshare_cmd"].get("value") != "0", a["unshare_cmd"]
    assert "ALLOCATED" not in res.stdout_tail
    assert res.limit_hit == "memory" and res.signal == signal.SIGKILL, res
    box.fine()


# --------------------------------------------------------------------------- our failures


@needs_bwrap
def test_missing_interpreter_is_infra_error() -> None:
    with pytest.raises(InfraError, match="does not exist"):
        run_script("print(1)", python="/nonexistent/bin/python3", sandbox=CFG)


@needs_bwrap
def test_bwrap_setup_failure_is_infra_error_not_script_failure() -> None:
    # bwrap refuses this uid before the script starts: our side failed, not the script.
    bad = replace(CFG, uid=-7)
    with pytest.raises(InfraError, match="before the script started"):
        run_script("print(1)", python=PY, sandbox=bad)
    # a script that fails the way bwrap does is still the script's failure
    res = run_script("import sys\nsys.stderr.write('bwrap: fake\\n')\nsys.exit(1)",
                     python=PY, sandbox=CFG)
    assert res.exit_code == 1


@needs_bwrap
def test_check_sandbox_explains_how_to_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A bwrap that cannot create namespaces, as on a host with userns disabled.
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, "
                    "likely because the kernel does not allow non-privileged user namespaces' >&2"
                    "\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    with pytest.raises(InfraError) as e:
        check_sandbox(CFG)
    msg = str(e.value)
    assert "No permissions to creating new namespace" in msg
    assert "unprivileged_userns_clone" in msg and "apparmor" in msg
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(InfraError, match="install bubblewrap"):
        check_sandbox(CFG)


def test_kernel_interfaces_are_closed(box: Box) -> None:
    res = box.run(
        """
        import ctypes
        attempt("core_pattern_w", lambda: os.access("/proc/sys/kernel/core_pattern", os.W_OK))
        attempt("sysctl_write", lambda: open("/proc/sys/kernel/hostname", "w").write("x"))
        attempt("sysrq", lambda: open("/proc/sysrq-trigger", "w").write("h"))
        libc = ctypes.CDLL(None, use_errno=True)
        def keyctl():
            r = libc.syscall(250 if os.uname().machine == "x86_64" else 219, 0, -4, 0, 0, 0)
            if r < 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            return r
        attempt("keyctl", keyctl)
        attempt("proc_keys", lambda: open("/proc/keys").read())
        attempt("sys_listing", lambda: os.listdir("/sys"))
        attempt("cgroup_write", lambda: open("/sys/fs/cgroup/cgroup.procs", "w").write("1"))
        """
    )
    a = attempts(res)
    assert a["core_pattern_w"]["value"] == "False"
    for label in ("sysctl_write", "sysrq", "keyctl", "cgroup_write"):
        assert a[label]["ok"] is False, (label, a[label])
    assert "Operation not permitted" in str(a["keyctl"]["error"])
    assert a["proc_keys"].get("value", "''") == "''"  # hidden (unreadable or empty)
    assert a["sys_listing"]["value"] == "['devices']"  # only the CPU topology


@needs_bwrap
def test_worker_directory_does_not_show_in_sandbox_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workdir = tmp_path / ("worker-dir-" + uuid.uuid4().hex)
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    res = run(
        """
        def everything():
            out = []
            for p in os.listdir("/proc"):
                if p.isdigit():
                    for name in ("environ", "cmdline"):
                        out.append(open(f"/proc/{p}/{name}", "rb").read().decode(errors="replace"))
                    out.append(os.readlink(f"/proc/{p}/cwd"))
            return out
        print(chr(10).join(everything()))
        """
    )
    assert res.exit_code == 0, res.stderr_tail
    assert "/usr/bin/bwrap" in res.stdout_tail or "bwrap" in res.stdout_tail  # saw the init
    assert workdir.name not in res.stdout_tail


@needs_bwrap
def test_root_only_proc_files_show_nothing() -> None:
    # As a capability-less host uid 0 (root worker, interpreter not reachable by others) the
    # sandbox user passes the mode check of root-only /proc files: kernel heap and page layout.
    res = run(
        """
        import stat
        for p in ("/proc/slabinfo", "/proc/kpageflags", "/proc/kpagecount", "/proc/vmallocinfo",
                  "/proc/pagetypeinfo", "/proc/timer_list"):
            if os.path.exists(p):
                attempt(p, lambda p=p: len(open(p, "rb").read(4096)))
        """
    )
    a = attempts(res)
    assert "/proc/slabinfo" in a, res.stdout_tail
    for label, r in a.items():
        assert r["ok"] is False or r["value"] == "0", (label, r)


def test_no_vsock_no_io_uring(box: Box) -> None:
    # Network namespaces do not isolate AF_VSOCK: on a VM it reaches the hypervisor host and
    # the VM's own vsock services. io_uring is a large kernel attack surface no repro needs.
    res = box.run(
        """
        import ctypes, socket
        libc = ctypes.CDLL(None, use_errno=True)
        attempt("vsock", lambda: socket.socket(40, socket.SOCK_STREAM))
        def uring():
            r = libc.syscall(425, 8, ctypes.create_string_buffer(120))  # io_uring_setup
            if r < 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            return r
        attempt("io_uring", uring)
        attempt("inet", lambda: socket.socket(socket.AF_INET).close())
        attempt("unix", lambda: [s.close() for s in socket.socketpair()])
        """
    )
    a = attempts(res)
    assert a["vsock"]["ok"] is False and "Errno 97" in str(a["vsock"]["error"]), a["vsock"]
    if os.uname().machine in ("x86_64", "aarch64"):
        assert a["io_uring"]["ok"] is False, a["io_uring"]
    assert a["inet"]["ok"] is True and a["unix"]["ok"] is True  # ordinary sockets still work
    assert res.exit_code == 0


@needs_bwrap
def test_gpu_run_without_a_gpu_sees_no_host_sys() -> None:
    # No GPU here: a GPU run gets no device and no PCI directory: /sys is the CPU topology only,
    # never the host's cgroup tree, slab, ACPI or network devices.
    res = run_script(
        PRELUDE + textwrap.dedent(
            """
            attempt("sys", lambda: sorted(os.listdir("/sys")))
            for p in ("/sys/fs/cgroup", "/sys/kernel/slab", "/sys/class/net", "/sys/firmware/acpi",
                      "/sys/bus/pci/devices"):
                attempt(p, lambda p=p: os.listdir(p))
            attempt("cpu_offline", lambda: open("/sys/devices/system/cpu/cpu1/online", "w").write("0"))
            """
        ),
        python=PY, sandbox=CFG, gpu=True,
    )
    a = attempts(res)
    assert a["sys"]["value"] == "['devices']", a["sys"]
    for p in ("/sys/fs/cgroup", "/sys/kernel/slab", "/sys/class/net", "/sys/firmware/acpi",
              "/sys/bus/pci/devices"):
        assert a[p]["ok"] is False and "FileNotFoundError" in str(a[p]["error"]), a[p]
    assert a["cpu_offline"]["ok"] is False


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="needs a root worker and a system python")
@needs_bwrap
def test_root_worker_runs_a_reachable_interpreter_as_unprivileged_host_user() -> None:
    """/usr/bin/python3 is reachable by anybody: bwrap then runs as a host uid leased from the
    pool, and the script's processes are that uid on the host too (not uid 0)."""
    marker = "hostuid-" + uuid.uuid4().hex
    seen: list[str] = []

    def watch() -> None:

        for _ in range(100):
            for pid in processes_with(marker):
                with contextlib.suppress(OSError):
                    argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
                    if argv0 != b"/usr/bin/python3":  # the launcher/bwrap, not the script
                        continue
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("Uid:"):
                            seen.append(line.split()[1])
            if seen:
                return
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    res = run_script("import time\ntime.sleep(2)", python="/usr/bin/python3", args=(marker,),
                     sandbox=CFG)
    t.join()
    assert res.exit_code == 0, res.stderr_tail
    # its own host uid from the pool: never root, never a uid another run holds
    assert len(set(seen)) == 1, seen
    assert sb.UID_POOL_START <= int(seen[0]) < sb.UID_POOL_START + sb.UID_POOL_SIZE, seen


@needs_bwrap
def test_bwrap_command_line_gpu_devices_only_when_asked() -> None:
    interp = sb.Interpreter(executable="/opt/venv/bin/python", binds=("/opt/venv",))
    common = dict(interp=interp, script_fd=5, args=("--n", "3"), env={"PATH": "/usr/bin"},
                  limits=LIMITS, uid=65534, etc_fds={"/etc/passwd": 6}, seccomp_fd=7,
                  status_fd=8, gpu_devices=("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"))
    cpu = sb.bwrap_argv(**common, gpu=False)  # type: ignore[arg-type]
    gpu = sb.bwrap_argv(**common, gpu=True)  # type: ignore[arg-type]
    assert not any("nvidia" in x for x in cpu)
    for dev in ("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"):
        i = gpu.index(dev)
        assert gpu[i - 1] == "--dev-bind" and gpu[i + 1] == dev
    assert "--share-net" not in gpu and "--unshare-all" in gpu
    assert gpu[gpu.index("--seccomp") + 1] == "7"
    assert gpu[-6:] == ["/opt/venv/bin/python", "-X", "faulthandler", "repro.py", "--n", "3"]
    assert gpu[gpu.index("/opt/venv") - 1:][:3] == ["--ro-bind", "/opt/venv", "/opt/venv"]
    size = str(LIMITS.disk_bytes)
    assert gpu[gpu.index("/tmp") - 4: gpu.index("/tmp") + 1] == [
        "--size", size, "--perms", "1777", "--tmpfs", "/tmp"][1:]


def test_docker_command_line() -> None:
    argv = sb.docker_argv(image="reprobot-runner:latest", name="reprobot-x", python="python",
                          args=("a b",), env={"PATH": "/usr/bin", "TVM_BACKTRACE": "1"},
                          limits=LIMITS, uid=65534, gpu=False)
    joined = " ".join(argv)
    for part in ("--network none", "--read-only", f"--memory {LIMITS.memory_bytes}",
                 f"--memory-swap {LIMITS.memory_bytes}", f"--pids-limit {LIMITS.max_processes}",
                 "--user 65534:65534", "--cap-drop ALL", "no-new-privileges",
                 f"size={LIMITS.disk_bytes}", "--env TVM_BACKTRACE=1"):
        assert part in joined, part
    # nothing of the host but the (read-only) CPU topology in an otherwise empty /sys
    volumes = [argv[i + 1] for i, x in enumerate(argv) if x in ("-v", "--volume", "--mount")]
    assert volumes == ["/sys/devices/system/cpu:/sys/devices/system/cpu:ro"]
    assert "/sys:rw,size=64k,mode=0555" in argv
    assert f"nr_inodes={sb.scratch_inodes(LIMITS.disk_bytes)}" in joined
    assert f"nofile={sb.SANDBOX_NOFILE}:{sb.SANDBOX_NOFILE}" in argv
    assert "--gpus" not in argv
    assert argv[-2:] == ["sh", "a b"]
    assert "exec python -X faulthandler repro.py" in argv[-3]
    gpu = sb.docker_argv(image="i", name="n", python="python", args=(), env={}, limits=LIMITS,
                         uid=1000, gpu=True)
    assert gpu[gpu.index("--gpus") + 1] == "all"


def test_seccomp_program_shape() -> None:
    prog = sb.seccomp_filter("x86_64")
    assert len(prog) % 8 == 0 and len(prog) // 8 < 64
    assert sb.seccomp_filter("sparc") == b""


def test_child_env_is_an_allow_list() -> None:
    env = sb.child_env(home="/tmp/scratch", tmpdir="/tmp",
                       pass_env={"GITHUB_TOKEN": "t", "REDIS_URL": "r", "REPROBOT_CONFIG": "c",
                                 "TVM_NUM_THREADS": "2", "PATH": "/evil", "A=B": "x"})
    assert env["TVM_BACKTRACE"] == "1" and env["HOME"] == "/tmp/scratch"
    assert env["TVM_NUM_THREADS"] == "2" and env["PATH"] == sb.SANDBOX_PATH
    assert not {"GITHUB_TOKEN", "REDIS_URL", "REPROBOT_CONFIG", "A=B"} & set(env)


@needs_bwrap
def test_interpreter_living_under_tmp_still_runs(tmp_path: Path) -> None:
    """A checkout (and its venv) under /tmp is not hidden by the sandbox's private /tmp."""
    venv = tmp_path / "venv"
    subprocess.run([PY, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    assert str(venv).startswith("/tmp/")
    res = run_script("import sys; print(sys.prefix)", python=str(venv / "bin" / "python"),
                     sandbox=CFG)
    assert res.exit_code == 0, res
    assert res.stdout_tail.strip() == str(venv)
    # ...and it is read-only there, while scratch stays writable.
    res = run_script(
        f"open('ok.txt', 'w').write('x')\nopen({str(venv / 'pwned')!r}, 'w')\n",
        python=str(venv / "bin" / "python"), sandbox=CFG,
    )
    assert res.exit_code == 1 and "Read-only file system" in res.stderr_tail, res
    assert not (venv / "pwned").exists()


# --------------------------------------------------------------------------- GPU binds
# No GPU here: the bind list is built from a fake sysfs/procfs/dev tree and, for the real
# bwrap check, bound into a sandbox from there. No GPU result is faked: nothing runs CUDA.

GPU = "0000:01:00.0"
GPU_AUDIO = "0000:01:00.1"
OTHER = "0000:00:02.0"


def fake_host(root: Path, *, gpu: bool = True) -> tuple[str, str, str]:
    sys_root, proc_root, dev_root = root / "sys", root / "proc", root / "dev"
    pci = sys_root / "devices" / "pci0000:00"
    devices = sys_root / "bus" / "pci" / "devices"
    devices.mkdir(parents=True)

    def pci_dev(bdf: str, vendor: str, cls: str, parent: Path) -> Path:
        d = parent / bdf
        (d / "power").mkdir(parents=True)
        for name, text, mode in (("vendor", vendor, 0o444), ("class", cls, 0o444),
                                 ("numa_node", "0", 0o444), ("local_cpulist", "0-1", 0o444),
                                 ("resource0", "BAR0", 0o600), ("rom", "ROM", 0o600),
                                 ("power/runtime_status", "active", 0o444)):
            (d / name).write_text(text + "\n")
            (d / name).chmod(mode)
        (devices / bdf).symlink_to(os.path.relpath(d, devices))
        return d

    bridge = pci / "0000:00:01.0"
    if gpu:
        pci_dev(GPU, "0x10de", "0x030200", bridge)
        pci_dev(GPU_AUDIO, "0x10de", "0x040300", bridge)
    pci_dev(OTHER, "0x8086", "0x020000", pci)  # a network card
    for extra in ("devices/system/node/node0", "devices/system/cpu/cpu0", "fs/cgroup/memory",
                  "kernel/slab/dentry", "class/net/eth0", "module/nvidia"):
        (sys_root / extra).mkdir(parents=True, exist_ok=True)
    (sys_root / "devices/system/node/node0/cpulist").write_text("0-1\n")
    (sys_root / "module/nvidia/version").write_text("550.00\n")
    (sys_root / "kernel/slab/dentry/objects").write_text("12345\n")
    nv = proc_root / "driver" / "nvidia"
    (nv / "gpus" / GPU).mkdir(parents=True)
    (nv / "params").write_text("ModifyDeviceFiles: 1\n")
    (nv / "gpus" / GPU / "information").write_text("Model: fake\n")
    (nv / "registry").write_text("secret-ish\n")
    (nv / "registry").chmod(0o600)
    dev_root.mkdir()
    if gpu:
        for node in ("nvidia0", "nvidiactl", "nvidia-uvm"):
            (dev_root / node).write_text("")
    (dev_root / "sda").write_text("")
    return str(sys_root), str(proc_root), str(dev_root)


def test_gpu_bind_list_from_a_fake_host(tmp_path: Path) -> None:
    sys_root, proc_root, dev_root = fake_host(tmp_path)
    layout = sb.gpu_layout(sys_root, proc_root, dev_root)
    real = f"/sys/devices/pci0000:00/0000:00:01.0/{GPU}"
    assert sb.gpu_pci_devices(sys_root) == (GPU,)  # not the audio function, not the NIC
    assert [d for _, d in layout.devices] == ["/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"]
    dests = [d for _, d in layout.ro_binds]
    assert dests == [real, "/sys/devices/system/node", "/sys/module/nvidia/version",
                     "/proc/driver/nvidia"]
    assert all(src.startswith(str(tmp_path)) for src, _ in layout.ro_binds)
    assert layout.symlinks == ((real, f"/sys/bus/pci/devices/{GPU}"),)
    # the same hiding rule as /proc: files only root may read show empty
    assert layout.hide == ("/proc/driver/nvidia/registry", f"{real}/resource0", f"{real}/rom")
    for never in ("/sys", "/sys/fs", "/sys/kernel", "/sys/class", "/sys/bus", OTHER):
        assert not any(d == never or d.endswith(never) for d in dests), never


def test_gpu_bind_list_without_a_gpu_is_empty(tmp_path: Path) -> None:
    layout = sb.gpu_layout(*fake_host(tmp_path, gpu=False))
    # a driver without a GPU (its /proc directory is there): nothing is bound
    assert layout == sb.GpuLayout()


def test_gpu_bind_list_never_follows_a_link_out_of_sysfs(tmp_path: Path) -> None:
    sys_root, proc_root, dev_root = fake_host(tmp_path, gpu=False)
    outside = tmp_path / "elsewhere" / GPU
    outside.mkdir(parents=True)
    (outside / "vendor").write_text("0x10de\n")
    (outside / "class").write_text("0x030000\n")
    Path(sys_root, "bus/pci/devices", GPU).symlink_to(outside)
    layout = sb.gpu_layout(sys_root, proc_root, dev_root)
    assert not any(str(outside) in src for src, _ in layout.ro_binds)


@needs_bwrap
def test_gpu_run_binds_exactly_the_fake_gpu(tmp_path: Path) -> None:
    from tasks.backends import BwrapSandbox

    roots = fake_host(tmp_path)
    # This host's procfs has no /proc/driver (no NVIDIA driver), where bwrap cannot make a
    # mount point: the /proc part of the list is checked above, the /sys and /dev parts here.
    full = sb.gpu_layout(*roots)
    layout = replace(full, ro_binds=tuple(b for b in full.ro_binds if b[1].startswith("/sys")),
                     hide=tuple(h for h in full.hide if h.startswith("/sys")))
    box = BwrapSandbox(CFG, gpu_layout=lambda: layout)
    real = f"/sys/devices/pci0000:00/0000:00:01.0/{GPU}"
    res = run_script(
        PRELUDE + textwrap.dedent(
            """
            gpu = sys.argv[1]
            attempt("sys", lambda: sorted(os.listdir("/sys")))
            attempt("pci", lambda: os.listdir("/sys/bus/pci/devices"))
            attempt("numa", lambda: open(f"/sys/bus/pci/devices/{gpu}/numa_node").read())
            attempt("bar", lambda: open(f"/sys/bus/pci/devices/{gpu}/resource0").read())
            attempt("node", lambda: open("/sys/devices/system/node/node0/cpulist").read())
            attempt("devs", lambda: sorted(d for d in os.listdir("/dev") if d.startswith("nvidia")))
            attempt("sda", lambda: os.stat("/dev/sda"))
            attempt("write", lambda: open(f"/sys/bus/pci/devices/{gpu}/numa_node", "w").write("1"))
            for p in ("/sys/fs", "/sys/kernel", "/sys/class", "/sys/module/nvidia/parameters"):
                attempt(p, lambda p=p: os.listdir(p))
            """
        ),
        python=PY, sandbox=box, gpu=True, args=(GPU,),
    )
    assert res.exit_code == 0, res.stderr_tail
    a = attempts(res)
    assert a["sys"]["value"] == "['bus', 'devices', 'module']"
    assert a["pci"]["value"] == repr([GPU])
    assert a["numa"]["value"] == repr("0\n") and a["node"]["value"] == repr("0-1\n")
    # root-only on the host: covered (an empty device node that cannot even be opened there)
    assert a["bar"].get("value") == "''" or "Permission denied" in str(a["bar"]["error"])
    assert "BAR0" not in res.stdout_tail
    assert a["devs"]["value"] == "['nvidia-uvm', 'nvidia0', 'nvidiactl']"
    assert a["sda"]["ok"] is False and a["write"]["ok"] is False
    for p in ("/sys/fs", "/sys/kernel", "/sys/class", "/sys/module/nvidia/parameters"):
        assert a[p]["ok"] is False, a[p]
    assert Path(roots[0], "devices/pci0000:00/0000:00:01.0", GPU, "numa_node").read_text() == "0\n"
    assert real in " ".join(sb.bwrap_argv(
        interp=sb.Interpreter(executable="/usr/bin/python3", binds=()), script_fd=3, args=(),
        env={}, limits=LIMITS, uid=65534, etc_fds={}, gpu=True,
        gpu_binds=sb.gpu_layout(*roots)))


# --------------------------------------------------------------------------- host-wide counters
# Per-user kernel counters (inotify, pipes, processes) and the system file table: one run must
# not starve another run, or the worker.

INOTIFY_HOG = {
    # as many inotify instances as the kernel gives, in the script itself
    "instances": """
        import ctypes, time
        libc = ctypes.CDLL(None, use_errno=True)
        fds = []
        while len(fds) < 100000:
            fd = libc.inotify_init()
            if fd < 0:
                break
            fds.append(fd)
        print("HELD", len(fds), flush=True)
        time.sleep(float(sys.argv[1]))
        """,
    # spread over child processes (each asks for more until the kernel says no)
    "children": """
        import ctypes, time
        libc = ctypes.CDLL(None, use_errno=True)
        total = 0
        for _ in range(8):
            r, w = os.pipe()
            if os.fork() == 0:
                n = 0
                while n < 20000 and libc.inotify_init() >= 0:
                    n += 1
                os.write(w, str(n).encode() + b"\\n")
                time.sleep(float(sys.argv[1]) + 1)
                os._exit(0)
            total += int(os.read(r, 100))
        print("HELD", total, flush=True)
        time.sleep(float(sys.argv[1]))
        """,
    # watches: every instance watches as many files as it can
    "watches": """
        import ctypes, time
        libc = ctypes.CDLL(None, use_errno=True)
        for i in range(600):
            open(f"w{i}", "w").close()
        fds, watches = [], 0
        while len(fds) < 200:
            fd = libc.inotify_init()
            if fd < 0:
                break
            fds.append(fd)
            for i in range(600):
                if libc.inotify_add_watch(fd, f"w{i}".encode(), 0x100) < 0:
                    break
                watches += 1
        print("HELD", len(fds), watches, flush=True)
        time.sleep(float(sys.argv[1]))
        """,
}

INOTIFY_NEIGHBOUR = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
fds = [libc.inotify_init() for _ in range(8)]
open("f", "w").close()
watches = [libc.inotify_add_watch(fd, b"f", 0x100) for fd in fds if fd >= 0]
print("NEIGHBOUR", sum(fd >= 0 for fd in fds), sum(w >= 0 for w in watches), flush=True)
"""


def host_inotify_ok(n: int = 8) -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fds = [libc.inotify_init() for _ in range(n)]
    for fd in fds:
        if fd >= 0:
            os.close(fd)
    return sum(fd >= 0 for fd in fds)


@pytest.mark.parametrize("how", sorted(INOTIFY_HOG))
def test_inotify_hog_starves_neither_another_run_nor_the_worker(box: Box, how: str) -> None:
    hold = 4.0 if box.name == "bwrap" else 6.0
    limits = box.with_limits(timeout_s=hold + 10)
    hog: list[RunResult] = []
    t = threading.Thread(target=lambda: hog.append(box.run(INOTIFY_HOG[how], args=(str(hold),),
                                                           limits=limits)))
    t.start()
    time.sleep(hold / 2)  # the hog holds everything it could get by now
    worker = host_inotify_ok()
    neighbour = box.run_raw(INOTIFY_NEIGHBOUR, limits=limits)
    t.join()
    (res,) = hog
    held = [line for line in res.stdout_tail.splitlines() if line.startswith("HELD")]
    assert held and int(held[0].split()[1]) > 0, res
    assert worker == 8  # the worker's own user is not starved
    assert neighbour.stdout_tail.split() == ["NEIGHBOUR", "8", "8"], neighbour
    if box.name == "bwrap":  # the run's own user namespace caps what it may hold
        assert int(held[0].split()[1]) <= sb.SANDBOX_INOTIFY_INSTANCES, held
    box.fine()


def test_open_files_limit_is_low_and_cannot_be_raised(box: Box) -> None:
    res = box.run(
        """
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        print("LIMIT", soft, hard, flush=True)
        attempt("raise_hard", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard * 1024)))
        attempt("raise_soft", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (hard + 1, hard + 1)))
        def open_all():
            fds = []
            try:
                while True:
                    fds.append(os.open("/dev/null", os.O_RDONLY))
            except OSError as e:
                for fd in fds:
                    os.close(fd)
                return len(fds), e.errno
        attempt("open_all", open_all)
        # in many processes at once: each gets the same low limit
        import time
        total = 0
        for _ in range(16):
            r, w = os.pipe()
            if os.fork() == 0:
                n = 0
                try:
                    while True:
                        os.pipe(); n += 2
                except OSError:
                    pass
                os.write(w, str(n).encode() + b"\\n")
                time.sleep(1)
                os._exit(0)
            total += int(os.read(r, 100))
            os.close(r); os.close(w)
        print("TOTAL", total, flush=True)
        """
    )
    a = attempts(res)
    limit = [line.split() for line in res.stdout_tail.splitlines() if line.startswith("LIMIT")]
    assert limit and int(limit[0][2]) <= sb.SANDBOX_NOFILE, res.stdout_tail
    assert a["raise_hard"]["ok"] is False and a["raise_soft"]["ok"] is False
    n, errno = json.loads(str(a["open_all"]["value"]).replace("(", "[").replace(")", "]"))
    assert n <= sb.SANDBOX_NOFILE and errno == 24  # EMFILE
    total = [line.split() for line in res.stdout_tail.splitlines() if line.startswith("TOTAL")]
    assert total and int(total[0][1]) <= 16 * sb.SANDBOX_NOFILE
    fd = os.open("/dev/null", os.O_RDONLY)  # the worker still opens files
    os.close(fd)
    box.fine()


THREAD_BOMBS = {
    "threads": """
        import threading, time
        print("bomb", flush=True)
        while True:
            try:
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
            except RuntimeError:
                time.sleep(0.001)
        """,
    "threads_in_children": """
        import threading, time
        for _ in range(4):
            if os.fork() == 0:
                break
        while True:
            try:
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
            except RuntimeError:
                time.sleep(0.001)
        """,
    "thread_pool": """
        import concurrent.futures, threading, time
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1 << 20)
        gate = threading.Event()
        while True:
            try:
                pool.submit(gate.wait)
            except RuntimeError:
                time.sleep(0.001)
        """,
}


@pytest.mark.parametrize("how", sorted(THREAD_BOMBS))
def test_thread_bombs_hit_the_process_limit(box: Box, how: str) -> None:
    res = box.run(THREAD_BOMBS[how])
    assert res.limit_hit == "processes", res
    assert not res.timed_out
    box.fine()


INODE_FLOODS = {
    "empty_files": "i = 0\nwhile True:\n    open(f'f{i}', 'w').close(); i += 1",
    "directories": "i = 0\nwhile True:\n    os.mkdir(f'd{i}'); i += 1",
    "symlinks": "i = 0\nwhile True:\n    os.symlink('/nowhere', f'l{i}'); i += 1",
    "hard_links": "open('x', 'w').close()\ni = 0\nwhile True:\n    os.link('x', f'h{i}'); i += 1",
    "dev_shm": "i = 0\nwhile True:\n    open(f'/dev/shm/f{i}', 'w').close(); i += 1",
}


@pytest.mark.parametrize("how", sorted(INODE_FLOODS))
def test_millions_of_empty_files_hit_the_disk_limit(box: Box, how: str) -> None:
    # Empty files cost no bytes but an inode each (and slab): the scratch tmpfs has an inode
    # limit, so the flood ends at once as "disk", not at the memory limit or the deadline.
    res = box.run(INODE_FLOODS[how], limits=box.with_limits(memory_bytes=1024**3))
    assert res.limit_hit == "disk", res
    assert not res.timed_out and res.seconds < box.limits.timeout_s
    box.fine()


def test_kernel_memory_of_pipes_counts_for_the_memory_limit(box: Box) -> None:
    # Pipe buffers are kernel memory, not the script's: they are charged to the run all the
    # same, so a tree of processes filling pipes ends at the memory limit (or at the per-user
    # pipe limits of its own uid), never on the host.
    res = box.run(
        """
        import fcntl, time
        for _ in range(32):
            if os.fork() == 0:
                break
        pipes = []
        try:
            while True:
                r, w = os.pipe()
                fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
                try:
                    fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ: 1 MiB
                except OSError:
                    pass
                try:
                    while True:
                        os.write(w, b"x" * 65536)
                except BlockingIOError:
                    pass
                pipes.append((r, w))
        except OSError as e:
            print("stopped", len(pipes), e, flush=True)
        time.sleep(60)
        """,
        limits=box.with_limits(timeout_s=box.limits.timeout_s + 10),
    )
    assert res.limit_hit in ("memory", "processes") or res.timed_out, res
    fd_r, fd_w = os.pipe()  # the worker still makes pipes and fills them
    os.write(fd_w, b"x" * 65536)
    os.close(fd_r)
    os.close(fd_w)
    box.fine()


def test_uid_pool_leases_distinct_uids(tmp_path: Path) -> None:
    leases = [sb.lease_uid(tmp_path, start=5000, size=3) for _ in range(3)]
    assert sorted(lease.uid for lease in leases) == [5000, 5001, 5002]
    with pytest.raises(InfraError, match="all 3 sandbox uids are in use"):
        sb.lease_uid(tmp_path, start=5000, size=3)
    leases[1].release()
    again = sb.lease_uid(tmp_path, start=5000, size=3)
    assert again.uid == leases[1].uid
    for lease in (*leases, again):
        lease.release()


def test_docker_seccomp_profile_denies_what_bwrap_denies() -> None:
    prof = sb.docker_seccomp_profile("x86_64")
    assert prof["defaultAction"] == "SCMP_ACT_ALLOW"
    denied = {n for r in prof["syscalls"] if "args" not in r for n in r["names"]}
    assert set(sb._DENIED_SYSCALLS["x86_64"]) <= denied
    assert {"unshare", "setns", "mount", "clone3"} <= denied
    families = {r["args"][0]["value"] for r in prof["syscalls"] if r["names"] == ["socket"]}
    assert families == {31, 40}


def test_environment_is_probed_where_the_interpreter_lives(box: Box) -> None:
    from tasks.runner import SandboxRunner

    env = SandboxRunner(box.cfg).environment(box.python)
    assert env["python"].startswith("3."), env
    if box.name == "docker" and "runner" not in box.cfg.docker_image:
        # the test image's bare Debian python, not this host's interpreter (which has TVM)
        assert env["tvm_version"] == "" and SandboxRunner(CFG).environment(PY)["tvm_version"]


@needs_bwrap
def test_check_refuses_a_host_where_the_run_namespace_cannot_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin" / "unshare"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    with pytest.raises(InfraError, match="own user namespace.*Operation not permitted"):
        check_sandbox(CFG)


@pytest.mark.parametrize("where", ["scratch", "/tmp", "/dev/shm"])
def test_a_full_disk_is_seen_even_when_the_script_carries_on(box: Box, where: str) -> None:
    # The script swallows ENOSPC and waits: the watcher still sees the full tmpfs.
    res = box.run(
        f"""
        import time
        d = {where!r} if {where!r} != "scratch" else "."
        i = 0
        try:
            while True:
                with open(f"{{d}}/fill{{i}}", "wb") as f:
                    f.write(b"x" * (1 << 20))
                i += 1
        except OSError:
            pass
        time.sleep(60)
        """
    )
    assert res.limit_hit == "disk", res
    assert not res.timed_out
    box.fine()


def test_reprobot_triage_runs_with_the_configured_backend(
    box: Box, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    cfg = tmp_path / "reprobot.yml"
    cfg.write_text(f"sandbox:\n  backend: {box.name}\n  docker_image: {box.cfg.docker_image}\n"
                   f"tvm:\n  python: {box.python}\n")
    issue = tmp_path / "issue.md"
    issue.write_text("# [Bug] it fails\n\n```python\nimport os\n"
                     "raise ValueError(f'uid {os.getuid()} in {os.getcwd()}')\n```\n")
    assert main(["--config", str(cfg), "triage", str(issue), "--json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["run"]["sandbox"] == box.name and out["run"]["exit_code"] == 1, out["run"]
    assert f"in {sb.SANDBOX_SCRATCH}" in out["run"]["stderr_tail"]


SIGNAL_HOG = """
import signal, threading, time
sig = signal.SIGRTMIN
signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
n = 0
try:
    while n < 1_000_000:
        signal.pthread_kill(threading.get_ident(), sig)  # queued: counts per user
        n += 1
except OSError:
    pass
print("HELD", n, flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""


def test_queued_signals_hog_starves_no_other_run(box: Box) -> None:
    hold = 4.0 if box.name == "bwrap" else 6.0
    limits = box.with_limits(timeout_s=hold + 10)
    hog: list[RunResult] = []
    t = threading.Thread(target=lambda: hog.append(
        box.run_raw("import sys\n" + SIGNAL_HOG, args=(str(hold),), limits=limits)))
    t.start()
    time.sleep(hold / 2)
    neighbour = box.run_raw("import sys\n" + SIGNAL_HOG.replace("1_000_000", "100"),
                            limits=limits)
    t.join()
    (res,) = hog
    held = [line.split() for line in res.stdout_tail.splitlines() if line.startswith("HELD")]
    assert held and 0 < int(held[0][1]) <= sb.SANDBOX_SIGPENDING, res
    assert neighbour.stdout_tail.split() == ["HELD", "100"], neighbour
    box.fine()


@needs_bwrap
def test_mount_points_of_a_dead_worker_are_removed_not_those_of_a_live_one() -> None:
    import tempfile

    base = Path(tempfile.gettempdir())
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = base / f"reprobot-run-{dead.pid}-test{uuid.uuid4().hex[:6]}"
    live = base / f"reprobot-run-{os.getpid()}-test{uuid.uuid4().hex[:6]}"
    stale.mkdir()
    live.mkdir()
    try:
        res = run("print('ok')")
        assert res.exit_code == 0
        assert not stale.exists() and live.exists()
    finally:
        for d in (stale, live):
            with contextlib.suppress(OSError):
                d.rmdir()
