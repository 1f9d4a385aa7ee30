"""What a repro script needs to run: GPU devices and packages beyond TVM.

Pure: the script is parsed with ``ast`` (never run). Devices come from calls (``tvm.cuda()``,
``tvm.gpu()``, ``x.cuda()``, ``tvm.target.cuda()``), device and target strings (``"cuda"``,
``"cuda -arch=sm_80"``, ``"nvidia/geforce-rtx-3090"``, ``device="cuda:0"``, ``{"kind": "cuda"}``);
packages from imports and from TVM frontend calls (``relax.frontend.onnx.from_onnx(...)`` needs a
model from ``onnx``, so ``onnx``). The result picks the worker kind and appears in the comment and labels.
"""

from __future__ import annotations

import ast
import re
import sys

from bot import lazyre

GPU_DEVICES: tuple[str, ...] = ("cuda", "rocm", "vulkan", "metal", "opencl")

# Packages with a name of their own in ``needs``: the three frameworks most TVM reports use.
# Every other package is "other:<module>" (``other:keras``, ``other:onnxruntime``,
# ``other:tensorrt``), as the triagers' own records name them.
KNOWN_PACKAGES: dict[str, str] = {
    "torch": "torch",
    "torchvision": "torch",
    "torchaudio": "torch",
    "onnx": "onnx",
    "tensorflow": "tensorflow",
    "tf_keras": "other:keras",
    "paddlepaddle": "other:paddle",
}

# Installed together with apache-tvm: never a separate need.
TVM_ENV_MODULES = frozenset(
    {"tvm", "tvm_ffi", "numpy", "ml_dtypes", "typing_extensions", "__future__", "__main__",
     # once part of TVM itself (an old script's import of them is a stale API, not a need)
     "nnvm", "topi", "vta"}
)

# TVM frontends by module name (``tvm.relax.frontend.onnx``) and by converter name
# (``from_onnx``): calling one needs a model object from that framework, so the framework itself.
# ``frontend.nn`` (TVM's own model-definition API) is deliberately absent.
FRONTEND_MODULES: dict[str, str] = {
    "onnx": "onnx",
    "torch": "torch",
    "pytorch": "torch",
    "tflite": "other:tflite",
    "keras": "other:keras",
    "tensorflow": "tensorflow",
    "tensorflow2": "tensorflow",
    "paddlepaddle": "other:paddle",
    "mxnet": "other:mxnet",
}
FRONTEND_CONVERTERS: dict[str, str] = {
    "from_onnx": "onnx",
    "from_pytorch": "torch",
    "from_fx": "torch",
    "from_exported_program": "torch",
    "from_tflite": "other:tflite",
    "from_keras": "other:keras",
    "from_tensorflow": "tensorflow",
    "from_paddle": "other:paddle",
    "from_mxnet": "other:mxnet",
}

_DEVICE_CALLS = {
    "cuda": "cuda",
    "gpu": "cuda",
    "rocm": "rocm",
    "vulkan": "vulkan",
    "metal": "metal",
    "opencl": "opencl",
    "cl": "opencl",
}
# Target tags ("nvidia/jetson-agx-xavier", "apple/m1-gpu", ...) by vendor prefix.
_TAG_VENDORS = {"nvidia": "cuda", "amd": "rocm", "apple": "metal"}
# "cuda", "cuda:0", "cuda -arch=sm_80 -max_num_threads=1024", "opencl -device=mali", "gpu" ...
_TARGET_WORD_RE = lazyre.compile(
    r"^\s*(cuda|nvptx|rocm|vulkan|metal|opencl|gpu)(?::\d+)?(?:\s+-{1,2}[\w.-]+(?:=\S*)?)*\s*$"
)
_DEVICE_WORD = {"nvptx": "cuda", "gpu": "cuda"}


def detect_needs(script: str) -> tuple[str, ...]:
    """Sorted, deduplicated needs of ``script``: device names and package names."""
    try:
        tree = ast.parse(script)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _needs_from_text(script)
    needs: set[str] = set()
    # ``tvm.runtime.enabled("cuda")`` asks whether a device is there; it does not want one.
    queried = {
        id(arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _call_name(node) in _QUERY_CALLS
        for arg in node.args
    }
    for node in ast.walk(tree):
        if id(node) in queried:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                _add_module(needs, alias.name)
                _add_frontend_path(needs, alias.name.split("."))
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                _add_module(needs, node.module)
                path = node.module.split(".")
                _add_frontend_path(needs, path)
                if "frontend" in path:
                    for alias in node.names:
                        _add_frontend_path(needs, [*path, alias.name])
        elif isinstance(node, ast.Attribute):
            _add_frontend_path(needs, _attr_path(node))
        elif isinstance(node, ast.Call):
            _add_call_device(needs, node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            dev = device_of_string(node.value)
            if dev:
                needs.add(dev)
    return tuple(sorted(needs))


def device_of_string(s: str) -> str | None:
    """The GPU device a target / device string names, if any: ``"cuda -arch=sm_80"`` -> cuda."""
    if len(s) > 200 or "\n" in s:
        return None
    m = _TARGET_WORD_RE.match(s)
    if m:
        word = m.group(1)
        return _DEVICE_WORD.get(word, word)
    m = re.match(r"^\s*(nvidia|amd|apple)/[\w.-]+\s*$", s)
    if m:
        return _TAG_VENDORS[m.group(1)]
    return None


def _add_module(needs: set[str], dotted: str) -> None:
    top = dotted.split(".")[0]
    if not top or top in TVM_ENV_MODULES or top in sys.stdlib_module_names:
        return
    needs.add(KNOWN_PACKAGES.get(top, f"other:{top}"))


def _add_frontend_path(needs: set[str], path: list[str]) -> None:
    """``tvm.relax.frontend.onnx``, ``relay.frontend.from_onnx``, ``frontend.torch.from_fx``."""
    if "frontend" not in path[:-1]:
        return
    after = path[path.index("frontend") + 1 :]
    if not after:
        return
    pkg = FRONTEND_MODULES.get(after[0]) or FRONTEND_CONVERTERS.get(after[0])
    if pkg is None and len(after) > 1:
        pkg = FRONTEND_CONVERTERS.get(after[1]) if after[0] not in ("nn",) else None
    if pkg:
        needs.add(pkg)


def _attr_path(node: ast.Attribute) -> list[str]:
    """The names of an attribute chain, outermost last; calls in between are skipped over
    (``relax.frontend.onnx.from_onnx(m).show`` -> [..., "frontend", "onnx", "from_onnx", "show"])."""
    parts: list[str] = []
    cur: ast.expr = node
    while True:
        if isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        elif isinstance(cur, ast.Call):
            cur = cur.func
        elif isinstance(cur, ast.Name):
            parts.append(cur.id)
            break
        else:
            break
    return list(reversed(parts))


def _add_call_device(needs: set[str], call: ast.Call) -> None:
    func = call.func
    if isinstance(func, ast.Attribute):
        name = func.attr
        owner = _dotted(func.value)
        if name in _DEVICE_CALLS and (
            owner in ("tvm", "tvm.runtime", "tvm.target", "tvm.device", "tvm.runtime.device")
            or (name == "cuda" and not call.args[1:])  # torch's x.cuda(), model.cuda(0)
        ):
            needs.add(_DEVICE_CALLS[name])
        if name in ("device", "Device") and call.args:
            first = call.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                dev = device_of_string(first.value)
                if dev:
                    needs.add(dev)
    for kw in call.keywords:
        if kw.arg == "kind" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            dev = device_of_string(kw.value.value)
            if dev:
                needs.add(dev)


_QUERY_CALLS = frozenset({"enabled", "device_enabled", "is_available", "has_gpu", "exist"})


def _call_name(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    return f.id if isinstance(f, ast.Name) else ""


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _needs_from_text(script: str) -> tuple[str, ...]:
    """Best effort for a script that does not parse (it will fail with a SyntaxError anyway)."""
    needs: set[str] = set()
    for m in re.finditer(r"^\s*(?:import|from)\s+([A-Za-z_][\w.]*)", script, re.M):
        _add_module(needs, m.group(1))
    for m in re.finditer(r"\bfrontend((?:\.\w+){1,2})", script):
        _add_frontend_path(needs, ["frontend", *m.group(1).strip(".").split(".")])
    if re.search(r"\btvm\.(?:cuda|gpu)\(|[\"']cuda[\"' :]|\.cuda\(", script):
        needs.add("cuda")
    return tuple(sorted(needs))


# ---------------------------------------------------------------------------------------------
# Needs named in prose (used only when the issue has no runnable script)

# Frameworks by how reporters write their names.
_PROSE_PACKAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (lazyre.compile(r"\b(?:py)?torch(?:vision|script)?\b", re.I), "torch"),
    (lazyre.compile(r"(?i:\bonnx\s*runtime\b)|\bORT\b"), "other:onnxruntime"),
    (lazyre.compile(r"\bonnx\b", re.I), "onnx"),
    (lazyre.compile(r"\btensorflow\b|\btf\.keras\b", re.I), "tensorflow"),
    (lazyre.compile(r"\btflite\b|\btf ?lite\b", re.I), "other:tflite"),
    (lazyre.compile(r"\bkeras\b", re.I), "other:keras"),
    (lazyre.compile(r"\bpaddle(?:paddle)?\b", re.I), "other:paddle"),
    (lazyre.compile(r"\bmxnet\b|\bgluon(?:cv)?\b", re.I), "other:mxnet"),
    (lazyre.compile(r"\btensor[ _-]?rt\b", re.I), "other:tensorrt"),
    # mlc_llm used (not the project's name, which its issue template carries).
    (lazyre.compile(r"(?<![A-Za-z0-9_])mlc_(?:llm|chat)(?:_build)?(?![A-Za-z0-9])"
                r"|\bmlc-llm/(?:cpp|python|build\.py)\b"),
     "other:mlc_llm"),
)
# A device the reproduction itself uses: build flags, targets, device calls (not a CUDA version
# listed under Environment, which many CPU bugs mention too).
_PROSE_DEVICES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (
        lazyre.compile(
            rf"\bUSE_{dev.upper()}\s*(?:=|:)?\s*(?:ON|1|TRUE)\b"
            rf"|\btarget\s*[=:]\s*['\"]?{dev}\b|\b(?:with|on|for|using) (?:the |a )?{dev} target\b"
            rf"|\w_{dev}\.(?:py|html)\b"
            rf"|\btvm\.{dev}\(|['\"]{dev}(?:\s+-[^'\"]*)?['\"]",
            re.I,
        ),
        dev,
    )
    for dev in GPU_DEVICES
)


def needs_from_text(text: str) -> tuple[str, ...]:
    """What an issue without a runnable script says its reproduction needs: the frameworks it
    names and the devices its build flags, targets or device calls use."""
    found = {name for rx, name in _PROSE_PACKAGES if rx.search(text)}
    found |= {dev for rx, dev in _PROSE_DEVICES if rx.search(text)}
    return tuple(sorted(found))
