"""The one preview of a job: what it will be (its summary, its TrainJob, the exact command its
nodes run), for the CLI's --dry-run and `compile --trainjob`, the magics' --dry-run, the
exporter and the panel (POST compile)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from .checkpoints import summary_text
from .node_resources import LocalResources
from .packages import package_lines
from .shipping import configmap_names, configmaps
from .spec import JobSpec
from .trainjob import to_yaml, training_command, trainjob_dict
from .volumes import describe
from .workspace import Workspace, size_text


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
        """`2 nodes × 4 processes (the runtime's choice: 4 CPUs per node)`."""
        return self.spec.shape

    def summary(self) -> list[str]:
        """The effective settings, a line each: what the job gets after every layer."""
        s = self.spec
        lines = [f"job        {s.name}", f"runtime    {s.runtime.name}: {self.shape}"]
        lines += provenance_lines(provenance(s.job, s.options))
        if s.restarts_from is not None:
            lines.append(f"restarts   {restarts_text(s.max_restarts)} ({s.restarts_from})")
        if s.func_args:
            lines.append(f"arguments  {json.dumps(s.func_args)}")
        lines += package_lines(s.packages, s.pinning)
        config = s.config.to_dict()
        if config:
            lines.append(f"config     {json.dumps(config, sort_keys=True)}")
        lines += workspace_lines(s.workspace)
        lines.append(f"outputs    {outputs_text(s)}")
        checkpoints = summary_text(s)
        if checkpoints is not None:
            lines.append(f"checkpoints {checkpoints}")
        for v in describe(s.config, s.local_folders):
            local = f" (locally {v['local']})" if v["local"] else ""
            what = f"{v['kind']} {v['source']}" if v["source"] else v["kind"]
            ro = ", read-only" if v["read_only"] else ""
            lines.append(f"volume     {what} at {v['mount']}{ro}{local}")
        creates = [f"{o['kind']} {o['name']}" + (f" ({size_text(o['size'])})" if o.get("size")
                   else "") for o in self.creates()]  # fmt: skip
        lines.append(f"creates    {', '.join(creates)}")
        local = self.local_resources()
        lines += [f"local      cpu: {local['cpu']}", f"local      memory: {local['memory']}"]
        return lines

    def local_resources(self) -> dict[str, str]:
        """What the Local backend does with the CPU and memory per node: ``{cpu, memory}``."""
        asked = LocalResources.of(self.spec.config)
        return asked.to_dict(self.spec.nodes, self.spec.procs_per_node)

    def creates(self) -> list[dict]:
        """Every object a cluster submit makes: {kind, name, size (bytes of data)}."""
        out = []
        if self.spec.workspace is not None:
            packed = self.spec.workspace.packed()
            names = configmap_names(packed)
            for name, size in zip(names, packed.part_sizes(), strict=True):
                out.append({"kind": "ConfigMap", "name": name, "size": size})
        if self.spec.max_restarts:  # its JobSet's failure policy (job/restarts.py)
            out.append({"kind": "TrainingRuntime", "name": self.spec.name})
        return out + [{"kind": "TrainJob", "name": self.spec.name}]

    def write_files(self, folder: Path) -> None:
        """trainjob.yaml, and with a workspace workspace.yaml (its ConfigMaps, to apply
        first), into ``folder``."""
        from ..files import write_atomic

        write_atomic(folder / "trainjob.yaml", self.yaml)
        if self.spec.workspace is not None:
            write_atomic(folder / "workspace.yaml", self.workspace_yaml())

    def workspace_yaml(self) -> str | None:
        """The workspace's ConfigMaps (with their data) as YAML documents, to apply by hand
        before the TrainJob; None without a workspace."""
        if self.spec.workspace is None:
            return None
        import yaml

        docs = configmaps(self.spec.workspace.packed())
        return yaml.safe_dump_all(docs, sort_keys=False)

    def shell_command(self) -> str:
        """The command as one shell line (quoted: no shell reads the real one)."""
        return shlex.join(self.command)


def render(spec: JobSpec, notebook_path: str | None = None) -> Preview:
    """The preview of a resolved spec. The keys of env_from's Secrets and ConfigMaps are read
    when the job is submitted; the TrainJob shown here does not list them."""
    trainjob = trainjob_dict(spec, notebook_path or spec.job.notebook, lambda kind, ref: [])
    return Preview(spec=spec, trainjob=trainjob, command=training_command(spec))


#: A setting of the notebook's train() call → the options that override it.
OVERRIDDEN_BY = {
    "runtime": ("runtime",), "nodes": ("nodes",), "image": ("image",), "name": ("name",),
    "env": ("env", "config"), "resources": ("cpu", "memory", "gpu", "config"),
    "packages": ("packages",), "pip_index_urls": ("pip_index_urls",),
    "func_args": ("parameters",), "initializer": ("dataset_uri", "model_uri"),
    "labels": ("config",), "annotations": ("config",),
}  # fmt: skip


def provenance(job, chosen: dict | None = None) -> list[dict]:
    """Each setting read from the notebook's train() call: {setting, value, cell (its index),
    line, overridden_by: the options in ``chosen`` that win over it}."""
    chosen = chosen or {}
    return [
        {**p, "overridden_by": [o for o in OVERRIDDEN_BY.get(p["setting"], ()) if o in chosen]}
        for p in getattr(job, "provenance", None) or []
    ]


def provenance_lines(entries: list[dict]) -> list[str]:
    """``provenance`` a line each: the setting, its value, its cell and line, what overrode it."""
    lines = []
    for p in entries:
        value = json.dumps(p["value"], sort_keys=True, default=str)
        if len(value) > 80:
            value = value[:77] + "..."
        line = f"notebook   {p['setting']} {value} (cell {p['cell'] + 1}, line {p['line']})"
        if p["overridden_by"]:
            line += f"; overridden by {', '.join(p['overridden_by'])}"
        lines.append(line)
    return lines


def restarts_text(most: int) -> str:
    """`up to 2 times when a node fails`, `none`."""
    if not most:
        return "none"
    return f"up to {most} {'time' if most == 1 else 'times'} when a node fails"


def outputs_text(spec: JobSpec) -> str:
    """Where the nodes' KALE_EXT_OUTPUT_DIR lasts."""
    if spec.outputs is not None:
        return f"{spec.outputs}/{spec.name} on a cluster (KALE_EXT_OUTPUT_DIR, shared by the nodes)"
    return (
        f"locally outputs/{spec.name}/ beside the notebook; on a cluster they go with the pods "
        "unless you name a volume (--outputs pvc:NAME)"
    )


def workspace_lines(ws: Workspace | None) -> list[str]:
    """The workspace in a few lines: where, how much, the largest files, what was skipped."""
    if ws is None:
        return ["workspace  (none: the job gets no files)"]
    lines = [
        f"workspace  {ws.root}: {ws.count} file(s), {size_text(ws.size)} "
        f"(cap {size_text(ws.max_size)}), {ws.excluded} left out by the ignore rules"
    ]
    if ws.count:
        largest = ", ".join(f"{f.path} ({size_text(f.size)})" for f in ws.largest(3))
        lines.append(f"           largest: {largest}")
    lines += [f"           skipped: {path}: {why}" for path, why in ws.skipped]
    return lines
