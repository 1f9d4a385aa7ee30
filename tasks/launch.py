"""A bwrap run's launch as plain data (a recipe), the one function that makes it real, and the
early start of ``reprobot triage`` from the last recipe.

``BwrapSandbox.prepare`` describes each run as a recipe: the launcher's command line with
placeholders (``ph``) for what every run makes anew (its data fds, status pipe, scratch
directory, cgroup, leased uid), the bytes behind the data fds and the cgroup's limits. ``make``
creates those things and fills the placeholders in; every bwrap run is made by it.

``reprobot triage`` keeps the recipe of its last warm start in its cache directory. Its console
entry (``bot/entry.py``) calls ``quick_start`` before anything else is imported: when a recipe
is there (owned by this user, written by no one else), the sandbox starts from it about 50 ms
sooner than the bot could prepare one. The hook inside waits for its imports to be named
(``tasks.warm``). The bot then computes the recipe as usual and adopts this run only if the
two are equal (``Early.take``); otherwise it kills it, unused, before anything was sent to
it, starts its own and saves its recipe for the next time.

Imports nothing beyond the interpreter's own start-up modules but ``marshal`` (and builtin
ones: ``_signal``, ``_socket``): this runs before the bot's modules load.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing's, without importing typing: see bot/records.py
if TYPE_CHECKING:
    from typing import Any

RECIPE_VERSION = 2
RECIPE_FILE = "launch-recipe"
# The placeholders a recipe's strings may hold (``ph(name)``): "status" (the status pipe's
# write end), "blob:NAME" (a memfd holding recipe["blobs"][NAME]), "scratch" (the run's own
# empty directory), "join:CONTROLLER" (the file a process writes 0 to, to join the run's
# cgroup), "uid" (a leased uid) and any fd the caller makes itself ("hook").
_MARK = "\0"  # never in a command-line argument: a placeholder is "\0name\0"

# What the runner's Popen gets (tasks.runner._Run): the same for an early start.
HOST_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def ph(name: str) -> str:
    return f"{_MARK}{name}{_MARK}"


def fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each placeholder replaced by its value; KeyError for an unknown one."""
    if _MARK not in text:
        return text
    parts = text.split(_MARK)
    if len(parts) % 2 == 0:
        raise ValueError(f"an unclosed placeholder in {text!r}")
    return "".join(p if i % 2 == 0 else values[p] for i, p in enumerate(parts))


class Made:
    """What ``make`` created for one run; ``release`` undoes all of it (idempotent)."""

    def __init__(self) -> None:
        self.argv: list[str] = []
        self.pass_fds: list[int] = []  # our copies: closed once the process has started
        self.given_fds: tuple[int, ...] = ()  # passed too, but the caller's to close
        self.status_r = -1
        self.scratch = ""
        self.cgroup_version = 0
        self.cgroup_dirs: dict[str, str] = {}

    def close_passed(self) -> None:
        close_quietly(*self.pass_fds)
        self.pass_fds = []

    def release(self) -> None:
        self.close_passed()
        close_quietly(self.status_r)
        self.status_r = -1
        for d in self.cgroup_dirs.values():
            _rmdir(d)
        self.cgroup_dirs = {}
        if self.scratch:
            _rmdir(self.scratch)
            self.scratch = ""


def _rmdir(path: str) -> None:
    for _ in range(100):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            # a cgroup is busy for a moment after its last process exits
            import time

            time.sleep(0.01)


def close_quietly(*fds: int) -> None:
    """Close each fd; one never made (-1) or already closed is no error. (Not
    ``contextlib.suppress``: contextlib is not imported this early.)"""
    for fd in fds:
        if fd >= 0:
            try:  # noqa: SIM105
                os.close(fd)
            except OSError:
                pass


def data_fd(data: bytes, name: str = "data") -> int:
    """A readable fd at offset 0 holding ``data`` (a memfd: no file on disk)."""
    fd = os.memfd_create(f"reprobot-{name}", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def make_cgroup(plan: dict[str, Any]) -> dict[str, str]:
    """Create one cgroup as ``plan`` says (``tasks.sandbox.cgroup_plan``): {controller: dir}.
    OSError when it cannot (what was made is removed)."""
    name = f"reprobot-{os.getpid()}-{os.urandom(6).hex()}"
    dirs: dict[str, str] = {}
    try:
        for controller, parent in plan["parents"].items():
            d = os.path.join(parent, name)
            os.mkdir(d)
            dirs[controller] = d
        for controller, file, value, required in plan["writes"]:
            try:
                with open(os.path.join(dirs[controller], file), "w") as f:
                    f.write(value)
            except OSError:
                if required:
                    raise
    except BaseException:
        for d in dirs.values():
            _rmdir(d)
        raise
    return dirs


def make(recipe: dict[str, Any], given: dict[str, int] | None = None, *,
         uid: int | None = None) -> Made:
    """Create what ``recipe`` names and fill its command line in. ``given``: fds the caller
    made (placeholder -> fd; passed to the run, still the caller's to close); ``uid``: the
    leased uid when the recipe has that placeholder. OSError when something cannot be made
    (everything made so far is released)."""
    made = Made()
    values: dict[str, str] = {}
    try:
        r, w = os.pipe()
        made.status_r = r
        made.pass_fds.append(w)
        values["status"] = str(w)
        for name, data in sorted(recipe["blobs"].items()):
            fd = data_fd(data, name.rpartition("/")[2] or name)
            made.pass_fds.append(fd)
            values[f"blob:{name}"] = str(fd)
        for name, fd in (given or {}).items():
            values[name] = str(fd)
        if uid is not None:
            values["uid"] = str(int(uid))
        parent, prefix = recipe["scratch"]
        for _ in range(100):
            path = os.path.join(parent, f"{prefix}{os.getpid()}-{os.urandom(5).hex()}")
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            made.scratch = path
            break
        else:
            raise FileExistsError(f"no free scratch directory name under {parent}")
        os.chmod(made.scratch, 0o755)  # a leased uid must reach it to mount its tmpfs there
        values["scratch"] = made.scratch
        cg = recipe["cgroup"]
        if cg is not None:
            made.cgroup_version = cg["version"]
            made.cgroup_dirs = make_cgroup(cg)
            for controller, d in made.cgroup_dirs.items():
                values[f"join:{controller}"] = os.path.join(d, cg["join"])
        made.argv = [fill(a, values) for a in recipe["argv"]]
    except BaseException:
        made.release()
        raise
    made.given_fds = tuple((given or {}).values())
    return made


def spawn(made: Made, recipe: dict[str, Any]) -> Spawned:
    """Start the launcher as the runner starts every run (``tasks.runner._Run``): its own
    session, stdin from /dev/null, stdout and stderr piped, no fd but the passed ones, the
    recipe's environment, cwd /, SIGPIPE and SIGXFSZ at their defaults. With
    ``os.posix_spawn``: importing ``subprocess`` would cost more than the rest of the early
    start. OSError when it cannot start."""
    import _signal

    passed = (*made.pass_fds, *made.given_fds)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    here = -1
    try:
        if min(out_r, out_w, err_r, err_w) < 3:  # (started with a std stream closed)
            raise OSError("a standard stream of the bot is closed")
        for fd in passed:
            os.set_inheritable(fd, True)
        _inherit_only(passed)
        here = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        os.chdir("/")  # (posix_spawn has no cwd; nothing else runs in this process yet)
        try:
            pid = os.posix_spawn(
                made.argv[0], made.argv, dict(recipe["env"]),
                file_actions=[(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                              (os.POSIX_SPAWN_DUP2, out_w, 1),
                              (os.POSIX_SPAWN_DUP2, err_w, 2)],
                setsid=True, setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ),
            )
        finally:
            os.fchdir(here)
    except BaseException:
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    finally:
        close_quietly(out_w, err_w, here)
    return Spawned(pid, made.argv, out_r, err_r)


def _inherit_only(passed: tuple[int, ...]) -> None:
    """Mark every fd of ours but 0-2 and ``passed`` close-on-exec (what ``close_fds`` does for
    a Popen child): fds the bot itself inherited must not reach the sandbox."""
    keep = set(passed)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:  # noqa: SIM105
                os.set_inheritable(fd, False)
            except OSError:  # (the listing's own fd, closed by now)
                pass


class Spawned:
    """What the runner uses of a ``subprocess.Popen``, for the process ``spawn`` started."""

    def __init__(self, pid: int, args: list[str], out: int, err: int) -> None:
        self.pid, self.args = pid, args
        self.returncode: int | None = None
        self.stdin = None
        self.stdout = open(out, "rb", buffering=0)  # noqa: SIM115 - closed by the runner
        self.stderr = open(err, "rb", buffering=0)  # noqa: SIM115

    def _reap(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # (reaped by someone else: as Popen says then)
            self.returncode = 0
            return
        if pid == self.pid:
            self.returncode = os.waitstatus_to_exitcode(status)

    def poll(self) -> int | None:
        if self.returncode is None:
            self._reap(os.WNOHANG)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while self.returncode is None:
            if deadline is None:
                self._reap(0)
                continue
            if self.poll() is not None:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                import subprocess

                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.05)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            import _signal

            try:  # noqa: SIM105
                os.kill(self.pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass


# --------------------------------------------------------------------------- the early start


def recipe_path(environ: dict[str, str] | os._Environ[str]) -> str:
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "reprobot", RECIPE_FILE)


def normal(recipe: dict[str, Any]) -> dict[str, Any]:
    """``recipe`` as it reads back from its file (tuples become lists...), to compare."""
    out: dict[str, Any] = marshal.loads(marshal.dumps(recipe))
    return out


def _trusted(path: str, st: os.stat_result) -> bool:
    """Only a file of our own that no one else can write, in such a directory, is run."""
    import stat

    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return False
    try:
        d = os.stat(os.path.dirname(path))
    except OSError:
        return False
    return d.st_uid == os.geteuid() and not d.st_mode & 0o022


def load(path: str) -> dict[str, Any] | None:
    """The saved recipe, or None (none, unreadable, foreign, another version)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not _trusted(path, os.fstat(fd)):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(1 << 20)
        recipe = marshal.loads(data)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        os.close(fd)
    if not isinstance(recipe, dict) or recipe.get("v") != RECIPE_VERSION:
        return None
    return recipe


def save(path: str, recipe: dict[str, Any]) -> None:
    """Write ``recipe`` for the next early start (atomically, 0600; errors ignored: the next
    triage only starts as it would without one)."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(marshal.dumps(recipe))
        os.replace(tmp, path)
    except OSError:
        pass


class Early:
    """The run ``quick_start`` started (or None), to be taken by the bot or discarded."""

    def __init__(self, path: str, recipe: dict[str, Any] | None = None) -> None:
        self.path = path
        self.recipe = recipe
        self.made: Made | None = None
        self.proc: Spawned | None = None
        self.channel = -1  # our end of the hook's socket pair
        self.started_at = 0.0  # time.monotonic() of the spawn
        self.taken = False

    def take(self, recipe: dict[str, Any]) -> tuple[Made, Spawned, int, float] | None:
        """(what was made, the process, our channel fd, spawn time) when this run was started
        from exactly ``recipe``; else None (it is discarded, and ``recipe`` saved)."""
        fresh = normal(recipe)
        if self.proc is None or self.made is None or self.recipe != fresh or self.taken:
            self.discard()
            if self.recipe != fresh:
                save(self.path, fresh)
            return None
        self.taken = True
        return self.made, self.proc, self.channel, self.started_at

    def discard(self, *, forget: bool = False) -> None:
        """Kill the unused run (whole tree) and release what it held; nothing was sent to it.
        ``forget``: also remove the recipe (this command starts no warm run: none to save)."""
        if forget and self.recipe is not None:
            try:  # noqa: SIM105
                os.unlink(self.path)
            except OSError:
                pass
            self.recipe = None
        if self.taken or self.proc is None:
            return
        self.taken = True
        assert self.made is not None
        kill_unused(self.made, self.proc, self.channel)
        self.channel = -1


def kill_unused(made: Made, proc: Spawned, channel: int = -1) -> None:
    """Kill a started run (its whole tree) that will not be used, and release what it held:
    an unused early start, or one taken whose adoption then failed."""
    close_quietly(channel)
    for d in made.cgroup_dirs.values():  # first: bwrap, still alive, reaps them
        _kill_cgroup(d, spare=proc.pid)
    import _signal

    try:  # noqa: SIM105
        os.killpg(proc.pid, _signal.SIGKILL)
    except OSError:
        pass
    proc.wait()
    for f in (proc.stdout, proc.stderr):
        if f is not None:
            f.close()
    made.release()


def _kill_cgroup(d: str, spare: int) -> None:
    for _ in range(50):
        try:
            with open(os.path.join(d, "cgroup.procs")) as f:
                pids = [int(x) for x in f.read().split() if int(x) != spare]
        except (OSError, ValueError):
            return
        if not pids:
            return
        import _signal
        import time

        for pid in pids:
            try:  # noqa: SIM105
                os.kill(pid, _signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)


# Options after which `reprobot triage` starts no warm run (or not from this cache).
_NO_EARLY = frozenset({"--no-warm", "--no-cache", "--matrix", "--builds", "-h", "--help"})


def quick_start(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> Early | None:
    """For ``reprobot triage ...``: start the last triage's warm run from its saved recipe
    (see the module docstring). None for other commands; an ``Early`` with no run when there
    is no usable recipe (the bot saves one). Never raises: anything that fails here is left
    to the bot's own start, which reports it."""
    if len(argv) < 2 or argv[0] != "triage" or any(
            a in _NO_EARLY or a.startswith("--builds=") for a in argv):
        return None
    early = Early(recipe_path(environ))
    try:
        early.recipe = load(early.path)
        recipe = early.recipe
        if recipe is None or recipe.get("lease") or not recipe.get("warm"):
            return early
        import time

        from tasks.warm import hook_zip

        ours, theirs = _socketpair()
        hook = -1
        try:
            hook = data_fd(hook_zip(theirs), "warm-hook")
            made = make(recipe, {"hook": hook, "channel": theirs})
            try:
                early.started_at = time.monotonic()
                proc = spawn(made, recipe)
            except BaseException:
                made.release()
                raise
            made.close_passed()
        except BaseException:
            os.close(ours)
            raise
        finally:
            close_quietly(theirs, hook)
        early.made, early.proc, early.channel = made, proc, ours
    except Exception:  # noqa: BLE001 - a process boundary: the bot's own start follows
        pass
    return early


def _socketpair() -> tuple[int, int]:
    import _socket

    a, b = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    return a.detach(), b.detach()


if __name__ == "__main__":  # pragma: no cover
    sys.exit("tasks.launch is a module")
