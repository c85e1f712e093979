"""The one preview of a job: what it will be (its summary, its TrainJob, the exact command its
nodes run), for the CLI's --dry-run and `compile --trainjob`, the magics' --dry-run, the
exporter and the panel (POST compile)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from .spec import JobSpec
from .trainjob import to_yaml, training_command, trainjob_dict


@dataclass
class Preview:
    spec: JobSpec
    trainjob: dict
    command: list[str]  # the node container's command (the same locally and on the cluster)

    @property
    def yaml(self) -> str:
        return to_yaml(self.trainjob)

    @property
    def shape(self) -> str:
        return f"{self.spec.nodes} node(s) × {self.spec.procs_per_node} process(es)"

    def summary(self) -> list[str]:
        """The effective settings, a line each: what the job gets after every layer."""
        s = self.spec
        lines = [f"job        {s.name}", f"runtime    {s.runtime.name}: {self.shape}"]
        if s.func_args:
            lines.append(f"arguments  {json.dumps(s.func_args)}")
        lines.append(f"packages   {', '.join(s.packages) or '(none)'}")
        config = s.config.to_dict()
        if config:
            lines.append(f"config     {json.dumps(config, sort_keys=True)}")
        return lines

    def shell_command(self) -> str:
        """The command as one shell line (quoted: no shell reads the real one)."""
        return shlex.join(self.command)


def render(spec: JobSpec, notebook_path: str | None = None) -> Preview:
    """The preview of a resolved spec. The keys of env_from's Secrets and ConfigMaps are read
    when the job is submitted; the TrainJob shown here does not list them."""
    trainjob = trainjob_dict(spec, notebook_path or spec.job.notebook, lambda kind, ref: [])
    return Preview(spec=spec, trainjob=trainjob, command=training_command(spec))
