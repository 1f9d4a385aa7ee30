"""bot.fragments: names a script reads and never binds; scripts that only import."""

from __future__ import annotations

import textwrap

import pytest

from bot.fragments import (
    bound_only_in_functions,
    fragment_at_start,
    imports_only,
    never_bound,
    unbound_names,
)

# (script, the never-bound names, of which read at module level, sure)
UNBOUND_TABLE = [
    # A Relax snippet after the module was built elsewhere.
    (
        """
        import tvm
        from tvm import relax
        ex = relax.build(mod, target="llvm")
        vm = relax.VirtualMachine(ex, tvm.cpu())
        out = vm["main"](inp)
        """,
        ("mod", "inp"),
        ("mod", "inp"),
        True,
    ),
    # A function's body pasted alone: self and x are never bound (tvm is a forgotten import:
    # the script's own slip, not a missing part).
    (
        """
        y = self.conv(x)
        return_value = tvm.relax.op.add(y, y)
        """,
        ("self", "x"),
        ("self", "x"),
        True,
    ),
    # Everything bound somewhere: loops, with, except, comprehension, walrus, match, del,
    # global, class scope, conditional imports, lambdas, __file__, builtins.
    (
        """
        import os
        try:
            import onnx
        except ImportError as exc:
            onnx = None
            print(exc)
        with open(__file__) as fh:
            text = fh.read()
        squares = [k * k for k in range(3)]
        if (n := len(squares)) > 2:
            print(n)
        match squares:
            case [first, *rest]:
                print(first, rest)
            case {"a": av, **others}:
                print(av, others)
        counter = 0
        def bump():
            global counter
            counter += 1
        class Net:
            width = 4
            def forward(self, inp):
                return inp * self.width
        f = lambda q: q + 1
        tmp = 1
        del tmp
        print(os.sep, onnx, text, f(2), Net().forward(3), sorted(set()), __name__)
        """,
        (),
        (),
        True,
    ),
    # Only inside a function that is never called: unbound, but not at module level.
    (
        """
        import tvm
        def helper():
            return params["w"]
        """,
        ("params",),
        (),
        True,
    ),
    # A star import may bind anything: not sure.
    (
        """
        from tvm.relax.op import *
        y = add(x, x)
        """,
        ("add", "x"),
        ("add", "x"),
        False,
    ),
    # exec / globals() bind names the analysis cannot see.
    (
        """
        globals()["shape"] = (1, 3)
        print(shape)
        """,
        ("shape",),
        ("shape",),
        False,
    ),
    # Annotations may never be evaluated: their names are not module-level reads.
    (
        """
        from __future__ import annotations
        def run(mod: IRModule) -> Executable:
            return mod
        count: Counter = 0
        """,
        ("IRModule", "Executable", "Counter"),
        (),
        True,
    ),
    # Python 2 and notebook names are not a missing part of the repro.
    ("for i in xrange(3):\n    display(i)\n", (), (), True),
    # A slip of the keyboard for a name the script binds is its own typo, not a missing part
    # (Python's NameError says "Did you mean: 'expected'?")...
    ("expected = 1\nout = 2\nassert out == expectd\n", (), (), True),
    ("x_nd = 1\nprint(x_np)\n", (), (), True),
    ("ref = 1\nprint(reff)\n", (), (), True),
    # ... or an abbreviation of one (``block`` bound, ``blk`` read)
    ("block = 1\nprint(blk)\n", (), (), True),
    # ... or the name a variable had before a short suffix was added (``block_c`` bound,
    # ``block`` read: Python says "Did you mean: 'block_c'?")
    ("block_c = 1\nprint(block)\n", (), (), True),
    ("data_np = 1\nprint(data)\n", (), (), True),
    # ... or of a module the script imports under another name (``nump`` beside ``import numpy
    # as np``)
    ("import numpy as np\nx = np.ones(3)\nprint(nump.sum(x))\n", (), (), True),
    # ... but a short name, or one that differs by a number or a plural, is another name
    ("mods = []\nprint(mod)\n", ("mod",), ("mod",), True),
    ("model2 = 1\nprint(model1)\n", ("model1",), ("model1",), True),
    ("models = []\nprint(model)\n", ("model",), ("model",), True),
    ("onnx_model = 1\nprint(model)\n", ("model",), ("model",), True),
    # (a prefix of a bound name, or a name spelt from other letters, is not an abbreviation)
    ("module = 1\nprint(mod)\n", ("mod",), ("mod",), True),
    # (a longer suffix names another thing; a short name with a suffix too)
    ("model_quantized = 1\nprint(model)\n", ("model",), ("model",), True),
    ("mod_a = 1\nprint(mod)\n", ("mod",), ("mod",), True),
    ("params_dict = 1\nprint(pd)\n", ("pd",), ("pd",), True),
]


@pytest.mark.parametrize(("script", "names", "top", "sure"), UNBOUND_TABLE)
def test_unbound_names(script: str, names: tuple[str, ...], top: tuple[str, ...], sure: bool):
    u = unbound_names(textwrap.dedent(script))
    assert u.names == names
    assert u.module_level == top
    assert u.sure is sure


def test_never_bound_with_dynamic_binding() -> None:
    star = "from tvm.relax.op import *\ny = add(x, x)\n"
    # The run's NameError proves the star import did not bind it.
    assert never_bound(star, "x")
    spelled = 'exec("weights = 1")\nprint(weights)\n'
    assert not never_bound(spelled, "weights")  # the exec may have bound it
    assert not never_bound("x = 1\nprint(x)\n", "x")
    assert not never_bound("print(1", "x")  # does not parse: not sure of anything


# (script, the modules when it only imports; () when it does more)
IMPORTS_TABLE = [
    ("import tvm\nfrom tvm import relax\n", ("tvm",)),
    (
        "import tvm\nimport numpy as np\nprint(tvm.__version__)\nprint(np.__version__)\n",
        ("tvm", "numpy"),
    ),
    ("import os\nos.environ['TVM_LOG_DEBUG'] = '1'\nimport tvm\n", ("os", "tvm")),
    ("try:\n    import tvm\nexcept ImportError:\n    pass\n", ("tvm",)),
    ("import tvm\ntvm.support.libinfo()\n", ()),  # calls into TVM: runs something
    ("import tvm\nx = tvm.nd.array([1])\n", ()),
    ("import tvm\ndef f():\n    pass\n", ()),
    ("", ()),
    ("print('hello')\n", ()),
]


@pytest.mark.parametrize(("script", "mods"), IMPORTS_TABLE)
def test_imports_only(script: str, mods: tuple[str, ...]) -> None:
    assert imports_only(script) == mods


# (script, names a run would certainly stop on before anything runs; () = let the run decide)
AT_START_TABLE = [
    ("mod = relax.transform.LegalizeOps()(mod)\n", ("mod",)),
    ("import tvm\nmod = tvm.IRModule()\nmod = relax.transform.LegalizeOps()(mod)\n", ()),
    ("import numpy as np\ncount += 1\n", ("count",)),
    ("import tvm\nfrom tvm import relax\n\nmod = relax.transform.FuseOps()(mod)\n", ("mod",)),
    ("import tvm\nN = 4\ndef f(x):\n    return x\nex = tvm.compile(mod, target='llvm')\n",
     ("mod",)),
    # a forgotten import of tvm does not hide `onnx_model` and `shape_dict`
    ("mod, params = tvm.relax.frontend.onnx.from_onnx(onnx_model, shape_dict)\n",
     ("onnx_model", "shape_dict")),
    # a call before the unbound read: the run decides (it may fail in TVM first)
    ("import tvm\nx = tvm.nd.array([1])\nprint(result)\n", ()),
    # everything defined
    ("import tvm\nmod = tvm.IRModule()\nprint(mod)\n", ()),
    # only a module's usual name missing: the script's own slip, it runs
    ("x = tvm.tir.Var('x', 'int32')\nprint(x)\n", ()),
    # names bound dynamically: unsure
    ("from tvm.relax import *\nprint(mod)\n", ()),
    # used only inside a function that is never called at module level
    ("def f():\n    return mod\n", ()),
    # a decorator runs at import: it is a call
    ("import tvm\n@tvm.register_func('x')\ndef f():\n    pass\nprint(mod)\n", ()),
    # imports forgotten AND `mod` read before it is bound: more than the imports is missing
    ("seq = tvm.transform.Sequential([relax.transform.FuseOps()])\nmod = seq(mod)\n",
     ("mod",)),
    # imports forgotten, nothing else missing: the script's own slip, it runs (and fails)
    ("seq = tvm.transform.Sequential([])\nmod = tvm.IRModule()\nmod = seq(mod)\n", ()),
]


# (script, name, read at module level before anything binds it)
READ_BEFORE_TABLE = [
    ("import tvm\nseq = tvm.transform.Sequential([])\nmod = seq(mod)\n", "mod", True),
    # read above, bound below: the script's own ordering bug
    ("import tvm\nprint(mod)\nmod = 1\n", "mod", False),
    ("import tvm\nmod = tvm.IRModule()\nmod = seq(mod)\n", "mod", False),
    # only a function reads it, and it is bound before any call could matter
    ("import tvm\ndef f():\n    return mod\nmod = 1\nprint(f())\n", "mod", False),
    # a module's usual name is a forgotten import, not a missing part
    ("np = np\n", "np", False),
]


@pytest.mark.parametrize(("script", "name", "expected"), READ_BEFORE_TABLE)
def test_read_before_bound(script: str, name: str, expected: bool) -> None:
    from bot.fragments import read_before_bound

    assert read_before_bound(script, name) is expected


@pytest.mark.parametrize(("script", "names"), AT_START_TABLE)
def test_fragment_at_start(script: str, names: tuple[str, ...]) -> None:
    assert fragment_at_start(script) == names


@pytest.mark.parametrize(("script", "name", "only"), [
    ("def tune(mod):\n    return mod\n\ndb = tune(mod)\n", "mod", True),
    # bound at module level too (a later assignment, a loop, an import)
    ("def tune(mod):\n    return mod\n\nmod = 1\ndb = tune(mod)\n", "mod", False),
    ("def f(x):\n    return x\n\nfor x in range(2):\n    f(x)\n", "x", False),
    # a global the function sets
    ("def load():\n    global mod\n    mod = 1\n\nload()\nprint(mod)\n", "mod", False),
    # never bound anywhere: another rule's case (never_bound)
    ("print(mod)\n", "mod", False),
])
def test_names_only_functions_bind(script: str, name: str, only: bool) -> None:
    assert bound_only_in_functions(script, name) is only


@pytest.mark.parametrize(("script", "name", "fragment"), [
    # the body of a `with` runs at module level: `mod = seq(mod)` reads mod before binding it
    ("import tvm\nseq = tvm.transform.Sequential([])\nwith tvm.transform.PassContext():\n"
     "    mod = seq(mod)\n", "mod", True),
    # bound by the `with ... as` header first
    ("import tvm\nwith open('f') as mod:\n    mod = len(mod)\n", "mod", False),
])
def test_a_name_read_before_bound_inside_a_with_block(script: str, name: str,
                                                       fragment: bool) -> None:
    from bot.fragments import read_before_bound

    assert read_before_bound(script, name) is fragment


@pytest.mark.parametrize(("script", "name"), [
    ("@I.ir_module\nclass Conv:\n    pass\nmod = LegalizeOps()(mod)\n", "Conv"),
    ("@T.prim_func\ndef f(A):\n    pass\nlib = tvm.compile(func)\n", "f"),
    ("@tvm.script.ir_module\nclass M:\n    pass\n", "M"),
    # used: nothing is left over
    ("@I.ir_module\nclass Conv:\n    pass\nmod = LegalizeOps()(Conv)\n", ""),
    # a plain class or function is not a TVM module
    ("class Conv:\n    pass\nmod = f(mod)\n", ""),
])
def test_a_tvm_module_the_script_defines_and_never_uses(script: str, name: str) -> None:
    from bot.fragments import unused_module

    assert unused_module(script) == name
