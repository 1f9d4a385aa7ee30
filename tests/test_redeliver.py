"""The redelivery sweeper: which failed deliveries are asked for again (table), and the sweep
against the fake GitHub's App webhook API with the real receiver taking the redeliveries."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, WEBHOOK_SECRET, RedisServer, Service, wait_until
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fake_github import FakeGitHub

from bot import service
from bot.config import GitHubConfig
from bot.github import GitHubClient, RetryPolicy
from bot.redeliver import pick_redeliveries

NOW = 1_800_000_000.0
EVENTS = ("issues", "issue_comment", "ping")


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def item(ident: int, guid: str, code: int, *, event: str = "issues", age_s: float = 60,
         redelivery: bool = False) -> dict[str, Any]:
    return {"id": ident, "guid": guid, "delivered_at": iso(NOW - age_s), "redelivery": redelivery,
            "duration": 0.1, "status": "OK" if 200 <= code < 300 else "failed",
            "status_code": code, "event": event, "action": "opened", "installation_id": 1,
            "repository_id": 2}


# (name, attempts, handled guids, asks so far, expected guids asked for)
CASES: list[tuple[str, list[dict[str, Any]], set[str], dict[str, int], list[str]]] = [
    ("a 503 the bot never queued", [item(1, "a", 503)], set(), {}, ["a"]),
    ("no answer at all (status 0)", [item(1, "a", 0)], set(), {}, ["a"]),
    ("a 500 the bot did queue (its answer was lost)", [item(1, "a", 500)], {"a"}, {}, []),
    ("failed, then redelivered fine", [item(1, "a", 503), item(2, "a", 202, redelivery=True)],
     set(), {}, []),
    ("succeeded", [item(1, "a", 202)], set(), {}, []),
    ("refused as malformed (400)", [item(1, "a", 400)], set(), {}, []),
    ("refused as too large (413)", [item(1, "a", 413)], set(), {}, []),
    ("wrong signature (401): the secret may have been fixed since", [item(1, "a", 401)],
     set(), {}, ["a"]),
    ("body too slow (408)", [item(1, "a", 408)], set(), {}, ["a"]),
    ("an event the bot does not act on", [item(1, "a", 503, event="watch")], set(), {}, []),
    ("too old for GitHub to redeliver", [item(1, "a", 503, age_s=4 * 86400)], set(), {}, []),
    ("asked three times already", [item(1, "a", 503)], set(), {"a": 3}, []),
    ("asked twice: once more", [item(1, "a", 503)], set(), {"a": 2}, ["a"]),
    ("two failed attempts: the newest is redelivered",
     [item(1, "a", 503), item(5, "a", 502, redelivery=True)], set(), {}, ["a"]),
    ("oldest first", [item(9, "new", 503, age_s=10), item(3, "old", 503, age_s=500)], set(), {},
     ["old", "new"]),
    ("malformed items are skipped",
     [{"id": True, "guid": "x"}, {"id": 1, "guid": 5}, {"guid": "y"},
      dict(item(2, "z", 503), delivered_at="yesterday")], set(), {}, []),
]


@pytest.mark.parametrize("name,items,handled,asks,expected", CASES, ids=[c[0] for c in CASES])
def test_which_deliveries_are_asked_for_again(name: str, items: list[dict[str, Any]],
                                              handled: set[str], asks: dict[str, int],
                                              expected: list[str]):
    picks = pick_redeliveries(items, events=EVENTS, handled=lambda g: g in handled,
                              asks=lambda g: asks.get(g, 0), now=NOW)
    assert [p.guid for p in picks] == expected
    if name.startswith("two failed"):
        assert picks[0].delivery_id == 5


# ---------------------------------------------------------------------------- against the fake
@pytest.fixture(scope="module")
def keys() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


@pytest.fixture
def app_github(keys: tuple[str, str]) -> Iterator[FakeGitHub]:
    gh = FakeGitHub(app_id=4242, app_public_key=keys[1]).start()
    gh.add_repo(REPO)
    gh.install_app(REPO.split("/")[0])
    yield gh
    gh.stop()


def client(gh: FakeGitHub, private: str) -> GitHubClient:
    return GitHubClient.from_config(
        GitHubConfig(api_url=gh.url, app_id="4242", private_key=private),
        policy=RetryPolicy(attempts=2, backoff_s=0.01, max_backoff_s=0.01))


def test_deliveries_are_listed_across_pages(app_github: FakeGitHub, keys: tuple[str, str]):
    for i in range(150):
        app_github.add_hook_delivery(f"guid-{i}", "issues", status_code=202)
    listed = client(app_github, keys[0]).hook_deliveries()
    assert len(listed) == 150 and listed[0]["guid"] == "guid-149"
    assert len(app_github.requests_to("GET", r"^/app/hook/deliveries$")) == 2
    assert {"id", "guid", "delivered_at", "status_code", "event", "redelivery"} <= set(listed[0])


def test_tokens_cannot_list_deliveries(app_github: FakeGitHub):
    from bot.github import GitHubAuthError

    app_github.add_token("ghp_user", "someone")
    with pytest.raises(GitHubAuthError, match="App credentials"):
        GitHubClient(app_github.url, token="ghp_user").hook_deliveries()


def test_sweep_redelivers_what_the_bot_missed(tmp_path: Path, app_github: FakeGitHub,
                                              keys: tuple[str, str], probe_cache: Path):
    gh = app_github
    server = RedisServer(tmp_path / "redis").start()
    svc = Service(tmp_path, server.url, gh, probe_cache)
    try:
        svc.receiver()
        gh.set_hook(svc.receiver_url + "/webhook", WEBHOOK_SECRET)
        missed = gh.add_issue(REPO, title="[Bug] missed while Redis was down", body="...")
        handled = gh.add_issue(REPO, title="[Bug] handled, answer lost", body="...")
        payload = gh.webhook_payload("issues", "opened", REPO, missed)
        # The bot was down: GitHub got a 503 and will not try again by itself.
        gh.add_hook_delivery("guid-missed", "issues", action="opened", status_code=503,
                             payload=payload)
        # The receiver queued this one, but GitHub saw no answer in time.
        other = gh.webhook_payload("issues", "opened", REPO, handled)
        assert svc.post("issues", other, delivery="guid-handled").status_code == 202
        gh.add_hook_delivery("guid-handled", "issues", action="opened", status_code=0,
                             payload=other)
        gh.add_hook_delivery("guid-ok", "issues", action="opened", status_code=202,
                             payload=payload)
        gh.add_hook_delivery("guid-star", "watch", action="started", status_code=503,
                             payload={"action": "started"})

        svcs = service.Services(config=svc.config(), state=svc.state(),
                                github_factory=lambda: client(gh, keys[0]),
                                enqueue=lambda *a: None)
        out = service.sweep_deliveries(svcs)
        assert out["redelivered"] == ["guid-missed"] and out["listed"] == 4

        def redelivered() -> Any:
            return [d for d in gh.hook_deliveries() if d["guid"] == "guid-missed"
                    and d["redelivery"]]

        (attempt,) = wait_until(redelivered, 15, "GitHub's redelivery to be answered")
        assert attempt["status_code"] == 202
        # The receiver queued it under the same GUID: the event is no longer lost.
        st = svc.state()
        assert st.delivery_seen("guid-missed")
        queued = [json.loads(m) for m in server.client().lrange("triage", 0, -1)]
        deliveries = [m["headers"]["kwargsrepr"] for m in queued]
        assert any("guid-missed" in d for d in deliveries)
        # The next sweep finds nothing more to ask for.
        assert service.sweep_deliveries(svcs)["redelivered"] == []
        assert len(gh.requests_to("POST", r"^/app/hook/deliveries/\d+/attempts$")) == 1
    finally:
        svc.stop_all()
        server.stop()


def test_the_sweep_is_scheduled_only_with_app_credentials(keys: tuple[str, str]):
    from dataclasses import replace

    from bot.config import Config, ServiceConfig
    from tasks.app import TASK_SWEEP_DELIVERIES, make_celery

    app_cfg = replace(Config(), github=GitHubConfig(app_id="4242", private_key=keys[0]),
                      service=ServiceConfig(redelivery_sweep_s=300))
    app = make_celery(app_cfg)
    (entry,) = app.conf.beat_schedule.values()
    assert entry["task"] == TASK_SWEEP_DELIVERIES and entry["schedule"] == 300.0
    app.loader.import_default_modules()
    assert TASK_SWEEP_DELIVERIES in app.tasks
    token_cfg = replace(Config(), github=GitHubConfig(token="ghp_x"))
    assert make_celery(token_cfg).conf.beat_schedule == {}
    off = replace(app_cfg, service=ServiceConfig(redelivery_sweep_s=0))
    assert make_celery(off).conf.beat_schedule == {}
