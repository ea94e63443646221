"""Stored values a question names: its word n-grams matched to the value index exactly, with
case, spacing and punctuation folded ("acdc" finds 'AC/DC'), then fuzzily for typos."""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass

from nl2sql.schema.words import STOP_WORDS, compact, normalize_value, stem, terms

#: A stored value that lists things: 'Angus Young, Malcolm Young', 'Rock/Pop', 'A & B'.
_LIST = re.compile(r"[,;/|&]| and ")
_TOKEN = re.compile(r"[\w][\w'/&.+-]*[\w]|[\w]", re.UNICODE)
_QUOTED = re.compile(r"'([^']{1,80})'|\"([^\"]{1,80})\"")
MAX_NGRAM = 6
FUZZY_CUTOFF = 86.0
MIN_FUZZY_LENGTH = 4
#: Short words need a closer match: one typo in four letters is another word.
SHORT_FUZZY_CUTOFF = 90.0
SHORT_LENGTH = 8
#: A phrase contained in a stored value ("Angus Young" in 'Angus Young, Malcolm Young, Brian
#: Johnson', "restaurants" in 'Eating Places, Restaurants') is a weaker link than the value.
CONTAINED_SCORE = 0.75
#: Values of at most this many words are looked into, for phrases of at most ``PART_WORDS``;
#: a lone word needs ``MIN_PART_LENGTH`` letters.
MAX_VALUE_WORDS = 12
PART_WORDS = 3
MIN_PART_LENGTH = 5
#: A phrase contained in more stored values than this says nothing about any one of them.
MAX_PART_VALUES = 20

Location = tuple[str, str, str]  # table, column, stored value


@dataclass(frozen=True)
class ValueMatch:
    table: str
    column: str
    value: str
    matched: str  # the question's words
    score: float  # 1.0 exact, less for a fuzzy match


_FOLDED_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def stem_key(text: str) -> str:
    """Words folded and stemmed: "ebooks" meets 'ebook'."""
    return " ".join(stem(w) for w in _FOLDED_WORD.findall(text.casefold()))


def value_keys(value: str) -> list[str]:
    """The three lookup keys of a stored value: folded, letters and digits only, stemmed
    (``normalize_value``, ``compact``, ``stem_key``, with the value folded once)."""
    folded = value.casefold()
    words = _FOLDED_WORD.findall(folded)  # the runs of letters and digits: compact joins them
    return [" ".join(folded.split()), "".join(words), " ".join([stem(w) for w in words])]


class ValueLookup:
    """Exact, compact and fuzzy lookup of stored values (built once per loaded index)."""

    def __init__(self, locations: list[Location], schema_words: set[str] | None = None,
                 keys: list[list[str]] | None = None) -> None:
        """``keys``: each location's ``value_keys()`` when computed already (the index stores
        them), else they are computed here."""
        #: Words of table and column names: a question word that names the schema ("book") is
        #: not fuzzily matched to a value ("ebook").
        self.schema_words = schema_words or set()
        self.exact: dict[str, list[Location]] = {}
        self.compact: dict[str, list[Location]] = {}
        self.stemmed: dict[str, list[Location]] = {}
        if keys is None:
            keys = [value_keys(location[2]) for location in locations]
        exact, packed, stemmed = self.exact, self.compact, self.stemmed
        for location, (exact_key, compact_key, stem_key_) in zip(locations, keys):
            exact.setdefault(exact_key, []).append(location)
            stemmed.setdefault(stem_key_, []).append(location)
            if compact_key:
                packed.setdefault(compact_key, []).append(location)
        self._by_length: dict[int, list[str]] | None = None
        self._stem_keys = stemmed
        self._parts: dict[str, list[Location]] | None = None
        self._parts_lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.exact)

    def fuzzy_keys(self, length: int, cutoff: float) -> list[str]:
        """Stored keys long enough and short enough to reach ``cutoff`` (``fuzz.ratio`` is
        2 * matches / total length, so lengths far apart cannot)."""
        if self._by_length is None:
            self._by_length = {}
            for key in self.compact:
                if len(key) >= MIN_FUZZY_LENGTH:
                    self._by_length.setdefault(len(key), []).append(key)
        share = cutoff / 100
        low, high = math.ceil(length * share / (2 - share)), int(length * (2 - share) / share)
        keys: list[str] = []
        for size in range(low, high + 1):
            keys += self._by_length.get(size, [])
        return keys

    def match(self, question: str, *, fuzzy: bool = True, limit: int = 12) -> list[ValueMatch]:
        """Values the question names, longest and exact matches first."""
        found: dict[Location, ValueMatch] = {}
        covered: set[int] = set()  # token positions already explained by a longer match
        words = _TOKEN.findall(question)
        phrases = [(m.group(1) or m.group(2)) for m in _QUOTED.finditer(question)]
        spans = [(n, i) for n in range(min(MAX_NGRAM, len(words)), 0, -1)
                 for i in range(len(words) - n + 1)]
        for text in phrases:
            self._lookup(text, found, fuzzy=fuzzy)
        for n, i in spans:
            positions = set(range(i, i + n))
            if positions <= covered:
                continue
            chunk = words[i:i + n]
            if all(w.casefold() in STOP_WORDS for w in chunk) or (
                    n == 1 and len(chunk[0]) < 2):
                continue
            if chunk[0].casefold() in STOP_WORDS or chunk[-1].casefold() in STOP_WORDS:
                if n > 1:  # "the Rock" is found as "Rock"; 'The Silent Orchard' as it is
                    hits = self.exact.get(normalize_value(" ".join(chunk)), [])
                    for location in hits:
                        found.setdefault(location, ValueMatch(*location, matched=" ".join(
                            chunk), score=1.0))
                    if hits:
                        covered |= positions
                    continue
            if self._lookup(" ".join(chunk), found, fuzzy=False):
                covered |= positions
        for n, i in spans:  # phrases inside stored values, where nothing longer matched
            positions = set(range(i, i + n))
            if positions & covered or n > PART_WORDS:
                continue
            chunk = words[i:i + n]
            if chunk[0].casefold() in STOP_WORDS or chunk[-1].casefold() in STOP_WORDS:
                continue
            if n == 1 and (len(chunk[0]) < MIN_PART_LENGTH or
                           set(terms(chunk[0])) <= self.schema_words):
                continue
            if self._contained(" ".join(chunk), found):
                covered |= positions
        if fuzzy:
            for n, i in spans:
                positions = set(range(i, i + n))
                if positions & covered or n > 3:
                    continue
                chunk = words[i:i + n]
                if any(w.casefold() in STOP_WORDS for w in chunk):
                    continue
                if set(terms(" ".join(chunk))) <= self.schema_words:
                    continue
                if self._fuzzy(" ".join(chunk), found):
                    covered |= positions
        ranked = sorted(found.values(), key=lambda m: (-m.score, -len(m.matched), m.table,
                                                       m.column))
        return ranked[:limit]

    def parts(self) -> dict[str, list[Location]]:
        """Stemmed phrases of up to ``PART_WORDS`` words inside multi-word stored values ->
        where (built on first use; phrases in too many values are left out)."""
        if self._parts is None:
            with self._parts_lock:
                if self._parts is None:
                    parts: dict[str, list[Location]] = {}
                    for key, locations in self._stem_keys.items():
                        words = key.split()
                        if not 1 < len(words) <= MAX_VALUE_WORDS:
                            continue
                        # a lone word only as a whole item of a list ('Eating Places,
                        # Restaurants'): in a title or an item it is a common word ("songs" in
                        # 'Quiet Songs', "sales" in 'Fábio Nolasco/Gal Sales/Ivan Brasil')
                        items = [stem_key(item) for item in _LIST.split(locations[0][2])]
                        phrases = [item for item in items if item and " " not in item]
                        phrases += [" ".join(words[start:start + size])
                                    for size in range(2, min(PART_WORDS, len(words) - 1) + 1)
                                    for start in range(len(words) - size + 1)]
                        for phrase in phrases:
                            bucket = parts.setdefault(phrase, [])
                            if len(bucket) <= MAX_PART_VALUES:
                                bucket.extend(locations)
                    self._parts = {k: v for k, v in parts.items() if len(v) <= MAX_PART_VALUES}
        return self._parts

    def _contained(self, text: str, found: dict[Location, ValueMatch]) -> bool:
        hits = self.parts().get(stem_key(text), [])
        for location in hits:
            found.setdefault(location, ValueMatch(*location, matched=text,
                                                  score=CONTAINED_SCORE))
        return bool(hits)

    def _lookup(self, text: str, found: dict[Location, ValueMatch], *, fuzzy: bool) -> bool:
        hits = (self.exact.get(normalize_value(text)) or self.compact.get(compact(text))
                or self.stemmed.get(stem_key(text)) or [])
        for location in hits:
            found.setdefault(location, ValueMatch(*location, matched=text, score=1.0))
        if not hits and fuzzy:
            return self._fuzzy(text, found)
        return bool(hits)

    def _fuzzy(self, text: str, found: dict[Location, ValueMatch]) -> bool:
        key = compact(text)
        if len(key) < MIN_FUZZY_LENGTH or key.isdigit():
            return False
        from rapidfuzz import fuzz, process

        cutoff = SHORT_FUZZY_CUTOFF if len(key) < SHORT_LENGTH else FUZZY_CUTOFF
        best = process.extract(key, self.fuzzy_keys(len(key), cutoff), scorer=fuzz.ratio,
                               score_cutoff=cutoff, limit=3)
        for stored, score, _ in best:
            for location in self.compact[stored]:
                found.setdefault(location, ValueMatch(*location, matched=text,
                                                      score=round(score / 100, 3)))
        return bool(best)
