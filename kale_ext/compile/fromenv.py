"""What a notebook's value read from the environment (``os.environ[...]``, ``os.getenv``) needs,
said in one place: a train() setting computed from it is read when kale_ext compiles, where no
job's ``--env`` reaches, so only the notebook's own value works; a value that the call's
``env=`` passes on is the job's to be given (``--env NAME=...`` or a Secret's keys)."""

from __future__ import annotations

COMPILE_TIME = ", which kale_ext does not read when it compiles: write the value in the notebook"


def from_environ(var: str, where: str) -> dict:
    """An Unresolvable's arguments for ``var`` read at ``where`` (`cell 3, line 1`)."""
    return {"message": f"{var} comes from the environment ({where}){COMPILE_TIME}", "env": var}


def needed_by_the_job(message: str, name: str) -> str:
    """``message`` (from_environ's) for a value the job itself is given as its variable
    ``name`` (an env entry of CustomTrainer): the job's --env or a Secret gives it."""
    return f"{message.removesuffix(COMPILE_TIME)}: use --env-from-secret or --env {name}=..."
