"""Pausing the cyclic garbage collector while many long-lived objects are built.

A wide schema (a reflection, a catalog of indexes) allocates hundreds of thousands of dicts,
tuples and models that live on; each automatic collection re-scans all of them, which cost
~35% of the extraction time on a 1,000-table schema (bench/extract_wide.py) and half of a
200-database catalog load (bench/context_speed.py). Reference counting still frees everything;
cycles, if any, are collected afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
