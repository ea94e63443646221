"""Import third-party modules without changing the user's logging or warning output.

Some libraries configure logging on import (``wordllama`` calls ``logging.basicConfig(level=
INFO)``, which makes every library's INFO lines appear in a notebook) or warn about optional
notebook widgets (``tqdm.auto`` via ``bm25s``). ``quiet_import`` imports such a module and puts
the root logger back as it was.
"""

from __future__ import annotations

import importlib
import logging
import warnings
from types import ModuleType


def quiet_import(name: str) -> ModuleType:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="IProgress not found")
            return importlib.import_module(name)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
