"""Typed configuration, read once at the entry point and passed down.

Sources, later wins: built-in defaults < ``reprobot.yml`` (path from ``--config`` or
``REPROBOT_CONFIG``) < environment variables. Nothing here runs at import time; the entry points
call :func:`load_config` with the environment they were given.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from bot.builds import BuildsConfig, parse_builds_section
from bot.errors import ConfigError
from bot.records import field, field_names, is_record, record, replace
from bot.runs import RunLimits

TYPE_CHECKING = False  # typing's, without importing typing (5 ms): see bot/records.py
if TYPE_CHECKING:
    from typing import Any

SANDBOX_BACKENDS = ("bwrap", "docker", "none")

# Values that mean "somebody copied the example file and never filled it in".
_PLACEHOLDERS = frozenset(
    {"", "changeme", "change-me", "secret", "xxx", "todo", "placeholder", "your-secret-here",
     "<secret>", "none", "null", "example", "test"}
)


@record
class TvmConfig:
    """The `tvm:` section: the interpreter that runs the repros."""

    # Interpreter that has apache-tvm installed and runs the repros; default: this one.
    python: str = field(default_factory=lambda: sys.executable)
    # Environment variables of the bot's own process that may reach the child (by name).
    pass_env: tuple[str, ...] = ()


@record
class SandboxConfig:
    """The `sandbox:` section: the backend, the run limits, the uid, the warm start."""

    backend: str = "bwrap"
    limits: RunLimits = field(default_factory=RunLimits)
    docker_image: str = "reprobot-runner:latest"
    uid: int = 65534  # non-root uid inside the sandbox
    # `reprobot triage`: start the sandbox and import tvm while the issue is still being read,
    # used only when the script's first statement imports tvm (see README, The sandbox).
    warm_start: bool = True


@record
class GitHubConfig:
    """The `github:` section: the API URL and the App's or token's credentials."""

    api_url: str = "https://api.github.com"
    token: str = ""
    app_id: str = ""
    private_key: str = ""  # PEM text (a path is resolved by load_config)
    webhook_secret: str = ""


@record
class FilterConfig:
    """The `filters:` section: which repositories and issues are triaged."""

    # "owner/name" of repositories served; empty = any the credentials reach.
    repositories: tuple[str, ...] = ()
    # An issue is triaged when it has one of these labels OR its title starts with a prefix.
    labels: tuple[str, ...] = ("type: bug",)
    title_prefixes: tuple[str, ...] = ("[Bug]",)


@record
class ServiceConfig:
    """The `service:` section: Redis, cool-downs, history and redelivery."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    key_prefix: str = "reprobot:"
    retest_cooldown_s: int = 120
    bot_login: str = ""  # the bot's own GitHub login (its comments never trigger commands)
    history_len: int = 50
    # Seconds before the broker redelivers an unacknowledged task (a worker that died outright).
    # 0 = derived from the longest task time limit.
    visibility_timeout_s: int = 0
    # A worker that cannot reach Redis at start waits this long, then exits non-zero.
    redis_wait_s: int = 30
    # Soft time limit of a triage-queue task (triage, report); the hard limit is 60 s later.
    # Past it the request is reported as an infra error, never retried.
    triage_time_limit_s: int = 240
    # How often the beat asks GitHub to redeliver failed webhook deliveries (0 = never; it
    # needs GitHub App credentials).
    redelivery_sweep_s: int = 600


@record
class DashboardConfig:
    """Who may see the dashboard and /api/* (bot.auth): none | token | github.

    Unset: no login while the receiver listens on loopback; anywhere else ``serve`` refuses.
    """

    auth: str = ""
    token: str = ""  # REPROBOT_DASHBOARD_TOKEN
    github_org: str = ""  # members of this organization get in ...
    github_team: str = ""  # ... or only of this team (its slug) when set
    oauth_client_id: str = ""  # REPROBOT_OAUTH_CLIENT_ID
    oauth_client_secret: str = ""  # REPROBOT_OAUTH_CLIENT_SECRET
    github_url: str = "https://github.com"  # where /login/oauth/* lives (GHE: its own host)
    # The dashboard's address as browsers see it (behind a proxy): the OAuth callback is
    # <public_url>/auth/callback. Default: taken from each request.
    public_url: str = ""
    session_secret: str = ""  # REPROBOT_SESSION_SECRET; default: derived from the webhook secret
    session_ttl_s: int = 12 * 3600
    # /metrics without a login (for a Prometheus that cannot send the token); default: behind
    # the same login as the dashboard (token mode: ``Authorization: Bearer <token>``).
    metrics_public: bool = False


@record
class RetestConfig:
    """Re-testing open issues when a new main build becomes current."""

    # Latest verdicts on main that put an open issue into the sweep.
    verdicts: tuple[str, ...] = ("reproduced", "different-failure")
    # At most this many re-tests are sent per hour (0 = no cap); the rest wait for the next build.
    per_hour: int = 200


@record
class BisectConfig:
    """The `bisect:` section: how far a bisection between main builds may go."""

    # Builds (probes) a bisection between two main builds may make before it reports a range.
    max_steps: int = 8


@record
class Config:
    """The whole configuration, read once at the entry point (``load_config``)."""

    tvm: TvmConfig = field(default_factory=TvmConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    github: GitHubConfig = field(default_factory=GitHubConfig)
    filters: FilterConfig = field(default_factory=FilterConfig)
    service: ServiceConfig = field(default_factory=ServiceConfig)
    label_prefix: str = "repro: "
    dashboard: DashboardConfig = field(default_factory=DashboardConfig)
    builds: BuildsConfig = field(default_factory=BuildsConfig)
    retest: RetestConfig = field(default_factory=RetestConfig)
    bisect: BisectConfig = field(default_factory=BisectConfig)


def load_config(path: str | os.PathLike[str] | None, environ: Mapping[str, str]) -> Config:
    """Read the YAML file (if any) and the environment; raise ConfigError naming what to fix."""
    if path is None:
        path = environ.get("REPROBOT_CONFIG") or None
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as e:
            raise ConfigError(f"cannot read config file {p}: {e.strerror or e}") from e
        import yaml

        try:
            loaded = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ConfigError(f"config file {p} is not valid YAML: {e}") from e
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"config file {p} must hold a mapping at the top level")
        data = loaded

    cfg = Config(
        tvm=_section(TvmConfig, data, "tvm"),
        sandbox=_sandbox(data.get("sandbox") or {}),
        github=_section(GitHubConfig, data, "github"),
        filters=_section(FilterConfig, data, "filters"),
        service=_section(ServiceConfig, data, "service"),
        label_prefix=str(data.get("label_prefix", Config.label_prefix)),
        dashboard=_dashboard(_section(DashboardConfig, data, "dashboard"), environ),
        builds=_builds(data.get("builds"), environ),
        retest=_section(RetestConfig, data, "retest"),
        bisect=_section(BisectConfig, data, "bisect"),
    )
    unknown = set(data) - {"tvm", "sandbox", "github", "filters", "service", "label_prefix",
                           "dashboard", "builds", "retest", "bisect"}
    if unknown:
        raise ConfigError(f"unknown top-level config keys: {', '.join(sorted(unknown))}")

    env = environ
    gh = cfg.github
    gh = replace(
        gh,
        api_url=env.get("GITHUB_API_URL", gh.api_url).rstrip("/"),
        token=env.get("GITHUB_TOKEN", gh.token),
        app_id=env.get("GITHUB_APP_ID", gh.app_id),
        private_key=_pem(env.get("GITHUB_APP_PRIVATE_KEY", gh.private_key)),
        webhook_secret=env.get("GITHUB_WEBHOOK_SECRET", gh.webhook_secret),
    )
    svc = replace(cfg.service, redis_url=env.get("REDIS_URL", cfg.service.redis_url))
    tvm = replace(cfg.tvm, python=env.get("REPROBOT_TVM_PYTHON", cfg.tvm.python))
    if cfg.sandbox.backend not in SANDBOX_BACKENDS:
        raise ConfigError(
            f"sandbox.backend must be one of {', '.join(SANDBOX_BACKENDS)}, "
            f"not {cfg.sandbox.backend!r}"
        )
    cfg = replace(cfg, github=gh, service=svc, tvm=tvm)
    validate_numbers(cfg)
    _check_history(cfg)
    return cfg


def _check_history(cfg: Config) -> None:
    known = {"reproduced", "different-failure", "not-reproduced", "inconclusive"}
    bad = [v for v in cfg.retest.verdicts if v not in known]
    if bad:
        raise ConfigError(f"retest.verdicts: unknown verdict(s) {', '.join(bad)} "
                          f"(use {', '.join(sorted(known))})")
    if cfg.retest.per_hour < 0:
        raise ConfigError("retest.per_hour must be 0 (no cap) or more")
    if not 1 <= cfg.bisect.max_steps <= 64:
        raise ConfigError("bisect.max_steps must be between 1 and 64")


def _dashboard(dash: DashboardConfig, env: Mapping[str, str]) -> DashboardConfig:
    dash = replace(
        dash,
        auth=env.get("REPROBOT_DASHBOARD_AUTH", dash.auth).strip().lower(),
        token=env.get("REPROBOT_DASHBOARD_TOKEN", dash.token),
        oauth_client_id=env.get("REPROBOT_OAUTH_CLIENT_ID", dash.oauth_client_id),
        oauth_client_secret=env.get("REPROBOT_OAUTH_CLIENT_SECRET", dash.oauth_client_secret),
        session_secret=env.get("REPROBOT_SESSION_SECRET", dash.session_secret),
    )
    if dash.auth not in ("", "none", "token", "github"):
        raise ConfigError(f"dashboard.auth must be none, token or github, not {dash.auth!r}")
    if dash.session_ttl_s <= 0:
        raise ConfigError("dashboard.session_ttl_s must be positive")
    return dash


def _builds(raw: Any, environ: Mapping[str, str]) -> BuildsConfig:
    """``builds:`` (settings + declared builds); the directory: env REPROBOT_BUILDS_DIR > config.
    "" means the default, ``~/.cache/reprobot/builds``, which the entry point resolves."""
    section = parse_builds_section(raw)
    where = environ.get("REPROBOT_BUILDS_DIR") or section.dir
    return replace(section, dir=str(Path(where).expanduser()) if where else "")


def is_placeholder(value: str) -> bool:
    v = value.strip().lower()
    return v in _PLACEHOLDERS or v.startswith("<") or "changeme" in v or "replace-me" in v


def require_github(cfg: Config, *, webhook: bool, api: bool) -> None:
    """Stop at start, naming the variable, when a needed secret is missing or a placeholder."""
    gh = cfg.github
    if webhook and is_placeholder(gh.webhook_secret):
        raise ConfigError(
            "GITHUB_WEBHOOK_SECRET is missing or a placeholder: set it to the secret "
            "configured on the GitHub App's webhook"
        )
    if api:
        if gh.app_id or gh.private_key:
            if is_placeholder(gh.app_id):
                raise ConfigError("GITHUB_APP_ID is missing or a placeholder")
            if "PRIVATE KEY" not in gh.private_key:
                raise ConfigError(
                    "GITHUB_APP_PRIVATE_KEY is missing or not a PEM private key "
                    "(give the PEM text or a path to the .pem file)"
                )
        elif is_placeholder(gh.token):
            raise ConfigError(
                "no GitHub credentials: set GITHUB_TOKEN, or GITHUB_APP_ID and "
                "GITHUB_APP_PRIVATE_KEY"
            )


def _pem(value: str) -> str:
    """A private key given as a path is read here, once, at start."""
    v = value.strip()
    if v and "PRIVATE KEY" not in v:
        p = Path(v).expanduser()
        if p.is_file():
            try:
                return p.read_text()
            except OSError as e:
                raise ConfigError(f"cannot read GitHub App private key {p}: {e}") from e
    return value


def _section(cls: Any, data: dict[str, Any], name: str) -> Any:
    raw = data.get(name) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config section '{name}' must be a mapping")
    known = set(field_names(cls))
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"unknown keys in '{name}': {', '.join(sorted(unknown))}")
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        default = getattr(cls(), key)
        kwargs[key] = _coerce(f"{name}.{key}", value, default)
    return cls(**kwargs)


def _sandbox(raw: Any) -> SandboxConfig:
    if not isinstance(raw, dict):
        raise ConfigError("config section 'sandbox' must be a mapping")
    raw = dict(raw)
    limits_raw = raw.pop("limits", None) or {}
    if not isinstance(limits_raw, dict):
        raise ConfigError("config section 'sandbox.limits' must be a mapping")
    base = _section(SandboxConfig, {"sandbox": raw}, "sandbox")
    known = set(field_names(RunLimits))
    unknown = set(limits_raw) - known
    if unknown:
        raise ConfigError(f"unknown keys in 'sandbox.limits': {', '.join(sorted(unknown))}")
    lim = RunLimits()
    limits = replace(
        lim,
        **{k: _coerce(f"sandbox.limits.{k}", v, getattr(lim, k)) for k, v in limits_raw.items()},
    )
    return replace(base, limits=limits)


def _coerce(where: str, value: Any, default: Any) -> Any:
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false")
        return value
    if isinstance(default, int) and not isinstance(default, bool):
        if isinstance(value, str) and where.endswith("_bytes"):
            try:
                value = parse_size(value)
            except ConfigError as e:
                raise ConfigError(f"{where}: {e}") from e
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{where} must be an integer (got {value!r})")
        return value
    if isinstance(default, float):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ConfigError(f"{where} must be a number (got {value!r})")
        if not math.isfinite(value):
            raise ConfigError(f"{where} must be a finite number (got {value})")
        return float(value)
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise ConfigError(f"{where} must be a list of strings")
        return tuple(value)
    if isinstance(default, str):
        if not isinstance(value, str | int):
            raise ConfigError(f"{where} must be a string")
        return str(value)
    return value


def parse_size(text: str) -> int:
    """'8GiB', '512M', '1024' -> bytes."""
    t = text.strip().upper().replace(" ", "")
    units = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    for suffix in ("IB", "B"):
        if t.endswith(suffix) and len(t) > len(suffix) and t[-len(suffix) - 1] in units:
            t = t[: -len(suffix)]
            break
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except (ValueError, OverflowError) as e:  # OverflowError: "inf G"
        raise ConfigError(f"not a size: {text!r} (use e.g. 8GiB, 512MiB)") from e


# ---------------------------------------------------------------------------------------------
# Every number in the configuration, checked at start

_KiB, _MiB, _GiB, _TiB = 1024, 1024**2, 1024**3, 1024**4
_DAY = 86_400

# "section.key" -> (lowest, highest, how to say the range). A number not listed here must still
# be finite and not negative (a field added later is covered by that rule until it is listed).
NUMBER_RANGES: dict[str, tuple[float, float, str]] = {
    "sandbox.limits.timeout_s": (1, _DAY, "1 s and 86400 s (one day)"),
    "sandbox.limits.memory_bytes": (64 * _MiB, 4 * _TiB, "64MiB and 4TiB"),
    "sandbox.limits.max_processes": (16, 1_000_000, "16 and 1000000"),
    "sandbox.limits.output_bytes": (4 * _KiB, 1 * _GiB, "4KiB and 1GiB"),
    "sandbox.limits.disk_bytes": (1 * _MiB, 16 * _TiB, "1MiB and 16TiB"),
    "sandbox.uid": (1, 2**32 - 2, "1 and 4294967294 (not root)"),
    "service.retest_cooldown_s": (0, 7 * _DAY, "0 and 604800 s (a week)"),
    "service.history_len": (1, 100_000, "1 and 100000"),
    "service.visibility_timeout_s": (0, 7 * _DAY, "0 (derived) and 604800 s (a week)"),
    "service.redis_wait_s": (0, 3_600, "0 and 3600 s"),
    "service.triage_time_limit_s": (0, _DAY, "0 (the default) and 86400 s"),
    "service.redelivery_sweep_s": (0, _DAY, "0 (never) and 86400 s"),
    "dashboard.session_ttl_s": (60, 30 * _DAY, "60 s and 2592000 s (30 days)"),
    "retest.per_hour": (0, 1_000_000, "0 (no cap) and 1000000"),
    "bisect.max_steps": (1, 64, "1 and 64"),
}


def check_number(name: str, value: Any, key: str | None = None) -> None:
    """Raise ConfigError naming ``name`` unless ``value`` is finite and in ``key``'s range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name} must be a number (got {value!r})")
    if not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number (got {value})")
    bounds = NUMBER_RANGES.get(key or name)
    if bounds is None:
        if value < 0:
            raise ConfigError(f"{name} must not be negative (got {value})")
        return
    low, high, words = bounds
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {words} (got {value})")


def validate_numbers(cfg: Any, where: str = "") -> None:
    """Check every int and float field of the (nested) configuration records."""
    for field_name in field_names(cfg):
        value = getattr(cfg, field_name)
        name = f"{where}{field_name}"
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            check_number(name, value)
        elif is_record(value):
            validate_numbers(value, f"{name}.")
