"""Imports of machine-learning frameworks that the script never uses.

Pure. A tutorial-shaped script often keeps ``import torch`` (or onnx, tensorflow) from the code
it was copied from and never touches it; on a worker without that framework the run would stop
at the import and say nothing about the report. Such an import is dropped before the run, and the
reason says so. Not when the report is about importing (an import-order crash: "import torch then
import tvm segfaults"), nor when the script does nothing but import.
"""

from __future__ import annotations

import ast
import re

from bot.extract.pysyntax import imports_only, parse_py
from bot.models import Repro
from bot.needs import detect_needs
from bot.records import replace

# Frameworks whose import alone is heavy and whose absence stops a run (top-level package).
FRAMEWORKS = frozenset({
    "torch", "torchvision", "torchaudio", "onnx", "onnxruntime", "tensorflow", "tflite", "keras",
    "jax", "jaxlib", "paddle", "mxnet", "transformers", "caffe2", "coremltools", "timm",
    "onnxsim", "tf2onnx",
})


def _unused(tree: ast.Module) -> list[tuple[ast.stmt, str]]:
    """The top-level framework imports none of whose names the script uses."""
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {a.value.id for a in ast.walk(tree)
             if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name)}
    out: list[tuple[ast.stmt, str]] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            roots = {a.name.split(".")[0] for a in stmt.names}
            bound = {(a.asname or a.name.split(".")[0]) for a in stmt.names}
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            roots = {stmt.module.split(".")[0]}
            bound = {a.asname or a.name for a in stmt.names}
        else:
            continue
        if roots <= FRAMEWORKS and "*" not in bound and not bound & used:
            out.append((stmt, sorted(roots)[0]))
    return out


def without_unused_frameworks(repro: Repro, text: str) -> Repro:
    """``repro`` without its unused framework imports (see the module docstring); ``text`` is
    the issue's text, read for a report about importing the framework."""
    if not repro.found:
        return repro
    tree = parse_py(repro.script)
    if tree is None or imports_only(tree):
        return repro
    unused = _unused(tree)
    if not unused:
        return repro
    names = sorted({name for _, name in unused})
    code = {ln.strip() for ln in repro.script.split("\n") if ln.strip()}
    prose = "\n".join(ln for ln in text.split("\n") if ln.strip().lstrip(">$ ") not in code)
    if any(re.search(rf"\bimport(?:ing|ed|s)?\s+`?{re.escape(n)}\b", prose, re.I) for n in names):
        return repro  # the report is about importing it
    drop = {ln for stmt, _ in unused
            for ln in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)}
    lines = repro.script.split("\n")
    script = "\n".join(ln for i, ln in enumerate(lines, start=1) if i not in drop)
    said = ", ".join(f"`{n}`" for n in names)
    note = f"The script imports {said} but never uses it: the bot ran it without that import."
    return replace(repro, script=script, reason=f"{repro.reason} {note}".strip())


def frameworks_of(script: str) -> tuple[str, ...]:
    """The frameworks ``script`` needs (:func:`bot.needs.detect_needs`: ``import onnx``, or TVM's
    importer for it, ``from tvm.relax.frontend.torch import ...``), sorted."""
    return tuple(n for n in detect_needs(script) if n.removeprefix("other:") in FRAMEWORKS)
