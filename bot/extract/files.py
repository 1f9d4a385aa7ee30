from __future__ import annotations

import ast

from bot.extract.patterns import FILE_ARG_RE, FILE_LITERAL_RE
from bot.extract.pysyntax import call_tail, parse_py
from bot.models import Repro
from bot.records import replace

# Calls that read a file named by their first argument.
READ_CALLS = frozenset({"load", "load_model", "open", "fromfile", "loadtxt", "genfromtxt",
                         "read_csv", "imread", "load_module", "load_param_dict", "from_file",
                         "parse_from_file", "ParseFromString", "load_json", "read", "Interpreter",
                         "load_checkpoint", "load_state_dict_from_file", "load_library",
                         "load_weights", "safe_open", "load_file", "read_text", "read_bytes",
                         "TFLiteModel", "GetRootAsModel"})


# Calls that write one (a file the script makes itself is not missing).
WRITE_CALLS = frozenset({"save", "save_model", "export", "dump", "savez", "savez_compressed",
                          "tofile", "savetxt", "export_library", "write", "write_text",
                          "write_bytes", "save_json", "to_csv", "imwrite", "save_param_dict",
                          "save_weights", "save_pretrained"})


def missing_files(script: str) -> list[str]:
    """Local files the script reads (``onnx.load("model.onnx")``, ``np.load("x.npy")``) that it
    does not write itself and that are not downloaded by it."""
    if not FILE_LITERAL_RE.search(script):
        return []  # no quoted file name at all: no parse needed
    tree = parse_py(script)
    if tree is None:
        return []
    read: list[str] = []
    written: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        tail = call_tail(node)
        literals = [a.value for a in (*node.args, *(k.value for k in node.keywords))
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if tail == "open" and any(m in lit for lit in literals[1:2] for m in "wax"):
            written.update(literals[:1])
            continue
        if tail in WRITE_CALLS or tail.startswith(("save", "export", "write", "download")):
            written.update(literals)
            continue
        if tail in READ_CALLS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                path = first.value.strip()
                if FILE_ARG_RE.match(path) and path not in read:
                    read.append(path)
    return [p for p in read if p not in written]


def with_file_note(repro: Repro) -> Repro:
    """Note in ``Repro.reason`` the local files the script reads but the issue does not hold
    (the script is still the repro; running it will likely stop at the missing file)."""
    if not repro.found or repro.reason:
        return repro
    missing = missing_files(repro.script)
    if not missing:
        return repro
    names = ", ".join(f"`{m}`" for m in missing[:3])
    return replace(repro, reason=(
        f"The script reads {names}, which {'is' if len(missing) == 1 else 'are'} not in the "
        "issue; the run will likely stop there. Attaching the file, or building it in the "
        "script, lets the bot get further."
    ))
