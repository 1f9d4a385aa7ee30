"""TVM builds as plain data: what a build is, how one is declared, which comes first, which is default.

A **build** is an immutable TVM environment on a worker's disk (a virtualenv with one TVM) plus
its identity. ``tasks.builder`` makes them (pip, git, CMake, the smoke test, the registry on disk);
everything here is pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from bot import lazyre
from bot.errors import ConfigError
from bot.records import field, record

TYPE_CHECKING = False  # typing's, without importing typing (5 ms): see bot/records.py
if TYPE_CHECKING:
    from typing import Any

KIND_RELEASE = "release"
KIND_SOURCE = "source"
KIND_ADHOC = "ad-hoc"  # --tvm-python: an interpreter the registry does not know
KINDS = (KIND_RELEASE, KIND_SOURCE)

STATUS_READY = "ready"
STATUS_BUILDING = "building"
STATUS_FAILED = "failed"
STATUSES = (STATUS_READY, STATUS_BUILDING, STATUS_FAILED)

MAIN = "main"
DEFAULT_GIT = "https://github.com/apache/tvm"
DEFAULT_REF = "main"
DEFAULT_UPDATE_EVERY_S = 30 * 60
TVM_COMMIT_URL = "https://github.com/apache/tvm/commit/{sha}"

# Pins a release needs to import at all (added unless the spec pins the package itself).
RELEASE_PINS: Mapping[str, tuple[str, ...]] = {
    "0.25.0.post1": ("apache-tvm-ffi==0.1.12",),
}

_NAME_RE = lazyre.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
_DEFINE_KEY_RE = lazyre.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHA_RE = lazyre.compile(r"^[0-9a-f]{7,40}$")
_GITHUB_RE = lazyre.compile(r"^(?:https?://|git@|ssh://git@)github\.com[:/]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")
_TVM_PIN_RE = lazyre.compile(r"^apache-tvm\s*==\s*([\w.+!-]+)$", re.IGNORECASE)
# Keys of the ``builds:`` config section that are settings, not build names.
SETTINGS_KEYS = ("dir", "default", "update_every")


@record
class BuildInfo:
    """One build as ``builds list`` shows it, or one install of it (``tasks.builder``)."""

    name: str
    kind: str
    version: str = ""
    commit: str = ""  # full sha from git (source) or the wheel's libinfo (release), "" if unknown
    built_at: str = ""  # ISO-8601 UTC
    status: str = STATUS_READY  # of the build's LAST attempt
    python: str = ""  # interpreter of the install (absolute, resolved)
    error: str = ""  # last failure: a line, then the tail of its log
    flags: tuple[tuple[str, str], ...] = ()
    source: str = ""  # "pip: apache-tvm==0.26.0 numpy" | "git: URL@REF"
    install_id: str = ""

    @property
    def usable(self) -> bool:
        """It has an installed, smoke-tested environment (whatever its last attempt did)."""
        return bool(self.python)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "version": self.version,
            "commit": self.commit,
            "built_at": self.built_at,
            "status": self.status,
            "python": self.python,
            "error": self.error,
            "flags": dict(self.flags),
            "source": self.source,
            "install_id": self.install_id,
        }

    def ref(self) -> dict[str, str]:
        """What a triage says about the build it ran on (``--json`` "build")."""
        return {"name": self.name, "version": self.version, "commit": self.commit,
                "kind": self.kind}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> BuildInfo:
        flags = d.get("flags") or {}
        return cls(
            name=str(d.get("name", "")),
            kind=str(d.get("kind", "")),
            version=str(d.get("version", "") or ""),
            commit=str(d.get("commit", "") or ""),
            built_at=str(d.get("built_at", "") or ""),
            status=str(d.get("status", STATUS_READY) or STATUS_READY),
            python=str(d.get("python", "") or ""),
            error=str(d.get("error", "") or ""),
            flags=tuple((str(k), str(v)) for k, v in dict(flags).items()),
            source=str(d.get("source", "") or ""),
            install_id=str(d.get("install_id", "") or ""),
        )


@record
class BuildSpec:
    """How to make a build: pip specs (release) or a git repository and ref (source)."""

    name: str
    kind: str
    pip: tuple[str, ...] = ()
    git: str = ""
    ref: str = DEFAULT_REF
    cmake_defines: tuple[tuple[str, str], ...] = ()
    smoke: str = ""  # path of a smoke script; "" = the default (import tvm, an llvm kernel)

    @property
    def source(self) -> str:
        if self.kind == KIND_RELEASE:
            return "pip: " + " ".join(self.pip)
        return f"git: {self.git}@{self.ref}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "pip": list(self.pip), "git": self.git,
                "ref": self.ref, "cmake_defines": dict(self.cmake_defines), "smoke": self.smoke}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> BuildSpec:
        return make_spec(
            str(d.get("name", "")),
            pip=[str(x) for x in d.get("pip") or ()],
            git=str(d.get("git") or ""),
            ref=str(d.get("ref") or ""),
            cmake_defines=[f"{k}={v}" for k, v in dict(d.get("cmake_defines") or {}).items()],
            smoke=str(d.get("smoke") or ""),
        )


@record
class BuildsConfig:
    """The ``builds:`` section of reprobot.yml."""

    dir: str = ""  # "" = ~/.cache/reprobot/builds (resolved by load_config)
    default: str = ""  # "" = main if it exists, else the newest release
    update_every_s: int = DEFAULT_UPDATE_EVERY_S
    declared: tuple[BuildSpec, ...] = field(default_factory=tuple)


def check_name(name: str) -> str:
    if not _NAME_RE.match(name or "") or name in (".", ".."):
        raise ConfigError(
            f"build name {name!r} is not valid: use letters, digits and . _ + - "
            "(at most 64, starting with a letter or digit)"
        )
    return name


def parse_define(text: str) -> tuple[str, str]:
    """``USE_LLVM=ON`` -> ("USE_LLVM", "ON")."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not _DEFINE_KEY_RE.match(key):
        raise ConfigError(f"--cmake-define takes KEY=VALUE (got {text!r})")
    return key, value.strip()


def make_spec(
    name: str,
    *,
    pip: Iterable[str] = (),
    git: str = "",
    ref: str = "",
    cmake_defines: Iterable[str] = (),
    smoke: str = "",
) -> BuildSpec:
    """A checked BuildSpec from what ``builds add`` (or the config) gives; ConfigError says why not."""
    check_name(name)
    pips = tuple(s.strip() for s in pip if s.strip())
    defines = tuple(parse_define(d) for d in cmake_defines)
    if pips and git:
        raise ConfigError(f"build {name!r}: give either pip specs or a git URL, not both")
    if not pips and not git:
        raise ConfigError(f"build {name!r}: give --pip SPEC (a release) or --git URL (a source build)")
    if pips:
        if defines or ref:
            raise ConfigError(f"build {name!r}: --ref and --cmake-define are for --git builds only")
        for s in pips:
            if s.startswith("-"):
                raise ConfigError(f"build {name!r}: pip spec {s!r} looks like an option")
        return BuildSpec(name=name, kind=KIND_RELEASE, pip=with_pins(pips), ref="", smoke=smoke)
    if git.startswith("-") or ref.startswith("-"):
        raise ConfigError(f"build {name!r}: git URL and ref must not start with '-'")
    return BuildSpec(name=name, kind=KIND_SOURCE, git=git, ref=ref or DEFAULT_REF,
                     cmake_defines=defines, smoke=smoke)


def with_pins(specs: tuple[str, ...]) -> tuple[str, ...]:
    """Add the pins a pinned TVM release needs (unless the specs already name that package)."""
    out = list(specs)
    for s in specs:
        m = _TVM_PIN_RE.match(s.strip())
        if not m:
            continue
        for pin in RELEASE_PINS.get(m.group(1), ()):
            pkg = _package(pin)
            if not any(_package(x) == pkg for x in out):
                out.append(pin)
    return tuple(out)


def _package(spec: str) -> str:
    return re.split(r"[\s<>=!~;\[]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def version_key(version: str) -> tuple[Any, ...]:
    """A sort key for TVM versions: 0.27.0.post1 > 0.27.0 > 0.27.0rc1 > 0.27.dev0 > 0.26.0."""
    v = version.strip().lower().lstrip("v")
    m = re.match(r"^(\d+(?:\.\d+)*)(.*)$", v)
    if not m:
        return ((), -9, 0, v)
    release = tuple(int(x) for x in m.group(1).split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    rest = m.group(2).lstrip(".-_")
    num = int(re.sub(r"\D", "", rest) or 0)
    if rest.startswith("dev"):
        phase = -3
    elif rest.startswith(("a", "alpha")):
        phase = -2
    elif rest.startswith(("b", "beta", "rc", "c")):
        phase = -1
    elif rest.startswith("post"):
        phase = 1
    else:
        phase = 0
    return (release, phase, num, v)


def order_builds(builds: Iterable[BuildInfo]) -> list[BuildInfo]:
    """``main`` first, then other source builds by name, then releases newest to oldest."""

    def key(b: BuildInfo) -> tuple[Any, ...]:
        if b.name == MAIN:
            return (0, (), b.name)
        if b.kind != KIND_RELEASE:
            return (1, (), b.name)
        rk = version_key(b.version or b.name)
        return (2, _negate(rk), b.name)

    return sorted(builds, key=key)


def _negate(k: tuple[Any, ...]) -> tuple[Any, ...]:
    release, phase, num, _ = k
    return (tuple(-x for x in release) + (1,), -phase, -num)


def default_build(builds: Iterable[BuildInfo], configured: str = "") -> str | None:
    """The build a triage runs on without ``--build``: the configured one, else ``main`` when it
    is usable, else the newest usable release; None when there is none (the ad-hoc interpreter)."""
    if configured:
        return configured
    usable = [b for b in order_builds(builds) if b.usable]
    for b in usable:
        if b.name == MAIN:
            return b.name
    for b in usable:
        if b.kind == KIND_RELEASE:
            return b.name
    return None


def commit_url(source: str, sha: str) -> str:
    """The web page of ``sha``: on the build's GitHub repository, apache/tvm for releases; "" else."""
    if not sha or not _SHA_RE.match(sha):
        return ""
    if source.startswith("pip:") or not source:
        return TVM_COMMIT_URL.format(sha=sha)
    url = source.removeprefix("git:").strip().rsplit("@", 1)[0] if "@" in source else \
        source.removeprefix("git:").strip()
    m = _GITHUB_RE.match(url)
    if not m:
        return ""
    return f"https://github.com/{m.group(1)}/{m.group(2)}/commit/{sha}"


def parse_builds_section(raw: Any) -> BuildsConfig:
    """The ``builds:`` mapping of reprobot.yml: settings (dir, default, update_every) and builds
    declared by name (``pip: [...]`` or ``git: URL`` + ``ref`` + ``cmake_defines`` + ``smoke``)."""
    if raw is None:
        return BuildsConfig()
    if not isinstance(raw, Mapping):
        raise ConfigError("config section 'builds' must be a mapping")
    dir_ = raw.get("dir", "")
    if not isinstance(dir_, str):
        raise ConfigError("builds.dir must be a string (a path)")
    default = raw.get("default", "")
    if not isinstance(default, str):
        raise ConfigError("builds.default must be a build name")
    if default:
        check_name(default)
    every = parse_duration(raw.get("update_every", DEFAULT_UPDATE_EVERY_S), "builds.update_every")
    declared: list[BuildSpec] = []
    for name, body in raw.items():
        if name in SETTINGS_KEYS:
            continue
        name = str(name)
        if not isinstance(body, Mapping):
            raise ConfigError(f"builds.{name} must be a mapping (pip: [...] or git: URL)")
        unknown = set(body) - {"pip", "git", "ref", "cmake_defines", "smoke"}
        if unknown:
            raise ConfigError(f"unknown keys in 'builds.{name}': {', '.join(sorted(unknown))}")
        pip = body.get("pip") or []
        if isinstance(pip, str):
            pip = pip.split()
        defines = body.get("cmake_defines") or {}
        if not isinstance(defines, Mapping):
            raise ConfigError(f"builds.{name}.cmake_defines must be a mapping KEY: VALUE")
        declared.append(make_spec(
            name,
            pip=[str(x) for x in pip],
            git=str(body.get("git") or ""),
            ref=str(body.get("ref") or ""),
            cmake_defines=[f"{k}={_define_value(v)}" for k, v in defines.items()],
            smoke=str(body.get("smoke") or ""),
        ))
    return BuildsConfig(dir=dir_, default=default, update_every_s=every, declared=tuple(declared))


def _define_value(v: Any) -> str:
    if isinstance(v, bool):
        return "ON" if v else "OFF"
    return str(v)


def parse_duration(value: Any, where: str) -> int:
    """``1800``, ``"30m"``, ``"2h"``, ``"90s"`` -> seconds (positive)."""
    if isinstance(value, bool):
        raise ConfigError(f"{where} must be a duration like 30m")
    if isinstance(value, int | float):
        seconds = int(value)
    else:
        m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", str(value).lower())
        if not m:
            raise ConfigError(f"{where} must be a duration like 30m, 2h or 1800 (got {value!r})")
        seconds = int(float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)])
    if seconds <= 0:
        raise ConfigError(f"{where} must be positive")
    return seconds
