"""Error types that separate "the user's script failed" from "the bot could not work"."""


class ReprobotError(Exception):
    """Base class for the bot's own failures (never a failure of the user's script)."""


class ConfigError(ReprobotError):
    """Bad or missing configuration; the message names what to fix."""


class InfraError(ReprobotError):
    """Our infrastructure failed (sandbox could not start, interpreter missing, worker lost).

    A run that ends in InfraError is never reported as a result of the user's script.
    """
