"""Every pathological body up to GitHub's size limit goes through the real extraction and ends.

The bound is a hang guard only (30 s per body in a child process); the speed evidence is the
hostile-input benchmark. Before the stages were made linear, 65,536 newlines, ``[`` x 65,536 or
``\\r\\n`` x 32,768 took 20-260 s."""

from __future__ import annotations

import multiprocessing

import pytest
from hostile_bodies import MAX_BODY, hostile_bodies  # tests/ is on sys.path (rootdir conftest)

from bot.extract import extract_repro
from bot.extract.args import MAX_ARGS_CHARS
from bot.models import Comment, Issue

BODIES = hostile_bodies()
HANG_GUARD_S = 30


def _extract(body: str) -> None:
    # The body also as the author's comment and as someone else's: every pass sees it.
    extract_repro(Issue(title="[Bug] x", body=body, author="a", comments=(
        Comment(author="a", body=body), Comment(author="b", body="I can reproduce it.\n" + body))))


@pytest.mark.parametrize("name", sorted(BODIES))
def test_hostile_body_is_extracted_in_bounded_time(name: str) -> None:
    body = BODIES[name]
    assert len(body) <= MAX_BODY
    proc = multiprocessing.get_context("fork").Process(target=_extract, args=(body,))
    proc.start()
    proc.join(HANG_GUARD_S)
    if proc.is_alive():
        proc.kill()
        proc.join()
        pytest.fail(f"extraction of {name!r} ({len(body)} chars) still running after {HANG_GUARD_S} s")
    assert proc.exitcode == 0, f"extraction of {name!r} failed (exit code {proc.exitcode})"


def test_a_70_kb_argument_line_is_a_no_repro_with_a_reason() -> None:
    fence = "```"
    body = (
        "The parser crashes on long option lists.\n\n"
        f"{fence}python\nimport sys\nimport tvm\nprint(len(sys.argv))\n"
        "tvm.target.Target(' '.join(sys.argv[1:]))\n"
        f"{fence}\n\n"
        f"{fence}\n$ python repro.py {'--mattr=+avx2 ' * 5000}\n{fence}\n"
    )
    repro = extract_repro(Issue(title="Target parser crash", body=body, author="a"))
    assert not repro.found
    assert repro.args == ()
    assert "command line of" in repro.reason and str(MAX_ARGS_CHARS) in repro.reason


def _scan_all(name: str) -> None:
    from bot.extract import patterns

    pattern = getattr(patterns, name)
    for body in BODIES.values():
        for _ in pattern.finditer(body):
            pass
        for line in body.split("\n"):
            pattern.match(line)
            pattern.search(line)


def _pattern_names() -> list[str]:
    from bot.extract import patterns

    return sorted(n for n, v in vars(patterns).items() if isinstance(v, patterns.Pattern))


@pytest.mark.parametrize("name", _pattern_names())
def test_every_pattern_is_fast_on_every_hostile_body(name: str) -> None:
    """Each regex of the extractor, over every hostile body as a whole and line by line."""
    proc = multiprocessing.get_context("fork").Process(target=_scan_all, args=(name,))
    proc.start()
    proc.join(HANG_GUARD_S)
    if proc.is_alive():
        proc.kill()
        proc.join()
        pytest.fail(f"pattern {name} still scanning the hostile bodies after {HANG_GUARD_S} s")
    assert proc.exitcode == 0
