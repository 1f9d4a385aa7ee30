from __future__ import annotations

from dataclasses import dataclass, field

from bot.extract.markdown import Block, Source
from bot.extract.patterns import (
    ASK,
    ATTACH_RE,
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


@dataclass
class Findings:
    """What was seen while searching, to explain a ``found=False``."""

    error_output: bool = False
    attachments: list[str] = field(default_factory=list)
    test_commands: list[str] = field(default_factory=list)
    file_commands: list[str] = field(default_factory=list)
    template: bool = False
    incomplete: str = ""
    placeholder: bool = False
    other_code: bool = False
    printed_output: bool = False  # a block of printed values was seen (and is not a script)
    native: str = ""  # the tag of a C/C++/CUDA block ("cpp"), the only code in the issue


def notes_of(src: Source, blocks: list[Block], findings: Findings) -> None:
    text = src.text
    if any(TRACEBACK_RE.match(ln) for ln in text.split("\n")) or any(
        ERROR_LINE_RE.match(ln) or "Check failed" in ln or "Segmentation fault" in ln
        for ln in text.split("\n")
    ):
        findings.error_output = True
    for m in ATTACH_RE.finditer(text):
        name = m.group(1).strip()
        if name not in findings.attachments:
            findings.attachments.append(name)
    for m in PY_FILE_RE.finditer(text):
        fname = m.group(2)
        cmd = " ".join(f"python {fname}".split())
        if TEST_FILE_RE.search(fname) or "tests/python" in fname.replace("\\", "/"):
            if cmd not in findings.test_commands:
                findings.test_commands.append(cmd)
        elif "setup.py" not in fname and cmd not in findings.file_commands:
            findings.file_commands.append(cmd)
    for m in PYTEST_RE.finditer(text):
        findings.test_commands.append(("pytest" + m.group(1)).strip()[:80])
    if src.name == "body" and len(TEMPLATE_RE.findall(text)) >= 2:
        findings.template = True
    if any(b.lang and b.lang not in PY_TAGS | PLAIN_TAGS | SHELL_TAGS for b in blocks):
        findings.other_code = True
    for b in blocks:
        if not findings.native and (
            b.lang in NATIVE_TAGS or (b.lang in PLAIN_TAGS and looks_native(b.text))
        ):
            findings.native = b.lang or "C++"


def looks_native(text: str) -> bool:
    """C/C++ pasted in an untagged block: ``#include <...>``, ``int main() {``, ``std::``."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    hits = sum(1 for ln in lines if NATIVE_LINE_RE.match(ln))
    return hits >= 2 or (hits == 1 and any(ln.rstrip().endswith(";") for ln in lines))


def no_repro_shape(f: Findings) -> str:
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


def reason_for(f: Findings) -> str:
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
