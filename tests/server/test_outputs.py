"""A job's outputs through the REST API (a real Jupyter server, a real job): GET outputs lists
them with sizes; DELETE keeps them, says where, and deletes them only when asked."""

from __future__ import annotations

import json

import pytest

from tests.conftest import notebook

pytest.register_assert_rewrite("tests.harness.server")
from tests.harness.server import lines  # noqa: E402

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]


async def test_the_example_trains_on_two_nodes_and_saves_its_model_where_it_lasts(
    api, root, jobs_dir
):
    """The torch example through the REST API (2 nodes × 1 process, DDP over gloo): the one
    real run of it here."""
    name = await api.submit({"nodes": 2, "parameters": {"epochs": 1}}, path="digits_ddp.ipynb")
    events = await api.follow(name)
    assert events[-1].data["status"] == "Complete", (
        "\n".join(f"[{n}] {t}" for n, t in lines(events)[-60:])  # both nodes' last lines: why
        + f"\n{events[-1].data}"
    )
    accuracy = [e.data for e in events if "test accuracy" in e.data.get("text", "")]
    assert {d["rank"] for d in accuracy} == {0, 1}
    job = (await api.get(f"jobs/{name}")).json
    assert job["num_nodes"] == 2 and [n["state"] for n in job["nodes"]] == ["Succeeded"] * 2
    found = (await api.get(f"jobs/{name}/outputs")).json
    final = root / "outputs" / name
    assert found["location"] == str(final) and found["listed"] and found["note"] is None
    [model] = found["files"]
    assert (
        model["path"] == "digits_model.pt"
        and model["size"] == (final / model["path"]).stat().st_size
    )

    kept = (await api.delete(f"jobs/{name}")).json
    assert kept == {
        "deleted": name,
        "outputs": f"kept its outputs in {final} (delete them too with --outputs)",
    }
    assert (final / "digits_model.pt").is_file()


#: A job that leaves an output and needs no torch (the example's run above is the torch one).
SAVES = notebook("import os\nwith open(os.environ['KALE_EXT_OUTPUT_DIR'] + '/model.txt', 'w') as f:"
                 "\n    f.write('weights')")  # fmt: skip


async def test_outputs_are_served_under_the_root_and_deleted_when_asked(api, root, jobs_dir):
    (root / "saves.ipynb").write_text(json.dumps(SAVES))
    name = await api.submit({}, path="saves.ipynb")
    assert (await api.follow(name))[-1].data["status"] == "Complete"
    assert (root / "outputs" / name / "model.txt").read_text() == "weights"
    # where Jupyter serves them: the panel's Open and Download
    found = (await api.get(f"jobs/{name}/outputs")).json
    assert found["root_path"] == f"outputs/{name}"
    served = await api.fetch("files", found["root_path"], "model.txt", method="GET")
    assert served.body == b"weights"
    r = await api.delete(f"jobs/{name}", params={"outputs": "1"})
    assert r.json["outputs"] == f"deleted its outputs in {root / 'outputs' / name}"
    assert not (root / "outputs" / name).exists()


@pytest.mark.parametrize(
    "method, path, params, status, says",
    [
        ("GET", "jobs/nope/outputs", None, 404, "no local job named 'nope'"),
        ("DELETE", "jobs/nope", {"outputs": "maybe"}, 400, "must be 0 or 1"),
        ("GET", "jobs/nope/outputs", {"copy": "/tmp"}, 400, "unknown query parameter 'copy'"),
    ],
)
async def test_bad_requests(api, method, path, params, status, says):
    r = await api.request(method, path, params=params)
    assert r.status == status and says in r.json["message"]
