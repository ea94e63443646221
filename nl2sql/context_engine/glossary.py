"""The business glossary: what a team's words mean ("big spender", "active customer", "EMEA"),
per database in ``{data_dir}/glossary/{db_id}.yaml`` and for all databases in
``{data_dir}/glossary.yaml``; the entries a question needs, with why they were picked.

A file is ``terms:``, a list of ``{term, synonyms?, definition, sql?}``; it is validated on load
and a mistake is one line naming the file, the line and the field. An entry of the database's
file replaces a global entry with the same term. An entry is picked when the question says its
term or a synonym (words folded as everywhere in the engine: case, plurals, "spenders" is
"spender"), says something close to one (a typo: "big spendr"), or means the same as the term
(embedding similarity); at most ``MAX_ENTRIES`` and ``MAX_TOKENS``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from nl2sql.context_engine.prompt_context import GlossaryEntry
from nl2sql.schema.words import terms
from nl2sql.config.dbs_yaml import mapping_entry, yaml_error
from nl2sql.errors import GlossaryError
from nl2sql.context_engine import embeddings
from nl2sql.context_engine.embeddings import similarities

if TYPE_CHECKING:
    import numpy as np

MAX_ENTRIES = 6
MAX_TOKENS = 600
#: rapidfuzz ratio (0-100) from which a phrase of the question is a misspelt term.
FUZZY_RATIO = 86
#: Cosine similarity (question vs an entry's names and definition) from which the question
#: means the entry without saying it (WordLlama: unrelated questions stay under ~0.4).
SEMANTIC_SIMILARITY = 0.45


class GlossaryTerm(BaseModel):
    """One entry of a glossary file."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    term: str = Field(min_length=1)
    synonyms: list[str] = Field(default_factory=list)
    definition: str = Field(min_length=1)
    sql: str | None = None

    @field_validator("term", "definition")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @property
    def names(self) -> list[str]:
        return [self.term, *(s for s in self.synonyms if s.strip())]


class GlossaryFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    terms: list[GlossaryTerm] = Field(default_factory=list)


def glossary_paths(data_dir: Path, db_id: str) -> list[Path]:
    """The database's own glossary first, then the one for all databases."""
    return [data_dir / "glossary" / f"{db_id}.yaml", data_dir / "glossary.yaml"]


def read_glossary_file(path: Path) -> list[GlossaryTerm]:
    """The entries of one glossary file ([] when it does not exist); ``GlossaryError`` with
    file, line and field when it is not valid."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise GlossaryError(f"{path}: cannot be read ({exc}); fix or remove the file.") from None
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise GlossaryError(str(yaml_error(path, exc))) from None
    if data is None:
        return []
    if not isinstance(data, dict):
        raise GlossaryError(f"{path}:1: expected a mapping with a 'terms:' list at the top.")
    try:
        return GlossaryFile.model_validate(data).terms
    except ValidationError as exc:
        error = exc.errors()[0]
        location = tuple(error["loc"])
        field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}"
                        for part in location).lstrip(".")
        problem = "missing" if error["type"] == "missing" else error["msg"].lower()
        raise GlossaryError(
            f"{path}:{_line(node, location)}: field '{field}': {problem}; each entry of 'terms' "
            f"is {{term, definition, synonyms (a list), sql (optional)}}.") from None


def _line(node: yaml.Node | None, location: tuple[Any, ...]) -> int:
    """The line of the deepest node of ``location`` that exists (1-based)."""
    line = node.start_mark.line + 1 if node is not None else 1
    for part in location:
        if isinstance(part, int) and isinstance(node, yaml.SequenceNode) \
                and part < len(node.value):
            node = node.value[part]
        elif isinstance(part, str) and (entry := mapping_entry(node, part)) is not None:
            node = entry[1]
        else:
            break
        line = node.start_mark.line + 1
    return line


@dataclass
class _Loaded:
    signature: tuple[tuple[int, int] | None, ...]
    entries: list[GlossaryTerm]
    vectors: np.ndarray | None = None


_CACHE: dict[tuple[Path, str], _Loaded] = {}
_LOCK = threading.Lock()


def load_glossary(data_dir: Path, db_id: str) -> list[GlossaryTerm]:
    """The glossary of ``db_id``: its own entries, then the global ones it does not redefine
    (re-read when a file changes)."""
    return _loaded(data_dir, db_id).entries


def _loaded(data_dir: Path, db_id: str) -> _Loaded:
    paths = glossary_paths(data_dir, db_id)
    signature = tuple(_stamp(path) for path in paths)
    key = (data_dir.resolve(), db_id)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None and cached.signature == signature:
        return cached
    entries: list[GlossaryTerm] = []
    seen: set[str] = set()
    for path in paths:
        for entry in read_glossary_file(path):
            if entry.term.casefold() not in seen:
                seen.add(entry.term.casefold())
                entries.append(entry)
    loaded = _Loaded(signature, entries)
    with _LOCK:
        _CACHE[key] = loaded
    return loaded


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_mtime_ns, status.st_size


def glossary_for(question: str, question_vector: np.ndarray | None, data_dir: Path,
                 db_id: str) -> list[GlossaryEntry]:
    """The glossary entries ``question`` needs, best reason first, bounded."""
    loaded = _loaded(data_dir, db_id)
    if not loaded.entries:
        return []
    words = terms(question, expand=False)
    lowered = " ".join(question.casefold().split())
    found: list[tuple[int, float, GlossaryTerm, str]] = []
    semantic = _semantic(loaded, question_vector)
    for i, entry in enumerate(loaded.entries):
        reason = _said(entry, words)
        if reason:
            found.append((0, 0.0, entry, reason))
        elif reason := _close(entry, lowered):
            found.append((1, 0.0, entry, reason))
        elif semantic is not None and semantic[i] >= SEMANTIC_SIMILARITY:
            found.append((2, -float(semantic[i]), entry,
                          f"similar in meaning to '{entry.term}' ({semantic[i]:.2f})"))
    found.sort(key=lambda item: (item[0], item[1]))
    chosen: list[GlossaryEntry] = []
    tokens = 0
    for _rank, _score, entry, reason in found:
        cost = (len(entry.term) + len(entry.definition) + len(entry.sql or "")) // 4 + 8
        if len(chosen) >= MAX_ENTRIES or tokens + cost > MAX_TOKENS:
            continue
        chosen.append(GlossaryEntry(term=entry.term, definition=entry.definition,
                                    sql=entry.sql, matched=reason))
        tokens += cost
    return chosen


def _said(entry: GlossaryTerm, words: list[str]) -> str | None:
    """The term or a synonym, as words of the question (plurals and case folded)."""
    found = said(entry.names, words)
    if found is None:
        return None
    return f"the question says '{found}'" + ("" if found == entry.term else
                                            f" (a synonym of '{entry.term}')")


def said(names: list[str], words: list[str]) -> str | None:
    """The first of ``names`` that the question's ``words`` (``terms(question,
    expand=False)``) contain, as words in a row."""
    for name in names:
        wanted = terms(name, expand=False)
        if wanted and _contains(words, wanted):
            return name
    return None


def _contains(words: list[str], wanted: list[str]) -> bool:
    size = len(wanted)
    return any(words[i:i + size] == wanted for i in range(len(words) - size + 1))


def _close(entry: GlossaryTerm, question: str) -> str | None:
    """A phrase of the question within a typo of the term or a synonym."""
    found = close(entry.names, question)
    return f"'{found[0]}' is close to '{found[1]}'" if found else None


def close(names: list[str], question: str) -> tuple[str, str] | None:
    """(phrase, name): a phrase of ``question`` (folded: ``" ".join(q.casefold().split())``)
    within a typo of one of ``names`` (of 5 characters or more)."""
    from rapidfuzz import fuzz

    tokens = question.split()
    for name in names:
        target = " ".join(name.casefold().split())
        size = len(target.split())
        if len(target) < 5:
            continue  # short words are close to too much
        for i in range(len(tokens) - size + 1):
            phrase = " ".join(tokens[i:i + size]).strip("?!.,;:'\"()")
            if fuzz.ratio(phrase, target) >= FUZZY_RATIO:
                return phrase, name
    return None


def _semantic(loaded: _Loaded, question_vector: np.ndarray | None) -> np.ndarray | None:
    if question_vector is None:
        return None
    if loaded.vectors is None:
        loaded.vectors = embeddings.embed([f"{', '.join(entry.names)}: {entry.definition}"
                                for entry in loaded.entries])

    return similarities(loaded.vectors, question_vector)
