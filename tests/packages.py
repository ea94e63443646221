"""Make an installed package look absent, as on a machine without that provider extra."""

from __future__ import annotations

import sys

import pytest


def hide_package(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """``import name`` raises ImportError for this test; modules already built on it are dropped.

    A ``None`` entry in ``sys.modules`` is Python's documented way to make an import fail, and
    pydantic-ai's provider modules that imported the package are removed so they import again.
    """
    monkeypatch.setitem(sys.modules, name, None)
    for module in list(sys.modules):
        if module.startswith(f"{name}.") or module.endswith(f".{name}"):
            monkeypatch.delitem(sys.modules, module)
