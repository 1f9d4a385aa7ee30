"""Extraction of the repro script from synthetic issues in the shapes real reports take."""

from __future__ import annotations

import ast
import textwrap

import pytest

from bot.extract import extract_repro
from bot.models import Comment, Issue, Repro

F = "```"  # keeps the fixtures readable


def issue(body: str, *comments: tuple[str, str], title: str = "[Bug] something fails") -> Issue:
    return Issue(
        title=title,
        body=textwrap.dedent(body),
        author="alice",
        comments=tuple(Comment(author=a, body=textwrap.dedent(b)) for a, b in comments),
    )


def lines(script: str) -> list[str]:
    return [ln.rstrip() for ln in script.splitlines() if ln.strip()]


def assert_script(repro: Repro, expected: str) -> None:
    assert repro.found, repro.reason
    assert lines(repro.script) == lines(textwrap.dedent(expected))
    ast.parse(repro.script)


# ----------------------------------------------------------------------------- fenced blocks


SCRIPT = """\
import tvm
from tvm import relax

x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
print(x)
"""


@pytest.mark.parametrize("fence,tag", [
    ("```", "python"), ("```", "py"), ("```", "python3"), ("```", ""), ("~~~", ""),
    ("~~~", "python"), ("````", "python"),
])
def test_fenced_script_with_any_python_tag(fence: str, tag: str) -> None:
    body = f"### Steps to reproduce\n\n{fence}{tag}\n{SCRIPT}{fence}\n\nIt crashes.\n"
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)
    assert r.blocks == ("body#0",)
    assert r.shape == "fenced"
    assert r.sha256 and len(r.sha256) == 64


def test_traceback_tagged_python_is_not_the_script() -> None:
    body = f"""\
    ### Actual behavior
    {F}python
    Traceback (most recent call last):
      File "repro.py", line 3, in <module>
        mod = build(x)
    tvm.error.InternalError: Check failed: (n > 0) is false: bad extent
    {F}

    ### Steps to reproduce
    {F}python
    import tvm
    mod = tvm.IRModule()
    print(mod)
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\nmod = tvm.IRModule()\nprint(mod)\n")
    assert r.blocks == ("body#1",)
    assert r.shape == "fenced"


@pytest.mark.parametrize("message", [
    "ValueError: shapes do not match",
    "free(): invalid pointer\nAborted (core dumped)",
    "Segmentation fault (core dumped)",
    "[10:21:33] /src/relax/vm.cc:735: pc = 21\nSegmentation fault (core dumped)",
])
def test_error_messages_tagged_python_are_not_scripts(message: str) -> None:
    body = f"It fails with\n\n{F}python\n{message}\n{F}\n"
    r = extract_repro(issue(body))
    assert not r.found
    assert r.shape == "none"
    assert "error output" in r.reason or "No Python code" in r.reason


def test_other_languages_are_ignored() -> None:
    body = f"""\
    The C++ side:
    {F}cpp
    int main() {{ return foo(1); }}
    {F}
    {F}bash
    pip install apache-tvm
    {F}
    """
    assert not extract_repro(issue(body)).found


def test_block_indented_as_if_cut_from_a_function_is_dedented() -> None:
    body = f"""\
    Here:
    {F}
        x = tir.Var("x", "int32")
        ana = tvm.arith.Analyzer()
        print(ana.simplify(x + 0))
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, 'x = tir.Var("x", "int32")\nana = tvm.arith.Analyzer()\n'
                     'print(ana.simplify(x + 0))\n')
    assert not r.script.startswith(" ")


def test_main_guard_is_kept_as_written() -> None:
    script = textwrap.dedent("""\
        import multiprocessing
        import tvm


        def work():
            return tvm.runtime.Device(1, 0)


        if __name__ == "__main__":
            multiprocessing.set_start_method("spawn")
            print(work())
        """)
    r = extract_repro(issue(f"{F}python\n{script}{F}\n"))
    assert_script(r, script)
    assert 'if __name__ == "__main__":' in r.script


def test_traceback_pasted_after_the_code_in_the_same_block_is_cut() -> None:
    body = f"""\
    {F}python
    import tvm
    tvm.tir.Var("x", "bogus")
    Traceback (most recent call last):
      File "a.py", line 2, in <module>
    ValueError: unknown dtype
    {F}
    """
    assert_script(extract_repro(issue(body)), 'import tvm\ntvm.tir.Var("x", "bogus")\n')


def test_code_with_a_real_syntax_error_is_still_the_repro() -> None:
    # Python 2 code: running it is how the reporter learns that it is stale.
    body = f"{F}python\nimport tvm\nprint tvm.__version__\n{F}\n"
    r = extract_repro(issue(body))
    assert r.found
    assert "print tvm.__version__" in r.script


@pytest.mark.parametrize(("tag", "taken"), [
    ("c++", True), ("text", True), ("sh", True), ("js", True),
    ("c++", False),  # (real C++ stays native code)
])
def test_a_python_script_under_another_languages_tag(tag: str, taken: bool) -> None:
    script = "import numpy as np\nimport tvm\nprint(np.arange(3), tvm.cpu())\n"
    code = script if taken else "#include <tvm/runtime/module.h>\nint main() { return 0; }\n"
    r = extract_repro(issue(f"Empty output:\n\n{F}{tag}\n{code}{F}\n"))
    assert r.found is taken, r
    if taken:
        assert_script(r, script)


@pytest.mark.parametrize("tag", ["", "python"])
def test_the_array_a_script_printed_under_it_in_its_block_is_output(tag: str) -> None:
    script = ("import numpy as np\nx = np.arange(25, dtype=\"float32\").reshape(5, 5)\n"
              "print(x[:2, :3])\n")
    printed = "[[0. 1. 2.]\n [5. 6. 7.]]"
    r = extract_repro(issue(f"edge windows wrong\n\n{F}{tag}\n{script}\n{printed}\n{F}\n"))
    assert_script(r, script)
    assert r.shown_output == printed
    # ... also right under the print, with the check after it going on with the script
    check = "assert x[0, 0] == 1.0\n"
    r = extract_repro(issue(f"{F}{tag}\n{script}{printed}\n{check}{F}\n"))
    assert_script(r, script + check)
    # a Python list is code, not a printed array
    listed = f"{F}{tag}\n{script}[1, 2]\n{F}\n"
    assert "[1, 2]" in extract_repro(issue(listed)).script


@pytest.mark.parametrize("stray", ["``", "`", "  ``  "])
def test_a_stray_backtick_line_inside_the_block_is_markdown_not_code(stray: str) -> None:
    # (a second fence typed short, left inside the block: Python cannot parse it)
    body = (f"the parser crash:\n\n{F}python\nimport tvm\nfrom tvm.script import relax as R\n\n"
            f"def f(x):\n    if x:\n{stray}\n        y = R.add(x, x)\n    return x\n\nprint(f)\n{F}\n")
    r = extract_repro(issue(body))
    assert r.found
    assert "`" not in r.script
    assert "y = R.add(x, x)" in r.script
    ast.parse(r.script)


def test_details_block_right_after_summary() -> None:
    body = f"""\
    <details><summary>repro.py</summary>
    {F}python
    import tvm
    print(tvm.cpu(0))
    {F}
    </details>
    """
    assert_script(extract_repro(issue(body)), "import tvm\nprint(tvm.cpu(0))\n")


def test_unclosed_fence_before_the_next_heading_is_repaired() -> None:
    # The author forgot to close the output block; every later fence is off by one.
    body = f"""\
    ### Actual behavior
    {F}
    error: unexpected keyword argument 'axis'
     --> <str>:4:9

    ### Steps to reproduce

    {F}
    import tvm
    from tvm.script import relax as R
    m = tvm.IRModule()
    print(m.script())
    {F}

    cc @someone
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\nfrom tvm.script import relax as R\nm = tvm.IRModule()\n"
                     "print(m.script())\n")
    assert "@someone" not in r.script


def test_environment_version_print_is_not_the_repro() -> None:
    body = f"""\
    ### Environment
    {F}python
    import tvm; print(tvm.__version__)
    {F}
    ### Steps to reproduce
    {F}python
    import tvm
    from tvm import te
    A = te.placeholder((4,), name="A")
    print(A.shape)
    {F}
    """
    r = extract_repro(issue(body))
    assert r.blocks == ("body#1",)
    assert "te.placeholder" in r.script


def test_output_block_that_parses_is_not_preferred_over_the_script() -> None:
    body = f"""\
    Output:
    {F}
    tensor([1.0, 2.0])
    {F}
    Code:
    {F}python
    import torch
    print(torch.ones(2))
    {F}
    """
    r = extract_repro(issue(body))
    assert r.blocks == ("body#1",)


# ----------------------------------------------------------------------------- several blocks


def test_definitions_and_driver_in_two_blocks_are_joined() -> None:
    body = f"""\
    The module:
    {F}python
    import tvm
    from tvm.script import ir as I
    from tvm.script import relax as R

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            return x
    {F}
    And running it:
    {F}python
    ex = tvm.compile(Module, target="llvm")
    print(ex)
    {F}
    """
    r = extract_repro(issue(body))
    assert r.found
    assert r.blocks == ("body#0", "body#1")
    assert r.shape == "multi-block"
    tree = ast.parse(r.script)
    assert "class Module" in r.script and r.script.index("class Module") < r.script.index(
        "tvm.compile")
    assert tree.body


def test_working_variant_is_not_joined() -> None:
    body = f"""\
    ### Actual behavior
    {F}python
    import tvm
    import torch
    {F}
    At exit it prints
    {F}python
    double free or corruption (out)
    Aborted (core dumped)
    {F}
    However, importing torch first works:
    {F}python
    import torch
    import tvm
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\nimport torch\n")
    assert r.blocks == ("body#0",)
    assert r.shape == "multi-block"


def test_variant_that_reuses_names_but_is_said_to_work_is_not_joined() -> None:
    body = f"""\
    {F}python
    import tvm
    x = tvm.tir.Var("x", "int64")
    print(tvm.arith.Analyzer().simplify(x // 1))
    {F}
    Writing it this way works fine:
    {F}python
    print(tvm.arith.Analyzer().simplify(x))
    {F}
    """
    r = extract_repro(issue(body))
    assert r.blocks == ("body#0",)


def test_self_contained_second_script_is_not_joined() -> None:
    body = f"""\
    {F}python
    import tvm
    print(tvm.tir.const(1, "int8") + 300)
    {F}
    A related case:
    {F}python
    import tvm
    print(tvm.tir.const(1, "uint8") - 2)
    {F}
    """
    r = extract_repro(issue(body))
    assert r.blocks == ("body#0",)
    assert r.shape == "multi-block"


def test_printed_ir_after_the_script_is_not_joined() -> None:
    body = f"""\
    {F}python
    import tvm
    from tvm import relax
    bb = relax.BlockBuilder()
    mod = bb.get()
    mod.show()
    {F}
    prints
    {F}python
    # from tvm.script import ir as I
    # from tvm.script import relax as R

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((2,), dtype="float32")):
            return x
    {F}
    """
    r = extract_repro(issue(body))
    assert r.blocks == ("body#0",)
    assert r.shape == "fenced"
    assert "class Module" not in r.script


# ----------------------------------------------------------------------------- interactive


def test_interactive_session_prompts_and_output_are_stripped() -> None:
    body = f"""\
    {F}pycon
    >>> import tvm
    >>> x = tvm.tir.const(3, "int32")
    >>> for i in range(2):
    ...     print(x + i)
    ...
    3
    4
    >>> tvm.tir.Cast("int4", x)
    Traceback (most recent call last):
      File "<stdin>", line 1, in <module>
    tvm.error.InternalError: Check failed: bad cast
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, """\
        import tvm
        x = tvm.tir.const(3, "int32")
        for i in range(2):
            print(x + i)
        tvm.tir.Cast("int4", x)
        """)
    assert r.shape == "interactive"


def test_ipython_session() -> None:
    body = f"""\
    {F}
    In [1]: import tvm

    In [2]: tvm.target.Target("llvm -mcpu=bogus")
    Out[2]: llvm -keys=cpu -mcpu=bogus
    {F}
    """
    r = extract_repro(issue(body))
    # IPython showed the value (Out[2]): the script prints it too
    assert_script(r, 'import tvm\nprint(repr(tvm.target.Target("llvm -mcpu=bogus")))\n')


# ----------------------------------------------------------------------------- shell-wrapped


def test_python_dash_c_in_a_shell_log() -> None:
    body = f"""\
    {F}
    $ pip install apache-tvm
    Successfully installed apache-tvm-0.1
    {F}

    {F}console
    (venv) $ python -c "import tvm.relax; print(tvm.relax.__file__)"
    Traceback (most recent call last):
      File "<string>", line 1, in <module>
    ImportError: libtvm.so: cannot open shared object file
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm.relax; print(tvm.relax.__file__)\n")
    assert r.shape == "shell-wrapped"
    assert r.blocks == ("body#1",)


def test_python_dash_c_in_plain_prose() -> None:
    body = (
        "After building from source I ran\n\n"
        "user@host:~/tvm$ python3 -c 'import tvm; print(tvm.__file__)'\n"
        "Traceback (most rec\n"
    )
    r = extract_repro(issue(body))
    assert_script(r, "import tvm; print(tvm.__file__)\n")
    assert r.shape == "shell-wrapped"
    assert r.blocks == ("body:unfenced",)


def test_python_dash_c_only_in_the_title() -> None:
    r = extract_repro(issue("See title. The log is in a screenshot.",
                            title='python -c "import tvm.contrib.cc" fails'))
    assert_script(r, "import tvm.contrib.cc\n")
    assert r.blocks == ("title",)


def test_dollar_python_session() -> None:
    body = f"""\
    I cannot import relax:
    {F}
    $ python
    $ import tvm.relax
    {F}
    ### Expected behavior
    import successfully
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm.relax\n")
    assert r.shape == "shell-wrapped"


def test_args_the_author_says_to_use_are_kept() -> None:
    body = f"""\
    Run it as `python repro.py --target llvm --opt-level 3`:
    {F}python
    import argparse
    import tvm
    p = argparse.ArgumentParser()
    p.add_argument("--target")
    p.add_argument("--opt-level", type=int)
    a = p.parse_args()
    print(tvm.target.Target(a.target), a.opt_level)
    {F}
    """
    r = extract_repro(issue(body))
    assert r.found
    assert r.args == ("--target", "llvm", "--opt-level", "3")


TARGET_SCRIPT = f"""\
{F}python
import sys
import tvm
target = sys.argv[1] if len(sys.argv) > 1 else "llvm"
print(tvm.target.Target(target))
{F}
"""


@pytest.mark.parametrize(("transcript", "args"), [
    # several runs shown: the one whose output fails is the report's
    ("$ python repro.py llvm\nnan count: 0\n$ python repro.py cuda\nnan count: 12\n"
     "Traceback (most recent call last):\n  File \"repro.py\", line 5\nAssertionError\n",
     ("cuda",)),
    ("$ python repro.py rocm\nSegmentation fault (core dumped)\n$ python repro.py llvm\nok\n",
     ("rocm",)),
    # none fails (or all do): the first, as before
    ("$ python repro.py llvm\nok\n$ python repro.py cuda\nok\n", ("llvm",)),
    ("$ python repro.py llvm\nValueError: x\n$ python repro.py cuda\nValueError: y\n",
     ("llvm",)),
])
def test_of_several_commands_shown_the_failing_one_gives_the_args(
        transcript: str, args: tuple[str, ...]) -> None:
    r = extract_repro(issue(f"{TARGET_SCRIPT}\n{F}\n{transcript}{F}\n"))
    assert r.found and "sys.argv" in r.script
    assert r.args == args


def test_args_are_not_taken_from_prose_words() -> None:
    body = f"""\
    Save it and run python repro.py (no GPU needed). With a GPU, python repro.py --run also runs it.
    {F}python
    import sys
    import tvm
    if "--run" in sys.argv:
        print(tvm.cuda(0))
    print(tvm.cpu(0))
    {F}
    """
    r = extract_repro(issue(body))
    assert r.found
    assert r.args == ()


def test_args_are_ignored_when_the_script_reads_none() -> None:
    body = f"Run `python repro.py --verbose`:\n\n{F}python\nimport tvm\nprint(tvm.cpu())\n{F}\n"
    assert extract_repro(issue(body)).args == ()


# ----------------------------------------------------------------------------- unfenced


def test_code_pasted_without_fences_in_a_forum_post() -> None:
    body = """\
    Hi all, this lowers to a weird loop nest:

    import tvm
    from tvm import te

    n = 16
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2, name="B")

    print(tvm.lower(te.create_prim_func([A, B])))
    # IR
    // attr [B] storage_scope = "global"
    for (i, 0, 16) {
      B[i] = A[i] * 2f
    }
    Why is the loop not split?

    Thanks!
    """
    r = extract_repro(issue(body))
    assert_script(r, """\
        import tvm
        from tvm import te
        n = 16
        A = te.placeholder((n,), name="A")
        B = te.compute((n,), lambda i: A[i] * 2, name="B")
        print(tvm.lower(te.create_prim_func([A, B])))
        """)
    assert r.shape == "unfenced"
    assert r.blocks == ("body:unfenced",)


def test_unfenced_code_with_indented_parts_and_trailing_prose() -> None:
    body = """\
    To reproduce

    import tvm
    import numpy as np

    def run(n):
        x = np.ones(n)

        return tvm.runtime.tensor(x)

    with tvm.transform.PassContext(opt_level=3):
        y = run(4)

        print(y)

    The call above never returns and the output is
    Troubleshooting
    """
    r = extract_repro(issue(body))
    assert r.found
    assert r.shape == "unfenced"
    assert lines(r.script)[-1] == "    print(y)"
    assert "Troubleshooting" not in r.script


def test_unfenced_alternatives_take_the_first() -> None:
    body = """\
    whether I do

    import tvm
    import torch

    or:

    import torch
    import tvm

    it crashes.
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\nimport torch\n")


def test_one_line_of_prose_that_parses_is_not_code() -> None:
    body = "Expected behavior\n\nimport successfully\n\nActual: it fails\n"
    assert not extract_repro(issue(body)).found


def test_curly_quotes_from_a_forum_are_straightened() -> None:
    body = "Code:\n\nimport tvm\nx = tvm.tir.Var(\u201cx\u201d, \u201cint32\u201d)\nprint(x)\n"
    assert_script(extract_repro(issue(body)), 'import tvm\nx = tvm.tir.Var("x", "int32")\nprint(x)\n')


# ----------------------------------------------------------------------------- comments


def test_script_in_the_authors_comment() -> None:
    i = issue("It segfaults, script below.",
              ("bob", "Can you share a script?"),
              ("alice", f"Sure:\n\n{F}python\nimport tvm\nprint(tvm.cpu(0).exist)\n{F}\n"))
    r = extract_repro(i)
    assert_script(r, "import tvm\nprint(tvm.cpu(0).exist)\n")
    assert r.blocks == ("comment2#0",)


def test_body_wins_over_comments() -> None:
    i = issue(f"{F}python\nimport tvm\nprint(1)\n{F}\n",
              ("alice", f"{F}python\nimport tvm\nprint(2)\n{F}\n"))
    assert extract_repro(i).blocks == ("body#0",)


def test_other_peoples_code_is_not_the_repro() -> None:
    i = issue("It fails on my machine, no idea why.",
              ("bob", f"Try this instead:\n\n{F}python\nimport tvm\nprint(tvm.__version__)\n{F}\n"))
    assert not extract_repro(i).found


def test_maintainers_reduced_repro_is_used_last() -> None:
    i = issue("It crashes when I build my big model (private).",
              ("carol", f"Reduced repro:\n\n{F}python\nimport tvm\ntvm.tir.Var('x', 'int7')\n{F}\n"))
    r = extract_repro(i)
    assert r.found
    assert r.blocks == ("comment1#0",)


def test_code_quoted_in_a_comment_is_ignored() -> None:
    i = issue("Crash, see below.",
              ("bob", f"> reproduce with\n> {F}python\n> import tvm\n> print(3)\n> {F}\n\nSame here."))
    assert not extract_repro(i).found


# ----------------------------------------------------------------------------- nothing to run


TEMPLATE = """\
Thanks for participating in the TVM community! We use the forum for general usage questions.

### Expected behavior

What you were expecting

### Actual behavior

What actually happened

### Environment

Any environment details, such as: Operating System, TVM version, etc

### Steps to reproduce

Preferably a minimal script to cause the issue to occur.
"""


def test_untouched_template() -> None:
    r = extract_repro(issue(TEMPLATE))
    assert not r.found
    assert r.shape == "none"
    assert "template" in r.reason
    assert "minimal" in r.reason and "script" in r.reason


def test_attachment_only() -> None:
    body = """\
    The numbers differ from PyTorch.

    Mismatched elements: 3 / 16 (18.8%)
    Max absolute difference: 0.25

    [model_and_script.zip](https://github.com/user-attachments/files/123/model_and_script.zip)
    """
    r = extract_repro(issue(body))
    assert not r.found
    assert "attachment" in r.reason and "model_and_script.zip" in r.reason


def test_test_file_from_the_source_tree() -> None:
    body = """\
    Steps:
    1. build with USE_CUDA ON
    2. cd tests/python/relax
    TVM_LOG_DEBUG=1 python3 test_codegen_foo.py

    it shows Segmentation fault (core dumped)
    """
    r = extract_repro(issue(body))
    assert not r.found
    assert "test_codegen_foo.py" in r.reason and "source tree" in r.reason


def test_snippet_the_author_says_is_incomplete() -> None:
    body = f"""\
    Calling the compiled function fails with a type error.

    The full code is rather involved, so I'm not copying it here, but this is how I make the var:

    {F}python
    import tvm
    x = tvm.tir.Var("x", "handle")
    {F}
    """
    r = extract_repro(issue(body))
    assert not r.found
    assert "incomplete" in r.reason
    assert "not copying it here" in r.reason


def test_placeholders_left_in_the_code() -> None:
    body = f"{F}python\nimport tvm\nmodel = ...  # my model\nprint(tvm.compile(model))\n{F}\n"
    r = extract_repro(issue(body))
    assert not r.found
    assert "placeholder" in r.reason


def test_only_an_error_message() -> None:
    body = "Building gives\n\n```\nInternalError: Check failed: (x) is false: bad\n```\n"
    r = extract_repro(issue(body))
    assert not r.found
    assert "error output" in r.reason


def test_empty_issue() -> None:
    r = extract_repro(Issue(title="", body=""))
    assert not r.found and r.reason


def test_script_file_named_but_not_shown() -> None:
    r = extract_repro(issue("Running `python my_model.py` crashes with SIGSEGV."))
    assert not r.found
    assert "my_model.py" in r.reason


def test_extraction_is_pure_and_deterministic() -> None:
    i = issue(f"{F}python\n{SCRIPT}{F}\n")
    assert extract_repro(i) == extract_repro(i)
    assert extract_repro(i).sha256 == extract_repro(i).sha256


def test_shell_prompt_pasted_after_the_code_is_cut() -> None:
    body = f"{F}python\nimport tvm\nprint(tvm.cpu())\n$ python repro.py\ncpu(0)\n{F}\n"
    assert_script(extract_repro(issue(body)), "import tvm\nprint(tvm.cpu())\n")


def test_heredoc_in_a_shell_block() -> None:
    body = f"""\
    {F}bash
    $ cat > repro.py << 'EOF'
    import tvm
    print(tvm.tir.const(1) // 0)
    EOF
    $ python repro.py
    Floating point exception (core dumped)
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\nprint(tvm.tir.const(1) // 0)\n")
    assert r.shape == "shell-wrapped"
    assert r.shown_output == "Floating point exception (core dumped)"


def test_what_a_heredoc_run_printed_is_the_shown_output() -> None:
    body = f"""\
    {F}console
    $ python - <<'EOF'
    import numpy as np
    print("sum:", np.float32(2) ** 24)
    EOF
    sum: 16777216.0
    $ echo done
    {F}
    """
    r = extract_repro(issue(body))
    assert r.shape == "shell-wrapped" and r.shown_output == "sum: 16777216.0"


def test_cat_of_the_script_in_a_terminal_log() -> None:
    body = f"""\
    {F}console
    user@box:~$ cat repro.py
    import tvm
    x = tvm.tir.Var("x", "int32")
    print(x // 0)
    user@box:~$ python repro.py
    Segmentation fault (core dumped)
    {F}
    """
    assert_script(extract_repro(issue(body)),
                  'import tvm\nx = tvm.tir.Var("x", "int32")\nprint(x // 0)\n')


def test_unfenced_code_without_imports_from_a_forum_post() -> None:
    body = """\
    I build the function like this

    x = relay.var("x", shape=(1, 3), dtype="float32")
    y = relay.nn.softmax(x, axis=-1)
    f = relay.Function([x], y)
    mod = tvm.IRModule.from_expr(f)

    and then the build fails. Any idea?
    """
    r = extract_repro(issue(body))
    assert r.found and r.shape == "unfenced"
    assert lines(r.script)[0].startswith("x = relay.var")
    assert lines(r.script)[-1] == "mod = tvm.IRModule.from_expr(f)"


def test_a_single_assignment_in_prose_is_not_a_script() -> None:
    body = "I think the result = wrong(value) here, as printed.\n\nx = foo(1)\n"
    assert not extract_repro(issue(body)).found


def test_working_variant_with_imports_does_not_beat_a_repro_without() -> None:
    body = f"""\
    {F}python
    x = tvm.tirx.Var("x", "int32")
    print(tvm.arith.Analyzer().simplify(x * 0 // 0))
    {F}
    With the imports and a non-zero divisor it works:
    {F}python
    import tvm
    x = tvm.tirx.Var("x", "int32")
    print(tvm.arith.Analyzer().simplify(x * 0 // 1))
    {F}
    """
    r = extract_repro(issue(body))
    assert r.blocks == ("body#0",)


# ----------------------------------------------------------------------------- unfenced sessions


def test_unfenced_interactive_session_stops_at_the_first_failure() -> None:
    body = """\
    I built from source and followed the docs:

    1. make
    2. cd python; python setup.py install --user

    Then:

    >>> import tvm
    >>> from tvm import relax
    Traceback (most recent call last):
      File "<stdin>", line 1, in <module>
      File "/home/u/tvm/python/tvm/relax/__init__.py", line 3, in <module>
        from . import exec_builder
    ImportError: cannot import name exec_builder

    The module is there though. Importing it alone works:

    >>> import some_helper
    >>>

    and again:

    >>> import tvm
    ImportError: cannot import name op
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\nfrom tvm import relax\n")
    assert r.shape == "interactive"
    assert r.blocks == ("body:unfenced",)


def test_unfenced_interactive_session_without_error_keeps_the_first_session() -> None:
    body = """\
    The simplifier gives a strange answer:

    >>> import tvm
    >>> x = tvm.tir.Var("x", "int32")
    >>> for k in range(2):
    ...     print(k)
    ...
    0
    1
    >>> tvm.arith.Analyzer().simplify(x * 0 // 0)
    0

    I expected an error for the division by zero.
    """
    r = extract_repro(issue(body))
    assert_script(r, """\
        import tvm
        x = tvm.tir.Var("x", "int32")
        for k in range(2):
            print(k)
        print(repr(tvm.arith.Analyzer().simplify(x * 0 // 0)))
        """)  # (the value the session shows under its prompt is printed, as in a fenced session)
    assert r.shape == "interactive"


def test_unfenced_prompt_lines_without_code_are_not_a_script() -> None:
    body = ">>> \n>>> hello there\nIt fails.\n"
    assert not extract_repro(issue(body)).found


# ----------------------------------------------------------------------------- unfenced sections


def test_unfenced_steps_to_reproduce_beat_the_expected_behavior_line() -> None:
    body = """\
    ### Expected behavior
    import tvm
    mod = tvm.relax.frontend.onnx.from_onnx(model, shape_dict=shapes)
    Should work

    ### Actual behavior
    AttributeError                            Traceback (most recent call last)
    AttributeError: module 'tvm.relax.frontend' has no attribute 'onnx'

    ### Steps to reproduce

    # Make two symbolic sizes
    n = tvm.tir.Var("n", "int64")
    m = tvm.tir.Var("m", "int64")

    # The input shapes
    shapes = {
        "tokens": [n, m],
    }

    mod = tvm.relax.frontend.onnx.from_onnx(model, shape_dict=shapes)
    mod
    """
    r = extract_repro(issue(body))
    assert_script(r, """\
        # Make two symbolic sizes
        n = tvm.tir.Var("n", "int64")
        m = tvm.tir.Var("m", "int64")
        # The input shapes
        shapes = {
            "tokens": [n, m],
        }
        mod = tvm.relax.frontend.onnx.from_onnx(model, shape_dict=shapes)
        mod
        """)
    assert r.shape == "unfenced"


def test_unfenced_variant_word_before_an_earlier_run_does_not_drop_a_later_one() -> None:
    body = """\
    import tvm
    x = tvm.tir.Var("x", "int32")
    print(x)

    Up to here everything works fine.

    Then adding the pass

    y = tvm.tir.Var("y", "int32")
    z = tvm.arith.Analyzer().simplify(x // y)
    print(z)

    crashes.
    """
    r = extract_repro(issue(body))
    assert r.found and r.shape == "unfenced"
    assert lines(r.script)[-1] == "print(z)"


def test_unfenced_section_heading_is_not_kept_as_a_comment() -> None:
    body = """\
    # Steps to reproduce
    import tvm
    print(tvm.tir.Var("x", "int32") // 0)
    """
    assert_script(extract_repro(issue(body)),
                  'import tvm\nprint(tvm.tir.Var("x", "int32") // 0)\n')


# ----------------------------------------------------------------------------- more real shapes

TVMSCRIPT = """\
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0)
"""
DRIVER = "import tvm\nlib = tvm.compile(Module, target=\"llvm\")\n"


def test_printed_output_block_tagged_python_is_not_a_second_script() -> None:
    body = (f"{F}python\n{SCRIPT}{F}\nOutput:\n"
            f"{F}python\narray([[1., 2., 3.]], dtype=float32)\n{F}\n")
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)
    assert r.blocks == ("body#0",)
    assert r.shape == "fenced"


def test_printed_reprs_without_an_intro_are_not_a_script() -> None:
    body = f"{F}python\n{SCRIPT}{F}\n\n{F}python\ntensor([1., 2.])\nR.Tensor((2, 3), dtype='float32')\n{F}\n"
    r = extract_repro(issue(body))
    assert r.shape == "fenced" and r.blocks == ("body#0",)


def test_script_inside_details_html_block() -> None:
    body = f"It crashes.\n\n<details>\n<summary>repro.py</summary>\n\n{F}python\n{SCRIPT}{F}\n</details>\n"
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)
    assert r.shape == "fenced"


def test_script_inside_details_without_fences() -> None:
    body = f"It crashes.\n<details><summary>repro.py</summary>\n{SCRIPT}</details>\n\nThanks\n"
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)
    assert r.shape == "unfenced"


def test_script_in_pre_html_with_entities() -> None:
    body = "It fails:\n<pre><code>import tvm\nx = tvm.tir.Var(&quot;x&quot;, &quot;int32&quot;)\n" \
           "print(x &lt; 0)\n</code></pre>\n"
    assert_script(extract_repro(issue(body)),
                  'import tvm\nx = tvm.tir.Var("x", "int32")\nprint(x < 0)\n')


def test_printed_tvmscript_then_a_driver_that_uses_it() -> None:
    body = f"The module:\n\n{F}python\n{TVMSCRIPT}{F}\n\nand the driver:\n\n{F}python\n{DRIVER}{F}\n"
    r = extract_repro(issue(body))
    assert r.found and r.shape == "multi-block"
    assert r.blocks == ("body#0", "body#1")
    got = lines(r.script)
    assert got[:2] == ["from tvm.script import ir as I", "from tvm.script import tir as T"]
    assert got[-1] == 'lib = tvm.compile(Module, target="llvm")'
    ast.parse(r.script)


def test_driver_then_the_tvmscript_it_uses_goes_first() -> None:
    body = f"Running\n\n{F}python\n{DRIVER}{F}\n\non this module\n\n{F}python\n{TVMSCRIPT}{F}\n"
    r = extract_repro(issue(body))
    assert r.blocks == ("body#1", "body#0")
    assert lines(r.script)[0] == "from tvm.script import ir as I"
    assert lines(r.script)[-1] == 'lib = tvm.compile(Module, target="llvm")'


def test_printed_tvmscript_output_after_the_script_is_not_joined() -> None:
    body = f"{F}python\n{SCRIPT}{F}\n\nprints\n\n{F}python\n{TVMSCRIPT}{F}\n"
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)
    assert r.shape == "fenced"


@pytest.mark.parametrize("indent", ["   ", "    "])
def test_script_in_a_numbered_list_item(indent: str) -> None:
    code = "import tvm\nx = tvm.tir.Var('x', 'int32')\nprint(x // 0)\n"
    item = textwrap.indent(f"{F}python\n{code}{F}\n", indent)
    body = f"Steps:\n\n1. Save this as `repro.py`:\n\n{item}\n2. Run `python repro.py`\n"
    r = extract_repro(issue(body))
    assert_script(r, code)
    assert r.shape == "fenced"
    assert r.args == ()


def test_crlf_line_endings_everywhere() -> None:
    body = f"Repro:\r\n\r\n{F}python\r\n" + SCRIPT.replace("\n", "\r\n") + f"{F}\r\n\r\nIt fails.\r\n"
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)
    assert "\r" not in r.script


def test_crlf_unfenced_session() -> None:
    body = "Then:\r\n\r\n>>> import tvm\r\n>>> tvm.relax.op.nope\r\nAttributeError: no\r\n"
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\ntvm.relax.op.nope\n")
    assert r.shape == "interactive"


def test_tab_indented_script() -> None:
    body = f"{F}python\nimport tvm\ndef f(n):\n\tif n:\n\t\treturn tvm.tir.const(n)\n\treturn None\nprint(f(3))\n{F}\n"
    r = extract_repro(issue(body))
    assert r.found
    assert "return tvm.tir.const(n)" in r.script
    ast.parse(r.script)


@pytest.mark.parametrize("tag", ["Python", "PYTHON", "Python3", "py3", "python3.10", "py3.9",
                                 "python-3", 'python title="repro.py"', "{.python}", "ipython3"])
def test_fence_language_variants(tag: str) -> None:
    r = extract_repro(issue(f"{F}{tag}\n{SCRIPT}{F}\n"))
    assert_script(r, SCRIPT)
    assert r.shape == "fenced"


def test_authors_later_smaller_repro_wins() -> None:
    small = "import tvm\nprint(tvm.tir.Var('x', 'int32') // 0)\n"
    i = issue(f"{F}python\n{SCRIPT}y = 1\nprint(y)\n{F}\n",
              ("bob", "Can you reduce it?"),
              ("alice", f"Sure, here is a smaller repro:\n\n{F}python\n{small}{F}\n"))
    r = extract_repro(i)
    assert_script(r, small)
    assert r.blocks == ("comment2#0",)


@pytest.mark.parametrize("intro", [
    "The minimal repro above still fails on main; with this patch:",  # refers back
    "Here is the updated code, which works now:",  # a fix, not a repro
    "Another thing I tried:",  # no claim of a better repro
])
def test_later_comments_that_do_not_offer_a_better_repro_do_not_win(intro: str) -> None:
    i = issue(f"{F}python\n{SCRIPT}{F}\n",
              ("alice", f"{intro}\n\n{F}python\nimport tvm\nprint(2)\n{F}\n"))
    r = extract_repro(i)
    assert_script(r, SCRIPT)
    assert r.blocks == ("body#0",)


def test_smaller_repro_from_someone_else_does_not_replace_the_authors() -> None:
    i = issue(f"{F}python\n{SCRIPT}{F}\n",
              ("bob", f"Smaller repro:\n\n{F}python\nimport tvm\nprint(3)\n{F}\n"))
    assert extract_repro(i).blocks == ("body#0",)


def test_script_shown_first_then_pip_install_and_run_steps() -> None:
    body = (f"`test.py`:\n{F}python\n{SCRIPT}{F}\nThen:\n"
            f"{F}bash\npip install apache-tvm onnx\npython test.py\n{F}\n")
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)
    assert r.blocks == ("body#0",) and r.args == ()


def test_fenced_session_drops_side_checks_after_the_error() -> None:
    body = f"""\
    {F}pycon
    >>> import tvm
    >>> tvm.relax.transform.Nope()
    Traceback (most recent call last):
      File "<stdin>", line 1, in <module>
    AttributeError: module has no attribute 'Nope'
    >>> import numpy
    >>> numpy.__version__
    '1.26.4'
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\ntvm.relax.transform.Nope()\n")
    assert r.shape == "interactive"


def test_unfenced_notebook_cell_keeps_the_displayed_name() -> None:
    body = """\
    To reproduce

    import tvm
    from tvm import relax
    bb = relax.BlockBuilder()
    mod = bb.get()
    mod

    Result
    """
    r = extract_repro(issue(body))
    assert lines(r.script)[-1] == "mod"
    assert "Result" not in r.script


def test_a_lone_call_after_output_words_is_still_the_script() -> None:
    body = f"This code produces the wrong output:\n\n{F}python\ntvm.build(mod)\n{F}\n"
    r = extract_repro(issue(body))
    assert_script(r, "tvm.build(mod)\n")


def test_fenced_steps_to_reproduce_beat_a_snippet_under_expected_behavior() -> None:
    body = f"""\
### Expected behavior

{F}python
import tvm
mod = tvm.relax.frontend.onnx.from_onnx(model)
{F}
should work.

### Steps to reproduce

{F}python
n = tvm.tir.Var("n", "int64")
mod = tvm.relax.frontend.onnx.from_onnx(model, shape_dict={{"x": [n]}})
{F}
"""
    r = extract_repro(issue(body))
    assert r.blocks == ("body#1",)
    assert lines(r.script)[0] == 'n = tvm.tir.Var("n", "int64")'


# ----------------------------------------------------------------------------- printed output only


@pytest.mark.parametrize("tag,intro,printed", [
    # a list of numpy arrays, with no intro at all
    ("", "", "[array([[ 1.5 ,  2.  , -0.25]], dtype=float32)]"),
    # the same under a short label line
    ("", "Runtime A:\n", "[array([1., nan, inf], dtype=float32), array(3, dtype=int64)]"),
    # tagged python, several lines, booleans and a trailing comma
    ("python", "", "(array(7, dtype=int64), \narray([ True, False,  True]),)"),
    # torch-style reprs and a dtype attribute
    ("python", "Got:\n", "tensor([[0.1000, 0.2000]], dtype=torch.float16)"),
    # printed TVMScript expressions
    ("", "Simplified:\n", "T.max(a + b + T.min(c, d - b), b + a)\nT.int32(4)"),
    # a call to an unknown name under a label line ("Framework X:")
    ("python", "Framework X:\n", "Result(value=3, ok=False)"),
])
def test_printed_values_alone_are_not_a_script(tag: str, intro: str, printed: str) -> None:
    body = f"### Actual behavior\n\nThe outputs differ.\n\n{intro}{F}{tag}\n{printed}\n{F}\n"
    r = extract_repro(issue(body))
    assert not r.found
    assert r.shape == "none"
    assert "printed results" in r.reason


def test_printed_values_under_expected_and_actual_sections_with_an_image_only() -> None:
    body = f"""\
    ### Expected behavior
    The second output should be 0.
    {F}python
    [array(12, dtype=int64),
     array([ True,  True], dtype=bool)]
    {F}

    ![Image](https://github.com/user-attachments/assets/0000-graph)

    ### Actual behavior
    {F}python
    [array(12, dtype=int64),
     array([ True, False], dtype=bool)]
    {F}
    """
    r = extract_repro(issue(body))
    assert not r.found
    # An inline image is not an attachment that holds the reproducer.
    assert "attachment" not in r.reason
    assert "printed results" in r.reason


def test_printed_values_before_a_later_script_do_not_win() -> None:
    body = f"TVM:\n{F}\n[array([1., 2.], dtype=float32)]\n{F}\n\nCode:\n{F}python\n{SCRIPT}{F}\n"
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)
    assert r.blocks == ("body#1",)


def test_importless_code_cut_from_a_function_is_still_the_script() -> None:
    # Assignments and calls, no imports, indented: the repro, even though it will not run as is.
    body = f"""\
    I built this case:
    {F}
        a = tir.Var("a", "int32")
        ana = tvm.arith.Analyzer()
        print(ana.simplify(T.max(a, a)))
    {F}

    ### Actual behavior

    Output:
    {F}
    T.max(a, a)
    {F}
    """
    r = extract_repro(issue(body))
    assert r.blocks == ("body#0",)
    assert lines(r.script)[0] == 'a = tir.Var("a", "int32")'


@pytest.mark.parametrize("code", [
    "run_model()",  # a call with no intro is code
    "mod.show()",  # a method call
    "tvm.build(mod, target='llvm')",  # a module function
    "print(array([1, 2]))",  # printing is code
])
def test_bare_calls_that_are_not_values_stay_code(code: str) -> None:
    r = extract_repro(issue(f"It fails:\n{F}python\n{code}\n{F}\n"))
    assert r.found and r.script.strip() == code


def test_an_output_label_does_not_hide_a_method_call() -> None:
    r = extract_repro(issue(f"TVM:\n{F}python\nmod.show()\n{F}\n"))
    assert r.found and r.script.strip() == "mod.show()"


def test_a_code_label_does_not_make_a_block_output() -> None:
    r = extract_repro(issue(f"Code:\n{F}python\nrun_case(3, dtype='float16')\n{F}\n"))
    assert r.found


def test_interactive_session_showing_an_array_is_a_script() -> None:
    body = f"{F}pycon\n>>> import numpy as np\n>>> np.array([1, 2])\narray([1, 2])\n{F}\n"
    r = extract_repro(issue(body))
    # the session showed the value: the script prints it, as the interpreter did
    assert_script(r, "import numpy as np\nprint(repr(np.array([1, 2])))\n")
    assert r.shown_output == "array([1, 2])"


# ----------------------------------------------------------------------------- native code


@pytest.mark.parametrize("tag", ["cpp", "c++", "cuda", "c"])
def test_only_native_code_is_no_repro_with_a_specific_reason(tag: str) -> None:
    body = f"""\
    Calling the packed function from C++ crashes.
    {F}{tag}
    #include <tvm/runtime/module.h>
    int main() {{
      auto mod = tvm::runtime::Module::LoadFromFile("lib.so");
      return 0;
    }}
    {F}
    {F}
    Segmentation fault (core dumped)
    {F}
    """
    r = extract_repro(issue(body))
    assert not r.found
    assert "native code" in r.reason and f"```{tag}" in r.reason
    assert "Python" in r.reason


def test_untagged_cpp_block_is_recognised_as_native() -> None:
    body = f"""\
    {F}
    #include <tvm/runtime/registry.h>
    using namespace tvm::runtime;
    void Run() {{ std::cout << 1 << std::endl; }}
    {F}
    """
    r = extract_repro(issue(body))
    assert not r.found and "native code (C++)" in r.reason


def test_native_code_next_to_a_python_script_does_not_hide_it() -> None:
    body = f"{F}cpp\n#include <tvm/ir/expr.h>\n{F}\n\n{F}python\n{SCRIPT}{F}\n"
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)


# ----------------------------------------------------------------------------- local files


@pytest.mark.parametrize("read,missing", [
    ('model = onnx.load("model.onnx")', "model.onnx"),
    ('data = np.load("inputs/data.npy")', "inputs/data.npy"),
    ('state = torch.load("weights.pth")', "weights.pth"),
    ('with open("graph.json") as f:\n    g = f.read()', "graph.json"),
])
def test_a_script_that_reads_an_unshared_file_is_found_with_a_note(read: str, missing: str) -> None:
    script = ("import tvm\nimport numpy as np\nimport onnx\nimport torch\n"
              f"{read}\nprint(tvm.__version__, onnx, torch)\n")
    r = extract_repro(issue(f"### Steps to reproduce\n{F}python\n{script}{F}\n"))
    assert_script(r, script)
    assert f"`{missing}`" in r.reason and "not in the issue" in r.reason


def test_a_file_the_script_writes_itself_is_not_missing() -> None:
    script = textwrap.dedent("""\
        import numpy as np
        import onnx
        np.save("x.npy", np.ones(3))
        x = np.load("x.npy")
        with open("out.txt", "w") as f:
            f.write("1")
        print(open("out.txt").read())
        torch.onnx.export(model, x, "m.onnx")
        m = onnx.load("m.onnx")
        """)
    r = extract_repro(issue(f"{F}python\n{script}{F}\n"))
    assert r.found and r.reason == ""


# ----------------------------------------------------------------------------- other shapes


def test_jupyter_cells_with_out_prompts() -> None:
    body = f"""\
    {F}
    In [1]: import tvm
       ...: from tvm import te

    In [2]: n = te.var("n")

    In [3]: n * 2
    Out[3]: n * 2

    In [4]: tvm.tir.const(1, "int32") // 0
    ---------------------------------------------------------------------------
    TVMError                                  Traceback (most recent call last)
    TVMError: Check failed: divide by zero

    In [5]: tvm.__version__
    Out[5]: '0.27.0'
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, """\
        import tvm
        from tvm import te
        n = te.var("n")
        print(repr(n * 2))
        tvm.tir.const(1, "int32") // 0
        """)
    assert r.shape == "interactive"


def test_windows_powershell_prompt_gives_args_and_is_not_the_script() -> None:
    script = "import sys\nimport tvm\nprint(tvm.target.Target(sys.argv[1]))\n"
    body = (f"{F}python\n{script}{F}\n\n{F}powershell\nPS C:\\Users\\me\\bug> python repro.py llvm\n"
            "Traceback (most recent call last):\nValueError: bad target\n"
            f"{F}\n")
    r = extract_repro(issue(body))
    assert_script(r, script)
    assert r.args == ("llvm",)
    assert r.blocks == ("body#0",)


def test_windows_prompt_with_python_dash_c_only() -> None:
    body = f'{F}\nPS C:\\work> python -c "import tvm; print(tvm.tir.Var(\'x\', \'int32\'))"\n{F}\n'
    r = extract_repro(issue(body))
    assert r.found and r.shape == "shell-wrapped"
    assert "tvm.tir.Var" in r.script


def test_the_authors_fixed_copy_in_a_comment_does_not_replace_the_repro() -> None:
    fixed = SCRIPT.replace("(2, 3)", "(2, 4)")
    body = f"### Steps to reproduce\n{F}python\n{SCRIPT}{F}\n"
    comment = f"Here is the updated script with the fix applied:\n{F}python\n{fixed}{F}\n"
    r = extract_repro(issue(body, ("alice", comment)))
    assert_script(r, SCRIPT)
    assert r.blocks == ("body#0",)


def test_the_authors_smaller_repro_in_a_comment_still_replaces_the_first() -> None:
    smaller = "import tvm\nprint(tvm.tir.Var('x', 'int32'))\n"
    body = f"{F}python\n{SCRIPT}{F}\n"
    r = extract_repro(issue(body, ("alice", f"A smaller repro:\n{F}python\n{smaller}{F}\n")))
    assert_script(r, smaller)
    assert r.blocks == ("comment1#0",)


def test_script_and_output_in_separate_details_blocks() -> None:
    body = (f"Crash.\n<details><summary>repro</summary>\n\n{F}python\n{SCRIPT}{F}\n</details>\n"
            f"<details><summary>output</summary>\n\n{F}\n[array([1.], dtype=float32)]\n"
            f"Traceback (most recent call last):\nValueError: x\n{F}\n</details>\n")
    r = extract_repro(issue(body))
    assert_script(r, SCRIPT)
    assert r.blocks == ("body#0",)


def test_a_very_long_script_is_taken_whole() -> None:
    body_lines = ["import tvm", "from tvm import te", "def f0(x):", "    return x + 0"]
    for k in range(1, 700):
        body_lines += [f"def f{k}(x):", f"    y = f{k - 1}(x)", f"    return y * {k}"]
    body_lines.append("print(f699(te.var('n')))")
    script = "\n".join(body_lines) + "\n"
    r = extract_repro(issue(f"### Steps to reproduce\n{F}python\n{script}{F}\nIt is slow.\n"))
    assert_script(r, script)


@pytest.mark.parametrize("line,args", [
    ("$ python repro.py llvm cuda", ("llvm", "cuda")),
    ("C:\\work> python repro.py llvm", ("llvm",)),
    ("python repro.py crashes on my machine", ()),  # prose that starts with "python"
    ("I run python repro.py now and it fails", ()),
])
def test_plain_word_arguments_only_after_a_prompt(line: str, args: tuple[str, ...]) -> None:
    script = "import sys\nimport tvm\nprint(sys.argv[1:])\n"
    r = extract_repro(issue(f"{F}python\n{script}{F}\n\n{line}\n"))
    assert r.args == args


@pytest.mark.parametrize("code,printed", [
    ("np.float32(0.5)", True),  # a numpy 2 scalar repr
    ("[np.int64(3), np.float64(nan)]", True),
    ("tvm.runtime.ShapeTuple([1, 2])", False),  # a module function: code
    ("np.array([1, 2])", False),
])
def test_dotted_calls_print_only_as_numpy_scalars_or_tvmscript(code: str, printed: bool) -> None:
    r = extract_repro(issue(f"{F}python\n{code}\n{F}\n"))
    assert r.found is not printed


def test_code_copied_with_line_numbers() -> None:
    numbered = "1 import tvm\n2 \n3 def f(x):\n4     return x + 1\n5 print(f(tvm.tir.const(1)))\n"
    r = extract_repro(issue(f"{F}python\n{numbered}{F}\n"))
    assert_script(r, "import tvm\n\ndef f(x):\n    return x + 1\nprint(f(tvm.tir.const(1)))\n")


def test_numbers_that_do_not_count_up_are_not_line_numbers() -> None:
    # A table of results, not numbered code.
    r = extract_repro(issue(f"{F}\n1 import fails\n1 import fails\n3 ok\n{F}\n"))
    assert not r.found


# ----------------------------------------------------------------------------- one script, many formats
# The same repro written the ways reporters write it (found by a mutation harness over real reports).

SAME = """\
import tvm
from tvm import te

n = 16
A = te.placeholder((n,), name="A")
B = te.compute((n,), lambda i: A[i] * 2, name="B")
f = tvm.build(te.create_prim_func([A, B]), target="llvm")
"""


@pytest.mark.parametrize("env", [
    # a shell block: the probe and the version it printed
    f"### Environment\n\n{F}\npython -c \"import tvm; print(tvm.__version__)\"\n0.27.0\n{F}\n",
    # a python block of version prints
    f"### Environment\n\nTVM version:\n{F}python\nimport tvm\nprint(tvm.__version__)\n"
    f"print(tvm.support.libinfo()['GIT_COMMIT_HASH'])\n{F}\n",
    # inline code in prose
    "### Environment\n\nTVM from `python -c \"import tvm; print(tvm.__version__)\"`: 0.27.0\n",
    # no markdown at all
    "Environment\n\nimport tvm\nprint(tvm.__version__)\n0.27.0\n",
])
def test_a_version_probe_is_the_environment_not_a_repro(env: str) -> None:
    body = "The build fails with a segfault, log attached.\n\n" + env
    r = extract_repro(issue(body))
    assert not r.found


def test_a_version_print_with_nothing_around_it_is_still_a_script() -> None:
    # No environment section, no words about versions, no version printed: "import tvm"
    # itself may be what crashes, so running it is the check.
    code = "import tvm\nprint(tvm.__version__)\n"
    assert_script(extract_repro(issue(f"{F}python\n{code}{F}\n")), code)


def test_a_version_probe_does_not_hide_the_unfenced_repro_above_it() -> None:
    body = ("Steps to reproduce\n\n" + SAME + "\nIt crashes.\n\n### Environment\n\n"
            f"{F}\n$ python -c \"import tvm; print(tvm.__version__)\"\n0.27.0\n{F}\n")
    r = extract_repro(issue(body))
    assert_script(r, SAME)
    assert r.shape == "unfenced"


def test_a_version_probe_that_fails_is_the_repro() -> None:
    # The bug is the import itself: the probe's error is shown under it.
    body = (f"{F}\n$ python -c \"import tvm; print(tvm.__version__)\"\nTraceback (most recent call "
            f"last):\n  File \"<string>\", line 1, in <module>\nOSError: libtvm.so: cannot open\n{F}\n")
    r = extract_repro(issue(body))
    assert r.found
    assert r.script == "import tvm; print(tvm.__version__)\n"


def test_an_import_block_heads_the_driver_block_after_it() -> None:
    head, rest = SAME.split("\n\n", 1)
    body = f"{F}python\n{head}\n{F}\n\n{F}python\n{rest}{F}\n"
    r = extract_repro(issue(body))
    assert_script(r, SAME)
    assert r.blocks == ("body#0", "body#1")


def test_an_import_block_heads_a_driver_that_imports_more() -> None:
    body = (f"{F}python\nimport faulthandler\n{F}\n\n"
            f"{F}python\nfaulthandler.enable()\nimport tvm\nprint(tvm.cpu())\n{F}\n")
    r = extract_repro(issue(body))
    assert_script(r, "import faulthandler\nfaulthandler.enable()\nimport tvm\nprint(tvm.cpu())\n")


def test_an_import_block_does_not_take_a_block_offered_as_working() -> None:
    body = (f"{F}python\nimport tvm\nimport torch\n{F}\n\nThe other order works:\n\n"
            f"{F}python\nimport torch\nimport tvm\nprint(tvm.cpu(), torch.ones(1))\n{F}\n")
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\nimport torch\n")


def test_an_assignment_only_block_ends_the_script_it_uses() -> None:
    script = ("from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n@I.ir_module\n"
              "class Module:\n    @T.prim_func\n    def main(A: T.Buffer((4,), \"float32\")):\n"
              "        T.evaluate(0)\n")
    body = f"{F}python\n{script}{F}\n\n{F}python\nm = Module\n{F}\n"
    r = extract_repro(issue(body))
    assert_script(r, script + "m = Module\n")


def test_unfenced_code_keeps_a_comment_that_ends_with_a_colon() -> None:
    code = (SAME + "\n# and with the string form we get a different error:\n"
            "tvm.ir.load_json(\n'''\n{\"root\": 1}\n'''\n)\n")
    r = extract_repro(issue("A minimal example:\n\n" + code + "\nThanks!\n"))
    assert_script(r, code)


def test_unfenced_output_introduced_as_output_is_not_joined() -> None:
    printed = ("@tvm.script.ir_module\nclass Module:\n    @R.function\n"
               "    def main(x: R.Tensor((n,), \"float32\")):\n        return x\n")
    body = ("### Steps to reproduce\n\n" + SAME + "\n### Actual behavior\n\n"
            "This will produce the following module:\n\n" + printed)
    r = extract_repro(issue(body))
    assert_script(r, SAME)


def test_unfenced_run_stops_at_a_section_heading() -> None:
    printed = ("# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n"
               "@I.ir_module\nclass Module:\n    @T.prim_func\n    def main(A: T.Buffer((4,), "
               "\"float32\")):\n        T.evaluate(0)\n")
    body = ("### Actual behavior\n\n" + printed + "\n\n### Environment\n\ntvm-0.21.dev0\n\n"
            "### Steps to reproduce\n\n" + SAME)
    r = extract_repro(issue(body))
    assert_script(r, SAME)


def test_unfenced_printed_module_alone_is_not_a_script() -> None:
    printed = ("% python quick_start.py\n# from tvm.script import ir as I\n"
               "# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n"
               "    @R.function\n    def forward(x: R.Tensor((1, 4), dtype=\"float32\")):\n"
               "        with R.dataflow():\n            y = R.add(x, x)\n            R.output(y)\n"
               "        return y\n")
    r = extract_repro(issue("I ran the tutorial:\n\n" + printed))
    assert not r.found


def test_unfenced_importless_code_with_its_constants_and_a_later_call() -> None:
    consts = 'dtype = "float32"\nn = 10\n\n'
    code = ('A = te.placeholder((n,), dtype=dtype, name="A")\n'
            'B = te.compute((n,), lambda i: A[i] + 1, name="B")\n'
            "mod = te.create_prim_func([A, B])\n")
    body = ("Building a small TE program\n\n" + consts + code +
            "\nWe should be able to build it, i.e.\n\ntvm.build(mod)\n\nshould work.\n")
    r = extract_repro(issue(body))
    assert_script(r, consts + code + "tvm.build(mod)\n")


def test_indented_code_without_imports_is_found() -> None:
    code = ('a = tir.Var("a", "int32")\nb = tir.Var("b", "int32")\n'
            "ana = tvm.arith.Analyzer()\nprint(ana.simplify(T.max(a + b, b + a)))\n")
    body = "Hi, I constructed the following case:\n\n" + textwrap.indent(code, "    ") + "\nThanks\n"
    r = extract_repro(issue(body))
    assert_script(r, code)


def test_scraped_sections_without_markdown_prefer_steps_to_reproduce() -> None:
    expected = "import tvm\nx = tvm.nd.array([1, 2])\nprint(x)\n"
    body = ("Expected behavior\n" + expected + "Should print the array.\n\n"
            "Steps to reproduce\n\n" + SAME)
    r = extract_repro(issue(body))
    assert_script(r, SAME)


def test_unfenced_session_without_imports_is_still_code() -> None:
    body = ("It crashes:\n\n>>> A = te.placeholder((3, 3), name=\"A\")\n"
            ">>> B = te.compute((3, 3), lambda i, j: te.sqrt(A[i, j]))\n"
            "Traceback (most recent call last):\nValueError: bad\n")
    r = extract_repro(issue(body))
    assert_script(r, 'A = te.placeholder((3, 3), name="A")\n'
                     "B = te.compute((3, 3), lambda i, j: te.sqrt(A[i, j]))\n")
    assert r.shape == "interactive"


def test_code_the_body_calls_partial_stays_partial_when_moved_to_a_comment() -> None:
    body = ("Compiling the model is rather involved, so I'm not copying it here. "
            "The code is in the comment below.\n")
    snippet = f"Here is how I create the function:\n\n{F}python\n{SAME}{F}\n"
    r = extract_repro(issue(body, ("alice", snippet)))
    assert not r.found
    assert "incomplete" in r.reason
    full = f"Here is a complete standalone repro:\n\n{F}python\n{SAME}{F}\n"
    assert_script(extract_repro(issue(body, ("alice", full))), SAME)


def test_a_body_with_only_the_working_variant_defers_to_the_failing_script() -> None:
    works = "import torch\nimport tvm\nprint(tvm.cpu())\n"
    fails = "import tvm\nimport torch\nprint(tvm.cpu())\n"
    body = (f"The script is in the comment below.\n\nImporting torch first works:\n\n"
            f"{F}python\n{works}{F}\n")
    r = extract_repro(issue(body, ("alice", f"{F}python\n{fails}{F}\n")))
    assert_script(r, fails)
    # With nothing else, the only script is still the one to run.
    assert_script(extract_repro(issue(body)), works)


@pytest.mark.parametrize("wrap", [
    lambda b: b.replace("\n", "\r\n"),
    lambda b: b.replace(F, "~~~"),
    lambda b: "\n".join(ln + "   " for ln in b.split("\n")),
    lambda b: f"<details><summary>code</summary>\n{b}\n</details>\n",
    lambda b: b.replace(f"{F}python", f"{F}Python"),
])
def test_the_same_split_script_in_other_markdown_dress(wrap: object) -> None:
    head, rest = SAME.split("\n\n", 1)
    body = f"Repro:\n\n{F}python\n{head}\n{F}\n\n{F}python\n{rest}{F}\n\nTraceback below.\n"
    assert callable(wrap)
    assert_script(extract_repro(issue(wrap(body))), SAME)


def test_the_source_line_under_a_traceback_frame_is_not_a_script():
    body = (
        "I get this when I build:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/home/u/proj/build.py", line 8, in <module>\n'
        "    import tvm\n"
        "ModuleNotFoundError: No module named 'tvm'\n\n"
        "What should I install?\n"
    )
    assert not extract_repro(Issue(title="[Bug] build fails", body=body, author="a")).found


def test_build_info_dump_under_a_probe_is_the_environment_not_the_repro():
    body = (
        "Build info:\n\n"
        "```\n$ python -c \"import tvm; print(tvm.support.libinfo())\"\n"
        "USE_CUDA: ON\nUSE_LLVM: llvm-config\nGIT_COMMIT_HASH: 0123abcd\n```\n\n"
        "The chat app then fails in the C++ runtime with a Check failed.\n"
    )
    assert not extract_repro(Issue(title="[Bug] chat fails", body=body, author="a")).found


@pytest.mark.parametrize(
    "body, shape",
    [
        ("The model and script are in [repro.zip](https://github.com/user-attachments/files/1/repro.zip).",
         "attachment-only"),
        ("Build with USE_CUDA ON, then:\n\n```\ncd tests/python/relax\npython3 test_codegen_x.py\n```\n",
         "shell-wrapped"),
        ("### Expected behavior\n\nWhat you were expecting\n", "none"),
    ],
)
def test_how_an_issue_without_a_script_presents_its_reproduction(body, shape):
    repro = extract_repro(Issue(title="[Bug] x", body=body, author="a"))
    assert not repro.found
    assert repro.shape == shape


def test_escaped_prompts_and_a_second_interpreter_session():
    body = (
        "Two sessions:\n\n"
        "\\>>> import json\n"
        "\\>>> exit()\n"
        "$ python\n"
        "\\>>> import tvm\n"
        "\\>>> tvm.bad_call()\n"
        "Traceback (most recent call last):\n"
        "AttributeError: module 'tvm' has no attribute 'bad_call'\n"
    )
    repro = extract_repro(Issue(title="[Bug] x", body=body, author="a"))
    assert repro.found and repro.shape in ("interactive", "shell-wrapped")
    assert repro.script.split() == ["import", "tvm", "tvm.bad_call()"]


def test_code_between_single_backticks_over_several_lines():
    body = (
        "My code:\n"
        "`import numpy as np\n"
        "import tvm\n"
        "x = np.zeros(3)\n"
        "print(tvm.runtime.tensor(x))`\n"
        "and it fails.\n"
    )
    repro = extract_repro(Issue(title="[Bug] x", body=body, author="a"))
    assert repro.found
    assert repro.script.splitlines()[0] == "import numpy as np"
    assert repro.script.rstrip().endswith("print(tvm.runtime.tensor(x))")


@pytest.mark.parametrize(
    "body, script",
    [
        ("When I run \"import tvm\" in python, it fails:\n\nTraceback (most recent call last):\n"
         "  File \"<stdin>\", line 1, in <module>\nOSError: libtvm.so: cannot open shared object\n",
         "import tvm\n"),
        ("```\nimport tvm\n....\nRuntimeError: Cannot find the files.\n```\n", "import tvm\n"),
    ],
)
def test_an_import_time_failure_has_the_import_as_its_repro(body, script):
    repro = extract_repro(Issue(title="[Bug] import fails", body=body, author="a"))
    assert repro.found and repro.script == script


def test_an_import_quoted_in_prose_without_any_error_shown_is_not_a_repro():
    body = "I usually start with \"import tvm\" and then build my model; how do I tune it?"
    assert not extract_repro(Issue(title="How to tune", body=body, author="a")).found


def test_a_driver_block_introduced_with_but_after_what_works_is_joined() -> None:
    """"X prints fine and Y passes. But compiling it:" — the block after the turn is what
    fails, not a working variant: it joins the module block above it."""
    module = ("import tvm\nfrom tvm.script import relax as R\n\n@tvm.script.ir_module\n"
              "class Mod:\n    @R.function\n    def main(x: R.Tensor((4,), \"float32\")):\n"
              "        return R.nn.softmax(x)\n")
    driver = "ex = tvm.compile(Mod, target=\"llvm\")\nprint(ex)\n"
    body = (f"The module:\n\n{F}python\n{module}{F}\n\n`Mod.show()` works and the "
            f"well-formed check passes. However, compiling it:\n\n{F}python\n{driver}{F}\n\n"
            "crashes.\n")
    r = extract_repro(issue(body))
    assert_script(r, module + driver)
    assert r.blocks == ("body#0", "body#1")


@pytest.mark.parametrize(("intro", "working"), [
    ("This works:\n", True),
    ("Doing it with the other order works fine:\n", True),
    ("It prints fine and the check passes. But building it:\n", False),
    ("The parser is fine. However, running it fails:\n", False),
    ("Running it like this works. The module is below:\n", True),
    ("It crashes here:\n", False),
    # what works elsewhere is not this block
    ("I count with `R.sum(x > 0)` (works like this in numpy / torch). In TVM the count is lost:\n",
     False),
    ("This works in numpy but not in TVM:\n", False),
    ("Casting first (the workaround) works:\n", True),
    ('Without NaN ("working"):\n', True),
])
def test_a_block_is_offered_as_working_by_the_sentence_that_leads_into_it(
        intro: str, working: bool) -> None:
    from bot.extract.rules import offered_as_working

    assert offered_as_working("Some context first.\n\n" + intro) is working


def test_notebook_cells_pasted_without_fences_are_one_script() -> None:
    """Cells copied from Jupyter as plain text ("In [1]:" over each): the imports cell heads
    the cells that use it, in order."""
    imports = "import numpy as np\nimport tvm\nfrom tvm import te\n"
    kernel = ("A = te.placeholder((8,), name=\"A\")\nB = te.compute((8,), lambda i: A[i] / 0.0)\n"
              "f = tvm.build(te.create_prim_func([A, B]), target=\"llvm\")\n")
    call = ("b = tvm.runtime.tensor(np.zeros(8, \"float32\"))\n"
            "f(tvm.runtime.tensor(np.ones(8, \"float32\")), b)\nprint(b.numpy())\n")
    body = ("Notebook session, the last cell prints inf instead of raising:\n\n"
            f"In [1]:\n{imports}\nIn [2]:\n{kernel}\nIn [3]:\n{call}\n"
            "I expected a division-by-zero error from the compiler.\n")
    r = extract_repro(issue(body))
    assert_script(r, imports + kernel + call)


def test_an_imports_paragraph_does_not_take_every_later_paragraph_using_tvm() -> None:
    """Only the run right after the imports is their body: a later line that merely uses tvm
    (an environment print) is not joined."""
    head = "import tvm\nfrom tvm import te\n"
    body_code = ("A = te.placeholder((4,), name=\"A\")\n"
                 "B = te.compute((4,), lambda i: A[i] + 1)\nprint(B)\n")
    body = (f"Repro:\n\n{head}\n{body_code}\nIt crashes. My version:\n\n"
            "print(tvm.__version__)\n\nThanks.\n")
    r = extract_repro(issue(body))
    assert_script(r, head + body_code)


_HEAD = ("import numpy as np\nimport tvm\nfrom tvm import te\n\nn = 16\n"
         "A = te.placeholder((n,), name=\"A\")\nB = te.compute((n,), lambda i: A[i] * A[i])\n"
         "f = tvm.compile(te.create_prim_func([A, B]), target=\"llvm\")\n")
_TAIL = ("b = tvm.runtime.tensor(np.zeros(n, \"float32\"))\n"
         "f(tvm.runtime.tensor(np.arange(n, dtype=\"float32\")), b)\nprint(b.numpy()[-1])\n")


@pytest.mark.parametrize("said", [
    "Oops, I forgot the last part of the script, it goes right after the compile:",
    "Here is the rest of the script:",
    "I left out the call at the end, sorry:",
])
def test_the_authors_comment_that_continues_the_script_is_joined(said: str) -> None:
    body = f"Squaring gives wrong numbers:\n\n{F}python\n{_HEAD}{F}\n"
    r = extract_repro(issue(body, ("alice", f"{said}\n\n{F}python\n{_TAIL}{F}\n")))
    assert_script(r, _HEAD + _TAIL)
    assert r.blocks == ("body#0", "comment1#0")


@pytest.mark.parametrize(("who", "said"), [
    # someone else's code is not the author's script
    ("bob", "Here is the rest of the script you need:"),
    # a follow-up experiment, not said to continue the script
    ("alice", "I also tried this, same result:"),
])
def test_other_comments_do_not_continue_the_script(who: str, said: str) -> None:
    body = f"Squaring gives wrong numbers:\n\n{F}python\n{_HEAD}{F}\n"
    r = extract_repro(issue(body, (who, f"{said}\n\n{F}python\n{_TAIL}{F}\n")))
    assert_script(r, _HEAD)


def test_ignore_the_script_above_takes_the_block_below() -> None:
    old = _HEAD.replace("tvm.compile", "tvm.build") + _TAIL
    new = _HEAD + _TAIL
    body = (f"First try:\n\n{F}python\n{old}{F}\n\n**Edit:** ignore the script above, it is "
            f"from an older notebook. This is the real one I ran:\n\n{F}python\n{new}{F}\n")
    r = extract_repro(issue(body))
    assert_script(r, new)


@pytest.mark.parametrize("said, takes_it", [
    ("Oops, the snippet above has a mistake in it (wrong dtype). Try this one instead:", True),
    ("Sorry, my first script contained a typo, run this one:", True),
    ("Here is the corrected script:", True),
    ("I fixed the typo in the shape:", True),
    ("sorry, wrong snippet above, that is the copy I had already changed. This is the right one:",
     True),
    ("I pasted the wrong version of the code, here is the actual repro:", True),
    ("EDIT: fixed typos", True),
    ("sorry, copy paste from bigger file. Fixed:", True),
    ("oops yes, copied from my editor with autocomplete mistake. it is `const`, corrected:", True),
    ("You're right, with the reference corrected:", True),
    # a follow-up, not a replacement
    ("I also tried it with float16, same error:", False),
    ("For comparison, this is how I call it from my app:", False),
    ("It generates wrong code for the negative constant, also with this:", False),
    ("This is the right place for it I think; a related one:", False),
    ("With the patch from #1234 applied it is fixed: the output is right now", False),
    ("Right, and also with this:", False),
])
def test_an_authors_corrected_script_replaces_the_first(said: str, takes_it: bool) -> None:
    first = "import tvm\n\nx = tvm.tirx.cnst(-3, 'uint16')\nprint(x)\n"
    fixed = "import tvm\n\nx = tvm.tirx.const(-3, 'uint16')\nprint(x)\n"
    body = f"Making a negative unsigned constant aborts:\n\n{F}python\n{first}{F}\n"
    r = extract_repro(issue(body, ("alice", f"{said}\n\n{F}python\n{fixed}{F}\n")))
    assert_script(r, fixed if takes_it else first)


def test_a_corrected_script_in_the_body_replaces_the_cut_one() -> None:
    """The body's first block does not parse (a typo: an unclosed bracket); an EDIT below it
    re-posts the script fixed. The fixed one is run, not the first cut at its typo."""
    broken = "import tvm\n\nx = tvm.tirx.const(-3, 'uint16'\nprint(x)\n"
    fixed = "import tvm\n\nx = tvm.tirx.const(-3, 'uint16')\nprint(x)\n"
    body = (f"Making a negative unsigned constant aborts:\n\n{F}python\n{broken}{F}\n\n"
            f"---\n\nEDIT: fixed typo in the script (a missing `)`). Corrected version:\n\n"
            f"{F}python\n{fixed}{F}\n")
    r = extract_repro(issue(body))
    assert_script(r, fixed)


def test_an_ipython_session_pasted_without_fences() -> None:
    body = """\
    From my notebook (cells copied as they are):

    In [1]: import numpy as np
       ...: import tvm
       ...: from tvm import te

    In [2]: A = te.placeholder((4,), name="A")
       ...: B = te.compute((4,), lambda i: A[i] * 3, name="B")
       ...: f = tvm.compile(te.create_prim_func([A, B]), target="llvm")

    In [3]: a = tvm.runtime.tensor(np.arange(4, dtype="float32"))
       ...: b = tvm.runtime.tensor(np.zeros(4, "float32"))
       ...: f(a, b); print(b.numpy())
    [0. 3. 6. 9.]

    In [4]: b.numpy().sum()
    Out[4]: 18.0

    The last value should be 9 per element times... anyway the sum looks off.
    """
    r = extract_repro(issue(body))
    assert r.shape == "interactive"
    assert_script(r, """\
    import numpy as np
    import tvm
    from tvm import te
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 3, name="B")
    f = tvm.compile(te.create_prim_func([A, B]), target="llvm")
    a = tvm.runtime.tensor(np.arange(4, dtype="float32"))
    b = tvm.runtime.tensor(np.zeros(4, "float32"))
    f(a, b); print(b.numpy())
    print(repr(b.numpy().sum()))
    """)


# ------------------------------------------- another commenter's script, adopted by the author

STALE_BODY = f"""\
This used to build on 0.14:

{F}python
import tvm
from tvm import te
s = te.create_schedule(O.op)
{F}

After porting it fails with a ScheduleError.
"""

PORTED = f"""\
I think your port boils down to this; can you confirm it gives the same error?

{F}python
import tvm
from tvm import te, s_tir
sch = s_tir.Schedule(te.create_prim_func([A, O]))
print("ok")
{F}
"""


@pytest.mark.parametrize(("reply", "adopted"), [
    ("Let's use your script as the repro, thanks.", True),
    ("Yes, that is exactly it, same error message with your script on 0.27.0.post1.", True),
    ("Your snippet gives me the same error.", True),
    ("Your reduced script reproduces the same issue here.", True),
    ("Thanks, I will try your script tomorrow.", False),
    ("Your script works for me, but mine still fails.", False),
    ("Same error as before; your script did not help.", False),
])
def test_another_commenters_script_is_the_repro_once_the_author_adopts_it(
        reply: str, adopted: bool) -> None:
    r = extract_repro(issue(STALE_BODY, ("maintainer", PORTED), ("alice", reply)))
    assert r.found
    assert ("s_tir.Schedule" in r.script) is adopted, r.script
    assert r.blocks[0].startswith("comment1" if adopted else "body")


@pytest.mark.parametrize(("tag", "block", "found"), [
    ("bash", "import numpy as np\nimport tvm\nprint(tvm.cpu(), np.zeros(2))\n", True),
    ("sh", "from tvm import te\nA = te.placeholder((4,), name='A')\nprint(A.shape)\n", True),
    # commands, not Python
    ("bash", "pip install apache-tvm\npython -c 'import tvm'\n", False),
    ("bash", "import foo.png\nconvert foo.png bar.jpg\n", False),  # (ImageMagick's import)
    ("bash", "export TVM_HOME=/opt/tvm\nimport tvm\n", False),
])
def test_a_python_script_in_a_shell_tagged_fence_is_python(tag: str, block: str,
                                                           found: bool) -> None:
    r = extract_repro(issue(f"Repro:\n\n{F}{tag}\n{block}{F}\n"))
    assert (r.found and r.shape == "fenced" and "print(" in r.script) is found, r


_FULL = ("import numpy as np\nimport tvm\nfrom tvm import te\n\nA = te.placeholder((4,), name='A')\n"
         "print(A.shape)\n")


def test_a_self_contained_one_in_the_authors_comment_replaces_the_bodys_fragment() -> None:
    i = Issue("[Bug] nll_loss mean", f"It is wrong:\n\n{F}python\nout = vm['main'](logp)\n{F}\n",
              author="a", comments=(
                  Comment("m", "Can you share a standalone script?"),
                  Comment("a", f"Sure, here is a self-contained one:\n\n{F}python\n{_FULL}{F}\n")))
    r = extract_repro(i)
    assert r.found and r.script == _FULL and r.blocks == ("comment2#0",)


def test_a_maintainers_heredoc_the_author_confirms_is_the_repro() -> None:
    heredoc = f"{F}bash\npython - <<'EOF'\n{_FULL}EOF\n{F}\n"
    i = Issue("[Bug] resize with zero size", f"Needs onnx:\n\n{F}python\nimport onnx\n"
              f"import tvm\nm = onnx.load('m.onnx')\nprint(m)\n{F}\n", author="a", comments=(
                  Comment("m", f"Smaller, without onnx:\n\n{heredoc}"),
                  Comment("a", "Yes, exactly the same error with your snippet, thanks.")))
    r = extract_repro(i)
    assert r.found and r.script == _FULL and r.shape == "shell-wrapped"


@pytest.mark.parametrize(("said", "found"), [
    # holding back a model file, not the script
    ("Needs onnxruntime for the reference (head.onnx is our exported head, can't share it), "
     "but without it the script falls back to numpy:", True),
    # holding back the script itself
    ("This is inside our training graph, can't share the whole thing, but roughly:", False),
])
def test_a_held_back_file_is_not_a_held_back_script(said: str, found: bool) -> None:
    body = f"{said}\n\n{F}python\nimport tvm\nx = run_head()\nprint(x)\n{F}\n"
    assert extract_repro(issue(body)).found is found


def test_a_helper_module_file_the_script_imports_is_joined_in_front_of_it() -> None:
    helper = "import numpy as np\n\n\ndef ref(x):\n    return np.sqrt(x)\n"
    main = ("import numpy as np\nimport tvm\nfrom helper_ref import ref\n\n"
            "print(ref(np.ones(3)), tvm.__version__)\n")
    body = (f"`helper_ref.py`:\n\n{F}python\n{helper}{F}\n\n`test_it.py` (same directory):\n\n"
            f"{F}python\n{main}{F}\n\nput both files in one folder, `python test_it.py`\n")
    r = extract_repro(issue(body))
    assert r.found and r.blocks == ("body#0", "body#1")
    assert r.script.startswith(helper.rstrip("\n")) and "from helper_ref import" not in r.script
    assert "print(ref(np.ones(3))" in r.script and "helper_ref.py" in r.reason
    # a module the text does not show stays an import (a package the worker may lack)
    alone = extract_repro(issue(f"{F}python\n{main}{F}\n"))
    assert "from helper_ref import ref" in alone.script


@pytest.mark.parametrize(("patch", "script"), [
    # a patch that adds a new test file: that file is the script
    ("diff --git a/tests/test_x.py b/tests/test_x.py\nnew file mode 100644\n--- /dev/null\n"
     "+++ b/tests/test_x.py\n@@ -0,0 +1,3 @@\n+import tvm\n+\n+print(tvm.runtime.tensor([1]))\n",
     "import tvm\n\nprint(tvm.runtime.tensor([1]))\n"),
    # a patch that changes an existing file is no script
    ("--- a/python/tvm/x.py\n+++ b/python/tvm/x.py\n@@ -1,2 +1,2 @@\n import tvm\n-a = 1\n+a = 2\n",
     None),
])
def test_a_patch_that_adds_a_python_file(patch: str, script: str | None) -> None:
    r = extract_repro(issue(f"The new test fails:\n\n{F}diff\n{patch}{F}\n"))
    assert (r.script if r.found else None) == script


_WORKS = "import tvm\nfrom tvm import te\nA = te.placeholder((4,), name='A')\nprint(A.shape)\n"
_FAILS = "import tvm\nfrom tvm import te\nA = te.placeholder((0,), name='A')\nprint(A.shape)\n"


@pytest.mark.parametrize(("body", "script"), [
    # a remark after each block ("this one is fine." / "this one raises:") says which fails
    (f"{F}python\n{_WORKS}{F}\n\nthis one is fine, prints (4,).\n\n{F}python\n{_FAILS}{F}\n\n"
     "this one raises:\n\n```\nValueError: bad\n```\n", _FAILS),
    # a numpy reference script first, then the TVM script: the TVM one is the repro
    (f"The reference:\n\n{F}python\nimport numpy as np\nprint(np.round(np.array([0.5])))\n{F}\n\n"
     f"Then the TVM version:\n\n{F}python\n{_FAILS}{F}\n", _FAILS),
    # an intro that ends with a colon still presents the block below it
    (f"{F}python\n{_FAILS}{F}\n\nThis one works instead:\n\n{F}python\n{_WORKS}{F}\n", _FAILS),
])
def test_which_of_several_scripts_is_the_repro(body: str, script: str) -> None:
    r = extract_repro(issue(body))
    assert r.found and r.script == script


def test_markdown_escapes_in_code_pasted_without_fences_are_read_as_shown() -> None:
    body = ("Steps to reproduce:\n\nimport tvm\nimport tvm\\_ffi\n\ndef main():\n"
            "    print(tvm\\_ffi.\\_\\_name\\_\\_, tvm.cpu())\n\nif \\_\\_name\\_\\_ == "
            "\"\\_\\_main\\_\\_\":\n    main()\n\nIt prints the wrong thing.\n")
    r = extract_repro(issue(body))
    assert r.found and "import tvm_ffi" in r.script and 'if __name__ == "__main__":' in r.script


# ----------------------------------------------------------------------------- session 14 shapes


def test_a_session_prints_what_the_interpreter_showed() -> None:
    body = f"""\
    Summing int8 overflows:
    {F}
    Python 3.11.9 (main, Apr  2 2024, 08:25:04) [GCC 11.4.0] on linux
    >>> import numpy as np
    >>> x = np.array([100, 100, 100, 100], dtype="int8")
    >>> x.sum(dtype="int8")
    np.int8(-112)
    >>> print("done")
    done
    >>> len(x)
    {F}
    """
    r = extract_repro(issue(body))
    # the value shown under the prompt is printed; print() and a value never shown stay as typed
    assert_script(r, """\
        import numpy as np
        x = np.array([100, 100, 100, 100], dtype="int8")
        print(repr(x.sum(dtype="int8")))
        print("done")
        len(x)
        """)
    assert r.shown_output == "np.int8(-112)\ndone"


def test_a_script_after_the_error_in_one_fence() -> None:
    body = f"""\
    grouped conv2d is rejected:

    {F}
    tvm.error.DiagnosticError: error: The channel size of the data should equal ...
     --> /home/me/gconv.py:10:13

    code:

    import tvm
    from tvm import relax
    bb = relax.BlockBuilder()
    print(bb)
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\nfrom tvm import relax\nbb = relax.BlockBuilder()\nprint(bb)\n")


def test_a_cat_then_python_shell_log_shows_its_output() -> None:
    body = f"""\
    {F}
    $ cat int_div.py
    import numpy as np
    import tvm
    print("tvm  :", np.array([-7, 7]) // 2)
    $ python int_div.py
    tvm  : [-4  3]
    {F}
    """
    r = extract_repro(issue(body))
    assert r.found and r.shape == "shell-wrapped"
    assert r.shown_output == "tvm  : [-4  3]"


@pytest.mark.parametrize("tag", ["python3=", "python=12", "python:repro.py"])
def test_fence_tags_with_editor_decorations_are_python(tag: str) -> None:
    body = f"{F}{tag}\nimport tvm\nprint(tvm.cpu())\n{F}\n{F}bash\nTraceback (most recent call last):\nValueError: x\n{F}\n"
    r = extract_repro(issue(body))
    assert_script(r, "import tvm\nprint(tvm.cpu())\n")


_OTHERS_SCRIPT = f"{F}python\nimport tvm\nfrom tvm import relax\nprint(relax.const(1))\n{F}\n"


@pytest.mark.parametrize(
    ("comment", "taken"),
    [
        ("same here, this is enough to trigger it for me:\n" + _OTHERS_SCRIPT, True),
        ("this triggers it for me too:\n" + _OTHERS_SCRIPT, True),
        ("same here, but with a different error:\n" + _OTHERS_SCRIPT, False),
        ("not sure if this helps:\n" + _OTHERS_SCRIPT, False),
    ],
)
def test_another_users_script_that_fails_for_them_too(comment: str, taken: bool) -> None:
    body = "R.matmul gives an InternalError. My model is private, the error is:\n\n" \
           f"{F}\ntvm.error.InternalError: Check failed: x == y\n{F}\n"
    r = extract_repro(issue(body, ("bob", comment)))
    assert r.found is taken
    if taken:
        assert r.blocks == ("comment1#0",)


@pytest.mark.parametrize(
    ("ask", "answer", "taken"),
    [
        ("Can you confirm this gives you the same error?", "yes, that is the same error I see",
         True),
        ("Does this reproduce it for you?", "Yep, exactly this.", True),
        # the author says no, or yes-but
        ("Can you confirm this gives you the same error?", "no, your version works for me", False),
        ("Can you confirm this gives you the same error?", "yes, but mine has a different "
         "error message", False),
        # nobody asked: a bare "yes" answers something else
        ("Here is how I would write it.", "yes", False),
    ],
)
def test_the_author_confirms_a_maintainers_reduced_script(ask: str, answer: str,
                                                          taken: bool) -> None:
    body = f"{F}python\nimport torch\nimport tvm\nprint(torch.ones(2), tvm.cpu())\n{F}\n\n" \
           "It fails with a DiagnosticError.\n"
    r = extract_repro(issue(body, ("maint", "My attempt in plain Relax:\n" + _OTHERS_SCRIPT + ask),
                            ("alice", answer)))
    assert r.found
    assert (r.blocks == ("comment1#0",)) is taken, r.blocks


def test_a_notebook_cell_shows_its_last_expression() -> None:
    body = f"""\
    {F}
    In [1]: import numpy as np

    In [2]: x = np.array([1, 2, 3, 5])
       ...: x.mean(), x.sum()
    Out[2]: (np.float64(2.75), np.int64(11))
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, "import numpy as np\nx = np.array([1, 2, 3, 5])\nprint(repr((x.mean(), x.sum())))\n")
    assert r.shown_output == "(np.float64(2.75), np.int64(11))"


def test_a_minimized_script_below_the_full_one_is_the_repro() -> None:
    body = f"""\
    Original script (needs our data files, cannot share):
    {F}python
    import numpy as np
    import tvm
    emb = np.load("embedding_table.npy")
    print(tvm.runtime.tensor(emb))
    {F}
    Minimized, no data files needed:
    {F}python
    import numpy as np
    import tvm
    print(tvm.runtime.tensor(np.ones(4)))
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, "import numpy as np\nimport tvm\nprint(tvm.runtime.tensor(np.ones(4)))\n")


def test_output_under_actual_behavior_after_a_comparison_in_words() -> None:
    body = f"""\
    ### Actual behavior

    For -1.0 I get 0 instead of 255. In-range values are fine.

    {F}
    tvm    [  0 255 255   3]
    numpy  [255  44 255   3]
    {F}

    ### Steps to reproduce

    {F}python
    import numpy as np
    import tvm
    print("tvm   ", np.array([0, 255, 255, 3]))
    {F}
    """
    r = extract_repro(issue(body))
    assert r.found
    assert r.shown_output.startswith("tvm    [  0 255 255   3]")


def test_a_console_block_running_the_script_is_its_shown_output() -> None:
    body = f"""\
    is `R.mean` meant to accumulate in int8? I get this:

    > {F}
    > $ python mean_int8.py
    > tvm  : -1
    > numpy: 62.5
    > {F}

    script `mean_int8.py`:

    {F}python
    import numpy as np
    x = np.array([100, 100, 100, -50], dtype="int8")
    print("tvm  :", x.sum(dtype="int8") // 4)
    print("numpy:", x.mean())
    {F}
    """
    r = extract_repro(issue(body))
    assert r.found and "x.mean()" in r.script
    assert r.shown_output == "tvm  : -1\nnumpy: 62.5\n"


def test_a_console_block_is_not_output_when_it_shows_an_error_or_two_runs() -> None:
    for console in ("$ python a.py\nTraceback (most recent call last):\n  File \"a.py\"\nValueError: 1",
                    "$ python a.py\n1\n$ python b.py\n2", "python a.py\n1"):
        lines = "\n".join(f"    {ln}" for ln in console.splitlines())
        body = f"Run:\n\n    {F}\n{lines}\n    {F}\n\n    {F}python\n    import numpy\n    print(numpy.ones(1))\n    {F}\n"
        r = extract_repro(issue(textwrap.dedent(body)))
        assert r.found and r.shown_output == "", (console, r.shown_output)


def test_a_comparison_sentence_above_a_block_of_both_outputs_introduces_the_output() -> None:
    body = f"""\
    ### Actual behavior

    TVM gives 127 but numpy gives -56 for 200.0.

    {F}
    TVM   [   1  127  127]
    numpy [  1 127 -56]
    {F}

    ### Steps to reproduce

    {F}python
    import numpy as np
    print("numpy", np.array([1.0, 127.0, 200.0], "float32").astype("int8"))
    {F}
    """
    r = extract_repro(issue(body))
    assert r.shown_output.startswith("TVM   [   1  127  127]")
    # "numpy gives:" introduces numpy's own output: not what the script printed
    other = body.replace("TVM gives 127 but numpy gives -56 for 200.0.", "numpy gives:")
    assert extract_repro(issue(other)).shown_output == ""


def test_a_remark_on_the_block_above_does_not_make_the_updated_script_the_working_one() -> None:
    body = f"""\
    {F}python
    import tvm
    print(tvm.relax.op.reshape)
    {F}

    **edit: updated script** - the static-shape version above is caught at parse time with a
    good message, that one is fine. The problem is only with a symbolic dim:

    {F}python
    import tvm
    print(tvm.relax.op.reshape, "symbolic")
    {F}
    """
    r = extract_repro(issue(body))
    assert r.found and "symbolic" in r.script
    # a block offered as the one that works is still not the repro
    works = body.replace("**edit: updated script** - the static-shape version above is caught "
                         "at parse time with a\n    good message, that one is fine. The problem "
                         "is only with a symbolic dim:", "This variant works fine:")
    r = extract_repro(issue(works))
    assert r.found and "symbolic" not in r.script


def test_a_block_with_no_imports_that_uses_the_scripts_modules_continues_it() -> None:
    body = f"""\
    module:
    {F}python
    import numpy as np
    import tvm
    from tvm import relax

    def make():
        return relax.op.add
    {F}
    run:
    {F}python
    f = make()
    print(np.ones(2), tvm.cpu(), f)
    {F}
    """
    r = extract_repro(issue(body))
    assert r.blocks == ("body#0", "body#1") and "print(np.ones(2)" in r.script
    # the run block names a module the script never defines (`mod`): joined all the same,
    # so the run shows the script's own error rather than a clean pass of the first half
    typo = body.replace("f = make()", "f = mod")
    assert extract_repro(issue(typo)).blocks == ("body#0", "body#1")
    # a second script with its own imports stands alone
    other = body.replace("f = make()", "import numpy as np\nf = 1")
    assert extract_repro(issue(other)).blocks != ("body#0", "body#1")


def test_another_users_port_of_a_relay_script_is_run_in_its_place() -> None:
    body = f"""\
    avg_pool2d gives smaller values on the border than PyTorch.

    {F}python
    import tvm
    from tvm import relay
    x = relay.var("x", shape=(1, 3, 8, 8))
    {F}
    """
    port = f"""\
    I ported it to Relax on 0.27:

    {F}python
    import tvm
    from tvm import relax
    print(relax.op.nn.avg_pool2d)
    {F}
    """
    r = extract_repro(issue(body, ("maint", "Relay is gone. Still an issue?"), ("helper", port)))
    assert r.found and "relax.op.nn.avg_pool2d" in r.script
    assert "`tvm.relay`" in r.reason and "@helper" in r.reason
    # a script on the current API stays the author's own
    current = body.replace("from tvm import relay", "from tvm import relax").replace(
        "relay.var", "relax.Var")
    assert "relax.Var" in extract_repro(issue(current, ("helper", port))).script
    # a comment with a script that is not offered as a port does not replace it
    other = port.replace("I ported it to Relax on 0.27:", "Here is something else:")
    assert "relay.var" in extract_repro(issue(body, ("helper", other))).script


@pytest.mark.parametrize(("intro", "ported"), [
    ("relay no longer exist so here is the relax version I used with 0.20:", True),
    ("Re-checked on 0.22, still wrong. Standalone TE version:", True),
    ("on recent version `tvm.const` moved:", True),
    ("Trying with current relax:", True),
    ("ok I ported it, this is what I run now on 0.27.0.post1:", True),
    ("yes still happen. relax version on 0.22:", True),
    ("ported, on 0.27.0:", True),
    # not a port of the script
    ("I ported it from our pytorch model, the layer is the same:", False),
    ("TVM version: 0.13, same as the body:", False),
    ("Here is a version of my environment:", False),
    ("A relax workaround that avoids the op:", False),
])
def test_ways_commenters_offer_a_port_to_the_current_api(intro: str, ported: bool) -> None:
    body = ("Relay softmax gives nan:\n\n"
            f"{F}python\nx = relay.var('x', shape=(1, 4))\nf = relay.Function([x], relay.nn.softmax(x))\n{F}\n")
    port = f"{intro}\n\n{F}python\nimport tvm\nfrom tvm import relax\nprint(relax.op.nn.softmax)\n{F}\n"
    r = extract_repro(issue(body, ("helper", port)))
    assert ("relax.op.nn.softmax" in r.script) is ported, r
    if ported:
        assert "@helper" in r.reason
    # ... also when the author's relay code was pasted without a fence (no script of their own)
    unfenced = "softmax op give nan:\n\n    x = relay.var('x')\n    # output [[nan nan]]\n"
    r = extract_repro(issue(unfenced, ("helper", port)))
    assert ("relax.op.nn.softmax" in r.script) is ported, r


def test_environment_variables_the_script_reads_are_set_as_the_issue_sets_them() -> None:
    body = f"""\
    Only with float16:

    {F}
    BENCH_DTYPE=float16 python mean_check.py
    {F}

    {F}python
    import os
    dtype = os.environ.get("BENCH_DTYPE", "float32")
    print(dtype)
    {F}

    With `BENCH_DTYPE=float32` (or unset) it passes.
    """
    r = extract_repro(issue(body))
    assert r.script.startswith("import os\nos.environ['BENCH_DTYPE'] = 'float16'")
    assert "`BENCH_DTYPE=float16`" in r.reason
    # an export line, for a name the script reads
    exported = body.replace("BENCH_DTYPE=float16 python mean_check.py",
                            "export BENCH_DTYPE=bfloat16\n    python mean_check.py")
    assert "'bfloat16'" in extract_repro(issue(exported)).script
    # a name the script does not read, or one the bot never sets, is left alone
    for line in ("OTHER=1 python mean_check.py", "LD_PRELOAD=/x.so python mean_check.py"):
        r = extract_repro(issue(body.replace("BENCH_DTYPE=float16 python mean_check.py", line)))
        assert "os.environ['BENCH_DTYPE']" not in r.script or "float32" in r.script
        assert "LD_PRELOAD" not in r.script and "OTHER" not in r.script.split("dtype")[0]


def test_a_framework_the_script_imports_but_never_uses_is_dropped() -> None:
    body = f"""\
    python just exits with Floating point exception.

    {F}python
    import numpy as np
    import torch
    import torch.nn.functional as F
    import tvm
    print(tvm.relax, np.ones(1))
    {F}
    """
    r = extract_repro(issue(body))
    assert "torch" not in r.script and "import tvm" in r.script
    assert "`torch` but never uses it" in r.reason
    # used: kept
    used = body.replace("print(tvm.relax, np.ones(1))", "print(torch.ones(1), tvm.relax)")
    assert "import torch\n" in extract_repro(issue(used)).script
    # the report is about importing it (an import-order crash): kept
    order = body.replace("python just exits", "After import torch, importing tvm exits")
    assert "import torch\n" in extract_repro(issue(order)).script
    # nothing but imports: kept (the imports are the repro)
    only = f"segfault\n\n{F}python\nimport torch\nimport tvm\n{F}\n"
    assert "import torch" in extract_repro(issue(only)).script


def test_code_copied_with_aligned_line_numbers_and_no_fences() -> None:
    body = """\
    Steps: I copied it from my editor, the line numbers came along, sorry

    1  import numpy as np
    2  import tvm
    3
    4  def f(x):
    5      return x + 1
    6
    7  for i in range(2):
    8      y = f(i)
    9      print(tvm.cpu(), y)
    10 print(np.ones(2))
    11 print("done")

    It fails.
    """
    r = extract_repro(issue(body))
    assert r.found and "def f(x):\n    return x + 1" in r.script and 'print("done")' in r.script


def test_a_label_before_the_error_in_an_unclosed_fence_is_not_code() -> None:
    body = f"""\
    {F}
    import tvm
    print(tvm.cpu())

    error:

    tvm.error.DiagnosticError: error: Matmul requires the reduction length to be equal.

    environment: tvm 0.27 pip
    """
    r = extract_repro(issue(body))
    assert r.found and r.script.strip() == "import tvm\nprint(tvm.cpu())"


@pytest.mark.parametrize(("command", "args"), [
    # a script named like a test, run as a script with its own flags
    ("$ python shift_test.py --shift 33", ("--shift", "33")),
    # a quoted value with a space in it
    ('    python pool.py --target "llvm -mcpu=znver3"     # last element 6.0',
     ("--target", "llvm -mcpu=znver3")),
])
def test_the_command_line_of_a_script_that_reads_it(command: str, args: tuple[str, ...]) -> None:
    body = (f"To see it:\n\n{F}\n{command}\n{F}\n\n{F}python\nimport argparse\n"
            'ap = argparse.ArgumentParser()\nap.add_argument("--shift")\nap.add_argument("--target")\n'
            f"print(ap.parse_args())\n{F}\n")
    assert extract_repro(issue(body)).args == args
    # a pytest run of a test file is not the script's command line
    pytest_run = body.replace(command, "$ python test_shift.py -k shift")
    assert extract_repro(issue(pytest_run)).args == ()


def test_a_string_an_email_client_wrapped_is_joined_again() -> None:
    body = """\
    The script (sorry, my mail client wraps the long lines):

    import numpy as np
    import tvm
    out = np.ones(2, dtype="int64")
    print(out, tvm.cpu())
    assert out.dtype == "int32", f"expected int32 got
    {out.dtype}"

    Output:

    AssertionError: expected int32 got int64
    """
    r = extract_repro(issue(body))
    assert r.found and 'f"expected int32 got {out.dtype}"' in r.script


def test_an_unfenced_script_goes_on_after_the_output_pasted_in_its_middle() -> None:
    head = ("import numpy as np\nimport tvm\n\nx = np.full((1, 8), 100, dtype=\"int8\")\n"
            "out = np.cumsum(x, axis=1).astype(\"int8\")\nprint(out)\n")
    check = "np.testing.assert_array_equal(out, np.cumsum(x, axis=1))"
    body = (f"R.cumsum on int8 gives negative numbers:\n\n{head}"
            f"[[ 100  -56   44 -112  -12   88  -68   32]]\n{check}\n\nAssertionError:\n"
            "Arrays are not equal\n\nthis is serious\n")
    r = extract_repro(issue(body))
    assert_script(r, head + check + "\n")
    # ... but a sentence after the output is not more of the script's output
    said = body.replace(f"{check}\n", f"See, wrong.\n\n{check}\n\n")
    assert_script(extract_repro(issue(said)), head + check + "\n")  # (a paragraph of its own)
    prose = body.replace(f"{check}\n", "then I call it like check(out) and it fails\n")
    assert_script(extract_repro(issue(prose)), head)


@pytest.mark.parametrize(("label", "shown"), [
    ("the output I get:", "[ 0.  0.  0. -1.]\n[ 0.  0. nan -1.]"),
    ("Output:", "[ 0.  0.  0. -1.]\n[ 0.  0. nan -1.]"),
    # the lines above are what the reporter wanted, or nothing said what they are
    ("the expected output:", ""),
    ("My environment:", ""),
])
def test_output_shown_above_an_unfenced_script(label: str, shown: str) -> None:
    script = ("import numpy as np\nimport tvm\nx = np.array([-0.0, 0.0, np.nan, -3.0], \"float32\")\n"
              "print(np.sign(x))\n")
    body = (f"For NaN input TVM output 0.\n\n{label}\n[ 0.  0.  0. -1.]\n[ 0.  0. nan -1.]\n\n"
            f"script below\n\n{script}\n\nthanks\n")
    r = extract_repro(issue(body))
    assert_script(r, script)
    assert r.shown_output == shown


def test_output_shown_in_words_after_an_unfenced_script() -> None:
    body = """\
    when input have nan, R.clip gives 6.0 at the nan position.

    import numpy as np
    import tvm
    inp = np.array([-1.0, 3.0, 7.0, np.nan], "float32")
    print(np.clip(inp, 0, 6), tvm.cpu())

    it prints [0. 3. 6. 6.] but should be [0. 3. 6. nan]
    """
    assert extract_repro(issue(body)).shown_output == "[0. 3. 6. 6.]"


def test_output_labelled_after_the_script_in_a_fence_left_open() -> None:
    body = f"""\
    numpy returns the index of the NaN.

    {F}python
    import numpy as np
    x = np.array([1.0, np.nan, 0.0])
    print("argmin:", np.nanargmin(x))

    Actual:
    argmin: 2
    Expected (numpy):
    argmin: 1
    """
    r = extract_repro(issue(body))
    assert r.found and r.shown_output == "argmin: 2"


def test_output_under_actual_behavior_in_the_body_for_a_script_in_a_comment() -> None:
    body = ("### Actual behavior\n\nIt is 0. Output of the script in the comment below:\n\n"
            f"{F}\ntvm: [-1.  0.  0.  1.]\nnp : [-1.  0. nan  1.]\n{F}\n\n"
            "### Steps to reproduce\n\nsee comment\n")
    script = f"script:\n\n{F}python\nimport numpy as np\nprint('np :', np.sign([1.0]))\n{F}\n"
    r = extract_repro(issue(body, ("alice", script)))
    assert r.found and r.shown_output.startswith("tvm: [-1.  0.  0.  1.]")


@pytest.mark.parametrize(("author", "intro"), [
    ("helper", "Still the case on current main, here is the script with the new API:"),
    ("alice", "ported to new API:"),
    ("alice", "yes still happens with relax on 0.27:"),
    ("alice", "ok updated for 0.27:"),
])
def test_a_port_of_a_script_on_a_removed_api_replaces_it(author: str, intro: str) -> None:
    body = f"It crashes.\n\n{F}python\nimport tvm\nfrom tvm import te\ns = te.create_schedule(B.op)\n{F}\n"
    port = f"{intro}\n\n{F}python\nimport tvm\nfrom tvm import te\nprint(te.create_prim_func)\n{F}\n"
    r = extract_repro(issue(body, (author, port)))
    assert r.found and "create_prim_func" in r.script, r
    assert "`tvm.te.create_schedule`" in r.reason


def test_the_whole_script_in_the_authors_comment_replaces_a_fragment() -> None:
    body = f"It crashes:\n\n{F}python\nf(a, b, c)\n{F}\n"
    whole = f"here is the whole thing\n\n{F}python\nimport tvm\nprint(tvm.cpu())\n{F}\n"
    r = extract_repro(issue(body, ("maint", "What is `f`?"), ("alice", whole)))
    assert r.found and "tvm.cpu()" in r.script


def test_imports_the_author_forgot_and_posts_in_a_comment_go_in_front() -> None:
    body = f"Steps:\n\n{F}python\nx = np.array([3.0, np.nan])\nprint(np.sort(x), tvm.cpu())\n{F}\n"
    imports = f"oops, forgot the imports at the top of the script:\n\n{F}python\nimport numpy as np\nimport tvm\n{F}\n"
    r = extract_repro(issue(body, ("alice", imports)))
    assert r.script.startswith("import numpy as np\nimport tvm\nx = np.array")
    # someone else's imports are not the author's
    assert not extract_repro(issue(body, ("bob", imports))).script.startswith("import numpy")


def test_run_it_with_another_input_instead_of_the_annotated_one_continues_the_script() -> None:
    body = f"""\
    module:

    {F}python
    import numpy as np
    import tvm
    {F}

    run it with (3, 5) input instead of (2, 5):

    {F}python
    data_np = np.ones((3, 5), "float32")
    print(tvm.cpu(), data_np)
    {F}
    """
    assert extract_repro(issue(body)).blocks == ("body#0", "body#1")


def test_a_port_replaces_a_snippet_on_a_removed_api_pasted_without_its_imports() -> None:
    body = f"Max is 0.\n\n{F}python\ns = te.create_schedule(B.op)\nf = tvm.build(s, [A, B])\n{F}\n"
    port = f"ported to new API:\n\n{F}python\nimport tvm\nfrom tvm import te\nprint(te.create_prim_func)\n{F}\n"
    r = extract_repro(issue(body, ("alice", port)))
    assert r.found and "create_prim_func" in r.script


def test_a_fence_left_open_to_the_end_stops_at_the_templates_next_heading() -> None:
    body = f"""\
    ### Steps to reproduce

    {F}python
    import tvm
    print(tvm.cpu())

    ### Environment

    TVM main (0.27.dev), CUDA 12.4, RTX 4090, driver 550
    """
    r = extract_repro(issue(body))
    assert r.found and r.script.strip() == "import tvm\nprint(tvm.cpu())"


# ------------------------------------------- round 8/9 shapes: listings, edits, later scripts

def test_a_gist_listing_with_its_file_name_and_line_numbers() -> None:
    body = f"""\
    From my gist (the line numbers came along):

    {F}
    take_oob.py
      1  import numpy as np
      2  import tvm
      3
      4  x = tvm.runtime.tensor(np.arange(5, dtype="float32"))
      5  print(x.numpy()[1])
    {F}
    """
    r = extract_repro(issue(body))
    assert_script(r, """\
    import numpy as np
    import tvm
    x = tvm.runtime.tensor(np.arange(5, dtype="float32"))
    print(x.numpy()[1])
    """)


def test_code_pasted_as_a_numbered_markdown_list() -> None:
    body = """\
    Listing as it is in our paste tool:

    1. import numpy as np
    2. import tvm
    3.
    4. a = tvm.runtime.tensor(np.zeros(3, "float32"))
    5. print(a.numpy().sum())

    It prints 1.0, which is wrong.
    """
    r = extract_repro(issue(body))
    assert_script(r, """\
    import numpy as np
    import tvm
    a = tvm.runtime.tensor(np.zeros(3, "float32"))
    print(a.numpy().sum())
    """)


def test_python_dash_c_in_a_dockerfile_run_step_with_interpreter_options() -> None:
    body = f"""\
    Docker repro:

    {F}dockerfile
    FROM python:3.11-slim
    RUN pip install apache-tvm numpy
    RUN python -X faulthandler -c "import tvm; from tvm import te; A = te.placeholder((2,), name='A'); print(A.shape)"
    {F}
    """
    r = extract_repro(issue(body))
    assert r.found and r.shape == "shell-wrapped", r
    assert "te.placeholder" in r.script


ELEMENTWISE = """\
import numpy as np
import tvm
from tvm import te

A = te.placeholder((64,), name="A")
B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
target, dev = "llvm", tvm.cpu(0)
f = tvm.compile(te.create_prim_func([A, B]), target=target)
a = tvm.runtime.tensor(np.ones(64, "float32"), dev)
b = tvm.runtime.tensor(np.zeros(64, "float32"), dev)
f(a, b)
print(b.numpy()[:4])
"""


def test_a_later_block_that_edits_one_line_of_the_working_script() -> None:
    body = (f"This works on llvm:\n\n{F}python\n{ELEMENTWISE}{F}\n\n"
            f"Changing only the target line to\n\n{F}python\ntarget, dev = \"cuda\", tvm.cuda(0)\n{F}\n\n"
            "gives all zeros.\n")
    r = extract_repro(issue(body))
    assert r.found and r.blocks == ("body#0", "body#1"), r
    assert 'target, dev = "cuda", tvm.cuda(0)' in r.script
    assert '"llvm"' not in r.script
    assert r.script.index("tvm.cuda(0)") < r.script.index("tvm.compile")
    assert "changes a line" in r.reason


def test_a_later_step_that_reads_what_it_reassigns_is_no_edit() -> None:
    body = (f"{F}python\n{ELEMENTWISE}{F}\n\nthen after changing nothing else I run\n\n"
            f"{F}python\nb = tvm.runtime.tensor(b.numpy() + 1)\n{F}\n")
    r = extract_repro(issue(body))
    assert r.found
    assert r.script.count("b = tvm.runtime.tensor(") == 2  # (appended, not put in place)


def test_the_authors_whole_script_in_a_comment_replaces_a_fragment() -> None:
    body = f"It segfaults (part of a bigger converter):\n\n{F}python\nout = topi.transpose(data, axes=perm)\n{F}\n"
    whole = ("Here the script, sorry:\n\n"
             f"{F}python\nimport tvm\nfrom tvm import te, topi\n\n"
             "A = te.placeholder((2, 3), name=\"A\")\nB = topi.transpose(A, axes=(0, 5))\n"
             f"print(te.create_prim_func([A, B]))\n{F}\n")
    r = extract_repro(issue(body, ("alice", whole)))
    assert r.found and r.blocks == ("comment1#0",), r
    assert "te.placeholder" in r.script


def test_a_whole_script_does_not_yield_to_a_later_one_unasked() -> None:
    body = f"{F}python\n{ELEMENTWISE}{F}\n"
    other = f"Also tried this:\n\n{F}python\nimport tvm\nprint(tvm.__version__)\n{F}\n"
    r = extract_repro(issue(body, ("alice", other)))
    assert r.blocks == ("body#0",)


IR_ONLY = f"""\
This is what `mod.script()` printed; feeding it back to the parser fails:

{F}python
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return x
{F}
"""


def test_printed_tvmscript_alone_runs_when_the_report_is_about_parsing_it() -> None:
    r = extract_repro(issue(IR_ONLY))
    assert r.found, r.reason
    assert "from tvm.script import relax as R" in r.script.split("\n")
    assert "printed TVMScript" in r.reason


def test_printed_tvmscript_alone_is_no_repro_when_parsing_is_not_the_point() -> None:
    body = IR_ONLY.replace("feeding it back to the parser fails", "the add is not fused")
    assert not extract_repro(issue(body)).found


def test_notebook_cells_go_on_after_the_blank_line_below_an_output() -> None:
    body = """\
    In [1]: import numpy as np
       ...: import tvm

    In [2]: a = tvm.runtime.tensor(np.ones(3, "float32"))
       ...: a.numpy().sum()
    Out[2]: 3.0

    In [3]: np.testing.assert_allclose(a.numpy(), np.zeros(3))

    AssertionError:
    Not equal to tolerance rtol=1e-07, atol=0
    """
    r = extract_repro(issue(body))
    assert r.found and "assert_allclose" in r.script, r


@pytest.mark.parametrize("intro", [
    "sorry, the script above has a typo from my editing (`summ`), the right script is:",
    "The code above had a typo, my corrected script is:",
    "oops, copy-paste from an old file. this is the one i run:",
])
def test_a_corrected_script_in_a_comment_replaces_the_one_with_the_typo(intro: str) -> None:
    body = f"{F}python\nimport tvm\nprint(tvm.relax.op.summ)\n{F}\n"
    fixed = f"{intro}\n\n{F}python\nimport tvm\nprint(tvm.relax.op.sum)\n{F}\n"
    r = extract_repro(issue(body, ("alice", fixed)))
    assert r.blocks == ("comment1#0",)


@pytest.mark.parametrize(("intro", "taken"), [
    ("I tried to isolate the layer norm alone, here is a script with only TVM + numpy:", True),
    ("Here's a standalone check of the op itself:", True),
    ("Without the model, this shows it:", True),
    # not offered as the report's problem in TVM alone
    ("This is how we load models here:", False),
    ("A standalone workaround that avoids the op, works for me:", False),
])
def test_another_users_isolation_of_a_report_with_no_script(intro: str, taken: bool) -> None:
    body = (f"BERT logits differ from torch by 0.3. The setup is standard:\n\n{F}python\n"
            f"model = AutoModel.from_pretrained(path).eval()\n...\n{F}\n")
    other = f"{intro}\n\n{F}python\nimport tvm\nfrom tvm import relax\nprint(relax.op.nn.layer_norm)\n{F}\n"
    r = extract_repro(issue(body, ("helper", other)))
    assert (r.found and r.blocks == ("comment1#0",)) is taken, r


def test_before_all_good_then_after_the_failing_one() -> None:
    good = ELEMENTWISE
    bad = ELEMENTWISE.replace("A[i] * 2.0", "A[i] * 1e30")
    body = (f"Before (small inputs) all good:\n\n{F}python\n{good}{F}\n\n"
            f"After scaling the result is inf:\n\n{F}python\n{bad}{F}\n")
    r = extract_repro(issue(body))
    assert "1e30" in r.script


def test_a_reduction_the_author_says_crashes_too_is_taken_over_the_original() -> None:
    original = "import onnx\nimport tvm\nfrom tvm.relax.frontend.onnx import from_onnx\nmod = from_onnx(onnx.load('m.onnx'))\n"
    reduced = "import tvm\nfrom tvm import relax\nprint(relax.op.reshape)\n"
    body = (f"Original script:\n\n{F}python\n{original}{F}\n\n"
            f"I reduced to pure relax, it also crashes for me:\n\n{F}python\n{reduced}{F}\n")
    r = extract_repro(issue(body))
    assert r.blocks == ("body#1",)


@pytest.mark.parametrize("reply,adopted", [
    ("thanks, yes the reduced one crashes the same for me", True),
    ("the reduced one does not crash the same for me, only the onnx one", False),
])
def test_the_author_adopts_a_maintainers_reduction(reply: str, adopted: bool) -> None:
    body = f"{F}python\nimport onnx\nimport tvm\nprint(onnx.__version__, tvm.__version__)\n{F}\n\nSegfault.\n"
    reduction = f"Reduced, no onnx needed:\n\n{F}python\nimport tvm\nfrom tvm import relax\nprint(relax.op.take)\n{F}\n"
    r = extract_repro(issue(body, ("maint", reduction), ("alice", reply)))
    assert (r.blocks == ("comment1#0",)) is adopted


@pytest.mark.parametrize("reply,adopted", [
    ("yes that is exactly what I see, thanks @s-wang", True),
    ("yes that is exactly what I see", True),
    ("yes", False),  # (to whom? no one asked them to confirm)
    ("thanks @s-wang, but mine is different: it happens only with the model", False),
])
def test_the_author_with_only_a_fragment_adopts_another_users_script(reply: str,
                                                                     adopted: bool) -> None:
    body = (f"Integer Div kills python:\n\n{F}\nimport onnx\nmod = from_onnx(onnx.load('m.onnx'))\n"
            f"...\n{F}\n\nI can not share the model.\n")
    other = (f"I hit what I think is the same thing, plain TE:\n\n{F}python\nimport tvm\n"
             f"from tvm import te\nprint(te.floordiv)\n{F}\n")
    r = extract_repro(issue(body, ("maint", "Can someone give a self-contained script?"),
                            ("s-wang", other), ("alice", reply)))
    assert (r.found and r.blocks == ("comment2#0",)) is adopted, r


def test_a_check_posted_without_fences_to_put_after_the_script() -> None:
    body = f"{F}python\n{ELEMENTWISE}{F}\n"
    more = """\
    i add check with reference, please see

    def ref(a):
        return a * 2.0

    np.testing.assert_allclose(b.numpy(), ref(a.numpy()))

    put it after the print. it fail for me
    """
    r = extract_repro(issue(body, ("alice", more)))
    assert r.found and r.script.rstrip().endswith("np.testing.assert_allclose(b.numpy(), ref(a.numpy()))")


def test_printed_label_value_lines_under_the_script_are_its_output_not_code() -> None:
    body = (f"{F}python\nimport tvm\nfrom tvm import tirx\nx = tirx.Var(\"x\", \"int32\")\n"
            f"print(\"before:\", x * 2)\n{F}\n\n{F}\nbefore: x * 2\n{F}\n")
    r = extract_repro(issue(body))
    assert r.blocks == ("body#0",)
    assert r.shown_output.strip() == "before: x * 2"


def test_a_port_the_porter_says_works_is_not_the_repro() -> None:
    body = f"Fails on 0.12.\n\n{F}python\nimport tvm\nfrom tvm import te\ns = te.create_schedule(None)\n{F}\n"
    port = (f"Here's the TensorIR version, for me it works on the new API:\n\n"
            f"{F}python\nimport tvm\nfrom tvm import te\nprint(te.create_prim_func)\n{F}\n")
    r = extract_repro(issue(body, ("bob", port)))
    assert r.blocks == ("body#0",)


# ------------------------------------------------------------- output shown in more places

# One session over two blocks, the first one introduced by {intro}.
TWO_SESSIONS = f"""\
{{intro}}

{F}
>>> import tvm
>>> from tvm import tirx
>>> tirx.const(2147483647, "int64") + tirx.const(1, "int64")
T.int64(2147483648)
{F}

but in int32 it wraps:

{F}
>>> print(tirx.const(2147483647, "int32") + tirx.const(1, "int32"))
-2147483648
{F}
"""


def test_a_session_over_two_blocks_shows_what_it_printed() -> None:
    r = extract_repro(issue(TWO_SESSIONS.format(intro="Constant folding:")))
    assert r.shown_output.split("\n") == ["T.int64(2147483648)", "-2147483648"]


def test_what_a_python_dash_c_command_printed_below_it() -> None:
    body = f"""\
    {F}
    $ python -c 'import tvm; print(tvm.tirx.const(3, "int32") // tvm.tirx.const(-1, "int32"))'
    -3
    {F}

    Expected `3`.
    """
    r = extract_repro(issue(body))
    assert r.found and r.shown_output == "-3"


@pytest.mark.parametrize(("after", "shown"), [
    ("prints `output shape: (3, 4)`", "output shape: (3, 4)"),
    ("It prints `output shape: (3, 4)` instead of raising.", "output shape: (3, 4)"),
    # not a value the script printed
    ("prints `output shape: (3, 4)` as expected", ""),
    ("Then call `f(3, 4)` on it.", ""),
    ("prints `ok`", ""),
])
def test_the_line_a_script_printed_in_a_code_span_after_it(after: str, shown: str) -> None:
    script = "import numpy as np\nout = np.zeros((3, 4))\nprint(\"output shape:\", out.shape)\n"
    r = extract_repro(issue("forgot the script:", ("alice", f"{F}python\n{script}{F}\n\n{after}\n")))
    assert r.found and r.shown_output == shown


@pytest.mark.parametrize("intro", ["it prints", "prints", "Gives this", "I get"])
def test_it_prints_on_its_own_line_after_an_unfenced_script(intro: str) -> None:
    body = f"""\
    My script:

    import tvm
    from tvm import tirx
    print("expr:", tirx.const(2147483647, "int32") + 1)

    {intro}

    expr: -2147483648

    I expected an error.
    """
    r = extract_repro(issue(body))
    assert r.found and r.shown_output == "expr: -2147483648"


def test_a_session_block_after_the_working_one_borrows_only_its_imports() -> None:
    r = extract_repro(issue(TWO_SESSIONS.format(intro="In int64 the result is ok:")))
    assert_script(r, """\
    import tvm
    from tvm import tirx
    print(tirx.const(2147483647, "int32") + tirx.const(1, "int32"))
    """)
    assert r.blocks == ("body#1", "body#0")
    assert r.shown_output == "-2147483648"


def test_output_under_a_comment_in_the_scripts_block_is_not_code() -> None:
    body = f"""\
    {F}python
    import numpy as np
    x = np.array([1.0, np.nan])
    print(np.clip(x, 0, 6))

    # output
    [1. 6.]
    {F}
    """
    r = extract_repro(issue(body))
    assert r.script.rstrip().endswith("print(np.clip(x, 0, 6))")
    assert r.shown_output == "[1. 6.]"


def test_a_fence_left_open_stops_at_the_triage_heading_of_the_template() -> None:
    body = f"""\
    ### Steps to reproduce

    {F}python
    import tvm
    print(tvm.__version__)

    ### Triage

    * needs-triage
    """
    r = extract_repro(issue(body))
    assert "needs-triage" not in r.script and "Triage" not in r.script


def test_an_unfenced_session_prints_the_values_it_shows() -> None:
    body = """\
    >>> import numpy as np
    >>> x = np.array([1.0, np.nan])
    >>> np.max(x)
    np.float64(nan)

    Expected nan.
    """
    r = extract_repro(issue(body))
    assert r.script.rstrip().endswith("print(repr(np.max(x)))")


def test_prints_colon_and_the_line_after_an_unfenced_script() -> None:
    body = """\
    import numpy as np
    x = np.array([100, 100, 100, -5], "int8")
    print("tvm", x.sum())

    prints: tvm 39 numpy 295

    I expected 295.
    """
    r = extract_repro(issue(body))
    assert r.found and r.shown_output == "tvm 39 numpy 295"


def test_the_authors_rewrite_with_create_prim_func_is_the_port() -> None:
    body = f"{F}python\nimport tvm\nfrom tvm import te\ns = te.create_schedule(None)\n{F}\n\nWrong values."
    port = (f"Tried with 0.27. `create_schedule` does not exist anymore so I rewrote it with "
            f"`create_prim_func` + `tvm.compile` as in the docs:\n\n{F}python\nimport tvm\n"
            f"from tvm import te\nprint(te.create_prim_func)\n{F}\n")
    r = extract_repro(issue(body, ("alice", port)))
    assert r.blocks == ("comment1#0",)


def test_a_fence_left_open_ends_at_its_lowercase_output_label() -> None:
    # The fence is never closed: the script, "output:", a blank line, what it printed, then prose.
    body = f"""\
    I count positive elements with `R.sum(x > 0)`:

    {F}python
    import numpy as np
    x = np.array([[1, -1, 2], [-1, -2, 0.5]], dtype="float32")
    print("tvm count:", (x > 0).any(axis=1))
    print("expected :", (x > 0).sum(axis=1))

    output:

    tvm count: [ True  True]
    expected : [2 1]

    I can work around it with astype before the sum, but returning bool is surprising.
    """
    r = extract_repro(issue(body))
    assert r.found and r.script.rstrip().endswith('print("expected :", (x > 0).sum(axis=1))')
    assert r.shown_output == "tvm count: [ True  True]\nexpected : [2 1]"


@pytest.mark.parametrize("intro", ["relax only version, comparing with numpy:",
                                   "The same without torch:", "A pure TVM repro:"])
def test_a_tvm_only_version_beside_a_frontend_one_is_the_repro(intro: str) -> None:
    # two scripts for one bug: through the torch importer, and in TVM alone
    fx = ("import torch\nfrom torch import fx\nfrom tvm.relax.frontend.torch import from_fx\n"
          "gm = fx.symbolic_trace(torch.nn.LayerNorm(64).eval())\n"
          "mod = from_fx(gm, [((2, 16, 64), \"float32\")])\n")
    tvm_only = ("import numpy as np\nimport tvm\nfrom tvm import relax, topi, te\n"
                "x = te.placeholder((2, 64), name=\"x\")\ny = topi.nn.relu(x)\n"
                "f = tvm.compile(te.create_prim_func([x, y]), target=\"llvm\")\nprint(f)\n")
    body = f"fx version:\n\n{F}python\n{fx}{F}\n\n{intro}\n\n{F}python\n{tvm_only}{F}\n"
    r = extract_repro(issue(body))
    assert_script(r, tvm_only)


def test_output_after_an_unfenced_script_pasted_as_html() -> None:
    body = """\
    <p>When the index is out of range, <code>R.take</code> gives some value.</p>
    <pre><code>import numpy as np
    import tvm
    x = tvm.runtime.tensor(np.array([1.0, 2.0, 3.0], dtype=&quot;float32&quot;))
    print(x.numpy()[[0, 2]])
    </code></pre>
    <p>output:</p>
    <pre><code>[1. 3.]
    </code></pre>
    <p>The second element should be an error.</p>
    """
    r = extract_repro(issue(body))
    assert r.found and r.shown_output == "[1. 3.]"


def test_a_markdown_table_of_values_is_the_shown_output() -> None:
    script = ("import numpy as np\nx = np.array([-7, 7], 'int32')\n"
              "for a, b in zip(x, np.fmod(x, 3)):\n    print(a, b, a % 3)\n")
    table = "| x | TVM | numpy |\n|---|-----|-------|\n| -7 | -1 | 2 |\n| 7 | 1 | 1 |\n"
    # under "Actual behavior", above the script
    above = (f"### Actual behavior\n\nThe sign of the dividend:\n\n{table}\n"
             f"### Steps to reproduce\n\n{F}python\n{script}{F}\n")
    assert extract_repro(issue(above)).shown_output == "-7 -1 2\n7 1 1"
    # right after the script
    after = f"{F}python\n{script}{F}\n\nOutput (columns: x, tvm, numpy):\n\n{table}"
    assert extract_repro(issue(after)).shown_output == "-7 -1 2\n7 1 1"
    # a table under another heading after the script is not its output
    env = f"{F}python\n{script}{F}\n\n### Environment\n\n| OS | Ubuntu 22.04 |\n|---|---|\n| tvm | 0.27 |\n"
    assert extract_repro(issue(env)).shown_output == ""


def test_a_fence_left_open_to_the_end_stops_before_the_prose_after_it() -> None:
    script = ("import numpy as np\nimport tvm\n\nx = tvm.runtime.tensor(np.zeros(4, 'float32'))\n"
              "print(x.numpy()[:2])\n# prints [0. 0.]  expected [1. 1.]\n")
    body = f"The result is all zeros.\n\n{F}python\n{script}\nCUDA 12.2, driver 535, tvm built from source (v0.27.0 tag)\n"
    r = extract_repro(issue(body))
    assert r.found and r.script.rstrip().endswith("# prints [0. 0.]  expected [1. 1.]")
    assert "CUDA 12.2" not in r.script


def test_a_printed_module_cut_off_with_the_text_is_not_joined_to_the_script() -> None:
    # The stored text ends inside the printed module under "Actual behavior" (its fence never
    # closed): the code before its last blank line parses, but what follows is more code, not
    # prose -- the fence is not closed there, and the module stays out of the script.
    script = "import tvm\nfrom tvm import relax as rx\nbb = rx.BlockBuilder()\nprint(bb.get())\n"
    ir = ("@tvm.script.ir_module\nclass Module:\n    @R.function\n    def func1(a: R.Tensor):\n"
          "        return a\n\n    @R.function\n")
    body = f"{F}python\n{script}{F}\n\n### Actual behavior\n\nThis prints:\n\n{F}python\n{ir}"
    r = extract_repro(issue(body))
    assert_script(r, script)
    assert r.blocks == ("body#0",)


@pytest.mark.parametrize(("comment", "taken"), [
    ("I can reproduce without onnx:", True),
    ("Here is the relax-only version:", True),
    ("Reduced to the relax op (the importer maps this to `R.nn.pad`):", True),
    # not offered as a reduction of the bug
    ("For comparison, this one works fine:", False),
    ("Unrelated, but how do I print the IR?", False),
])
def test_a_reduction_without_the_framework_in_a_comment_is_run(comment: str,
                                                               taken: bool) -> None:
    onnx_script = ("import onnx\nfrom tvm.relax.frontend.onnx import from_onnx\nimport tvm\n"
                   "m = onnx.load('model.onnx')\nmod = from_onnx(m)\n"
                   "ex = tvm.compile(mod, 'llvm')\n")
    relax_script = ("import numpy as np\nimport tvm\nfrom tvm import relax\n"
                    "bb = relax.BlockBuilder()\nprint(bb)\n")
    body = f"Converting fails:\n\n{F}python\n{onnx_script}{F}\n"
    later = f"{comment}\n\n{F}python\n{relax_script}{F}\n"
    r = extract_repro(issue(body, ("maintainer", later)))
    if taken:
        assert_script(r, relax_script)
        assert "needs `onnx`" in r.reason and "@maintainer" in r.reason
        # ... unless the author answers that it does not show their bug
        no = "the reduced one does not crash the same for me, only the onnx one"
        assert_script(extract_repro(issue(body, ("maintainer", later), ("alice", no))),
                      onnx_script)
    else:
        assert_script(r, onnx_script)


def test_the_module_a_script_printed_is_its_shown_output_not_more_code() -> None:
    script = ("import tvm\nfrom tvm.script import tirx as T\n\n\n@T.prim_func\n"
              "def func(A: T.Buffer((16,), \"float32\")):\n    for i in range(16):\n"
              "        A[i] = T.float32(0) * A[i] + T.float32(1)\n\n\nprint(func.script())\n")
    printed = ("@T.prim_func\ndef func(A: T.Buffer((16,), \"float32\")):\n"
               "    for i in range(16):\n        A[i] = T.float32(1.0)\n")
    body = f"{F}python\n{script}{F}\n\nprinted:\n\n{F}\n{printed}{F}\n\nThe load is gone.\n"
    r = extract_repro(issue(body))
    assert_script(r, script)
    assert r.blocks == ("body#0",) and r.shown_output == printed
    # ... and under "Actual behavior", above the script
    above = (f"### Actual behavior\n\n{F}\n{printed}{F}\n\n### Steps to reproduce\n\n"
             f"{F}python\n{script}{F}\n")
    r = extract_repro(issue(above))
    assert_script(r, script)
    assert r.shown_output == printed


@pytest.mark.parametrize(("comment_tail", "shown"), [
    # the corrected copy shows nothing of its own: what the first printed stands
    ("\n\nsame output.\n", "[ 3.  1. nan  5.  2.]\n"),
    # ... and what it shows itself wins
    (f"\n\nnow I get\n\n{F}\n[ 5.  3.  1. nan  2.]\n{F}\n", "[ 5.  3.  1. nan  2.]\n"),
])
def test_a_corrected_script_keeps_the_output_shown_for_the_first(comment_tail: str,
                                                                 shown: str) -> None:
    first = "import numpy as np\nimport tvm\nprint(np.sort(np.array([3, 1, np.NaN])))\n"
    fixed = first.replace("np.NaN", "np.nan")
    body = (f"Sorting with a NaN is wrong:\n\n{F}python\n{first}{F}\n\noutput I get:\n\n"
            f"{F}\n[ 3.  1. nan  5.  2.]\n{F}\n")
    comment = (f"Sorry, the script above fails on numpy 2. Corrected version:\n\n"
               f"{F}python\n{fixed}{F}{comment_tail}")
    r = extract_repro(issue(body, ("alice", comment)))
    assert r.blocks == ("comment1#0",) and r.shown_output.strip() == shown.strip(), r


@pytest.mark.parametrize(("intro", "takes_second"), [
    ("first version (don't use, dtype of B was float by mistake so no crash):", True),
    ("ignore this one, it is from the wrong file:", True),
    ("Do not run this:", True),
    # not a block the text disowns
    ("Here is the script (we don't use any schedule):", False),
    ("I don't use relay here:", False),
])
def test_a_block_its_intro_disowns_yields_to_the_next(intro: str, takes_second: bool) -> None:
    first = "import tvm\nprint(tvm.tirx.const(1, 'int32') // 1.0)\n"
    second = "import tvm\nprint(tvm.tirx.const(1, 'int32') // 0)\n"
    body = (f"Division by zero kills the process.\n\n{intro}\n\n{F}python\n{first}{F}\n\n"
            f"correct version:\n\n{F}python\n{second}{F}\n")
    r = extract_repro(issue(body))
    assert_script(r, second if takes_second else first)


@pytest.mark.parametrize(("after", "shown"), [
    # the expected output first, then what it printed
    (f"Expected:\n{F}\nFalse [2. 3. 4.]\n{F}\nGot:\n{F}\nFalse [2. 4. 6.]\n{F}\n", "False [2. 4. 6.]"),
    # ... the expected output alone is not what it printed
    (f"Expected:\n{F}\nFalse [2. 3. 4.]\n{F}\n", ""),
])
def test_the_output_shown_after_the_expected_one(after: str, shown: str) -> None:
    script = "import numpy as np\nimport tvm\nprint(False, np.array([2., 4., 6.]))\n"
    r = extract_repro(issue(f"The second module is the first one.\n\n{F}python\n{script}{F}\n\n{after}"))
    assert r.found and r.shown_output.strip() == shown, r


ONE_LINE = ('import tvm, numpy as np; from tvm import te; A = te.placeholder((4,), "int32", '
            'name="A"); f = tvm.compile(te.create_prim_func([A]), target="llvm"); print(f)')


@pytest.mark.parametrize(("span", "found"), [
    (ONE_LINE, True),
    # an environment check, a numpy-only line, or imports alone are no repro
    ("import tvm; print(tvm.__version__); print(tvm.support.libinfo())", False),
    ("import numpy as np; a = np.ones(3); print(a.sum(), a.mean())", False),
    ("import tvm; import numpy as np; from tvm import relax, te", False),
])
def test_a_whole_script_on_one_line_in_a_code_span(span: str, found: bool) -> None:
    body = (f"the whole process dies. repro (sorry its one line, copied from my harness): "
            f"`{span}` output:\n\n{F}\nFloating point exception (core dumped)\n{F}\n")
    r = extract_repro(issue(body))
    assert r.found is found, r
    if found:
        assert r.script.strip() == span and r.shape == "unfenced"


@pytest.mark.parametrize(("above", "shown"), [
    # logs first, script last: the block a short label calls the output
    (f"output:\n{F}\n(1, 2, -1, 0)\n{F}\n", "(1, 2, -1, 0)"),
    (f"Output I get:\n{F}\n(1, 2, -1, 0)\n{F}\n", "(1, 2, -1, 0)"),
    # ... not the expected one, nor an environment dump, nor a block with a sentence above it
    (f"expected output:\n{F}\n(1, 2, 1, 1)\n{F}\n", ""),
    (f"output of pip list:\n{F}\napache-tvm 0.27.0\n{F}\n", ""),
    (f"The pooled tensor comes back negative, as the log of our service shows:\n{F}\n(1, 2, -1, 0)\n{F}\n", ""),
])
def test_output_labelled_above_the_script(above: str, shown: str) -> None:
    script = "import tvm\nprint(tvm.runtime.tensor)\n"
    r = extract_repro(issue(f"{above}\nrepro:\n\n{F}python\n{script}{F}\n"))
    assert r.found and r.shown_output.strip() == shown, r


def test_a_retest_on_a_version_as_a_shell_line_is_the_port() -> None:
    """The author's one-liner used a name this TVM no longer has; their retest "On 0.27.0.post1:"
    is a ``python -c`` line in a shell block: that line is run."""
    body = (f"Big literals wrap silently:\n\n{F}\n$ python -c \"import tvm; "
            f"print(tvm.tir.const(2**40, 'int32'))\"\n0\n{F}\n")
    retest = (f"On 0.27.0.post1:\n{F}\n$ python -c \"import tvm; "
              f"print(tvm.tirx.const(2**40, 'int32'))\"\n...\nValueError: Literal value exceeds "
              f"range of int32\n{F}\nso it errors now.")
    r = extract_repro(issue(body, ("maint", "Can you retest on a recent release?"),
                            ("alice", retest)))
    assert r.blocks == ("comment2#0",) and "tvm.tirx.const" in r.script, r
