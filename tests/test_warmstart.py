"""bot.warmstart: when a sandbox that imported something before the script was known is exactly
a cold start of the script (should / should-not tables), and the cheap guess of the preload."""

from __future__ import annotations

import pytest

from bot.warmstart import IMPORT_TVM, guess_preload, leading_imports, warm_start_eligible

TVM = IMPORT_TVM

# (script, preload): a warm start is exactly the script's own start
SHOULD = [
    ("import tvm\nprint(tvm.__version__)\n", TVM),
    ("import tvm.relax as rx\n", TVM),  # imports tvm first, then tvm.relax
    ("import tvm.relax\nimport numpy\n", TVM),
    ("from tvm import te\n", TVM),
    ("from tvm.script import tir as T\n", TVM),
    ('"""A repro."""\nimport tvm\n', TVM),
    ("from __future__ import annotations\nimport tvm\n", TVM),
    ('"""doc"""\nfrom __future__ import annotations\nfrom __future__ import division\nimport tvm\n',
     TVM),
    ("# a comment\n\n\nimport tvm\n", TVM),
    ("import tvm, numpy\n", TVM),
    ("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport tvm\n", TVM),
    # the preload is the script's own leading imports, in order
    ("import time\nimport numpy as np\nimport tvm\nfrom tvm import te\nx = 1\n",
     (("time", ()), ("numpy", ()), ("tvm", ()), ("tvm", ("te",)))),
    ("import numpy as np\nimport tvm\n", (("numpy", ()), ("tvm", ()))),
    ("import torch\nimport tvm\nfrom tvm import relax\n", (("torch", ()), ("tvm", ()))),
    ("import numpy, tvm\n", (("numpy", ()), ("tvm", ()))),
    ("import numpy as np\nfrom tvm.relax.frontend import from_onnx\n",
     (("numpy", ()), ("tvm", ()))),  # the last one: the start of the script's statement
]

SHOULD_NOT = [
    ("import numpy as np\nimport tvm\n", TVM),  # numpy's libraries before TVM's
    ("import os\nos.environ['TVM_NUM_THREADS'] = '1'\nimport tvm\n", TVM),  # env set first
    ("import torch\nimport tvm\n", TVM),  # import order changes real TVM bugs
    ("import time\nimport numpy as np\nimport tvm\n", TVM),
    ("x = 1\nimport tvm\n", TVM),
    ("print('hi')\nimport tvm\n", TVM),
    ("import numpy, tvm\n", TVM),
    ("import tvmx\n", TVM),
    ("import tvm_ffi\nimport tvm\n", TVM),
    ("from .tvm import x\n", TVM),
    ("from tvmc import x\n", TVM),
    ("if True:\n    import tvm\n", TVM),
    ("try:\n    import tvm\nexcept ImportError:\n    pass\n", TVM),
    ("def f():\n    import tvm\n", TVM),
    ('"""doc"""\n"""second string"""\nimport tvm\n', TVM),
    ("from __future__ import annotations\n", TVM),
    ("", TVM),
    ("import tvm\nprint(\n", TVM),  # a syntax error anywhere: the script never starts
    ("import tvm\nx = '\0'\n", TVM),
    ("import sys\nsys.path.insert(0, '/x')\nimport tvm\n", TVM),
    # a preload that is not the script's own beginning
    ("import tvm\nimport numpy\n", (("numpy", ()), ("tvm", ()))),  # order swapped
    ("import numpy as np\nimport tvm\n", (("numpy", ()), ("tvm", ()), ("onnx", ()))),  # more
    ("from tvm import te\n", (("tvm", ("relax",)),)),  # another fromlist
    ("from tvm import te, relax\n", (("tvm", ("te",)),)),
    ("import tvm.relax\n", (("tvm.relax", ()), ("numpy", ()))),
    ("import numpy\nimport torch\n", (("numpy", ()), ("torch", ()))),  # imports no tvm
    ("import tvm\n", ()),
    ("import tvm.relax\n", (("tvm.relax.frontend", ()),)),  # more than the statement does
]


@pytest.mark.parametrize("script, preload", SHOULD)
def test_warm_start_eligible(script: str, preload: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
    assert warm_start_eligible(script, preload)


@pytest.mark.parametrize("script, preload", SHOULD_NOT)
def test_warm_start_not_eligible(script: str, preload: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
    assert not warm_start_eligible(script, preload)


def test_leading_imports_as_the_machinery_does_them() -> None:
    assert leading_imports(
        '"""d"""\nfrom __future__ import annotations\nimport a.b as c, d\n'
        "from e.f import (g, h as i)\nfrom j import *\nimport k\nk.run()\nimport l\n"
    ) == (("a.b", ()), ("d", ()), ("e.f", ("g", "h")), ("j", ("*",)), ("k", ()))
    assert leading_imports("print(1)\n") == ()
    assert leading_imports("def (\n") is None


@pytest.mark.parametrize("text, preload", [
    # the first fenced block's leading imports, when they import tvm
    ("# Bug\n\n```python\nimport numpy as np\nimport tvm\nfrom tvm import te\nx = 1\nimport a\n"
     "```\n", (("numpy", ()), ("tvm", ()), ("tvm", ("te",)))),
    ("~~~\nimport tvm\n~~~\n", (("tvm", ()),)),
    # else: import tvm alone
    ("no code at all", TVM),
    ("```\nTraceback (most recent call last):\n```\n```python\nimport numpy\nimport tvm\n```\n",
     TVM),
    ("```python\nimport numpy\nimport torch\n```\n", TVM),
    ("```python\nimport tvm\n", TVM),  # never closed
])
def test_guess_preload(text: str, preload: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
    assert guess_preload(text) == preload
