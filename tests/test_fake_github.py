"""The fake GitHub itself, spoken to over raw HTTP: it must behave like the REST API it stands for."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fake_github import FakeGitHub

REPO = "octo/widgets"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    fake.add_token("t0k", "octobot")
    fake.add_repo(REPO)
    yield fake
    fake.stop()


@pytest.fixture
def http(gh: FakeGitHub) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gh.url, headers={"Authorization": "token t0k"},
                      timeout=5) as c:
        yield c


def test_credentials_are_checked(gh: FakeGitHub) -> None:
    n = gh.add_issue(REPO, title="t", body="b")
    assert httpx.get(f"{gh.url}/repos/{REPO}/issues/{n}").status_code == 401
    r = httpx.get(f"{gh.url}/repos/{REPO}/issues/{n}", headers={"Authorization": "token nope"})
    assert r.status_code == 401 and r.json()["message"] == "Bad credentials"
    ok = httpx.get(f"{gh.url}/repos/{REPO}/issues/{n}", headers={"Authorization": "Bearer t0k"})
    assert ok.status_code == 200


def test_issue_shape_and_rate_headers(gh: FakeGitHub, http: httpx.Client) -> None:
    n = gh.add_issue(REPO, title="[Bug] x", body="b", user="alice", labels=["type: bug"])
    r = http.get(f"/repos/{REPO}/issues/{n}")
    d = r.json()
    assert d["number"] == n and d["user"]["login"] == "alice" and d["state"] == "open"
    assert d["labels"][0]["name"] == "type: bug" and "color" in d["labels"][0]
    assert d["url"] == f"{gh.url}/repos/{REPO}/issues/{n}"
    assert d["comments_url"].endswith("/comments") and "pull_request" not in d
    assert int(r.headers["X-RateLimit-Remaining"]) < int(r.headers["X-RateLimit-Limit"])
    assert int(r.headers["X-RateLimit-Reset"]) > time.time()


def test_comments_paginate_with_link_headers(gh: FakeGitHub, http: httpx.Client) -> None:
    n = gh.add_issue(REPO, title="t", body="")
    for k in range(5):
        gh.add_comment(REPO, n, f"c{k}", user="bob")
    r = http.get(f"/repos/{REPO}/issues/{n}/comments", params={"per_page": 2})
    assert [c["body"] for c in r.json()] == ["c0", "c1"]
    assert 'rel="next"' in r.headers["Link"] and "page=2" in r.headers["Link"]
    last = http.get(f"/repos/{REPO}/issues/{n}/comments", params={"per_page": 2, "page": 3})
    assert [c["body"] for c in last.json()] == ["c4"]
    assert 'rel="next"' not in last.headers["Link"] and 'rel="prev"' in last.headers["Link"]


def test_comment_create_edit_and_author(gh: FakeGitHub, http: httpx.Client) -> None:
    n = gh.add_issue(REPO, title="t", body="")
    r = http.post(f"/repos/{REPO}/issues/{n}/comments", json={"body": "hello"})
    assert r.status_code == 201 and r.json()["user"]["login"] == "octobot"
    cid = r.json()["id"]
    assert http.patch(f"/repos/{REPO}/issues/comments/{cid}", json={"body": "bye"}).json()[
        "body"] == "bye"
    assert gh.comments(REPO, n)[0]["body"] == "bye"
    assert http.post(f"/repos/{REPO}/issues/{n}/comments", json={}).status_code == 422
    assert http.get(f"/repos/{REPO}/issues/comments/999999").status_code == 404


def test_labels_are_case_insensitive_and_url_encoded(gh: FakeGitHub,
                                                     http: httpx.Client) -> None:
    n = gh.add_issue(REPO, title="t", body="")
    r = http.post(f"/repos/{REPO}/labels",
                  json={"name": "repro: crash", "color": "B60205", "description": "d"})
    assert r.status_code == 201 and r.json()["color"] == "b60205"
    dup = http.post(f"/repos/{REPO}/labels", json={"name": "Repro: Crash", "color": "000000"})
    assert dup.status_code == 422 and dup.json()["errors"][0]["code"] == "already_exists"
    assert http.get(f"/repos/{REPO}/labels/repro%3A%20crash").json()["name"] == "repro: crash"
    http.post(f"/repos/{REPO}/issues/{n}/labels", json={"labels": ["REPRO: CRASH", "new one"]})
    assert gh.issue_labels(REPO, n) == ["repro: crash", "new one"]
    assert gh.repo_labels(REPO)["new one"]["color"] == "ededed"  # created on the fly
    assert http.delete(f"/repos/{REPO}/issues/{n}/labels/new%20one").status_code == 200
    assert http.delete(f"/repos/{REPO}/issues/{n}/labels/new%20one").status_code == 404
    assert gh.issue_labels(REPO, n) == ["repro: crash"]


def test_reactions_one_per_user_and_kind(gh: FakeGitHub, http: httpx.Client) -> None:
    n = gh.add_issue(REPO, title="t", body="")
    cid = gh.add_comment(REPO, n, "/retest")
    url = f"/repos/{REPO}/issues/comments/{cid}/reactions"
    assert http.post(url, json={"content": "eyes"}).status_code == 201
    assert http.post(url, json={"content": "eyes"}).status_code == 200
    assert http.post(url, json={"content": "shrug"}).status_code == 422
    assert gh.reactions(REPO, comment_id=cid) == [("octobot", "eyes")]


@pytest.mark.parametrize("role,legacy", [("admin", "admin"), ("maintain", "write"),
                                         ("write", "write"), ("triage", "read"),
                                         ("read", "read"), ("none", "none")])
def test_permission_has_legacy_value_and_role_name(gh: FakeGitHub, http: httpx.Client,
                                                   role: str, legacy: str) -> None:
    gh.set_permission(REPO, "carol", role)
    d = http.get(f"/repos/{REPO}/collaborators/carol/permission").json()
    assert (d["permission"], d["role_name"], d["user"]["login"]) == (legacy, role, "carol")


def test_fail_next_and_apply(gh: FakeGitHub, http: httpx.Client) -> None:
    n = gh.add_issue(REPO, title="t", body="")
    gh.fail_next("POST", r"/comments$", 502, times=2)
    gh.fail_next("POST", r"/comments$", 504, apply=True)
    url = f"/repos/{REPO}/issues/{n}/comments"
    statuses = [http.post(url, json={"body": f"b{k}"}).status_code for k in range(4)]
    assert statuses == [502, 502, 504, 201]
    assert [c["body"] for c in gh.comments(REPO, n)] == ["b2", "b3"]  # the 504 one was made
    assert [(r.injected, r.applied) for r in gh.requests_to("POST", "comments")] == [
        (True, False), (True, False), (True, True), (False, True)]


def test_rate_limit_window_refuses_until_it_ends(gh: FakeGitHub, http: httpx.Client) -> None:
    n = gh.add_issue(REPO, title="t", body="")
    until = gh.rate_limit("GET", r"/issues/\d+$", seconds=1.0, kind="primary")
    r = http.get(f"/repos/{REPO}/issues/{n}")
    assert r.status_code == 403 and r.json()["message"].startswith("API rate limit exceeded")
    assert r.headers["X-RateLimit-Remaining"] == "0"
    assert int(r.headers["X-RateLimit-Reset"]) == int(until)
    assert http.get(f"/repos/{REPO}/issues/{n}").status_code == 403  # still limited
    time.sleep(max(0.0, until - time.time()) + 0.05)
    assert http.get(f"/repos/{REPO}/issues/{n}").status_code == 200
    gh.rate_limit("*", ".*", seconds=2, kind="429")
    r = http.get(f"/repos/{REPO}/issues/{n}")
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1


def test_stop_closes_open_connections_and_start_reuses_the_port(gh: FakeGitHub,
                                                                 http: httpx.Client) -> None:
    n = gh.add_issue(REPO, title="t", body="")
    assert http.get(f"/repos/{REPO}/issues/{n}").status_code == 200  # keep-alive connection
    port = gh.port
    gh.stop()
    with pytest.raises(httpx.TransportError):
        http.get(f"/repos/{REPO}/issues/{n}")
    gh.start()
    assert gh.port == port
    assert http.get(f"/repos/{REPO}/issues/{n}").status_code == 200


def test_api_prefix() -> None:
    with FakeGitHub(prefix="api/v3") as fake:
        fake.add_token("t", "u")
        fake.add_repo(REPO)
        h = {"Authorization": "token t"}
        assert httpx.get(f"{fake.origin}/api/v3/repos/{REPO}", headers=h).status_code == 200
        assert httpx.get(f"{fake.origin}/repos/{REPO}", headers=h).status_code == 404


def test_webhook_payloads_follow_the_state(gh: FakeGitHub) -> None:
    iid = gh.install_app("octo", installation_id=77)
    n = gh.add_issue(REPO, title="[Bug] x", body="b", user="alice")
    cid = gh.add_comment(REPO, n, "/retest", user="bob")
    opened = gh.webhook_payload("issues", "opened", REPO, n)
    assert opened["action"] == "opened" and opened["issue"]["number"] == n
    assert opened["repository"]["full_name"] == REPO
    assert opened["sender"]["login"] == "alice" and opened["installation"]["id"] == iid
    created = gh.webhook_payload("issue_comment", "created", REPO, n, comment_id=cid)
    assert created["comment"]["body"] == "/retest" and created["sender"]["login"] == "bob"
    assert created["issue"]["comments"] == 1


# ---------------------------------------------------------------------------- app auth
def _keys() -> tuple[bytes, bytes]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    priv = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    return priv, pub


def _jwt(priv: bytes, iss: str = "99", alg: str = "RS256") -> str:
    now = int(time.time())
    return jwt.encode({"iat": now - 30, "exp": now + 300, "iss": iss}, priv, algorithm=alg)


def test_app_jwt_and_installation_tokens() -> None:
    priv, pub = _keys()
    with FakeGitHub(app_id=99, app_public_key=pub, token_ttl_s=0.5) as fake:
        fake.add_repo(REPO)
        iid = fake.install_app("octo")
        app = {"Authorization": f"Bearer {_jwt(priv)}"}
        inst = httpx.get(f"{fake.url}/repos/{REPO}/installation", headers=app)
        assert inst.status_code == 200 and inst.json()["id"] == iid
        bad_iss = {"Authorization": f"Bearer {_jwt(priv, iss='100')}"}
        assert httpx.get(f"{fake.url}/repos/{REPO}/installation",
                         headers=bad_iss).status_code == 401
        other, _ = _keys()
        forged = {"Authorization": f"Bearer {_jwt(other)}"}
        assert httpx.get(f"{fake.url}/app", headers=forged).status_code == 401
        hs = {"Authorization": f"Bearer {jwt.encode({'iss': '99'}, 'k' * 32, algorithm='HS256')}"}
        assert httpx.get(f"{fake.url}/app", headers=hs).status_code == 401
        # a JWT is not an installation token, and vice versa
        assert httpx.get(f"{fake.url}/repos/{REPO}", headers=app).status_code == 401

        tok = httpx.post(f"{fake.url}/app/installations/{iid}/access_tokens", headers=app)
        assert tok.status_code == 201 and tok.json()["token"].startswith("ghs_")
        h = {"Authorization": f"token {tok.json()['token']}"}
        assert httpx.get(f"{fake.url}/repos/{REPO}", headers=h).status_code == 200
        assert httpx.get(f"{fake.url}/app", headers=h).status_code == 401
        fake.add_repo("elsewhere/repo")  # not installed there
        assert httpx.get(f"{fake.url}/repos/elsewhere/repo", headers=h).status_code == 404
        time.sleep(0.6)
        assert httpx.get(f"{fake.url}/repos/{REPO}", headers=h).status_code == 401  # expired


def test_concurrent_requests_are_all_kept(gh: FakeGitHub) -> None:
    from concurrent.futures import ThreadPoolExecutor

    n = gh.add_issue(REPO, title="t", body="")

    def post(k: int) -> int:
        with httpx.Client(base_url=gh.url, headers={"Authorization": "token t0k"}) as c:
            return c.post(f"/repos/{REPO}/issues/{n}/comments", json={"body": f"b{k}"}).json()[
                "id"]

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(post, range(40)))
    assert len(set(ids)) == 40
    assert sorted(c["body"] for c in gh.comments(REPO, n)) == sorted(f"b{k}" for k in range(40))
    assert len(gh.requests_to("POST", "comments")) == 40
