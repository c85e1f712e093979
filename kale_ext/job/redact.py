"""What a job's records show of a value that may be a secret: literal env values and the values of
secret-named parameters are redacted wherever jobs are listed or compared (the job still gets
them)."""

from __future__ import annotations

import re

#: An env value as the job's records show it (the options annotation, GET jobs): a literal value
#: may be a secret. A valueFrom reference (a Secret's key) is shown as it is.
REDACTED = "<redacted>"
#: A parameter named like a secret (api_key, password, token, secret...): its value is shown
#: masked wherever jobs are listed or compared; the job still gets it.
SECRET_NAME = re.compile(r"pass(word|wd|phrase)?|secret|token|api_?key|credential|private_?key",
                         re.IGNORECASE)  # fmt: skip


def masked(parameters: dict) -> dict:
    """``parameters`` with the values of secret-named ones REDACTED."""
    return {k: REDACTED if SECRET_NAME.search(str(k)) else v for k, v in parameters.items()}


def redacted(options: dict) -> dict:
    """Submit options without their literal env values (``options.env`` and ``config.env``) and
    the values of secret-named parameters."""
    out = dict(options)
    if isinstance(out.get("parameters"), dict):
        out["parameters"] = masked(out["parameters"])
    if isinstance(out.get("env"), dict):
        out["env"] = dict.fromkeys(out["env"], REDACTED)
    config = out.get("config")
    if isinstance(config, dict) and isinstance(config.get("env"), list):
        env = [{**e, "value": REDACTED} if "value" in e else e for e in config["env"]]
        out["config"] = {**config, "env": env}
    return out
