"""What a file name in the workspace may be: one rule, checked by ``resolve_workspace_path``.

A name must read as what it is, to a person looking at a listing and to the file system:

- no invisible characters (control, format such as bidi overrides and zero-width spaces,
  line and paragraph separators), no absolute path, ``~`` or ``..`` part;
- NFKC-stable: Unicode's compatibility normalisation leaves it unchanged, so no character
  stands in for another (U+2024 ONE DOT LEADER for ``.``, U+FF0F FULLWIDTH SOLIDUS for ``/``,
  fullwidth letters, ligatures, superscripts); a tool that normalises names would otherwise
  see a different path;
- made of letters and digits of any script (with the combining marks that join them, but no
  overlay such as U+0338 COMBINING LONG SOLIDUS OVERLAY), and the ASCII characters in
  ``PUNCTUATION``; anything else (U+2215 DIVISION SLASH, U+2044 FRACTION SLASH, other dots,
  symbols, a backslash) is refused;
- each word (a run of letters) in one script, or Latin with Han, kana, Hangul and Bopomofo
  (UTS #39's "highly restrictive" mixes): ``rероrt.csv`` with Cyrillic ``е``/``р``/``о`` cannot
  sit beside ``report.csv`` looking like it, while ``отчёт.csv`` and ``売上_sales.csv`` can;
- no part that is empty, only dots, starts with a dot (hidden; the index ignores it) or starts
  or ends with a space, at most ``MAX_NAME_BYTES`` per part and ``MAX_FOLDERS`` folders deep.
"""

from __future__ import annotations

import unicodedata
from pathlib import PurePosixPath

from nl2sql.errors import WorkspacePathError

#: Longest file name (one path part, in UTF-8 bytes): file systems allow 255, and the
#: temporary ``.{name}.XXXXXXXX.tmp`` and the ``.metadata.json`` sibling need room.
MAX_NAME_BYTES = 200
#: Deepest folder a name may reach (``a/b/c.csv`` is two folders deep).
MAX_FOLDERS = 8
#: ASCII characters allowed besides letters and digits (``/`` separates parts).
PUNCTUATION = frozenset(" _-.,()+=@")
#: Unicode categories refused in names: control, format (bidi overrides, zero-width), line and
#: paragraph separators.
_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp"})
#: The East Asian scripts, written together (and with Latin) in one word: one script here.
_CJK = frozenset({"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "BOPOMOFO"})
HINT = "use a file name relative to the workspace, e.g. 'sales_2024.csv'"
_PLAIN = ("letters, digits, spaces and " + " ".join(sorted(PUNCTUATION - {" "})))


def check_name(name: object) -> str:
    """``name`` if it may name a file in the workspace, else ``WorkspacePathError``: one
    sentence naming the first thing wrong and what to write instead."""
    if not isinstance(name, str) or not name.strip():
        raise WorkspacePathError(f"The file name is empty; {HINT}.")
    if "\x00" in name:
        raise WorkspacePathError(f"The file name contains a NUL byte; {HINT}.")
    hidden = next((c for c in name if unicodedata.category(c) in _INVISIBLE), None)
    if hidden is not None:
        raise WorkspacePathError(f"The file name contains an invisible or control character "
                                 f"(U+{ord(hidden):04X}); {HINT}.")
    if name.startswith(("/", "\\", "~")):
        raise WorkspacePathError(f"Absolute path '{name}' is not allowed; {HINT}.")
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if ".." in parts:
        raise WorkspacePathError(f"Path '{name}' leaves the workspace; {HINT}.")
    _check_normal_form(name)
    odd = next((c for before, c in zip(" " + name, name) if not _allowed(c, before)), None)
    if odd is not None:
        raise WorkspacePathError(f"The file name contains {_describe(odd)}; a name is made of "
                                 f"{_PLAIN}; {HINT}.")
    _check_scripts(name)
    for part in name.split("/"):
        _check_part(name, part)
    if len(parts) - 1 > MAX_FOLDERS:
        raise WorkspacePathError(f"Path '{name}' is {len(parts) - 1} folders deep, at most "
                                 f"{MAX_FOLDERS}; {HINT}.")
    return name


def _check_normal_form(name: str) -> None:
    normal = unicodedata.normalize("NFKC", name)
    if normal == name:
        return
    odd = next((c for c in name if unicodedata.normalize("NFKC", c) != c), None)
    if odd is None:  # each character is stable, their sequence is not (e + U+0301 -> é)
        raise WorkspacePathError(f"The file name is not in Unicode's normal form (NFKC); "
                                 f"write it as '{normal}'.")
    raise WorkspacePathError(f"The file name contains {_describe(odd)}, which Unicode reads as "
                             f"'{unicodedata.normalize('NFKC', odd)}'; a name is made of "
                             f"{_PLAIN}; {HINT}.")


def _allowed(char: str, before: str) -> bool:
    """A letter or digit of any script, allowed ASCII punctuation, or a combining mark that
    joins a letter or digit (not an overlay such as U+0338 COMBINING LONG SOLIDUS OVERLAY)."""
    if char.isascii():
        return char.isalnum() or char in PUNCTUATION or char == "/"
    category = unicodedata.category(char)
    if category in ("Mn", "Mc"):
        return unicodedata.combining(char) != 1 and not (before.isascii() and not before.isalnum())
    return category[0] == "L" or category == "Nd"


def _script(char: str) -> str | None:
    """The script of a letter, read from the first word of its Unicode name (``LATIN SMALL
    LETTER A``, ``CYRILLIC ...``, ``CJK UNIFIED IDEOGRAPH-4E00``); None for what is not a
    letter (digits, marks and punctuation go with any script)."""
    if not unicodedata.category(char).startswith("L"):
        return None
    word = unicodedata.name(char, "UNKNOWN").split(" ", 1)[0]
    return "CJK" if word in _CJK else word


def _check_scripts(name: str) -> None:
    """Each word (a run of letters and marks) in one script, or Latin with the East Asian ones:
    spoofed names mix scripts inside a word (``pаypal``), a Russian name ends in ``.csv``."""
    words = "".join(c if unicodedata.category(c)[0] in "LM" else " " for c in name).split()
    for word in words:
        scripts = {script for c in word if (script := _script(c)) is not None}
        if len(scripts) > 1 and not scripts <= {"LATIN", "CJK"}:
            found = " and ".join(s.title() for s in sorted(scripts))
            raise WorkspacePathError(f"The file name mixes {found} letters in one word "
                                     f"('{word}'), which can pass for another word; write each "
                                     f"word in one script, e.g. 'sales_2024.csv'.")


def _check_part(name: str, part: str) -> None:
    if not part or part.strip(".") == "" or part.startswith("."):
        raise WorkspacePathError(f"Path '{name}' has an empty, hidden or dots-only part "
                                 f"('{part}'); {HINT}.")
    if part != part.strip(" "):
        raise WorkspacePathError(f"Path '{name}' has a part that starts or ends with a space; "
                                 f"{HINT}.")
    size = len(part.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise WorkspacePathError(f"The file name is too long ({size} bytes, at most "
                                 f"{MAX_NAME_BYTES} per folder or file name); {HINT}.")


def _describe(char: str) -> str:
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"
