"""Issue 28, cases 5 and 6: one allow-list for volumes, whatever form they come in (naming where
each came from), and outputs that stay in their place: a job sent as JSON writes them under the
server root, and a link a job wrote is listed as a link, never followed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kale_ext.errors import ConfigError
from tests.conftest import notebook

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

HOST = {"name": "h", "hostPath": {"path": "/"}}
NFS = {"name": "h", "nfs": {"server": "x", "path": "/"}}
MOUNT = {"name": "h", "mountPath": "/host"}
CELL = (
    "from kale_ext.distributed import DistributedConfig\n"
    "config = DistributedConfig(volumes=[{'name': 'h', 'hostPath': {'path': '/'}}], "
    "volume_mounts=[{'name': 'h', 'mountPath': '/host'}])"
)


def with_metadata(options=None, config=None) -> dict:
    nb = notebook("print(1)")
    nb["metadata"]["kale_ext"] = {
        k: v for k, v in (("options", options), ("config", config)) if v is not None
    }
    return nb


CASES = [  # (notebook, options, the field that names where it came from, what it says)
    (notebook("print(1)"), {"config": {"volumes": [HOST], "volume_mounts": [MOUNT]}},
     "options.config.volumes[0]", "a hostPath volume is not allowed"),
    (notebook("print(1)"), {"config": {"volumes": [NFS], "volume_mounts": [MOUNT]}},
     "options.config.volumes[0]", "a nfs volume is not allowed"),
    (with_metadata(config={"volumes": [HOST], "volume_mounts": [MOUNT]}), {},
     "metadata.kale_ext.config.volumes[0]", "a hostPath volume is not allowed"),
    (with_metadata(options={"volumes": ["hostpath:/:/host"]}), {},
     "metadata.kale_ext.options.volumes[0]", "'hostpath' is not a volume kind"),
    (notebook("print(1)"), {"volumes": ["hostpath:/:/host"]},
     "volumes[0]", "'hostpath' is not a volume kind"),
]  # fmt: skip


@pytest.mark.parametrize(("nb", "options", "field", "says"), CASES)
async def test_5_a_host_path_is_refused_in_every_form(api, jobs_dir, nb, options, field, says):
    compiled = await api.post("compile", {"notebook": nb, "options": options})
    assert compiled.status == 200 and not compiled.json["ok"], compiled.text
    assert "hostPath" not in (compiled.json.get("trainjob_yaml") or "")
    [error] = compiled.json["errors"]
    assert error["field"] == field and says in error["message"], error
    submitted = await api.post("jobs", {"notebook": nb, "options": options})
    assert submitted.status == 400 and submitted.json["field"] == field, submitted.text
    assert not jobs_dir.exists() or not any(jobs_dir.iterdir())


async def test_5_a_host_path_in_the_distributed_cell_names_the_cell(api):
    nb = notebook((CELL, ["distributed"]), "print(1)")
    compiled = await api.post("compile", {"notebook": nb})
    assert not compiled.json["ok"], compiled.text
    said = " ".join(e["message"] for e in compiled.json["errors"])
    assert "hostPath volume is not allowed" in said and "hostPath" not in (
        compiled.json.get("trainjob_yaml") or ""
    )


def test_5_an_sdk_runtime_patch_passes_the_same_check():
    from kubeflow.trainer.options.kubernetes import (
        JobSetSpecPatch,
        JobSetTemplatePatch,
        JobSpecPatch,
        JobTemplatePatch,
        PodSpecPatch,
        PodTemplatePatch,
        ReplicatedJobPatch,
        RuntimePatch,
        TrainingRuntimeSpecPatch,
    )

    from kale_ext.sdk import check_patches

    def patch(volume: dict) -> RuntimePatch:
        pod = PodTemplatePatch(spec=PodSpecPatch(volumes=[volume]))
        job = JobTemplatePatch(spec=JobSpecPatch(template=pod))
        jobset = JobSetTemplatePatch(
            spec=JobSetSpecPatch(replicated_jobs=[ReplicatedJobPatch(name="node", template=job)])
        )
        return RuntimePatch(training_runtime_spec=TrainingRuntimeSpecPatch(template=jobset))

    check_patches([patch({"name": "d", "persistentVolumeClaim": {"claimName": "data"}})])
    with pytest.raises(ConfigError) as refused:
        check_patches(["not a patch", patch(HOST)])
    assert refused.value.field.startswith("options[1] (RuntimePatch).training_runtime_spec")
    assert refused.value.field.endswith(".volumes[0]")
    assert "a hostPath volume is not allowed" in refused.value.message


#: Writes a file, a link out of the outputs folder to a file and to a folder, and a link inside.
WRITES_LINKS = notebook(
    "import os\n"
    "out = os.environ['KALE_EXT_OUTPUT_DIR']\n"
    "open(os.path.join(out, 'model.txt'), 'w').write('weights')\n"
    "os.symlink('/etc/passwd', os.path.join(out, 'pw'))\n"
    "os.symlink('/etc', os.path.join(out, 'etc'))\n"
    "os.symlink('model.txt', os.path.join(out, 'latest'))\n"
)


async def test_6_outputs_of_a_json_job_stay_under_the_root_and_links_are_not_followed(
    api, root, jobs_dir
):
    name = await api.submit(notebook=WRITES_LINKS)
    await api.logs(name, params={"follow": "1"})  # to its end
    outputs = await api.get(f"jobs/{name}/outputs")
    assert outputs.status == 200, outputs.text
    location = Path(outputs.json["location"])
    assert (
        location == Path(root).resolve() / "outputs" / name
        or location == Path(root) / "outputs" / name
    )
    files = {f["path"]: f for f in outputs.json["files"]}
    assert files["model.txt"] == {"path": "model.txt", "size": 7}
    assert files["pw"] == {"path": "pw", "size": 0, "link": "/etc/passwd"}
    assert files["etc"] == {"path": "etc", "size": 0, "link": "/etc"}
    assert files["latest"]["link"] == "model.txt"
    assert not any(p.startswith("etc/") for p in files)  # the folder link was not walked
    deleted = await api.delete(f"jobs/{name}", params={"outputs": "1"})
    assert deleted.status == 200 and str(location) in deleted.json["outputs"]
    assert not location.exists() and os.path.isfile("/etc/passwd")


async def contents(jp_fetch, *parts: str) -> tuple[int, dict]:
    """Jupyter's own contents API (GET api/contents/<parts>, with the content)."""
    r = await jp_fetch("api", "contents", *parts, params={"content": "1"}, raise_error=False)
    return r.code, json.loads(r.body) if r.code == 200 else {}


async def test_6_jupyters_contents_api_follows_a_link_under_its_root(jp_fetch, root, tmp_path):
    """Why kale_ext must not leave a job's links in place: jupyter_server checks that a path is
    under its root by its text (os.path.abspath), not where a link leads, so a link under the
    root is served whatever it points at (allow_hidden does not change that)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, Path(root) / "made-by-hand")
    code, model = await contents(jp_fetch, "made-by-hand")
    assert (code, model["content"]) == (200, "secret")


async def test_6_the_contents_api_cannot_follow_a_link_a_job_wrote_out_of_its_outputs(
    api, jp_fetch, root
):
    name = await api.submit(notebook=WRITES_LINKS)
    await api.follow(name)
    location = Path(root) / "outputs" / name
    for link in ("pw", "etc/passwd", "etc"):
        code, model = await contents(jp_fetch, "outputs", name, *link.split("/"))
        assert code == 404, (link, model.get("content", "")[:80])
    assert not os.path.lexists(location / "pw") and not os.path.lexists(location / "etc")
    code, model = await contents(jp_fetch, "outputs", name, "latest")  # a link inside: kept
    assert (code, model["content"]) == (200, "weights")
    listed = await api.get(f"jobs/{name}/outputs")
    files = {f["path"]: f for f in listed.json["files"]}
    assert files["pw"] == {"path": "pw", "size": 0, "link": "/etc/passwd"}  # listed as written
    assert files["etc"] == {"path": "etc", "size": 0, "link": "/etc"}
    assert files["latest"] == {"path": "latest", "size": 0, "link": "model.txt"}
    assert sorted(files) == ["etc", "latest", "model.txt", "pw"]
