"""`jupyter nbconvert --to trainjob NOTEBOOK`: the compiled module NOTEBOOK.py and the TrainJob
beside it as NOTEBOOK.trainjob.yaml, with the defaults' settings, as `kale-ext compile
--trainjob` makes them (`--TrainJobExporter.trainjob=False`: the module only). JupyterLab's
"Save and Export Notebook As" menu lists it too, since it is registered as an nbconvert
exporter."""

from __future__ import annotations

from nbconvert.exporters import Exporter
from traitlets import Bool


class TrainJobExporter(Exporter):
    export_from_notebook = "TrainJob (kale_ext)"
    output_mimetype = "text/x-python"

    trainjob = Bool(
        True,
        help="Write the TrainJob as <name>.trainjob.yaml beside the module (False: no TrainJob).",
    ).tag(config=True)

    def _file_extension_default(self) -> str:
        return ".py"

    def from_notebook_node(self, nb, resources=None, **kw):
        from .compile.compiler import compile_notebook
        from .compile.notebook import parse_notebook
        from .errors import KaleExtError
        from .job.configcell import config_of

        nb_copy, resources = super().from_notebook_node(nb, resources, **kw)
        name = (resources.get("metadata") or {}).get("name") or "notebook"
        try:
            job = compile_notebook(parse_notebook(dict(nb_copy), f"{name}.ipynb"))
            config_of(job)  # the `distributed` cell, checked
            if self.trainjob:
                from .backends.choose import preview_backend
                from .backends.submit import preview
                from .job.defaults import load

                defaults = load()  # the panel's defaults too
                backend = preview_backend(None, defaults)
                yaml_text = preview(backend, job, None, defaults, f"{name}.ipynb").yaml
                # "./": nbconvert cannot make the directory "" for a notebook given by a bare name
                outputs = resources.setdefault("outputs", {})
                outputs[f"./{name}.trainjob.yaml"] = yaml_text.encode()
        except KaleExtError as e:
            raise ValueError(f"kale_ext cannot compile {name}.ipynb:\n{e}") from None
        for w in job.warnings:
            self.log.warning("%s", w)
        return job.source, resources
