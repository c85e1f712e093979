"""The body POST compile, POST jobs and POST sweeps share: a notebook, by its path under the
server root or as its JSON, and the job's options."""

from __future__ import annotations

from pathlib import PurePosixPath

from .base import ApiError, KaleExtHandler, json_type
from .paths import read_notebook_bytes, relative_path


class NotebookHandler(KaleExtHandler):
    """Base of POST compile, POST jobs and POST sweeps: the same notebook in the body."""

    fields = ("path", "notebook", "options")

    def root_dir(self) -> str:
        """The server root: notebooks' paths, and their workspaces, lie under it."""
        return getattr(self.contents_manager, "root_dir", None) or self.serverapp.root_dir

    async def notebook_of(self, body: dict):
        """(data, name, path) of the body's notebook: file bytes or nbformat JSON. With both, the
        JSON is the content (unsaved changes count) and the path names the job and its origin."""
        has_path, has_nb = body.get("path") is not None, body.get("notebook") is not None
        if not (has_path or has_nb):
            raise ApiError(
                400,
                "give either path (a notebook under the server root) or notebook (its JSON)",
                field="path",
            )
        options = body.get("options")
        if options is not None and not isinstance(options, dict):
            raise ApiError(
                400, f"options must be an object, not {json_type(options)}", field="options"
            )
        if has_nb:
            if not isinstance(body["notebook"], dict):
                kind = json_type(body["notebook"])
                raise ApiError(
                    400,
                    f"notebook must be the notebook's JSON object, not {kind}",
                    field="notebook",
                )
            if not has_path:
                return body["notebook"], "notebook.ipynb", None
            path = relative_path(body["path"])
            return body["notebook"], PurePosixPath(path).name, path
        path = body["path"]
        cm = self.contents_manager
        root = getattr(cm, "root_dir", None) or self.serverapp.root_dir
        hidden = bool(getattr(cm, "allow_hidden", False))
        data = await self.work(read_notebook_bytes, root, path, hidden, self.app.max_notebook_bytes)
        return data, PurePosixPath(path).name, path

    def check_options(self, body: dict):
        """The body against the published schema: a 400 naming the field, except for the values
        of `options`, whose error (a ConfigError, or None) is returned: POST compile reports it
        as a result, POST jobs as a 400."""
        from .schema import check_body

        body_error, options_error = check_body(body)
        if body_error is not None:
            raise ApiError(400, str(body_error), "InvalidBody", field=body_error.field)
        return options_error
