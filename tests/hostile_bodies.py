"""Pathological issue bodies at GitHub's size limit (65,536 characters), for the hang guard in
``tests/test_extract_hostile.py`` and for benchmarks (with ``tests/`` on ``sys.path``:
``from hostile_bodies import hostile_bodies``). Each class once: a repeated markdown /
regex-special character, alternating pairs, one long line, many lines, deep nesting of quotes,
lists and ``<details>``."""

from __future__ import annotations

MAX_BODY = 65_536  # GitHub's limit on an issue body, in characters

SPECIAL_CHARS = "\\^$.|?*+()[]{}-#`~>_!<=&'\":;,@%/ \t\n\r"
PAIRS = ("\r\n", "`\n", "[]", "()", "> ", "- ", "#\n", "*_", "![", "](", "<>", ">>>\n", ">>> ",
         "... ", "\\`", "$ ", "a(", "x\n", " \n", "```\n", "~~~\n", "```python\n", "import tvm\n",
         "    \n", "\t\n", "<pre>", "<!--", "&quot;", "@T.", "python -c ", "python a.py ",
         'File "x.py", line 1\n', "Traceback (most recent call last)\n", "### Environment\n")


def _fill(unit: str, size: int = MAX_BODY) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size]


def hostile_bodies(size: int = MAX_BODY) -> dict[str, str]:
    """Name -> body, each ``size`` characters (or just under)."""
    out = {f"repeat {c!r}": _fill(c, size) for c in SPECIAL_CHARS}
    out.update({f"pairs {p!r}": _fill(p, size) for p in PAIRS})
    out["long line"] = "import tvm; " + "x" * (size - 12)
    out["many code lines"] = _fill("import tvm\nx = tvm.nd.array(1)\n", size)
    out["many weak code lines"] = _fill("x = f(a)\n", size)
    out["open brackets over lines"] = "import tvm\n" + _fill("[\n", size - 11)
    out["indent staircase"] = "import tvm\n" + "".join(
        " " * (i % 60) + "if x:\n" for i in range(size // 30))[: size - 11]
    out["deep quote"] = _fill("> ", size)
    out["deep quote lines"] = "".join("> " * i + "x\n" for i in range(250))[:size]
    out["deep list"] = "".join("  " * i + "- x\n" for i in range(240))[:size]
    out["details"] = _fill("<details>\n", size)
    out["details with fences"] = _fill("<details><summary>x</summary>\n\n```python\nimport tvm\n",
                                       size)
    out["unclosed fences before headings"] = _fill("```\nxx\nyy\n## h\n", size)
    out["prompt sessions with errors"] = _fill(">>> import tvm\nValueError: x\n", size)
    out["frame then blank lines"] = 'File "x.py", line 1\n' + "\n" * (size - 40) + "import tvm\n"
    out["shell sessions"] = _fill("$ python\n>>> import tvm\n", size)
    out["open python -c quotes"] = _fill('python -c "', size)
    out["long python args"] = "python repro.py " + _fill("--a ", size - 16)
    out["backtick spans over lines"] = _fill("`import tvm\nf(x)`\n", size)
    out["attachment links unclosed"] = _fill("[a](https://x/files/", size)
    out["escaped prompts"] = _fill("\\>\\>\\>", size)
    out["heredoc unclosed"] = "cat > a.py <<EOF\n" + _fill("x\n", size - 20)
    # many opening lines, none closed: each one must not scan the rest of the text
    out["heredocs unclosed, in a shell block"] = "```bash\n" + _fill("cat > a.py <<EOF\n",
                                                                       size - 8)
    out["python heredocs unclosed"] = "```console\n" + _fill("$ python - <<'EOF'\n", size - 11)
    out["session tracebacks into tvm"] = _fill(
        'File "<stdin>", line 1, in <module>\n  File "/a/tvm/tvm/tvm/tvm/x', size)
    out["pre tags mid-line"] = _fill("a<br><pre>x</pre><br>", size)
    out["notebook cells"] = _fill("In [1]:\n!pip x\n", size)
    out["html comment unclosed"] = "<!--" + "-" * (size - 4)
    out["assignments between blank lines"] = _fill("n = 10\n\n", size)
    out["comment lines"] = _fill("# x\n", size)
    out["version probes"] = _fill("```python\nimport tvm\nprint(tvm.__version__)\n```\n", size)
    out["numbered lines"] = "".join(f"{i} x\n" for i in range(1, size))[:size]
    out["error-like words"] = _fill("A.B.C.DError", size)
    return out
