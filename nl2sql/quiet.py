"""Import third-party modules without changing the user's logging or warning output.

Some libraries configure logging on import (``wordllama`` calls ``logging.basicConfig(level=
INFO)``, which makes every library's INFO lines appear in a notebook; ``bm25s`` sets its own
logger to DEBUG, so its debug lines reach stderr) or warn about optional notebook widgets
(``tqdm.auto`` via ``bm25s``). Import them inside ``quiet_imports(name)``: the root logger and
the library's own logger are put back as they were, and the widget warning is not shown.

    with quiet_imports("bm25s"):
        import bm25s
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_imports(*names: str) -> Iterator[None]:
    root = logging.getLogger()
    own = [logging.getLogger(name) for name in names]
    handlers, level, own_levels = list(root.handlers), root.level, [o.level for o in own]
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="IProgress not found")
            yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        for logger, own_level in zip(own, own_levels):
            logger.setLevel(own_level)
