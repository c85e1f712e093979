"""The search behind a sweep: Optuna's samplers (random, TPE) and its MedianPruner, over a study
stored beside the sweep (so a restarted driver continues it). Optuna is an optional extra
(``kale-ext[sweep]``): a plain grid without early stopping needs none of this."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

from ..errors import ConfigError

SEARCHES = ("grid", "random", "tpe")
INSTALL = "pip install 'kale-ext[sweep]'"


def have_optuna() -> bool:
    return importlib.util.find_spec("optuna") is not None


def needs_optuna(record: dict) -> bool:
    return record["search"] != "grid" or bool(record.get("early_stop"))


def require_optuna(why: str) -> None:
    if not have_optuna():
        raise ConfigError("search", f"{why} needs Optuna: {INSTALL}")


class Study:
    """The sweep's Optuna study (created, or loaded when it exists)."""

    def __init__(self, folder: Path, record: dict):
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        seed = record.get("seed")
        if record["search"] == "tpe":
            sampler = optuna.samplers.TPESampler(seed=seed)
        else:  # random; a grid's points come from the sweep itself
            sampler = optuna.samplers.RandomSampler(seed=seed)
        if record.get("early_stop"):
            pruner = optuna.pruners.MedianPruner(n_startup_trials=record.get("prune_after", 2),
                                                 n_warmup_steps=0)  # fmt: skip
        else:
            pruner = optuna.pruners.NopPruner()
        storage = optuna.storages.RDBStorage(f"sqlite:///{folder.resolve() / 'study.db'}")
        self.study = optuna.create_study(
            storage=storage,
            study_name=record["name"],
            direction="maximize" if record.get("goal") == "max" else "minimize",
            sampler=sampler,
            pruner=pruner,
            load_if_exists=True,
        )
        self._trials: dict[int, object] = {}

    def ask(self):
        """A new Optuna trial: (its id, the trial to draw parameters through)."""
        trial = self.study.ask()
        self._trials[trial._trial_id] = trial
        return trial._trial_id, trial

    def _trial(self, trial_id: int):
        if trial_id not in self._trials:  # a trial a previous driver started
            import optuna

            self._trials[trial_id] = optuna.trial.Trial(self.study, trial_id)
        return self._trials[trial_id]

    def report(self, trial_id: int, value: float, step: int) -> bool:
        """Record an intermediate value; whether the pruner says to stop the trial."""
        trial = self._trial(trial_id)
        if math.isfinite(value):
            trial.report(value, step)
        return trial.should_prune()

    def finish(self, trial_id: int, state: str, value: float | None = None) -> None:
        """Tell the study how the trial ended: complete (with its value), stopped or failed."""
        from optuna.trial import TrialState

        trial = self._trial(trial_id)
        if state == "Complete" and value is not None and math.isfinite(value):
            self.study.tell(trial, value)
        elif state == "Stopped":
            self.study.tell(trial, state=TrialState.PRUNED)
        else:
            self.study.tell(trial, state=TrialState.FAIL)
        self._trials.pop(trial_id, None)

    def unfinished(self) -> set[int]:
        """Ids of the trials the study holds as still running."""
        from optuna.trial import TrialState

        return {t._trial_id for t in self.study.get_trials(states=(TrialState.RUNNING,))}
