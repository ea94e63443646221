"""Import third-party modules without changing the user's logging or warning output.

Some libraries configure logging on import (``wordllama`` calls ``logging.basicConfig(level=
INFO)``, which makes every library's INFO lines appear in a notebook; ``bm25s`` sets its own
logger to DEBUG, so its debug lines reach stderr) or warn about optional notebook widgets
(``tqdm.auto`` via ``bm25s``). ``quiet_import`` imports such a module and puts the root logger
and the module's own logger back as they were.
"""

from __future__ import annotations

import importlib
import logging
import warnings
from types import ModuleType


def quiet_import(name: str) -> ModuleType:
    root, own = logging.getLogger(), logging.getLogger(name)
    handlers, level, own_level = list(root.handlers), root.level, own.level
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="IProgress not found")
            return importlib.import_module(name)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        own.setLevel(own_level)
