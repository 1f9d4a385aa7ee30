from __future__ import annotations

from bot.extract.markdown import Source
from bot.extract.patterns import (
    ASK,
    ATTACH_RE,
    ATTACHMENT_URL_RE,
    ERROR_LINE_RE,
    NATIVE_LINE_RE,
    NATIVE_TAGS,
    PLAIN_TAGS,
    PY_FILE_RE,
    PY_TAGS,
    PYTEST_RE,
    SHELL_TAGS,
    TEMPLATE_RE,
    TEST_FILE_RE,
    TRACEBACK_RE,
)
from bot.records import record


@record
class Notes:
    """What a pass saw while searching, to explain a ``found=False``. Passes return notes; the
    pipeline combines them with :func:`merge` (nothing is changed in place)."""

    error_output: bool = False
    attachments: tuple[str, ...] = ()
    test_commands: tuple[str, ...] = ()
    file_commands: tuple[str, ...] = ()
    template: bool = False
    incomplete: str = ""  # the sentence saying the code is incomplete
    placeholder: bool = False
    other_code: bool = False
    printed_output: bool = False  # a block of printed values was seen (and is not a script)
    native: str = ""  # the tag of a C/C++/CUDA block ("cpp"), the only code in the issue

    @property
    def held_back(self) -> bool:
        """The code shown is described as incomplete or has placeholders: nothing to run."""
        return bool(self.incomplete or self.placeholder)


NO_NOTES = Notes()


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a + tuple(x for x in dict.fromkeys(b) if x not in a)


def merge(a: Notes, b: Notes) -> Notes:
    """``a`` then ``b``: flags or-ed, lists joined without repeats, the first text kept."""
    if b == NO_NOTES:
        return a
    return Notes(
        error_output=a.error_output or b.error_output,
        attachments=_union(a.attachments, b.attachments),
        test_commands=_union(a.test_commands, b.test_commands),
        file_commands=_union(a.file_commands, b.file_commands),
        template=a.template or b.template,
        incomplete=a.incomplete or b.incomplete,
        placeholder=a.placeholder or b.placeholder,
        other_code=a.other_code or b.other_code,
        printed_output=a.printed_output or b.printed_output,
        native=a.native or b.native,
    )


def html_comments(text: str) -> int:
    """How many ``<!-- ... -->`` comments close on the line they open on (by ``str.find``:
    linear, whatever the text)."""
    n = 0
    for line in text.split("\n"):
        i = 0
        while True:
            a = line.find("<!--", i)
            if a < 0:
                break
            b = line.find("-->", a + 4)
            if b < 0:
                break  # (no later "<!--" on this line can close either)
            n += 1
            i = b + 3
    return n


def notes_of(src: Source) -> Notes:
    """What a text without a script shows instead: error output, attachments, commands that run
    files the issue does not hold, template text, code in other languages."""
    text = src.text
    error_output = any(
        TRACEBACK_RE.match(ln) or "Check failed" in ln or "Segmentation fault" in ln
        or ERROR_LINE_RE.match(ln)
        for ln in src.lines
    )
    attachments = tuple(dict.fromkeys(
        m.group(1).strip() for m in ATTACH_RE.finditer(text) if ATTACHMENT_URL_RE.search(m.group(2))
    ))
    tests: list[str] = []
    files: list[str] = []
    for m in PY_FILE_RE.finditer(text):
        fname = m.group(2)
        cmd = " ".join(f"python {fname}".split())
        if TEST_FILE_RE.search(fname) or "tests/python" in fname.replace("\\", "/"):
            tests.append(cmd)
        elif "setup.py" not in fname:
            files.append(cmd)
    tests.extend(("pytest" + m.group(1)).strip()[:80] for m in PYTEST_RE.finditer(text))
    blocks = src.blocks
    native = next((b.lang or "C++" for b in blocks
                   if b.lang in NATIVE_TAGS or (b.lang in PLAIN_TAGS and looks_native(b.text))), "")
    return Notes(
        error_output=error_output,
        attachments=attachments,
        test_commands=tuple(dict.fromkeys(tests)),
        file_commands=tuple(dict.fromkeys(files)),
        template=src.name == "body" and len(TEMPLATE_RE.findall(text)) + html_comments(text) >= 2,
        other_code=any(b.lang and b.lang not in PY_TAGS | PLAIN_TAGS | SHELL_TAGS for b in blocks),
        native=native,
    )


def looks_native(text: str) -> bool:
    """C/C++ pasted in an untagged block: ``#include <...>``, ``int main() {``, ``std::``."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    hits = sum(1 for ln in lines if NATIVE_LINE_RE.match(ln))
    return hits >= 2 or (hits == 1 and any(ln.rstrip().endswith(";") for ln in lines))


def no_repro_shape(f: Notes) -> str:
    """How the issue presents its (unrunnable) reproduction, in the order ``reason_for`` explains."""
    if f.incomplete or f.placeholder:
        return "none"
    if f.test_commands:
        return "shell-wrapped"
    if f.attachments:
        return "attachment-only"
    if f.file_commands:
        return "shell-wrapped"
    return "none"


def reason_for(f: Notes) -> str:
    if f.incomplete:
        return (
            f'The code in the issue is described as incomplete ("{f.incomplete}"), so running it '
            "cannot show the problem. " + ASK
        )
    if f.placeholder:
        return (
            "The code in the issue has placeholders (`...`) where parts were left out, so it "
            "cannot run as it is. " + ASK
        )
    if f.test_commands:
        return (
            f"The steps run `{f.test_commands[0]}` from the TVM source tree (with a local build) "
            "rather than a script in the issue, so the bot cannot rerun them here. " + ASK
        )
    if f.attachments:
        names = ", ".join(f"`{a}`" for a in f.attachments[:2])
        return (
            f"The reproducer seems to be in an attachment ({names}), which the bot does not "
            "download or open. " + ASK
        )
    if f.file_commands:
        return (
            f"The issue runs `{f.file_commands[0]}`, but that file's contents are not in the "
            "issue. " + ASK
        )
    if f.native:
        tag = f"a ```{f.native} block" if f.native != "C++" else "C++"
        return (
            f"The code in the issue is native code ({tag}), and the bot runs Python scripts "
            "only, so it cannot build or rerun it. If the problem also shows through TVM's Python "
            "API, a script would let the bot check it. " + ASK
        )
    if f.template:
        return (
            "The issue still holds the issue template's placeholder text and no code, so there "
            "is nothing to run yet. " + ASK
        )
    if f.error_output:
        return (
            "The issue shows the error output, but not the code that produced it. " + ASK
        )
    if f.printed_output:
        return (
            "The code blocks in the issue hold printed results (values such as `array(...)`), "
            "not the code that produced them. " + ASK
        )
    return "No Python code that reproduces the problem was found in the issue. " + ASK
