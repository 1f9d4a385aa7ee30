"""Pathological text for the hostile-input benchmark and the hang-guard tests.

Each input is built to a requested size from a small unit, so the same shape can be made at
several sizes: a stage that is linear in its input costs the same per MiB at every size. The
shapes are the ones that make regular expressions and backward scans go super-linear: one
special character repeated (every character that means something to a regex, to markdown or
to a traceback), alternating pairs, one endless line, many short lines, nested frames and
brackets, and half-made versions of the lines the parsers look for.
"""

from __future__ import annotations

# Characters that mean something to a regex, to markdown, to a path or to a traceback.
SPECIALS = (
    "/", "\\", "[", "]", "(", ")", "<", ">", "{", "}", "`", '"', "'", ":", ".", ",", "#", "*",
    "_", "-", "!", "|", "~", "^", "=", "@", "$", "%", "&", "+", ";", "?", " ", "\t", "\n",
    "\r", "a", "A", "0", "E", "≠",
)

# Units repeated to size: half-made versions of what the parsers look for.
UNITS: dict[str, str] = {
    "crlf": "\r\n",
    "backtick-newline": "`\n",
    "slash-word": "/a",
    "site-packages-ish": "/site-packagez",
    "path-no-space": "a/b.c-d_",
    "dotted-name": "a.",
    "dotted-caps": "Ab.",
    "error-words": "Error Error ",
    "error-colon": "XError:",
    "file-line": 'File "x", line 1, in ',
    "frame-lines": '  File "/x/tvm/y.py", line 12, in f\n    y = f(x)\n',
    "traceback-heads": "Traceback (most recent call last):\n",
    "numbered-frames": "  0: tvm::relax::Foo::Bar(tvm::Expr)\n        at ../src/relax/foo.cc:12\n",
    "bt-frames": "[bt] (0) /usr/lib/libtvm.so(tvm::Foo+0x12) [0x7f00]\n",
    "template-nest": "<",
    "template-balanced": "<a",
    "check-failed": "Check failed: ",
    "pytest-e": "E   ",
    "pytest-loc": "a:1: in ",
    "spaces-then-x": " ",
    "heading-hashes": "#",
    "heading-space": "# ",
    "bold": "**",
    "html-comment-open": "<!--",
    "image-open": "![",
    "link-open": "[a](",
    "url": "https://",
    "negation": "not ",
    "words": "lorem ipsum dolor sit amet ",
    "hex": "0x",
    "cuda-words": "cuda gpu ",
    "fatal": "Fatal Python error: ",
    "native-frames": "#1 0x00007f in _PyEval_EvalFrameDefault () from /usr/lib/libpython3.so\n",
    "faulthandler": '  File "/usr/lib/python3.11/ctypes/__init__.py", line 1 in f\n',
    "mismatch": "mismatch ",
    "backslash-quote": '\\"',
    "quote-open": "'",
    "equals": "a = ",
    "ne": "a ≠ ",
}


def inputs() -> dict[str, str]:
    """name -> unit: every special character alone and in alternating pairs with a few
    others, plus the units above."""
    out: dict[str, str] = {}
    for c in SPECIALS:
        out[f"repeat {c!r}"] = c
    partners = ("a", " ", "\n", "/", ".", ":", "`", "[")
    for c in SPECIALS:
        for p in partners:
            if p != c:
                out[f"pair {c!r}{p!r}"] = c + p
    for name, unit in UNITS.items():
        out[name] = unit
    out["long line"] = "lorem ipsum dolor sit amet consectetur "
    out["many lines"] = "x\n"
    return out


def make(unit: str, size: int) -> str:
    """``unit`` repeated to exactly ``size`` characters."""
    reps = size // len(unit) + 1
    return (unit * reps)[:size]


# The baseline: ordinary program output (short lines of words and numbers).
PLAIN_LINE = "step 12: loss 0.4321 accuracy 0.9876 elapsed 1.23 s\n"
