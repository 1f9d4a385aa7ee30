"""A small git repository shaped like TVM, made by the tests (reusable: builds, history, bench).

It builds like TVM: a ``pyproject.toml`` using scikit-build-core, a ``CMakeLists.txt`` compiling a
C++ shared library from ``src/*.cc`` and a Python package ``python/tvm`` (installed as ``tvm``)
that loads the library with ctypes. ``tvm.__version__`` is the version; ``tvm.support.libinfo()``
has ``GIT_COMMIT_HASH`` (written by CMake from ``git rev-parse HEAD`` at every build), so the
environment probe reports the commit like it does for real TVM. ``tvm.add(a, b)`` calls C++.

    repo = TvmRepo.create(tmp_path / "tvm")          # commit 0: a working library
    sha = repo.set_add_bug(True, "introduce a bug")  # tvm.add(2, 3) == 6 from this commit on
    sha = repo.break_build()                         # a commit that does not compile
    shas = make_history(tmp_path / "tvm", n=8, bug_at=1, fixed_at=6)   # for bisection tests

``SMOKE`` is a smoke script for this fixture (``builds add --smoke``); ``REPRO`` is a repro script
that fails (AssertionError, "wrong result") exactly on the commits that have the bug.
Needs git, cmake, a C++ compiler, ninja (or make) and scikit-build-core in the building interpreter.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

VERSION = "0.30.dev0"

PYPROJECT = f"""\
[build-system]
requires = ["scikit-build-core>=0.10.0"]
build-backend = "scikit_build_core.build"

[project]
name = "tvm"
version = "{VERSION}"
description = "A TVM-shaped test fixture"
requires-python = ">=3.10"

[tool.scikit-build]
cmake.source-dir = "."
cmake.build-type = "Release"
wheel.py-api = "py3"
build-dir = "build"
wheel.packages = ["python/tvm"]
wheel.install-dir = "tvm"
"""

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.18)
project(tvm_fixture CXX)
set(CMAKE_CXX_STANDARD 17)
file(GLOB TVM_SRCS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cc)
add_library(tvm_fixture SHARED ${TVM_SRCS})
add_custom_target(tvm_commit ALL
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_CURRENT_SOURCE_DIR} -DOUT=${CMAKE_BINARY_DIR}/commit.txt
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/commit.cmake
  BYPRODUCTS ${CMAKE_BINARY_DIR}/commit.txt)
install(TARGETS tvm_fixture LIBRARY DESTINATION lib)
install(FILES ${CMAKE_BINARY_DIR}/commit.txt DESTINATION lib)
"""

COMMIT_CMAKE = """\
execute_process(COMMAND git -C ${SRC} rev-parse HEAD OUTPUT_VARIABLE sha
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  set(sha "NOT-FOUND")
endif()
file(WRITE ${OUT} "${sha}")
"""

INIT_PY = f'''\
"""A TVM-shaped fixture package."""
import ctypes as _ctypes
import os as _os

__version__ = "{VERSION}"
_LIB = _ctypes.CDLL(_os.path.join(_os.path.dirname(__file__), "lib", "libtvm_fixture.so"))
_LIB.tvm_add.argtypes = [_ctypes.c_int, _ctypes.c_int]
_LIB.tvm_add.restype = _ctypes.c_int

from . import support  # noqa: E402


def add(a, b):
    return int(_LIB.tvm_add(int(a), int(b)))
'''

SUPPORT_PY = '''\
import os as _os


def libinfo():
    path = _os.path.join(_os.path.dirname(__file__), "lib", "commit.txt")
    try:
        with open(path) as f:
            sha = f.read().strip()
    except OSError:
        sha = "NOT-FOUND"
    return {"GIT_COMMIT_HASH": sha, "LLVM_VERSION": "NOT-FOUND"}
'''

ADD_CC = """\
extern "C" int tvm_add(int a, int b) {{ return a + b{bug}; }}
"""

# Filler units: real template work, so compiling one takes a measurable moment (bench: ratios).
UNIT_CC = """\
#include <algorithm>
#include <map>
#include <string>
#include <vector>
namespace tvm_fixture {{
template <int N> struct Unroll {{
  static long run(long x) {{ return Unroll<N - 1>::run(x * 3 + N) % 1000003; }}
}};
template <> struct Unroll<0> {{ static long run(long x) {{ return x; }} }};
long unit_{i}(long x) {{
  std::map<std::string, std::vector<long>> m;
  m["k"].push_back(Unroll<{depth}>::run(x) + {salt});
  std::vector<long> v(m["k"]);
  std::sort(v.begin(), v.end());
  return v.front();
}}
}}  // namespace tvm_fixture
"""

SMOKE = """\
import tvm
print("tvm", tvm.__version__, tvm.support.libinfo()["GIT_COMMIT_HASH"])
assert tvm.add(40, 2) in (42, 43), tvm.add(40, 2)
print("smoke ok")
"""

REPRO = """\
import tvm
print("tvm", tvm.__version__)
result = tvm.add(2, 3)
assert result == 5, f"wrong result: tvm.add(2, 3) = {result}, expected 5"
print("ok")
"""

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fixture", "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "Fixture", "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@dataclass
class TvmRepo:
    path: Path
    units: int = 4

    @property
    def url(self) -> str:
        return self.path.resolve().as_uri()  # file:///...

    def git(self, *args: str) -> str:
        env = {**os.environ, **_GIT_ENV, "HOME": str(self.path)}
        r = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True,
                           env=env, check=True)
        return r.stdout.strip()

    @classmethod
    def create(cls, path: Path, *, units: int = 4, depth: int = 60) -> TvmRepo:
        path.mkdir(parents=True, exist_ok=True)
        repo = cls(path, units)
        files = {
            "pyproject.toml": PYPROJECT,
            "CMakeLists.txt": CMAKELISTS,
            "cmake/commit.cmake": COMMIT_CMAKE,
            "python/tvm/__init__.py": INIT_PY,
            "python/tvm/support.py": SUPPORT_PY,
            "src/add.cc": ADD_CC.format(bug=""),
        }
        for i in range(units):
            files[f"src/unit_{i}.cc"] = UNIT_CC.format(i=i, depth=depth, salt=0)
        repo.git("init", "-q", "-b", "main")
        repo.commit(files, "initial: a TVM-shaped library")
        return repo

    def write(self, files: dict[str, str]) -> None:
        for rel, text in files.items():
            p = self.path / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)

    def commit(self, files: dict[str, str], message: str) -> str:
        """Write ``files`` (path -> text), commit them; the new full sha."""
        self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def touch_unit(self, i: int = 0, salt: int = 1, depth: int = 60) -> str:
        """A one-file change (the incremental case)."""
        return self.commit({f"src/unit_{i}.cc": UNIT_CC.format(i=i, depth=depth, salt=salt)},
                           f"change unit {i} (salt {salt})")

    def set_add_bug(self, bug: bool, message: str = "") -> str:
        return self.commit({"src/add.cc": ADD_CC.format(bug=" + 1" if bug else "")},
                           message or ("introduce the add bug" if bug else "fix the add bug"))

    def break_build(self) -> str:
        return self.commit({"src/add.cc": 'extern "C" int tvm_add(int a, int b) { return a +; }\n'},
                           "a change that does not compile")


def make_history(path: Path, *, n: int = 8, bug_at: int = 1, fixed_at: int = 6,
                 units: int = 2) -> list[str]:
    """A repository with commits 0..n (0 = initial): tvm.add is wrong from ``bug_at`` until
    ``fixed_at`` (exclusive); the other commits change a filler unit. Returns the n+1 shas."""
    repo = TvmRepo.create(path, units=units)
    shas = [repo.head()]
    for k in range(1, n + 1):
        if k == bug_at:
            shas.append(repo.set_add_bug(True, f"commit {k}: introduce the add bug"))
        elif k == fixed_at:
            shas.append(repo.set_add_bug(False, f"commit {k}: fix the add bug"))
        else:
            shas.append(repo.touch_unit(k % units, salt=k))
    return shas
