"""Outputs on the (fake) cluster: the job names its volume, `outputs` says where they last, and
delete keeps a volume's files, saying so."""

from __future__ import annotations

from tests.harness.kube_fixtures import make_spec


def test_a_job_with_an_outputs_volume_says_where_they_are(backend, kube):
    backend.submit(make_spec({"outputs": "pvc:results:/out"}))
    found = backend.outputs("fit")
    assert (found.location, found.files, found.listed) == ("pvc:results:/out/fit", [], False)
    assert "mount it in a pod" in found.note
    assert backend.delete("fit") == "kept its outputs in pvc:results:/out/fit"


def test_delete_never_deletes_a_volumes_files(backend, kube):
    backend.submit(make_spec({"outputs": "pvc:results"}))
    note = backend.delete("fit", outputs=True)
    assert (
        note
        == "its outputs stay in pvc:results:/mnt/outputs/fit: delete them from a pod that mounts it"
    )
    assert kube.get("trainjobs", "fit") is None


def test_without_a_volume_the_outputs_went_with_the_pods(backend, kube):
    backend.submit(make_spec())
    found = backend.outputs("fit")
    assert found.location == "" and "went with its pods" in found.note
    assert backend.delete("fit") is None
