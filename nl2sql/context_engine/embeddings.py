"""Static word embeddings (WordLlama, 256 dimensions) whose weights ship inside the wheel.

Loaded once per process from the installed package folder with downloads disabled: WordLlama
0.4 looks for its tokenizer beside the cache dir it is given and would otherwise download it, so
``cache_dir`` is the package folder itself. No network, no torch.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any
from nl2sql._helpers import quiet_imports

if TYPE_CHECKING:
    import numpy as np

DIMENSIONS = 256
_model: Any = None
_lock = threading.Lock()


def model() -> Any:
    """The shared WordLlama model (loaded on first use; never downloads)."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                with quiet_imports("wordllama"):  # it calls logging.basicConfig
                    import wordllama

                _model = wordllama.WordLlama.load(
                    dim=DIMENSIONS, cache_dir=Path(wordllama.__file__).parent,
                    disable_download=True)
    return _model


def embed(texts: list[str]) -> np.ndarray:
    """Unit-length embeddings of ``texts`` (one row each); cosine similarity is a dot product."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    vectors = np.asarray(model().embed(texts, norm=False), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


def similarities(vectors: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Cosine similarity of each row of ``vectors`` with ``vector`` (all unit length).

    ``einsum`` rather than ``@``: a matrix-vector product goes to multi-threaded BLAS, whose
    threads only get in each other's way for a few hundred thousand multiplications, badly so
    on a machine that is busy with other work (3x slower median measured)."""
    import numpy as np

    return np.einsum("ij,j->i", vectors, vector)
