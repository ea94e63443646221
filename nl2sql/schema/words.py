"""Words of names and questions: identifiers split (snake_case, camelCase, digits), common
abbreviations expanded (``qty``, ``amt``, ``cust``...), plurals folded, stop words dropped.

The same ``terms()`` runs on schema names, descriptions and questions, so "InvoiceLine",
"invoice_lines" and "invoice lines" meet on the same terms.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

#: Abbreviations seen in table and column names, with the word they stand for.
ABBREVIATIONS = {
    "acct": "account", "addr": "address", "amt": "amount", "avg": "average", "bal": "balance",
    "bday": "birthday", "cat": "category", "cnt": "count", "cntry": "country", "co": "company",
    "comp": "company", "cust": "customer", "cstmr": "customer", "ctry": "country",
    "curr": "currency", "dept": "department", "desc": "description", "descr": "description",
    "dob": "birth", "doc": "document", "dt": "date", "emp": "employee", "empl": "employee",
    "fname": "first", "lname": "last", "gen": "genre", "grp": "group", "hr": "hour",
    "img": "image", "inv": "invoice", "invc": "invoice", "lang": "language", "loc": "location",
    "mgr": "manager", "min": "minimum", "max": "maximum", "mo": "month", "msg": "message",
    "mth": "month", "nbr": "number", "num": "number", "no": "number", "org": "organization",
    "ord": "order", "pct": "percent", "perc": "percent", "ph": "phone", "pmt": "payment",
    "pos": "position", "prc": "price", "prod": "product", "pwd": "password", "qty": "quantity",
    "ref": "reference", "rev": "revenue", "sal": "salary", "sku": "product", "src": "source",
    "st": "state", "stat": "status", "std": "student", "stu": "student", "sup": "supplier",
    "supp": "supplier", "svc": "service", "tel": "phone", "tot": "total", "txn": "transaction",
    "trx": "transaction", "usr": "user", "val": "value", "veh": "vehicle", "yr": "year",
    "zip": "postal", "dob_": "birth", "cty": "city", "ship": "shipping", "wh": "warehouse",
    "whse": "warehouse", "prov": "province", "reg": "region", "sched": "schedule",
    "tkt": "ticket", "crs": "course", "instr": "instructor", "prof": "professor",
}

#: Words that name the same thing in schemas and in questions (business, people, places, time,
#: sport). A question word also looks for the other words of its groups, at a lower weight:
#: "customers" finds a ``client`` table, "appraisal" a ``perf_reviews`` table, "games" a
#: ``match`` table. Kept to words that mean the same in most schemas.
SYNONYM_GROUPS = [
    "customer client shopper buyer patron consumer purchaser",
    "employee staff worker personnel emp people headcount colleague",
    "product item sku goods article merchandise",
    "order purchase basket",
    "supplier vendor provider",
    "store shop outlet",
    "merchant shop retailer",
    "manager boss supervisor mgr",
    "department dept division",
    "salary pay wage compensation earnings",
    "grade band level",
    "review appraisal evaluation assessment",
    "revenue sales turnover income spend",
    "amount total sum",
    "price cost fee fare rate charge",
    "quantity qty units",
    "category kind",
    "country nation nationality",
    "city town",
    "region area territory zone",
    "member subscriber",
    "loan credit borrow lend lent borrowed",
    "transaction payment transfer txn trans",
    "leave absence vacation holiday",
    "course training learning class",
    "candidate applicant",
    "requisition vacancy opening",
    "doctor physician",
    "film movie",
    "song track tune",
    "artist musician performer",
    "author writer",
    "match game fixture",
    "venue stadium ground arena",
    "season edition",
    "player cricketer athlete",
    "team side club franchise",
    "umpire referee official",
    "wicket dismissal dismiss",
    "shipment delivery consignment",
    "invoice bill",
    "return refund",
    "hire recruit",
    "termination leaver attrition",
    "district county",
    "account acct",
]

STOP_WORDS = frozenset("""
a an the of in on at to for from by with and or not no is are was were be been being do does did
has have had what which who whom whose when where why how many much all any each every some
list show give find get tell me my our your their there this that these those it its as than
then per please i we you they he she them his her also only just most least more less top
number count different distinct name names value values
""".split()) - {"no"}
# "number", "count", "name"... are so common in schemas and questions that they only add noise.


def split_identifier(name: str) -> list[str]:
    """``"InvoiceLine"`` -> ``["invoice", "line"]``; ``"cust_addr2"`` -> ``["cust", "addr", "2"]``."""
    words = []
    for part in _WORD.findall(name):
        words += [w.lower() for w in _CAMEL.findall(part)] or [part.lower()]
    return words


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """A light English stemmer: plurals and a few suffixes, enough to fold "categories" and
    "category", "shipped" and "ship"."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"),
                         ("shes", "sh"), ("ing", ""), ("ed", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            word = word[: len(word) - len(suffix)] + repl
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2]:
                word = word[:-1]  # shipped -> shipp -> ship
            return word
    return word


def terms(text: str, *, expand: bool = True) -> list[str]:
    """Search terms of ``text``: split, lower-cased, abbreviations expanded, stemmed, stop words
    and one-letter words dropped (numbers are kept)."""
    return list(_terms(text, expand))  # a new list: callers extend it


@lru_cache(maxsize=100_000)  # column names and words repeat across the tables of a schema
def _terms(text: str, expand: bool) -> tuple[str, ...]:
    out = []
    for word in split_identifier(text):
        if word in STOP_WORDS or (len(word) == 1 and not word.isdigit()):
            continue
        out.append(stem(word))
        if expand and word in ABBREVIATIONS:
            out.append(stem(ABBREVIATIONS[word]))
    return tuple(out)


def normalize_value(value: str) -> str:
    """A stored value for exact matching: case and spacing folded."""
    return " ".join(value.casefold().split())


_NOT_ALNUM = re.compile(r"[\W_]+", re.UNICODE)


def compact(value: str) -> str:
    """Letters and digits only, folded: "AC/DC" and "acdc" meet."""
    return _NOT_ALNUM.sub("", value.casefold())


@lru_cache(maxsize=1)
def _synonyms() -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    for group in SYNONYM_GROUPS:
        words = [stem(w) for w in group.split()]
        for word in words:
            found.setdefault(word, []).extend(w for w in words if w != word)
    return {word: tuple(dict.fromkeys(others)) for word, others in found.items()}


def synonyms(term: str) -> tuple[str, ...]:
    """The other (stemmed) words of ``term``'s synonym groups."""
    return _synonyms().get(term, ())
