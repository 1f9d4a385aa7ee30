"""A repro posted as a patch: the test a diff adds to a test file, or a new test file."""

from __future__ import annotations

import ast

import pytest

from bot.extract import extract_repro
from bot.extract.patch import added_tests_in_diff, new_file_in_diff
from bot.models import Issue

F = "```"

ADDED_TO_EXISTING = """\
diff --git a/tests/python/sym/test_sym_simplify.py b/tests/python/sym/test_sym_simplify.py
--- a/tests/python/sym/test_sym_simplify.py
+++ b/tests/python/sym/test_sym_simplify.py
@@ -88,6 +88,14 @@ def test_simplify_mod():
     assert ana.can_prove(x % 4 < 4)


+def test_floormod_of_negative_divisor():
+    x = tirx.Var("x", "int32")
+    ana = sym.Analyzer()
+    res = ana.simplify(tirx.floormod(x, -1))
+    assert isinstance(res, tirx.IntImm) and res.value == 0, res
+
+
 if __name__ == "__main__":
     tvm.testing.main()
"""


def test_a_test_added_to_an_existing_file_gets_the_imports_it_uses() -> None:
    script = added_tests_in_diff(ADDED_TO_EXISTING)
    assert script is not None
    tree = ast.parse(script)
    imports = [ast.unparse(s) for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom)]
    assert imports == ["from tvm import tirx", "from tvm import sym"]
    assert "tests/python/sym/test_sym_simplify.py" in script.split("\n")[0]
    # (the file's __main__ block is context, not part of the added test)
    assert "tvm.testing.main" not in script


def test_the_issue_runs_the_added_test_and_calls_it() -> None:
    body = (f"Regression test (fails on main):\n\n{F}diff\n{ADDED_TO_EXISTING}{F}\n\n"
            f"{F}\nAssertionError: x % -1\n{F}\n")
    r = extract_repro(Issue(title="floormod(x, -1) not folded", body=body, author="a"))
    assert r.found, r.reason
    assert r.script.rstrip().endswith("test_floormod_of_negative_divisor()")
    assert "calls" in r.reason


def test_imports_shown_in_the_hunk_are_kept_and_not_doubled() -> None:
    diff = """\
--- a/tests/python/te/test_te_misc.py
+++ b/tests/python/te/test_te_misc.py
@@ -1,4 +1,12 @@
 import numpy as np
 import tvm
 from tvm import te
+
+
+def test_compute_of_zero():
+    A = te.placeholder((4,), name="A")
+    B = te.compute((4,), lambda i: A[i] * 0, name="B")
+    f = tvm.compile(te.create_prim_func([A, B]), target="llvm")
+    assert f is not None
"""
    script = added_tests_in_diff(diff)
    assert script is not None
    heads = [ln for ln in script.split("\n") if ln.startswith(("import ", "from "))]
    assert heads == ["import numpy as np", "import tvm", "from tvm import te"]


@pytest.mark.parametrize("diff", [
    # a line changed inside an existing test: not a whole test to run
    """\
--- a/tests/python/te/test_te_misc.py
+++ b/tests/python/te/test_te_misc.py
@@ -10,3 +10,3 @@ def test_compute():
     A = te.placeholder((4,), name="A")
-    B = te.compute((4,), lambda i: A[i] * 2, name="B")
+    B = te.compute((4,), lambda i: A[i] * 3, name="B")
""",
    # a C++ fix only
    """\
--- a/src/arith/rewrite_simplify.cc
+++ b/src/arith/rewrite_simplify.cc
@@ -100,1 +100,2 @@
+  TVM_TRY_REWRITE(floormod(x, -1), ZeroWithTypeLike(x));
""",
])
def test_diffs_that_add_no_whole_test_are_no_script(diff: str) -> None:
    assert added_tests_in_diff(diff) is None


def test_the_new_test_file_of_a_fix_and_test_diff() -> None:
    diff = """\
diff --git a/src/topi/sort.cc b/src/topi/sort.cc
--- a/src/topi/sort.cc
+++ b/src/topi/sort.cc
@@ -1,2 +1,3 @@
+  if (std::isnan(lhs)) return true;
diff --git a/tests/python/relax/test_sort_nan.py b/tests/python/relax/test_sort_nan.py
new file mode 100644
--- /dev/null
+++ b/tests/python/relax/test_sort_nan.py
@@ -0,0 +1,4 @@
+import numpy as np
+
+def test_nan():
+    assert np.isnan(np.sort(np.array([1.0, np.nan]))[-1])
"""
    got = new_file_in_diff(diff)
    assert got is not None and got.startswith("import numpy as np") and "def test_nan" in got
