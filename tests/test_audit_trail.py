"""The audit trail's writer (``nl2sql.access.audit``): records are written in the order they were
recorded, by a thread of its own, so recording never waits for the store; a write that fails is
logged and the next records still go; a full queue drops and counts instead of blocking."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest

from nl2sql.access.audit import LINGER_SECONDS, AuditTrail


def test_records_are_written_in_order_and_flush_waits_for_them() -> None:
    written: list[int] = []

    batches: list[int] = []

    def slow_append(batch: list[dict]) -> bool:
        time.sleep(0.01)
        written.extend(fields["n"] for fields in batch)
        batches.append(len(batch))
        return True

    trail = AuditTrail(slow_append)
    started = time.monotonic()
    for n in range(200):
        trail.record(n=n)
    assert time.monotonic() - started < 0.2  # recording did not wait for the writes
    assert trail.flush(timeout=30)
    assert written == list(range(200))
    assert len(batches) < 50  # those waiting go in one write


def test_a_failing_write_is_logged_and_the_next_records_still_go(
        caplog: pytest.LogCaptureFixture) -> None:
    written: list[int] = []

    def flaky(batch: list[dict]) -> bool:
        if batch[0]["n"] == 1:
            raise OSError("disk full")
        written.extend(fields["n"] for fields in batch)
        return True

    trail = AuditTrail(flaky)
    with caplog.at_level(logging.WARNING, logger="nl2sql.access.audit"):
        for n in range(3):
            trail.record(n=n, tool="db_list")
            assert trail.flush(timeout=10)  # one write each
    assert written == [0, 2]
    assert "1 record(s) of db_list were not written" in caplog.text


def test_a_full_queue_drops_instead_of_blocking(caplog: pytest.LogCaptureFixture) -> None:
    release = threading.Event()
    written: list[int] = []

    def blocked_write(batch: list[dict[str, Any]]) -> None:
        release.wait(10)
        written.extend(record["n"] for record in batch)

    trail = AuditTrail(blocked_write, capacity=2)
    with caplog.at_level(logging.WARNING, logger="nl2sql.access.audit"):
        started = time.monotonic()
        for n in range(10):
            trail.record(n=n)
        assert time.monotonic() - started < 1.0
    # The writer holds one batch (at most a full queue, 2) while the queue fills again (2): the
    # other 6 or more are dropped, however the writer thread was scheduled.
    assert trail.dropped >= 6 and "dropped so far" in caplog.text
    with caplog.at_level(logging.WARNING, logger="nl2sql.access.audit"):
        assert not trail.flush(timeout=0.1)  # still waiting for the blocked write
    assert "still waiting to be written" in caplog.text
    release.set()
    assert trail.flush(timeout=10)
    assert len(written) + trail.dropped == 10 and written == sorted(written)


def test_a_record_waits_for_its_call_to_answer_and_a_flush_does_not() -> None:
    """The writer lets a new record linger (its call is still answering: a write then competes
    with the answer), gathering the calls of that moment into one write; ``flush`` ends the
    wait at once."""
    writes: list[tuple[float, list[int]]] = []

    def append(batch: list[dict]) -> None:
        writes.append((time.monotonic(), [fields["n"] for fields in batch]))

    trail = AuditTrail(append)
    started = time.monotonic()
    for n in range(3):  # three calls a few milliseconds apart
        trail.record(n=n)
        time.sleep(0.005)
    time.sleep(LINGER_SECONDS * 3)
    assert [numbers for _, numbers in writes] == [[0, 1, 2]]  # one write for the three
    assert writes[0][0] - started >= LINGER_SECONDS * 0.9  # not while the first call answered
    trail.record(n=3)
    asked = time.monotonic()
    assert trail.flush(timeout=10)
    assert time.monotonic() - asked < LINGER_SECONDS / 2 and writes[-1][1] == [3]
