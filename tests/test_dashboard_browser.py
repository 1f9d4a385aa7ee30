"""The dashboard in a real headless browser (Debian's chromium + chromedriver, selenium).

The real ``reprobot serve`` and a real redis-server; results are written through the same
``bot.state`` functions the workers and the triage tasks use (result cache, matrix rows, the
main result, the recorded result). In the browser: the grid renders, a filter narrows it, a
cell links to its run's output.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, RedisServer, Service, wait_until
from fake_github import FakeGitHub

from bot.builds import BuildInfo
from bot.history import MatrixRow, row_to_store
from bot.service import cache_key

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

pytestmark = [
    pytest.mark.service,
    pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                       reason="needs Debian's chromium and chromium-driver "
                              "(apt-get install chromium chromium-driver; .ci/run installs them)"),
]

MAIN_OLD = "a" * 40
MAIN_NEW = "b" * 40


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


# main@aaaa was built two hours ago and ran an hour ago; main@bbbb was built half an hour ago.
NOW = time.time()
BUILT_OLD, BUILT_NEW = iso(NOW - 7200), iso(NOW - 1800)


@pytest.fixture
def svc(tmp_path: Path, fake_github: FakeGitHub, probe_cache: Path) -> Iterator[Service]:
    server = RedisServer(tmp_path / "redis").start()
    service = Service(tmp_path, server.url, fake_github, probe_cache)
    yield service
    service.stop_all()
    server.stop()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=DriverService(str(CHROMEDRIVER)), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _plan(script: str) -> dict[str, Any]:
    return {"repro": {"found": True, "script": script, "args": [], "shape": "fenced"},
            "needs": [], "worker": "cpu"}


def _seed(svc: Service) -> None:
    """Three open issues and one closed, through the workers' and the triage's state writes."""
    st = svc.state()
    main_old = BuildInfo("main", "source", "0.30.dev0", MAIN_OLD, built_at=BUILT_OLD)
    main_new = BuildInfo("main", "source", "0.30.dev0", MAIN_NEW, built_at=BUILT_NEW)
    rel = BuildInfo("0.26.0", "release", "0.26.0", "")
    st.heartbeat("reprobot-cpu-1@box", {
        "queues": ["cpu"], "concurrency": 1,
        "builds": [dict(main_new.to_json(), python="/b/main/venv/bin/python"),
                   dict(rel.to_json(), python="/b/0.26.0/venv/bin/python")]})

    def issue(number: int, title: str, script: str, runs: list[tuple[BuildInfo, str, str, str]],
              *, fixed: bool = False) -> None:
        plan = _plan(script)
        rows = []
        for build, outcome, verdict, stderr in runs:
            # what a cpu worker stores after a real run (bot.service.run_job)
            key = cache_key({"script": script, "args": [], "gpu": False}, build)
            assert key is not None
            st.store_result(*key, {
                "run": {"exit_code": 0 if outcome == "passed" else 1, "signal": None,
                        "seconds": 1.5, "timed_out": False, "stdout_tail": "",
                        "stderr_tail": stderr, "stdout_truncated": False,
                        "stderr_truncated": False, "limit_hit": None, "sandbox": "bwrap"},
                "environment": {"tvm_version": build.version}, "infra_error": ""})
            row = MatrixRow(build.name, build.version, build.commit, outcome, verdict, 1.5,
                            build.kind, build.built_at)
            rows.append(row)
            # what the triage task writes when it reports (bot.service._finish / bot.sweep)
            st.set_matrix_row(REPO, number, build.name, row_to_store(row))
            job = f"job-{number}-{build.name}-{build.commit[:4]}"
            st.new_job(job, {"job_id": job, "repo": REPO, "number": number, "plan": plan,
                             "status": "done"})
            labels = [f"repro: {outcome}", f"repro: {verdict}"]
            if fixed and outcome == "passed":
                labels.append("repro: fixed-on-main")
            st.record_result(job, REPO, number, {
                "job_id": job, "repo": REPO, "number": number, "title": title,
                "url": f"https://github.com/{REPO}/issues/{number}", "outcome": outcome,
                "verdict": verdict, "labels": labels, "build": build.name,
                "tvm_commit": build.commit, "tvm_version": build.version, "seconds": 1.5,
                "finished": time.time() - (3600 if build.commit == MAIN_OLD else 0),
                "repro_sha256": key[0], "worker": "cpu"})
            time.sleep(0.01)
        mains = [r for r in rows if r.kind == "source"]
        if mains:
            st.set_main(REPO, number, {**row_to_store(mains[-1]), "fixed_on_main": fixed,
                                       "plan": plan, "issue": {}, "comment": (
                                           f"<!-- reprobot -->\n**{mains[-1].outcome}** on "
                                           f"`main`\n\n<script>alert(1)</script>"),
                                       "updated": time.time()})
            st.track(REPO, number)

    issue(1, "[Bug] crash in <b>LowerTE</b>", "import tvm\nraise SystemExit('boom')\n",
          [(rel, "internal-error", "reproduced", "InternalError: Check failed"),
           (main_old, "internal-error", "reproduced", "InternalError: Check failed"),
           (main_new, "internal-error", "reproduced", "InternalError: still here")])
    issue(2, "[Bug] fixed on main", "import tvm\nprint('fixed')\n",
          [(main_old, "wrong-result", "reproduced", "AssertionError: wrong result"),
           (main_new, "passed", "not-reproduced", "")], fixed=True)
    issue(3, "[Bug] only a release", "import tvm\nprint(3)\n",
          [(rel, "api-mismatch", "inconclusive", "AttributeError: module 'tvm' has no x")])
    issue(4, "[Bug] closed one", "import tvm\nprint(4)\n",
          [(main_new, "crash", "reproduced", "Segmentation fault")])
    st.untrack(REPO, 4)  # the issues "closed" event


def test_grid_renders_filters_narrow_and_cells_link_to_run_output(svc: Service, browser: Any):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _seed(svc)
    svc.receiver()
    base = svc.receiver_url

    browser.get(base + "/")
    rows = browser.find_elements(By.CSS_SELECTOR, "#grid tr.issue")
    assert [r.get_attribute("data-issue") for r in rows] == [
        f"{REPO}#3", f"{REPO}#2", f"{REPO}#1"]  # newest first; the closed #4 is not there
    heads = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#grid thead th")][5:]
    assert heads == ["main@bbbbbbb", "main@aaaaaaa", "0.26.0"]  # main newest first, releases
    assert "<b>LowerTE</b>" in browser.find_element(By.ID, "grid").text  # escaped, as text
    assert not browser.find_elements(By.CSS_SELECTOR, "#grid b")
    one = browser.find_element(By.CSS_SELECTOR, f'tr[data-issue="{REPO}#1"]')
    cells = one.find_elements(By.CSS_SELECTOR, "td.cell")
    assert [c.text for c in cells] == ["reproduced", "reproduced", "reproduced"]
    assert all("repro" in (c.get_attribute("class") or "") for c in cells)
    two = browser.find_element(By.CSS_SELECTOR, f'tr[data-issue="{REPO}#2"]')
    assert [c.text for c in two.find_elements(By.CSS_SELECTOR, "td.cell")] == [
        "passed", "reproduced", ""]
    assert "fixed on main: can be closed (1)" in browser.find_element(By.ID, "views").text
    assert "2 of 2 issues re-tested" in browser.find_element(By.ID, "sweep").text

    # A filter narrows the grid (the form, as a person uses it).
    Select(browser.find_element(By.ID, "filter-outcome")).select_by_value("api-mismatch")
    browser.find_element(By.ID, "apply").click()
    wait_until(lambda: "outcome=api-mismatch" in browser.current_url, 10, "the filter")
    rows = browser.find_elements(By.CSS_SELECTOR, "#grid tr.issue")
    assert [r.get_attribute("data-issue") for r in rows] == [f"{REPO}#3"]
    heads = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#grid thead th")][5:]
    assert heads == ["0.26.0"]

    # A view narrows it too.
    browser.get(base + "/")
    browser.find_element(By.ID, "view-fixed-on-main").click()
    wait_until(lambda: "view=fixed-on-main" in browser.current_url, 10, "the view")
    rows = browser.find_elements(By.CSS_SELECTOR, "#grid tr.issue")
    assert [r.get_attribute("data-issue") for r in rows] == [f"{REPO}#2"]

    # A cell links to that run's output.
    browser.get(base + "/")
    one = browser.find_element(By.CSS_SELECTOR, f'tr[data-issue="{REPO}#1"]')
    one.find_elements(By.CSS_SELECTOR, "td.cell a")[1].click()  # main@aaaaaaa
    wait_until(lambda: "/run?" in browser.current_url, 10, "the run page")
    assert "main@aaaaaaa" in browser.find_element(By.TAG_NAME, "body").text
    assert browser.find_element(By.ID, "stderr").text == "InternalError: Check failed"
    browser.back()
    one = browser.find_element(By.CSS_SELECTOR, f'tr[data-issue="{REPO}#1"]')
    one.find_elements(By.CSS_SELECTOR, "td.cell a")[0].click()  # main@bbbbbbb
    wait_until(lambda: "/run?" in browser.current_url, 10, "the run page")
    assert browser.find_element(By.ID, "stderr").text == "InternalError: still here"

    # The issue page: runs over builds, the comment rendered without its raw HTML, the script.
    browser.get(base + f"/issues/{REPO}/1")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#runs tr")) >= 4
    comment = browser.find_element(By.ID, "comment")
    assert comment.find_element(By.TAG_NAME, "strong").text == "internal-error"
    assert "<script>alert(1)</script>" in comment.text  # shown as text, never run
    assert not comment.find_elements(By.TAG_NAME, "script")
    assert "raise SystemExit('boom')" in browser.find_element(By.ID, "script").text
