"""Deploy smoke test: the compose stack, built from this checkout, triages an issue for real.

Run by ``deploy/smoke.sh`` (which makes docker usable and builds the images first) with the
repository's venv. Every part is the real thing except GitHub, which is the tests' fake
(``tests/fake_github.py``) served on the docker bridge's address so the containers reach it,
with the bot authenticating as a GitHub App (RS256 JWT -> installation token).

1. ``docker-compose -f deploy/compose.yml up -d`` with a generated env file (project
   ``reprobot-smoke``): redis, web, triage, run-cpu (+ builder, beat when the image has them);
2. wait until every container is healthy (the image's HEALTHCHECK);
3. a signed ``issues.opened`` webhook to the web container -> one bot comment with the right
   outcome and labels;
4. ``/retest`` from the author -> the same comment edited, a second run in the history;
5. ``docker restart`` of the redis container -> the history is still there (AOF), and a third
   run (/retest again, after the cooldown) still works through the restarted Redis;
6. ``docker-compose down -v`` (always, also on failure; logs are printed on failure).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fake_github import FakeGitHub  # noqa: E402

from bot.state import State, connect  # noqa: E402

PROJECT = "reprobot-smoke"
REPO = "octo-org/widgets"
MARKER = "<!-- reprobot -->"
FENCE = "```"
PREFIX = "reprobot:"
COOLDOWN_S = 5

SCRIPT = """\
import tvm
from tvm import tirx

x = tirx.Var("x", "int32")
y = tirx.Add(x, tirx.const(1.0, "float32"))
print(y)
"""
BODY = (
    f"### To reproduce\n\n{FENCE}python\n{SCRIPT}{FENCE}\n\n"
    "### Actual behavior\n\n"
    f"{FENCE}\nTraceback (most recent call last):\n  File \"repro.py\", line 5, in <module>\n"
    "TypeError: Check failed: (a_ty->dtype == b_ty->dtype) is false: mismatched types. "
    "int32 vs. float32\n"
    f"{FENCE}\n"
)


class SmokeError(AssertionError):
    pass


def log(msg: str) -> None:
    print(f"[smoke {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sh(*argv: str, check: bool = True, timeout: float = 600) -> str:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise SmokeError(f"{' '.join(argv)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.stdout.strip()


def wait(cond: Callable[[], Any], timeout: float, what: str, interval: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SmokeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def keypair() -> tuple[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bridge_address() -> str:
    """The host's address on docker's default bridge (docker0): containers reach it."""
    import ipaddress

    (net,) = json.loads(sh("docker", "network", "inspect", "bridge"))
    conf = (net.get("IPAM") or {}).get("Config") or [{}]
    gateway = str(conf[0].get("Gateway") or "")
    if not gateway:
        gateway = str(next(ipaddress.ip_network(conf[0]["Subnet"]).hosts()))
    return gateway


class Stack:
    def __init__(self, env_file: Path, services: list[str]):
        self.env_file = env_file
        self.services = services

    def compose(self, *args: str, check: bool = True, timeout: float = 600) -> str:
        return sh("docker-compose", "--env-file", str(self.env_file), "-p", PROJECT,
                  "-f", str(ROOT / "deploy" / "compose.yml"), *args, check=check,
                  timeout=timeout)

    def container(self, service: str) -> str:
        cid = self.compose("ps", "-q", service)
        if not cid:
            raise SmokeError(f"no container for {service}")
        return cid.splitlines()[0]

    def health(self, service: str) -> str:
        return sh("docker", "inspect", "-f",
                  "{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}",
                  self.container(service), check=False)

    def ip(self, service: str) -> str:
        return sh("docker", "inspect", "-f",
                  "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
                  self.container(service)).split()[0]


def post_webhook(url: str, secret: str, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps(payload).encode()
    sig = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    req = urllib.request.Request(url + "/webhook", data=body, method="POST", headers={
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sig,
        "User-Agent": "GitHub-Hookshot/smoke",
    })
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            status, text = resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode(errors="replace")
    if status != 202:
        raise SmokeError(f"webhook {event} answered {status}: {text}")
    answer: dict[str, Any] = json.loads(text)
    if answer.get("status") != "queued":
        raise SmokeError(f"webhook {event} not queued: {answer}")
    return answer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=600, help="seconds for each wait")
    ap.add_argument("--keep", action="store_true", help="leave the stack up (debugging)")
    ap.add_argument("--base-image", default=os.environ.get("BASE_IMAGE",
                                                            "reprobot-base:bookworm"))
    ap.add_argument("--redis-image", default=os.environ.get("REDIS_IMAGE", "reprobot-redis:ci"))
    args = ap.parse_args(argv)
    t0 = time.monotonic()

    gateway = bridge_address()
    private, public = keypair()
    gh = FakeGitHub(app_id=4711, app_public_key=public, app_slug="reprobot-smoke",
                    host=gateway).start()
    gh.add_repo(REPO)
    gh.install_app("octo-org")
    gh.set_permission(REPO, "alice", "read")
    log(f"fake GitHub at {gh.url} (App 4711, installed on octo-org)")

    tmp = Path(tempfile.mkdtemp(prefix="reprobot-smoke-"))
    tmp.chmod(0o755)
    pem = tmp / "github-app.pem"
    pem.write_text(private)
    pem.chmod(0o644)  # read by the container's uid 10001 (a real deploy: chown 10001, 0600)
    webhook_secret = secrets.token_hex(20)
    cfg = tmp / "reprobot.yml"
    cfg.write_text(
        "filters:\n"
        f"  repositories: [{REPO}]\n"
        "service:\n"
        f"  bot_login: {gh.bot_login}\n"
        f"  retest_cooldown_s: {COOLDOWN_S}\n"
        "sandbox:\n"
        "  backend: bwrap\n"
        "  limits:\n"
        "    timeout_s: 120\n"
        "    memory_bytes: 4GiB\n"
    )
    cfg.chmod(0o644)
    port = free_port()
    env_file = tmp / ".env"
    env_file.write_text("\n".join([
        f"GITHUB_WEBHOOK_SECRET={webhook_secret}",
        "REPROBOT_DASHBOARD_AUTH=token",
        f"REPROBOT_DASHBOARD_TOKEN={secrets.token_hex(16)}",
        "GITHUB_APP_ID=4711",
        f"GITHUB_APP_PRIVATE_KEY_FILE={pem}",
        f"GITHUB_API_URL={gh.url}",
        f"REPROBOT_CONFIG_FILE={cfg}",
        "REPROBOT_BIND=127.0.0.1",
        f"REPROBOT_PORT={port}",
        "REPROBOT_IMAGE=reprobot:latest",
        f"BASE_IMAGE={args.base_image}",
        f"REDIS_IMAGE={args.redis_image}",
        "",
    ]))

    services = ["redis", "web", "triage", "run-cpu"]
    has_builds = subprocess.run(
        ["docker", "run", "--rm", "--entrypoint", "reprobot", "reprobot:latest", "beat", "--help"],
        capture_output=True).returncode == 0
    if has_builds:
        services += ["builder", "beat"]
    else:
        log("the image has no `reprobot beat` yet: builder and beat are left out")
    stack = Stack(env_file, services)
    web = f"http://127.0.0.1:{port}"
    ok = False
    try:
        stack.compose("down", "-v", "--remove-orphans", check=False)
        log(f"up: {' '.join(services)}")
        stack.compose("up", "-d", "--no-build", *services)

        def all_healthy() -> bool:
            states = {s: stack.health(s) for s in services if s != "redis"}
            bad = [f"{s}={h}" for s, h in states.items() if h not in ("healthy", "starting")]
            if bad:
                raise SmokeError(f"unhealthy containers: {', '.join(bad)}")
            return all(h == "healthy" for h in states.values())

        wait(all_healthy, args.timeout, "every container to be healthy", interval=2)
        log(f"stack healthy after {time.monotonic() - t0:.0f} s")

        # Only the triage container holds GitHub credentials (environment and secret files).
        for service in services:
            if service == "redis":
                continue
            cid = stack.container(service)
            env = json.loads(sh("docker", "inspect", "-f", "{{json .Config.Env}}", cid))
            creds = sorted(e.split("=", 1)[0] for e in env
                           if e.startswith(("GITHUB_TOKEN=", "GITHUB_APP_"))
                           and e.split("=", 1)[1])
            secret_files = sh("docker", "exec", cid, "sh", "-c",
                              "ls /run/secrets 2>/dev/null || true")
            if service == "triage":
                if "GITHUB_APP_ID" not in creds or "github_app_key" not in secret_files:
                    raise SmokeError(f"triage lacks its credentials: {creds} {secret_files!r}")
            elif creds or secret_files:
                raise SmokeError(f"{service} holds GitHub credentials: {creds} {secret_files!r}")
        log("GitHub credentials: triage only")

        # ---------------------------------------------------------------- issues.opened
        n = gh.add_issue(REPO, title="[Bug] tirx.Add of int32 and float32 fails a check",
                         body=BODY, user="alice")
        post_webhook(web, webhook_secret, "issues", gh.webhook_payload("issues", "opened", REPO, n))
        t1 = time.monotonic()

        def bot_comments() -> list[dict[str, Any]]:
            return [c for c in gh.comments(REPO, n) if c["user"]["login"] == gh.bot_login]

        def labelled() -> bool:
            return "repro: reproduced" in gh.issue_labels(REPO, n)

        wait(labelled, args.timeout, "the bot's labels on the issue")
        (c1,) = bot_comments()
        if not c1["body"].startswith(MARKER) or "Check failed" not in c1["body"]:
            raise SmokeError(f"unexpected bot comment:\n{c1['body']}")
        labels = gh.issue_labels(REPO, n)
        for want in ("repro: internal-error", "repro: reproduced"):
            if want not in labels:
                raise SmokeError(f"label {want!r} missing: {labels}")
        log(f"issue #{n}: one bot comment, labels {labels} ({time.monotonic() - t1:.0f} s)")

        def state() -> State:
            return State(connect(f"redis://{stack.ip('redis')}:6379/0"), PREFIX)

        def runs() -> int:
            try:
                return len(state().history(REPO, n))
            except Exception:  # Redis coming back after the restart
                return -1

        wait(lambda: runs() == 1, 60, "one run in the history")

        # ---------------------------------------------------------------- /retest
        def retest(expect_runs: int) -> None:
            cid = gh.add_comment(REPO, n, "Still broken for me.\n/retest", user="alice")
            payload = gh.webhook_payload("issue_comment", "created", REPO, n, comment_id=cid)
            post_webhook(web, webhook_secret, "issue_comment", payload)
            wait(lambda: runs() >= expect_runs, args.timeout, f"run #{expect_runs}")
            mine = bot_comments()
            if len(mine) != 1 or mine[0]["id"] != c1["id"]:
                raise SmokeError(f"expected the one bot comment edited, got {len(mine)}")
            latest = state().history(REPO, n)[0]
            if latest.get("reason") != "retest" or latest.get("outcome") != "internal-error":
                raise SmokeError(f"unexpected run #{expect_runs}: {latest}")

        t2 = time.monotonic()
        retest(2)
        log(f"/retest: same comment edited, 2 runs ({time.monotonic() - t2:.0f} s)")

        # ---------------------------------------------------------------- redis restart
        def kept_keys(st: State) -> set[str]:
            """The bot's own lasting keys: under its prefix and without a TTL (Celery's
            transport keys, such as ``unacked`` while a task is being acknowledged, and keys
            that expire by design come and go)."""
            return {k for k in st.r.scan_iter(match=f"{st.prefix}*", count=1000)
                    if st.r.ttl(k) == -1}

        before = state()
        keys_before = kept_keys(before)
        history_before = [r["job_id"] for r in before.history(REPO, n)]
        before.r.close()
        t3 = time.monotonic()
        sh("docker", "restart", stack.container("redis"))
        wait(lambda: runs() == 2, 60, "Redis back with the history")
        after = state()
        keys_after = kept_keys(after)
        history_after = [r["job_id"] for r in after.history(REPO, n)]
        if history_after != history_before or not keys_before <= keys_after:
            raise SmokeError(f"lost data over the restart: {sorted(keys_before - keys_after)} "
                             f"gone, history {history_before} -> {history_after}")
        log(f"redis restarted: {len(keys_after)} keys of the bot's, history intact "
            f"({time.monotonic() - t3:.0f} s)")
        time.sleep(COOLDOWN_S + 1)
        t4 = time.monotonic()
        retest(3)
        log(f"/retest after the restart: 3 runs ({time.monotonic() - t4:.0f} s)")
        ok = True
    finally:
        if not ok:
            print(stack.compose("ps", check=False))
            print(stack.compose("logs", "--no-color", "--tail", "80", check=False))
        if not args.keep:
            stack.compose("down", "-v", "--remove-orphans", check=False)
        gh.stop()
    log(f"PASS in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except SmokeError as e:
        print(f"SMOKE FAILED: {e}", file=sys.stderr)
        raise SystemExit(1) from None
