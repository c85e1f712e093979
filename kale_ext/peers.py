"""The one way kale_ext talks HTTP to a peer it does not control (Kubeflow Trainer's status
URL, an MLflow tracking server): :func:`_kale_ext_request`, bounded by total time, not per read.

``urllib.request.urlopen(timeout=5)`` bounds each read of the socket: a peer that sends one byte
every 0.5 s holds it for good (a job that posts its progress at exit then never ends), and it
follows a redirect carrying the request's headers, its bearer token among them, to whatever host
the ``Location`` names. Here the whole request (connect, TLS, send, the answer's head and body)
has one deadline, after which its socket is shut down whatever it waits for; the answer is read
up to a bound; a redirect is returned as it is, never followed, so credentials go only where
they were meant to.

The function is self-contained (standard library only, every import inside it): compiled jobs
carry its source (``trainer_status.embedded``), as they carry the poster that calls it.
"""

from __future__ import annotations


def _kale_ext_request(method, url, data=None, headers=None, timeout=5.0, context=None,
                      limit=1 << 20):  # fmt: skip  # kale_ext: one bounded HTTP request
    """(status, headers, body) of one HTTP(S) request that takes at most ``timeout`` seconds in
    all; ``body`` is at most ``limit`` bytes (OSError past that). Redirects are not followed:
    a 3xx comes back as it is (its ``Location`` in ``headers``). ``context`` verifies TLS
    (default: the system's CAs). OSError when it cannot be done: TimeoutError past the
    deadline, whatever the peer was doing."""
    import http.client
    import socket
    import ssl
    import threading
    import time
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OSError(f"not an http(s) URL: {url!r}")
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    deadline = time.monotonic() + timeout
    sock = socket.create_connection((parts.hostname, port), timeout)
    guard = sock.dup()  # the same connection: shut down from the timer, whatever reads it
    expired = threading.Event()

    def expire():
        expired.set()
        try:
            guard.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
    timer.daemon = True
    timer.start()
    try:
        if https:
            context = context or ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=parts.hostname)
            connection = http.client.HTTPSConnection(parts.hostname, port, timeout=timeout,
                                                     context=context)  # fmt: skip
        else:
            connection = http.client.HTTPConnection(parts.hostname, port, timeout=timeout)
        connection.sock = sock  # connected above: within the deadline
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request(method, target, body=data, headers=dict(headers or {}))
        answer = connection.getresponse()
        body = answer.read(limit + 1)
        if len(body) > limit:
            raise OSError(f"its answer is longer than {limit} bytes")
        if expired.is_set():
            raise TimeoutError(f"timed out: no whole answer within {timeout:g} s")
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, body
    except (OSError, http.client.HTTPException, ValueError) as e:
        if expired.is_set():
            raise TimeoutError(f"timed out: no whole answer within {timeout:g} s") from None
        if isinstance(e, OSError):
            raise
        raise OSError(f"{type(e).__name__}: {e}") from None
    finally:
        timer.cancel()
        guard.close()
        sock.close()
