"""Should-take / should-not-take table for the extractor's rules (bot/extract/rules.py and the
candidate passes). One row per rule at least; a new rule adds its rows here."""

from __future__ import annotations

import pytest

from bot.extract import extract_repro
from bot.extract.rules import BLOCK_RULES
from bot.models import Comment, Issue

F = "```"
SCRIPT = "import tvm\nfrom tvm import te\nA = te.placeholder((4,), name='A')\nprint(A.shape)\n"


def _quote(text: str) -> str:
    return "\n".join("> " + ln if ln else ">" for ln in text.split("\n"))


# (rule, issue, expected script or None for "nothing taken")
ROWS: list[tuple[str, Issue, str | None]] = [
    # printed-output: a block of printed values is not a program.
    ("printed-output", Issue("wrong values", "Output:\n\n" + F + "\n[array([1., nan], dtype=float32)]\n"
                             + F + "\n", author="a"), None),
    ("take: printed-output", Issue("x", F + "python\n" + SCRIPT + F + "\n", author="a"), SCRIPT),
    # output-of-script-above: a value block after the script is what it printed.
    ("output-of-script-above", Issue("x", F + "python\n" + SCRIPT + F + "\n\n" + F
                                     + "\n(4,)\n" + F + "\n", author="a"), SCRIPT),
    # environment-probe: a version print under "Environment" is not the repro.
    ("environment-probe", Issue("x", "### Environment\n\n" + F
                                + "python\nimport tvm\nprint(tvm.__version__)\n" + F + "\n0.18.0\n",
                                author="a"), None),
    ("take: environment-probe", Issue("import fails", F
                                      + "python\nimport tvm\nprint(tvm.__version__)\n" + F
                                      + "\nTraceback (most recent call last):\n"
                                      "ImportError: libtvm.so: cannot open shared object file\n",
                                      author="a"), "import tvm\nprint(tvm.__version__)\n"),
]

# indented-excerpt-shown: printed IR cut out of the script's output, and what it should be.
_IR = ("        for i in T.serial(4):\n            with T.sblock(\"B\"):\n"
       "                B[i] = T.if_then_else(i < 4, A[i], T.float32(0.0))\n")
ROWS += [
    ("indented-excerpt-shown", Issue("x", F + "python\n" + SCRIPT + F + "\n\nWhat I get (relevant "
                                     "part):\n\n" + F + "\n" + _IR + F + "\n\nWhat I expected:\n\n"
                                     + F + "\n                B[i] = A[i]\n" + F + "\n",
                                     author="a"), SCRIPT),
    # a block that goes on with the script, introduced as the next step, is taken
    ("take: indented-excerpt-shown", Issue("x", F + "python\n" + SCRIPT + F + "\n\nThen:\n\n" + F
                                           + "python\nprint(A)\n" + F + "\n", author="a"),
     SCRIPT + "print(A)\n"),
]

# Miss 3: a script quoted in the author's comment (a re-post of someone's script) that the
# author says fails for them too is the repro; a quoted suggestion that "works" is not.
_ASKED = ("Could you try this smaller case?\n\n" + F + "python\n" + SCRIPT + F + "\n")
ROWS += [
    ("quoted-from-someone-else: fails too", Issue(
        "[Bug] te.placeholder crash on 0.19", "It crashes when I build my model, see the log.",
        author="a", comments=(
            Comment("helper", _ASKED),
            Comment("a", _quote(_ASKED) + "\n\nThis one fails on my machine too, same segfault.\n"),
        )), SCRIPT),
    ("quoted-from-someone-else: suggestion that works", Issue(
        "[Bug] te.placeholder crash on 0.19", "It crashes when I build my model, see the log.",
        author="a", comments=(
            Comment("helper", _ASKED),
            Comment("a", _quote(_ASKED) + "\n\nThanks, that one works for me.\n"),
        )), None),
    ("quoted-from-someone-else: quoted, no words", Issue(
        "x", "It crashes when I build my model.", author="a", comments=(
            Comment("a", _quote(_ASKED) + "\n\nI will look at it tomorrow.\n"),)), None),
]


# Unseen-report misses (session 7): each class with should-take / should-not-take rows.
_QUOTED_PLAIN = ("import numpy as np\nimport tvm\nfrom tvm import te\n\n"
                 "A = te.placeholder((8,), name='A')\nprint(A.shape)\n")
_HEREDOC = "import tvm\nfrom tvm import te\nA = te.placeholder((4,), name='A')\nprint(A)\n"
_REDUCED = "import tvm\nfrom tvm import te\nB = te.placeholder((2,), name='B')\nprint(B)\n"
ROWS += [
    # A maintainer's script quoted back WITHOUT fences in the author's comment, "also not work".
    ("quoted-unfenced: the author says it does not work either", Issue(
        "[Bug] export fails", "It fails after loading the exported model.", author="a",
        comments=(Comment("a", "> I tried this and it runs without errors for me.\n>\n"
                          + _quote(_QUOTED_PLAIN) + "\n\nThis example is also not work.\n"),)),
     _QUOTED_PLAIN),
    ("quoted-unfenced: quoted and answered with thanks", Issue(
        "[Bug] export fails", "It fails after loading the exported model.", author="a",
        comments=(Comment("a", _quote(_QUOTED_PLAIN) + "\n\nThanks, I will try it.\n"),)), None),
    # "EDIT: the real repro is below": the later, complete script replaces the fragment.
    ("a later block offered as the real repro", Issue(
        "[Bug] x", "```python\nimport tvm\nex = tvm.compile(mod)\n```\n\n**EDIT:** the snippet "
        "above does not define `mod`. The real repro is below:\n\n```python\n" + SCRIPT + "```\n",
        author="a"), SCRIPT),
    # An e-mail's HTML: the <pre> starts mid-line after <br> tags.
    ("html e-mail <pre> after <br>", Issue(
        "[Bug] x", '<div dir="ltr">Hi,<br><br>Repro:<br><br><pre>import tvm\n'
        "print(tvm.IRModule())\n</pre><br>Output:<br><pre>[[nan]]\n</pre><br>Thanks</div>",
        author="a"), "import tvm\nprint(tvm.IRModule())\n"),
    # The interpreter fed a heredoc in a console block.
    ("heredoc: python - <<'EOF'", Issue(
        "[Bug] segfault", "```console\n$ python - <<'EOF'\n" + _HEREDOC
        + "EOF\nSegmentation fault (core dumped)\n```\n", author="a"), _HEREDOC),
    ("heredoc: python3 <<EOF", Issue(
        "[Bug] segfault", "```bash\npython3 <<EOF\n" + _HEREDOC + "EOF\n```\n", author="a"),
     _HEREDOC),
    ("heredoc: a cat of some other heredoc is no script", Issue(
        "[Bug] x", "```bash\ncat > notes.txt <<EOF\nsome words here\nEOF\n```\n", author="a"),
     None),
    # "I reduced it": the author's later, smaller script replaces the first one.
    ("later reduced repro: I reduced it", Issue(
        "[Bug] wrong take", "```python\n" + SCRIPT + "```\n", author="a",
        comments=(Comment("a", "I reduced it, plain te is enough:\n\n```python\n" + _REDUCED
                          + "```\n"),)), _REDUCED),
    ("later reduced repro: here is a smaller one", Issue(
        "[Bug] VM crash", "The module is too large to paste here; I'll try to reduce it.",
        author="a", comments=(Comment("a", "here is a smaller one:\n\n```python\n" + _REDUCED
                                      + "```\n"),)), _REDUCED),
    ("later repro: I opened a new one", Issue(
        "[Bug] VM crash", "```python\n" + SCRIPT + "```\n", author="a",
        comments=(Comment("a", "I opened a new one for the other bug:\n\n```python\n"
                          + _REDUCED + "```\n"),)), SCRIPT),
    ("later reduced repro: a variant that works is not it", Issue(
        "[Bug] wrong take", "```python\n" + SCRIPT + "```\n", author="a",
        comments=(Comment("a", "With the other mode it works:\n\n```python\n" + _REDUCED
                          + "```\n"),)), SCRIPT),
    # Someone else re-posts the script (quoted, fenced) and says it fails for them too.
    ("someone else's quoted script: fails for me too", Issue(
        "[Bug] parallel fails", "Script is in the forum thread; I will paste it if needed.",
        author="a", comments=(Comment("b", "I hit the same thing. Re-posting it:\n\n"
                                      + _quote(F + "python\n" + SCRIPT + F)
                                      + "\n\nFails for me too on main.\n"),)), SCRIPT),
    ("someone else's script with no word about failing", Issue(
        "[Bug] parallel fails", "Script is in the forum thread.", author="a",
        comments=(Comment("b", "Have you tried this?\n\n" + F + "python\n" + SCRIPT + F
                          + "\n"),)), None),
    # An import failure shown only as an interactive session's traceback.
    ("session traceback into tvm/__init__.py", Issue(
        "can not import tvm", "Python 3.10.4\n>>> \nTraceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        '  File "/home/u/src/tvm/python/tvm/__init__.py", line 26, in <module>\n'
        "    from ._ffi.base import TVMError\n"
        "OSError: libtvm.so: cannot open shared object file: No such file or directory\n",
        author="a"), "import tvm\n"),
    ("session traceback into a subpackage", Issue(
        "import of relax fails", "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        '  File "/opt/tvm/python/tvm/relax/__init__.py", line 68, in <module>\n'
        "    from .op.base import call_tir\n"
        "AttributeError: module 'tvm.ir._ffi_api' has no attribute 'X'\n", author="a"),
     "import tvm.relax\n"),
    # Session 8 (sets o-q): "update: the real trigger is this" / "I trimmed it too much".
    ("later repro: the real trigger", Issue(
        "[Bug] gather ignores batch_dims", "```python\n" + SCRIPT + "```\n", author="a",
        comments=(Comment("m", "The script above fails before gather. Could you check?"),
                  Comment("a", "Sorry, I trimmed the script too much. **Update: the real "
                          "trigger is this**, with two batch dims:\n\n```python\n" + _REDUCED
                          + "```\n"),)), _REDUCED),
    ("later repro: the exact script from our tests", Issue(
        "[Bug] gather ignores batch_dims", "```python\n" + SCRIPT + "```\n", author="a",
        comments=(Comment("a", "This is the exact script from our test suite:\n\n```python\n"
                          + _REDUCED + "```\n"),)), _REDUCED),
    ("later repro: the trigger named in passing is not a new script", Issue(
        "[Bug] gather ignores batch_dims", "```python\n" + SCRIPT + "```\n", author="a",
        comments=(Comment("a", "The trigger is the second axis. A workaround that works:\n\n"
                          "```python\n" + _REDUCED + "```\n"),)), SCRIPT),
    # "What works: A ... what fails: B": the first block offered as working yields to B.
    ("first block offered as working, then the failing one", Issue(
        "[Bug] split", "Spelling out all axes works:\n\n```python\n" + SCRIPT
        + "```\nprints `(2, 7)`.\n\nGiving only the last pair:\n\n```python\n" + _REDUCED
        + "```\n\nfails with a Check failed.\n", author="a"), _REDUCED),
    ("first block that should work is still the repro", Issue(
        "[Bug] split", "This should work, as in numpy:\n\n```python\n" + SCRIPT
        + "```\n\nAnd this is what numpy gives:\n\n```python\n" + _REDUCED + "```\n",
        author="a"), SCRIPT),
    ("both blocks offered as working: the first stays", Issue(
        "[Bug] split", "This works:\n\n```python\n" + SCRIPT + "```\n\nThis works too:\n\n"
        "```python\n" + _REDUCED + "```\n\nbut the model fails.\n", author="a"), SCRIPT),
    # "I can't share the original model" is about data: the whole script below is the repro.
    ("cannot share the model, the script is whole", Issue(
        "[Bug] conv2d", "The inputs are dumped to x.npz (I can't share the original model).\n\n"
        "```python\n" + SCRIPT + "```\n", author="a"), SCRIPT),
    ("cannot share the code: what is shown is partial", Issue(
        "[Bug] conv2d", "I can't share the full code, but the gist is:\n\n```python\n"
        + SCRIPT + "```\n", author="a"), None),
    # The file shown by the shell's own command before it is run: cat, Get-Content, type.
    ("PowerShell: Get-Content of the file, then python", Issue(
        "[Bug] int64 sum on Windows", "```powershell\n(venv) PS C:\\w> Get-Content .\\repro.py\n"
        + _REDUCED + "(venv) PS C:\\w> python repro.py\nAssertionError\n```\n", author="a"),
     _REDUCED),
    ("cmd: type of the file, then python", Issue(
        "[Bug] int64 sum on Windows", "```\nC:\\w> type repro.py\n" + _REDUCED
        + "C:\\w> python repro.py\nAssertionError\n```\n", author="a"), _REDUCED),
    ("session traceback from the user's own code", Issue(
        "x fails", "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        '  File "/home/u/mine/helpers.py", line 3, in <module>\n'
        "ValueError: bad\n", author="a"), None),
]


@pytest.mark.parametrize(("rule", "issue", "expected"), ROWS, ids=[r[0] for r in ROWS])
def test_rule_table(rule: str, issue: Issue, expected: str | None) -> None:
    repro = extract_repro(issue)
    if expected is None:
        assert not repro.found, repro.script
    else:
        assert repro.found, repro.reason
        assert repro.script == expected


def test_every_block_rule_has_rows() -> None:
    named = {r[0].split(":")[0].removeprefix("take: ") for r in ROWS}
    assert {rule.name for rule in BLOCK_RULES} <= named


# Miss 5: arguments named in prose, in inline code, as a shell block would.
ARGS_SCRIPT = ("import argparse\nimport tvm\np = argparse.ArgumentParser()\n"
               "p.add_argument('--target', default='llvm')\np.add_argument('--crash', "
               "action='store_true')\na = p.parse_args()\nprint(tvm.target.Target(a.target), "
               "a.crash)\n")
ARGS_ROWS = [
    ("inline code", "Run `python repro.py --crash` to see it; without the flag it passes.",
     ("--crash",)),
    ("inline code after a bare mention",
     "I saved the script as repro.py and ran python repro.py. Then\n"
     "`python3 repro.py --target cuda --crash` crashes.", ("--target", "cuda", "--crash")),
    ("shell block", F + "bash\n$ python repro.py --crash\n" + F, ("--crash",)),
    ("plain prose word is not an argument", "Running python repro.py fails for me.", ()),
    ("the arguments alone, after 'run it with'",
     "Save it as split.py and run it with `--target cuda --crash` (I test several backends).",
     ("--target", "cuda", "--crash")),
    ("a command line wins over the prose form",
     "Run the script with `--crash`; the exact line I use is `python repro.py --target cuda`.",
     ("--target", "cuda")),
    ("inline code that is no argument", "Run it with `TVM_BACKTRACE=1` set.", ()),
]


@pytest.mark.parametrize(("name", "prose", "args"), ARGS_ROWS, ids=[r[0] for r in ARGS_ROWS])
def test_arguments_in_prose(name: str, prose: str, args: tuple[str, ...]) -> None:
    body = f"The target parser crashes.\n\n{F}python\n{ARGS_SCRIPT}{F}\n\n{prose}\n"
    repro = extract_repro(Issue("[Bug] target crash", body, author="a"))
    assert repro.found
    assert repro.args == args


def test_markdown_is_parsed_once_per_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5 MB issue took 24 s when each stage parsed the markdown again: each text of the issue
    (body, the author's comments, another's comment that mentions a repro) is parsed once."""
    from bot.extract import markdown

    calls: list[int] = []
    real_parse = markdown.MD.parse

    def counting_parse(src: str, env: object = None) -> list:  # type: ignore[type-arg]
        calls.append(len(src))
        return real_parse(src, env)  # type: ignore[arg-type]

    monkeypatch.setattr(markdown.MD, "parse", counting_parse)
    later = "Here is a smaller repro:\n\n" + F + "python\n" + SCRIPT + F + "\n"
    issue = Issue("x", "It fails:\n\n" + F + "python\n" + SCRIPT + F + "\n", author="a",
                  comments=(Comment("a", "Same on 0.18."), Comment("b", "I can reproduce it."),
                            Comment("a", later)))
    assert extract_repro(issue).found
    assert len(calls) <= 3  # body and two author comments; the other's comment is not needed



_PRINTS = "import numpy as np\nx = np.arange(4)\nprint('sum:', x.sum())\n"


@pytest.mark.parametrize(
    ("after", "shown"),
    [
        ("Output:\n\n```\nsum: 7\n```\n", "sum: 7"),
        ("### Actual behavior\n\n```\nsum: 7\n```\n", "sum: 7"),
        ("It prints\n\n```\n[array([1., 2.], dtype=float32)]\n```\n",
         "[array([1., 2.], dtype=float32)]"),
        # what the author expects is not what the script printed
        ("Expected output:\n\n```\nsum: 6\n```\n", ""),
        ("### Expected behavior\n\n```\nsum: 6\n```\n", ""),
        # a second program is not output
        ("Output:\n\n```\nimport os\nprint(1)\n```\n", ""),
        # no numbers: nothing to compare
        ("Output:\n\n```\ndone\n```\n", ""),
        # one value, said in the prose right after the script
        ("It prints 7. The sum should be 6.\n", "7"),
        ("The script outputs `sum: 7` instead of 6.\n", "sum: 7"),  # (the line, in a code span)
        ("It prints 7 as expected, but the dtype is wrong.\n", ""),
        ("It prints 3 times, then stops.\n", ""),
    ],
)
def test_the_output_shown_after_the_script(after: str, shown: str) -> None:
    repro = extract_repro(Issue("[Bug] sum", "```python\n" + _PRINTS + "```\n\n" + after,
                                author="a"))
    assert repro.found and repro.script == _PRINTS
    assert repro.shown_output.strip() == shown


_UNFENCED = ("import numpy as np\nimport tvm\n\nx = np.full((2, 2), 128, dtype='uint8')\n"
             "y = tvm.runtime.tensor(x).numpy() // 3\nprint(y)\nprint('min', y.min())\n")


@pytest.mark.parametrize(
    ("after", "shown"),
    [
        ("and what it prints:\n\n[[42 42]\n [42 42]]\nmin 42\n\nIt should be 43.\n",
         "[[42 42]\n [42 42]]\nmin 42"),
        ("Output:\n[[0 0]\n [0 0]]\nmin 0\n", "[[0 0]\n [0 0]]\nmin 0"),
        # the expected output, and prose that only talks about it, are not what it printed
        ("Expected output:\n\n[[43 43]\n [43 43]]\nmin 43\n", ""),
        ("It prints the wrong thing, I think the floor division is off by one.\n", ""),
        ("and what it prints:\n\nall good\n", ""),
    ],
)
def test_the_output_shown_after_an_unfenced_script(after: str, shown: str) -> None:
    body = "Dividing a uint8 tensor gives one less than numpy:\n\n" + _UNFENCED + "\n" + after
    repro = extract_repro(Issue("[Bug] uint8 division", body, author="a"))
    assert repro.found and repro.shape == "unfenced" and repro.script.strip() == _UNFENCED.strip()
    assert repro.shown_output.strip() == shown


@pytest.mark.parametrize(
    ("before", "shown"),
    [
        # The bug template puts "Actual behavior" above "Steps to reproduce".
        ("### Actual behavior\n\nThe sum is off by one:\n\n```\nsum: 7\n```\n\n"
         "### Environment\n\nTVM main\n\n", "sum: 7"),
        # the expected output above the script is not what it printed
        ("### Expected behavior\n\n```\nsum: 6\n```\n\n", ""),
        # a log above the script, under no "actual" heading, is not the script's output
        ("### Environment\n\n```\ncmake 3.28, llvm 17\n```\n\n", ""),
        # a traceback under "Actual behavior" is kept: only a run that prints it would match
        ("### Actual behavior\n\n```\nValueError: axis 2\n```\n\n", "ValueError: axis 2"),
    ],
)
def test_the_output_shown_above_the_script(before: str, shown: str) -> None:
    body = before + "### Steps to reproduce\n\n```python\n" + _PRINTS + "```\n"
    repro = extract_repro(Issue("[Bug] sum", body, author="a"))
    assert repro.found and repro.script == _PRINTS
    assert repro.shown_output.strip() == shown


_NOTEBOOK = """```
In [1]:
!pip install -q apache-tvm

In [2]:
import numpy as np
x = np.arange(3)
x

Out[2]:
array([0, 1, 2])

In [3]:
assert x.sum() == 4

---------------------------------------------------------------------------
AssertionError                            Traceback (most recent call last)
Cell In[3], line 1
----> 1 assert x.sum() == 4

AssertionError:

In [4]:
print("after the failure")
```
"""


def test_a_notebook_transcript_is_its_cells_up_to_the_failing_one() -> None:
    repro = extract_repro(Issue("[Bug] sum is wrong", "Pasted from Colab:\n\n" + _NOTEBOOK,
                                author="a"))
    assert repro.found and repro.shape == "interactive"
    lines = [ln.strip() for ln in repro.script.split("\n") if ln.strip()]
    assert lines == ["import numpy as np", "x = np.arange(3)", "x", "assert x.sum() == 4"]
    assert "pip" not in repro.script and "after the failure" not in repro.script
