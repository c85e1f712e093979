"""The Jupyter server extension: REST handlers and log streaming (see docs/rest-api.md)."""
