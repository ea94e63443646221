"""Files shipped with nl2sql: prompts, the bookstore sample script and semantic model, and the
question sets.

In a wheel they live under ``nl2sql/_bundled/`` (pyproject force-include); in a source checkout
or an editable install they are read from the top-level ``prompts/``, ``data/`` and
``tests/data/questions/`` folders.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_BUNDLED = resources.files("nl2sql") / "_bundled"
_SOURCE_ROOT = Path(__file__).resolve().parents[2]


def prompt_path(relative: str) -> Path:
    """Path of a prompt file, e.g. ``prompt_path("annotation/table_descriptions.md")``."""
    bundled = _BUNDLED / "prompts" / relative
    if bundled.is_file():
        return Path(str(bundled))
    return _SOURCE_ROOT / "prompts" / relative


def read_prompt(relative: str) -> str:
    path = prompt_path(relative)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"prompt file {relative} is missing from the installation "
                                f"(looked at {path})") from None


def bookstore_script_path() -> Path:
    bundled = _BUNDLED / "bookstore.sql"
    if bundled.is_file():
        return Path(str(bundled))
    return _SOURCE_ROOT / "data" / "bookstore" / "bookstore.sql"


def bookstore_semantic_model_path() -> Path:
    """The bookstore sample's dbt semantic model (its metrics: ``nl2sql.metrics("bookstore")``)."""
    bundled = _BUNDLED / "bookstore_semantic_model.yml"
    if bundled.is_file():
        return Path(str(bundled))
    return _SOURCE_ROOT / "data" / "bookstore" / "semantic_model.yml"


def _questions_folder() -> Path:
    bundled = _BUNDLED / "questions"
    if bundled.is_dir():
        return Path(str(bundled))
    return _SOURCE_ROOT / "tests" / "data" / "questions"


def question_set_names() -> list[str]:
    """Names of the bundled question sets (``bookstore``, ``chinook``, ``chinook_postgres``...)."""
    return sorted(p.stem for p in _questions_folder().glob("*.jsonl"))


def question_set_path(name: str) -> Path | None:
    """Path of the bundled question set ``name`` (a JSONL file), or None when there is none."""
    path = _questions_folder() / f"{name}.jsonl"
    return path if path.is_file() else None
