"""The stdio transport's two ends, without a thread hand-off per line.

The SDK's ``stdio_server`` reads and writes through ``anyio.wrap_file``: every ``readline``,
``write`` and ``flush`` is a trip to a worker thread and back, three per tool call (15% of a
point query's instructions, and on an idle machine three thread wake-ups on its latency).
``stdio_server`` here hands the SDK's own ``stdio_server``, which still frames and parses, two
cheaper ends:

- ``LineReader``: the event loop watches stdin (epoll) and reads what has arrived. A pipe or
  terminal that polls readable never blocks a read, so the descriptor stays blocking (nothing
  changes for a process sharing it). One the loop cannot watch (a regular file) is read by a
  thread, one hand-off per read.
- ``LineWriter``: one thread writes the answers in the order they were handed over; the loop
  never waits for the client to read them, so a client that sends many requests before it
  reads any answer cannot deadlock the server. When stdout is a pipe the client has emptied
  and nothing is queued, an answer that fits the pipe is written by the loop itself: such a
  write cannot block, and the hand-off to the thread (a thread wake-up on every answer's
  latency) is saved.

As the SDK does for its own ends, fd 0 and fd 1 point at /dev/null and stderr while serving
(restored after), so a stray ``print`` or a child process cannot write into the protocol.
Anything else (stdin/stdout that are not fd 0/1) is served by the SDK's ends.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import queue
import stat
import sys
import termios
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TextIO

from mcp.server import stdio as sdk_stdio

#: Bytes taken per read (a longer line arrives in several).
READ_SIZE = 1 << 16
#: How long the server's end waits for answers the client has not taken yet.
DRAIN_SECONDS = 10.0


class LineReader:
    """``async for line in reader``: the lines of a descriptor (``\\n`` kept, invalid UTF-8
    replaced, as the SDK reads them), the last one even without its ``\\n``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._loop = asyncio.get_running_loop()
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._partial: list[bytes] = []
        try:
            self._loop.add_reader(fd, self._on_readable)
            self.watched = True
        except OSError:  # epoll refuses regular files (PermissionError)
            self.watched = False
            threading.Thread(target=self._read_in_thread, name="nl2sql-stdin",
                             daemon=True).start()

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        line = await self._lines.get()
        if line is None:
            self._lines.put_nowait(None)  # the end stays the end
            raise StopAsyncIteration
        return line

    def close(self) -> None:
        if self.watched:
            self._loop.remove_reader(self.fd)

    def _on_readable(self) -> None:
        data = _read(self.fd)
        if not data:
            self._loop.remove_reader(self.fd)
        self._put(self._lines_of(data))

    def _read_in_thread(self) -> None:
        while True:
            data = _read(self.fd)
            self._loop.call_soon_threadsafe(self._put, self._lines_of(data))
            if not data:
                return

    def _put(self, lines: list[str | None]) -> None:
        for line in lines:
            self._lines.put_nowait(line)

    def _lines_of(self, data: bytes) -> list[str | None]:
        """The lines ``data`` completes (a long line's pieces joined once: linear in its
        length); at the end of the input, the unterminated rest and ``None``."""
        if not data:
            rest, self._partial = b"".join(self._partial), []
            return [*([_text(rest)] if rest else []), None]
        head, newline, tail = data.rpartition(b"\n")
        if not newline:
            self._partial.append(data)
            return []
        self._partial.append(head)
        whole, self._partial = b"".join(self._partial), [tail] if tail else []
        return [_text(line) + "\n" for line in whole.split(b"\n")]


class LineWriter:
    """``await writer.write(text)``: handed to the writer thread, written whole and in order;
    a write error (the client went away) is raised by the next ``write`` or ``flush``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._error: OSError | None = None
        #: Answers handed to the thread and not yet written (changed under ``_lock``).
        self._pending = 0
        self._lock = threading.Lock()
        self._capacity = _pipe_capacity(fd)
        self._thread = threading.Thread(target=self._write_all, name="nl2sql-stdout",
                                        daemon=True)
        self._thread.start()

    async def write(self, text: str) -> None:
        self._raise_error()
        data = text.encode("utf-8")
        with self._lock:
            if not self._pending and self._fits_now(len(data)):
                self._write(data)  # cannot block: an empty pipe with room for all of it
                return
            self._pending += 1
        self._queue.put(data)

    def _fits_now(self, size: int) -> bool:
        """Whether stdout is a pipe holding no unread byte, with room for ``size`` bytes."""
        if self._capacity is None or size > self._capacity:
            return False
        try:
            unread = fcntl.ioctl(self.fd, termios.FIONREAD, b"\0\0\0\0")
        except OSError:
            return False
        return int.from_bytes(unread, sys.byteorder) == 0

    async def flush(self) -> None:
        self._raise_error()

    def drain(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until what was handed over is written."""
        self._queue.put(None)
        self._thread.join(timeout)

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error

    def _write_all(self) -> None:
        while (data := self._queue.get()) is not None:
            self._write(data)
            with self._lock:
                self._pending -= 1

    def _write(self, data: bytes) -> None:
        if self._error is not None:
            return
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]
        except OSError as exc:
            self._error = exc


@asynccontextmanager
async def stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's ``stdio_server`` (read and write streams of ``SessionMessage``) on the ends
    above, or on its own when stdin/stdout are not fd 0/1."""
    if not (_on_fd(sys.stdin, 0) and _on_fd(sys.stdout, 1) and _on_asyncio()):
        async with sdk_stdio.stdio_server() as streams:
            yield streams
        return
    with _claimed(0, os.O_RDONLY) as stdin_fd, _claimed(1, os.O_WRONLY) as stdout_fd:
        reader, writer = LineReader(stdin_fd), LineWriter(stdout_fd)
        try:
            async with sdk_stdio.stdio_server(stdin=reader, stdout=writer) as streams:  # type: ignore[arg-type]
                yield streams
        finally:
            reader.close()
            writer.drain(DRAIN_SECONDS)


@contextmanager
def _claimed(fd: int, mode: int) -> Iterator[int]:
    """A private descriptor of ``fd`` (never closed: a thread may still block on it), with
    ``fd`` itself pointing at /dev/null (stdin) or stderr (stdout) until the block ends."""
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    diversion = os.open(os.devnull, mode) if mode == os.O_RDONLY else os.dup(2)
    os.dup2(diversion, fd)
    os.close(diversion)
    try:
        yield private
    finally:
        os.dup2(private, fd)


def _on_fd(stream: TextIO, fd: int) -> bool:
    try:
        return stream.fileno() == fd
    except (AttributeError, OSError, ValueError):
        return False


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # anyio on trio
        return False
    return True


def _pipe_capacity(fd: int) -> int | None:
    """The bytes a pipe holds (Linux ``F_GETPIPE_SZ``), None for anything else."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    except (AttributeError, OSError):  # not Linux, or a descriptor that refuses
        return None


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, READ_SIZE)
    except OSError:  # EIO from a terminal that hung up: the end of the input
        return b""


def _text(line: bytes) -> str:
    return line.decode("utf-8", errors="replace")
