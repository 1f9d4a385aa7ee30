"""The warm start's hook: runs as ``sitecustomize`` inside a prestarted sandbox (tasks/warm.py).

Trusted code with the script's own privileges, shipped as a zip on an inherited memfd
(``PYTHONPATH=/proc/self/fd/N``). In order:

1. hides itself (its ``sys.path`` entry, its importer cache entries, ``PYTHONPATH``) and runs
   the interpreter's real ``sitecustomize`` first, if it has one (as ``site`` would have);
2. reads the imports to do from the channel (``LEN\\n`` then ``module name,name`` lines:
   the script's leading import statements, ``import tvm`` or what ``bot.warmstart`` guessed;
   on EOF it exits at once) and does them in their order, as they would (``sys.path[0]`` = the
   scratch, the ``__main__`` file name set), with any warning attributed to this frame turned
   into an error (the script's own line would have been named: not equivalent);
3. says ``1`` (ready) or ``0`` (not equivalent: the bot runs the script cold) on the channel;
4. blocks for one message ``LEN\\nSCRIPT ARG\\0ARG\\0...``, writes ``repro.py``, sets
   ``sys.argv[1:]``, says ``2`` (or ``0`` if it could not), closes its fds and leaves
   ``sys.modules`` (``ImportError`` named ``sitecustomize``, which ``site`` ignores silently).
   Python then runs ``repro.py`` as ``__main__``, with no frame of this hook on the stack.

On EOF without a message (the bot chose the cold path) it exits at once. Only modules the
interpreter has already imported at start are used (``os``, ``sys``, the frozen importlib,
``_warnings``), so the script finds ``sys.modules`` as a cold start leaves it (plus tvm's).
``_CHANNEL_FD`` is set by tasks/warm.py when it ships this file.
"""

import os
import sys

_CHANNEL_FD = -1
_SCRIPT = "repro.py"


def _say(byte: bytes) -> None:
    try:  # noqa: SIM105 - contextlib is not imported at start: the hook imports nothing new
        os.write(_CHANNEL_FD, byte)
    except OSError:
        pass


def _read_message() -> bytes:
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(_CHANNEL_FD, 1 << 16)
        except OSError:
            return b""
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _read_exact(n: int) -> bytes:
    data = b""
    while len(data) < n:
        try:
            chunk = os.read(_CHANNEL_FD, n - len(data))
        except OSError:
            return b""
        if not chunk:
            return b""
        data += chunk
    return data


def _read_preload() -> tuple:
    """The imports to do, ``((module, (name, ...)), ...)``; None on EOF (the bot's cold path)."""
    head = b""
    while not head.endswith(b"\n"):
        byte = _read_exact(1)
        if not byte or len(head) > 12:
            return None  # type: ignore[return-value]
        head += byte
    try:
        size = int(head)
    except ValueError:
        return None  # type: ignore[return-value]
    body = _read_exact(size)
    if len(body) != size:
        return None  # type: ignore[return-value]
    out = []
    for line in body.decode().split("\n") if body else ():
        module, _, names = line.partition(" ")
        out.append((module, tuple(names.split(",")) if names else ()))
    return tuple(out)


def _find(name: str, path: list) -> object:
    for finder in sys.meta_path:
        if getattr(finder, "__name__", "") == "PathFinder":
            return finder.find_spec(name, path)
    return None


def _hide(entry: str) -> None:
    while entry in sys.path:
        sys.path.remove(entry)
    sys.path_importer_cache.pop(entry, None)
    zipimport = sys.modules.get("zipimport")
    cache = getattr(zipimport, "_zip_directory_cache", None)
    if isinstance(cache, dict):
        cache.pop(entry, None)
    os.environ.pop("PYTHONPATH", None)


def _real_sitecustomize(path: list) -> bool:
    """Run the interpreter's own sitecustomize, as site would have; False if it failed."""
    spec = _find("sitecustomize", path)
    if spec is None:
        return True
    bootstrap = sys.modules["_frozen_importlib"]
    module = bootstrap.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[attr-defined]
    except BaseException:
        return False
    return True


def _preload(scratch: str, imports: tuple) -> bool:
    import _warnings  # builtin, imported at start

    main = sys.modules["__main__"]
    main.__file__ = os.path.join(scratch, _SCRIPT)
    main.__cached__ = None  # type: ignore[attr-defined]
    entry = ("error", None, Warning, "sitecustomize", 0)
    _warnings.filters.insert(0, entry)
    sys.path.insert(0, scratch)
    ok = True
    try:
        for module, fromlist in imports:
            # as the script's import statement does it, minus binding names in __main__
            found = __import__(module, main.__dict__, None, fromlist or None, 0)
            for name in fromlist:
                if name != "*" and not hasattr(found, name) and \
                        f"{found.__name__}.{name}" not in sys.modules:
                    raise ImportError(name)
    except BaseException:
        ok = False
    finally:
        for filters in {id(f): f for f in (_warnings.filters, getattr(
                sys.modules.get("warnings"), "filters", None)) if isinstance(f, list)}.values():
            if entry in filters:
                filters.remove(entry)
        if sys.path and sys.path[0] == scratch:
            del sys.path[0]
    return ok


def _run_file(data: bytes) -> None:
    head, _, rest = data.partition(b"\n")
    size = int(head)
    script, args = rest[:size], rest[size:]
    fd = os.open(_SCRIPT, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        os.fchmod(fd, 0o644)
        view = memoryview(script)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    argv = [os.fsdecode(a) for a in args.split(b"\0")[:-1]]
    sys.argv[1:] = argv
    orig = getattr(sys, "orig_argv", None)
    if isinstance(orig, list):
        orig.extend(argv)


def _main() -> bool:
    """True when the interpreter's real sitecustomize now stands in ``sys.modules``."""
    hook = sys.modules.get(__name__)
    entry = os.path.dirname(os.path.abspath(__file__))
    _hide(entry)
    ok = _real_sitecustomize([p for p in sys.path if p != entry])
    real = sys.modules.get(__name__) is not hook
    if ok:
        user = getattr(sys.modules.get("site"), "ENABLE_USER_SITE", False)
        if user and _find("usercustomize", sys.path) is not None:
            ok = False  # it would run before the script's import: not equivalent
    imports = _read_preload()
    if imports is None:
        os._exit(0)  # the bot chose the cold path
    ok = ok and _preload(os.getcwd(), imports)
    _say(b"1" if ok else b"0")
    data = _read_message() if ok else b""
    try:
        if not data:
            raise EOFError  # the bot chose the cold path
        _run_file(data)
    except BaseException:
        _say(b"0")  # (a scratch that cannot take the script...): the bot runs it cold
        os._exit(0)
    _say(b"2")  # the script runs now
    try:  # noqa: SIM105
        os.close(_CHANNEL_FD)
    except OSError:
        pass
    try:  # noqa: SIM105
        os.close(int(os.path.basename(entry)))  # the memfd holding this hook
    except (OSError, ValueError):
        pass
    return real


# (imported as tasks.warm_hook, unshipped: _CHANNEL_FD is -1 and nothing runs)
if _CHANNEL_FD >= 0 and not _main():
    raise ImportError(name="sitecustomize")  # site ignores exactly this, silently
