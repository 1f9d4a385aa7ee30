from pathlib import Path

import pytest

from bot.config import Config, load_config, parse_size, require_github
from bot.errors import ConfigError


def test_defaults_without_file_or_env():
    cfg = load_config(None, {})
    assert cfg == Config()
    assert cfg.sandbox.backend == "bwrap"
    assert cfg.sandbox.limits.timeout_s == 300
    assert cfg.github.api_url == "https://api.github.com"
    assert cfg.filters.labels == ("type: bug",)
    assert cfg.filters.title_prefixes == ("[Bug]",)


def test_file_then_environment_wins(tmp_path: Path):
    f = tmp_path / "reprobot.yml"
    f.write_text(
        "tvm:\n  python: /opt/tvm/bin/python\n"
        "sandbox:\n  backend: none\n  limits:\n    timeout_s: 60\n    memory_bytes: 2GiB\n"
        "service:\n  redis_url: redis://file:6379/0\n"
        "label_prefix: 'bot/'\n"
    )
    cfg = load_config(str(f), {"REDIS_URL": "redis://env:1/2"})
    assert cfg.tvm.python == "/opt/tvm/bin/python"
    assert cfg.sandbox.backend == "none"
    assert cfg.sandbox.limits.timeout_s == 60.0
    assert cfg.sandbox.limits.memory_bytes == 2 * 1024**3
    assert cfg.service.redis_url == "redis://env:1/2"
    assert cfg.label_prefix == "bot/"


def test_config_path_from_environment(tmp_path: Path):
    f = tmp_path / "c.yml"
    f.write_text("service:\n  retest_cooldown_s: 5\n")
    cfg = load_config(None, {"REPROBOT_CONFIG": str(f), "REPROBOT_TVM_PYTHON": "/x/python"})
    assert cfg.service.retest_cooldown_s == 5
    assert cfg.tvm.python == "/x/python"


@pytest.mark.parametrize(
    "text, message",
    [
        ("sandbox:\n  backend: chroot\n", "sandbox.backend"),
        ("nonsense: 1\n", "unknown top-level"),
        ("sandbox:\n  limits:\n    timeout_s: -1\n", "timeout_s"),
        ("sandbox:\n  limits:\n    wall: 3\n", "sandbox.limits"),
        ("service: [1, 2]\n", "service"),
        ("service:\n  retest_cooldown_s: soon\n", "retest_cooldown_s"),
        ("- a list\n", "mapping"),
        ("a: [unclosed\n", "not valid YAML"),
        ("sandbox:\n  warm_start: sometimes\n", "sandbox.warm_start must be true or false"),
    ],
)
def test_bad_config_names_what_to_fix(tmp_path: Path, text: str, message: str):
    f = tmp_path / "bad.yml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(str(f), {})


def test_missing_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(str(tmp_path / "nope.yml"), {})


def test_placeholder_secrets_are_refused():
    cfg = load_config(None, {"GITHUB_WEBHOOK_SECRET": "changeme", "GITHUB_TOKEN": "real-token-1"})
    with pytest.raises(ConfigError, match="GITHUB_WEBHOOK_SECRET"):
        require_github(cfg, webhook=True, api=False)
    require_github(cfg, webhook=False, api=True)  # the token is fine
    with pytest.raises(ConfigError, match="GITHUB_TOKEN"):
        require_github(load_config(None, {}), webhook=False, api=True)


def test_app_private_key_from_path(tmp_path: Path):
    pem = tmp_path / "key.pem"
    pem.write_text("-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
    cfg = load_config(None, {"GITHUB_APP_ID": "123", "GITHUB_APP_PRIVATE_KEY": str(pem)})
    assert "PRIVATE KEY" in cfg.github.private_key
    require_github(cfg, webhook=False, api=True)
    bad = load_config(None, {"GITHUB_APP_ID": "123", "GITHUB_APP_PRIVATE_KEY": "not-a-key"})
    with pytest.raises(ConfigError, match="GITHUB_APP_PRIVATE_KEY"):
        require_github(bad, webhook=False, api=True)


@pytest.mark.parametrize(
    "text, value",
    [("1024", 1024), ("8GiB", 8 * 1024**3), ("512M", 512 * 1024**2), ("2 KiB", 2048), ("1.5G", int(1.5 * 1024**3))],
)
def test_parse_size(text: str, value: int):
    assert parse_size(text) == value


def test_parse_size_rejects_garbage():
    with pytest.raises(ConfigError):
        parse_size("lots")


def test_retest_and_bisect_sections(tmp_path) -> None:
    from bot.config import load_config
    from bot.errors import ConfigError

    p = tmp_path / "r.yml"
    cfg = load_config(None, {})
    assert cfg.retest.verdicts == ("reproduced", "different-failure")
    assert cfg.retest.per_hour == 200 and cfg.bisect.max_steps == 8
    p.write_text("retest:\n  verdicts: [reproduced]\n  per_hour: 5\nbisect:\n  max_steps: 3\n")
    cfg = load_config(p, {})
    assert cfg.retest.verdicts == ("reproduced",) and cfg.retest.per_hour == 5
    assert cfg.bisect.max_steps == 3
    for bad in ("retest:\n  verdicts: [fixed]\n", "bisect:\n  max_steps: 0\n",
                "retest:\n  per_hour: -1\n", "retest:\n  cap: 3\n"):
        p.write_text(bad)
        with pytest.raises(ConfigError):
            load_config(p, {})


@pytest.mark.parametrize(
    "text, message",
    [
        ("sandbox:\n  limits:\n    timeout_s: .nan\n", "sandbox.limits.timeout_s must be a finite number"),
        ("sandbox:\n  limits:\n    timeout_s: .inf\n", "sandbox.limits.timeout_s must be a finite number"),
        ("sandbox:\n  limits:\n    timeout_s: -1\n", "sandbox.limits.timeout_s must be between"),
        ("sandbox:\n  limits:\n    timeout_s: 0\n", "sandbox.limits.timeout_s must be between"),
        ("sandbox:\n  limits:\n    timeout_s: 1.0e+12\n", "sandbox.limits.timeout_s must be between"),
        ("sandbox:\n  limits:\n    timeout_s: true\n", "sandbox.limits.timeout_s must be a number"),
        ("sandbox:\n  limits:\n    memory_bytes: -1\n", "sandbox.limits.memory_bytes must be between"),
        ("sandbox:\n  limits:\n    memory_bytes: 1KiB\n", "sandbox.limits.memory_bytes must be between"),
        ("sandbox:\n  limits:\n    memory_bytes: .inf\n", "sandbox.limits.memory_bytes must be an integer"),
        ("sandbox:\n  limits:\n    memory_bytes: inf GiB\n", "sandbox.limits.memory_bytes: not a size"),
        ("sandbox:\n  limits:\n    memory_bytes: nan G\n", "sandbox.limits.memory_bytes: not a size"),
        ("sandbox:\n  limits:\n    max_processes: 0\n", "sandbox.limits.max_processes must be between"),
        ("sandbox:\n  limits:\n    output_bytes: 0\n", "sandbox.limits.output_bytes must be between"),
        ("sandbox:\n  limits:\n    disk_bytes: -5\n", "sandbox.limits.disk_bytes must be between"),
        ("sandbox:\n  limits:\n    disk_bytes: '-5'\n", "sandbox.limits.disk_bytes must be between"),
        ("sandbox:\n  uid: 0\n", "sandbox.uid must be between"),
        ("service:\n  retest_cooldown_s: -3\n", "service.retest_cooldown_s must be between"),
        ("service:\n  history_len: 0\n", "service.history_len must be between"),
        ("service:\n  visibility_timeout_s: -1\n", "service.visibility_timeout_s must be between"),
        ("service:\n  redis_wait_s: -1\n", "service.redis_wait_s must be between"),
        ("service:\n  triage_time_limit_s: 1000000\n", "service.triage_time_limit_s must be between"),
        ("service:\n  redelivery_sweep_s: -600\n", "service.redelivery_sweep_s must be between"),
        ("dashboard:\n  session_ttl_s: 5\n", "dashboard.session_ttl_s must be between"),
    ],
)
def test_bad_numbers_are_refused_by_name(tmp_path: Path, text: str, message: str):
    f = tmp_path / "bad.yml"
    f.write_text(text)
    with pytest.raises(ConfigError) as ei:
        load_config(str(f), {})
    assert str(ei.value).startswith(message), str(ei.value)
    assert "\n" not in str(ei.value)


def test_sane_numbers_are_accepted(tmp_path: Path):
    f = tmp_path / "ok.yml"
    f.write_text(
        "sandbox:\n  uid: 1000\n  limits:\n    timeout_s: 1\n    memory_bytes: 64MiB\n"
        "    max_processes: 16\n    output_bytes: 4KiB\n    disk_bytes: 1MiB\n"
        "service:\n  retest_cooldown_s: 0\n  history_len: 1\n  visibility_timeout_s: 0\n"
    )
    cfg = load_config(str(f), {})
    assert cfg.sandbox.limits.max_processes == 16 and cfg.sandbox.limits.output_bytes == 4096


def test_every_number_in_the_config_is_checked():
    """A numeric field that has no listed range still may not be negative or NaN."""
    from bot.config import validate_numbers
    from bot.records import field, record

    @record
    class Later:
        some_new_limit_s: float = -1.0

    @record
    class Top:
        later: Later = field(default_factory=Later)

    with pytest.raises(ConfigError, match="later.some_new_limit_s must not be negative"):
        validate_numbers(Top())
    with pytest.raises(ConfigError, match="later.some_new_limit_s must be a finite number"):
        validate_numbers(Top(Later(float("nan"))))
    validate_numbers(Config())


def test_warm_start_is_on_unless_turned_off(tmp_path: Path):
    assert load_config(None, {}).sandbox.warm_start is True
    f = tmp_path / "c.yml"
    f.write_text("sandbox:\n  warm_start: false\n")
    assert load_config(str(f), {}).sandbox.warm_start is False
