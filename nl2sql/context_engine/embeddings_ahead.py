"""Table embeddings computed by a child process while annotation is still reading the database.

``annotate-schema`` knows what each table's embedding is made of (its name, description and
column names: ``index.embed_text``) as soon as the schema is extracted, but builds the context
index only after the sample rows and enum screening. Done then, in the annotating process,
importing numpy, loading the tokenizer and weights and embedding 1,000 tables add 0.15-0.2 s
at the very end of the run, with the machine's second core idle. ``EmbeddingsAhead`` starts a
child Python at once; it loads the model while the parent extracts, takes the texts when they
are known and hands their vectors back (``bench/README.md``, issue 29: annotate-schema as a whole
process).

A vector is used only for the exact text it was computed from, and the child's vectors are the
ones ``embeddings.embed`` gives in-process (a text's vector does not depend on its batch;
``tests/test_context_engine.py`` checks the index files are byte for byte the same), so the
index is the same whether the child answered, failed, was slow or never started: anything it
did not answer is embedded in-process as before. The child reads its texts on stdin and writes
one ``.npy`` matrix on stdout; it never touches the database, the data dir or the network, and
it ends with the parent's annotation (killed if still running; its stdin closing ends it if the
parent dies).
"""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import threading
from nl2sql.context_engine import embeddings
from nl2sql.context_engine.embeddings import DIMENSIONS, Embedded

log = logging.getLogger(__name__)

#: Seconds the parent waits for the vectors before embedding in-process itself.
WAIT_SECONDS = 60.0

_CHILD = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
          "from nl2sql.context_engine.embeddings_ahead import serve; serve()")


class EmbeddingsAhead:
    """A child process embedding texts ahead of the index build (``close`` ends it)."""

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._writer: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None
        if _usable_cpus() < 2 or embeddings.loaded():
            return  # the child would take turns with this process, or save it nothing
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _CHILD, json.dumps(sys.path)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as exc:  # no interpreter to start (frozen, sandboxed): in-process
            log.debug("embeddings ahead: no child process (%s)", exc)
            self._process = None

    def send(self, texts: list[str]) -> None:
        """The texts to embed (once). Written by a thread: the child may still be loading."""
        if self._process is None or self._writer is not None:
            return
        self._texts = list(texts)
        payload = json.dumps(self._texts).encode()
        self._writer = threading.Thread(target=self._write, args=(payload,),
                                         name="nl2sql-embeddings-ahead", daemon=True)
        self._writer.start()

    def _write(self, payload: bytes) -> None:
        assert self._process is not None and self._process.stdin is not None
        try:
            with self._process.stdin:
                self._process.stdin.write(payload)
        except (OSError, ValueError) as exc:  # the child died or was stopped
            log.debug("embeddings ahead: texts not sent (%s)", exc)

    def vectors(self) -> Embedded | None:
        """The vectors of the texts sent; None when the child could not answer."""
        if self._process is None or self._writer is None:
            return None
        assert self._process.stdout is not None
        deadline = threading.Timer(WAIT_SECONDS, self.close)  # a stuck child: in-process
        deadline.start()
        try:
            out = self._process.stdout.read()  # until the child exits
            self._process.wait()
        except OSError as exc:  # it failed, or was stopped
            log.debug("embeddings ahead: no vectors (%s)", exc)
            return None
        finally:
            deadline.cancel()
            self.close()
        if self._process.returncode != 0 or not _whole_matrix(out, len(self._texts)):
            return None
        return Embedded(self._texts, out)

    def close(self) -> None:
        """Stop the child if it still runs (idempotent)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()


def _usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system says)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _whole_matrix(npy: bytes, rows: int) -> bool:
    """``npy`` is one whole ``.npy`` file of ``rows`` float32 vectors (the magic string, the
    header's length, then exactly that many bytes of data), not a truncated or mixed output."""
    if not npy.startswith(b"\x93NUMPY") or len(npy) < 10:
        return False
    header = 10 + int.from_bytes(npy[8:10], "little") if npy[6] == 1 else \
        12 + int.from_bytes(npy[8:12], "little")
    return len(npy) == header + rows * DIMENSIONS * 4


def serve() -> None:
    """The child: load the model while the texts come in, then write their vectors."""
    channel = sys.stdout.buffer
    sys.stdout = sys.stderr  # whatever a library prints stays out of the vectors
    import numpy as np

    loading = threading.Thread(target=embeddings.model, daemon=True)
    loading.start()
    texts = json.loads(sys.stdin.buffer.read() or b"[]")
    loading.join()
    buffer = io.BytesIO()
    np.save(buffer, embeddings.embed(texts), allow_pickle=False)
    channel.write(buffer.getvalue())
    channel.flush()
