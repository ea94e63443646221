"""Static word embeddings (WordLlama ``l2_supercat``, 256 dimensions) whose weights and
tokenizer ship inside the ``wordllama`` wheel.

A text's embedding is the mean of its tokens' rows of the weight matrix: WordLlama's own dense
inference (``WordLlamaInference.embed`` with ``norm=False``, same batches, same float32
arithmetic; ``tests/test_context_engine.py`` checks the vectors are the library's bit for bit). It
is done here with the files and the two libraries that read them (``tokenizers``,
``safetensors``) because the ``wordllama`` package's own loading costs what the vectors do not
need: importing it imports ``requests`` and its pydantic configuration models, and its model
converts the whole 32,000-row matrix to float32 where a call needs a few thousand rows
(0.10-0.12 s of ``annotate-schema``'s 1.35 s on 1,000 tables, and of the first question's
warm-up). The package itself is never imported: no download, no network, no torch, and its
``logging.basicConfig`` never runs.
"""

from __future__ import annotations

import importlib.util
import io
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

DIMENSIONS = 256
#: WordLlama's batch (``WordLlamaInference.embed``'s ``batch_size``): the padding, and so the
#: arrays summed, are the library's.
BATCH = 64
_CONFIG = "l2_supercat"
_model: Model | None = None
_lock = threading.Lock()


@dataclass(frozen=True)
class Model:
    """The tokenizer and the weight matrix (as stored: float16, one row per token)."""

    tokenizer: Any
    weights: np.ndarray


@dataclass(frozen=True)
class Embedded:
    """``texts``' unit vectors, one row each in order, as a stored ``.npy`` matrix (what
    ``np.save`` writes of ``embed(texts)``): written as it is, read only when a row is needed."""

    texts: list[str]
    npy: bytes

    def rows(self) -> dict[str, np.ndarray]:
        """Text -> vector."""
        import numpy as np

        return dict(zip(self.texts, np.load(io.BytesIO(self.npy), allow_pickle=False)))


def model_files() -> tuple[Path, Path]:
    """The weights and the tokenizer configuration inside the installed ``wordllama`` package
    (found without importing it)."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("the wordllama package is not installed")
    folder = Path(spec.origin).parent
    return (folder / "weights" / f"{_CONFIG}_{DIMENSIONS}.safetensors",
            folder / "tokenizers" / f"{_CONFIG}_tokenizer_config.json")


def loaded() -> bool:
    """Whether this process has loaded the model already (embedding here then costs little)."""
    return _model is not None


def model() -> Model:
    """The shared model (loaded on first use)."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                from safetensors import safe_open
                from tokenizers import Tokenizer

                weights_file, tokenizer_file = model_files()
                tokenizer = Tokenizer.from_file(str(tokenizer_file))
                tokenizer.enable_padding()
                tokenizer.no_truncation()
                with safe_open(str(weights_file), framework="np", device="cpu") as stored:
                    weights = stored.get_tensor("embedding.weight")
                _model = Model(tokenizer, weights)
    return _model


def raw_embed(texts: list[str]) -> np.ndarray:
    """Each text's mean token vector, as ``WordLlamaInference.embed(texts, norm=False)``: the
    rows a batch uses are converted to float32 (exactly, as the library's whole matrix is),
    then summed and divided by the token count in float32."""
    import numpy as np

    loaded = model()
    vocabulary = loaded.weights.shape[0]
    pooled = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
    for start in range(0, len(texts), BATCH):
        encoded = loaded.tokenizer.encode_batch(texts[start:start + BATCH],
                                                is_pretokenized=False, add_special_tokens=False)
        ids = np.array([e.ids for e in encoded], dtype=np.int32)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        np.clip(ids, 0, vocabulary - 1, out=ids)
        tokens = loaded.weights[ids].astype(np.float32)
        counts = np.maximum(mask.sum(axis=1, keepdims=True), 1.0).astype(np.float32)
        pooled[start:start + len(encoded)] = np.sum(tokens * mask[..., np.newaxis], axis=1,
                                                    dtype=np.float32) / counts
    return pooled


def embed(texts: list[str]) -> np.ndarray:
    """Unit-length embeddings of ``texts`` (one row each); cosine similarity is a dot product."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    vectors = raw_embed(texts)
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
