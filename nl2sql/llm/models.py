"""Choosing the LLM: any pydantic-ai model string, and provider failures as ``ModelSetupError``.

The string comes from a ``model=`` argument or ``--model``, ``NL2SQL_MODEL`` or ``model:`` in
dbs.yaml (the registry resolves that order). ``test`` is pydantic-ai's ``TestModel``
(``infer_model`` maps it), which needs no network and no key. Shared by annotation, the agents
and evaluation.

Every provider reports setup problems differently (missing package, key, quota, rate limit,
unknown model, unreachable host); ``model_setup_error`` maps them to one sentence that names the
fix and never contains a secret. ``PROVIDER_ERRORS`` are the exceptions that mean "the model or
provider cannot be used", as opposed to a bad answer.
"""

from __future__ import annotations

import importlib
import re

from pydantic_ai import exceptions as ai_errors
from pydantic_ai.models import Model, infer_model

from nl2sql.errors import ModelSetupError

CHOOSE = "choose another model with --model / NL2SQL_MODEL"
_KEY_VARIABLE = re.compile(r"\b([A-Z][A-Z0-9_]*_(?:API_KEY|TOKEN|KEY))\b")
_EXTRA = re.compile(r"pydantic-ai-slim\[([a-z0-9_-]+)\]")
# Providers whose key variable we can name even when the error does not.
_PROVIDER_KEYS = {"openai": "OPENAI_API_KEY", "openai-chat": "OPENAI_API_KEY",
                  "anthropic": "ANTHROPIC_API_KEY",
                  "google-gla": "GOOGLE_API_KEY", "groq": "GROQ_API_KEY",
                  "mistral": "MISTRAL_API_KEY", "cohere": "CO_API_KEY",
                  "deepseek": "DEEPSEEK_API_KEY", "openrouter": "OPENROUTER_API_KEY"}


def model_label(model: Model | str) -> str:
    """The name recorded in ``AnnotationRun.model``: the string as given, or provider:name."""
    if isinstance(model, str):
        return model
    system = getattr(model, "system", None)
    return f"{system}:{model.model_name}" if system and system != model.model_name \
        else model.model_name


def build_model(model: Model | str) -> Model:
    """Turn a model string into a pydantic-ai ``Model``; setup problems become ModelSetupError."""
    if isinstance(model, Model):
        return model
    try:
        return infer_model(model)
    except Exception as exc:  # noqa: BLE001 - every provider reports setup problems differently
        raise model_setup_error(exc, model) from None


def no_model_error() -> ModelSetupError:
    """The one error for "no model configured", naming the three places to set one."""
    return ModelSetupError(
        "No model configured: pass --model (or model= in Python), set NL2SQL_MODEL, or add "
        "'model:' to dbs.yaml, e.g. openai:gpt-4o-mini or ollama:qwen2.5-coder.")


def model_setup_error(exc: BaseException, model: Model | str | None) -> ModelSetupError:
    """A one-line, actionable ``ModelSetupError`` for a provider failure (never a secret)."""
    label = model_label(model) if model is not None else "the model"
    provider = label.split(":", 1)[0] if ":" in label else label
    text = str(exc)
    key = _key_variable(text, provider)
    if isinstance(exc, ImportError) or _EXTRA.search(text):
        extra = _EXTRA.search(text)
        group = extra.group(1) if extra else provider
        return ModelSetupError(f"Model '{label}' needs its provider package: install it with "
                               f"pip install 'nl2sql[{group}]' or {CHOOSE}.")
    if isinstance(exc, ai_errors.ModelAuthenticationError) or _status(exc) in (401, 403):
        return ModelSetupError(f"The provider refused the credentials for '{label}': set a valid "
                               f"{key or 'API key'} or {CHOOSE}.")
    if isinstance(exc, ai_errors.ModelQuotaExceededError) or _status(exc) == 402:
        return ModelSetupError(f"The quota or credit for '{label}' is used up: check the "
                               f"provider account or {CHOOSE}.")
    if isinstance(exc, ai_errors.ModelRateLimitError) or _status(exc) == 429:
        return ModelSetupError(f"The provider rate-limited '{label}': wait and run again (the "
                               f"results so far are cached), or lower --concurrency.")
    if isinstance(exc, ai_errors.ModelNotFoundError) or _status(exc) == 404:
        return ModelSetupError(f"The provider does not know the model '{label}'; {CHOOSE}.")
    if isinstance(exc, (ai_errors.ModelConnectionError, *_HTTP_ERRORS, OSError)):
        return ModelSetupError(f"Cannot reach the provider of '{label}': check the network or "
                               f"the provider's base URL setting, or {CHOOSE}.")
    if isinstance(exc, ai_errors.ModelAPIError):
        return ModelSetupError(f"The provider of '{label}' failed ({type(exc).__name__}): run "
                               f"again later (the results so far are cached) or {CHOOSE}.")
    if key or "api key" in text.lower() or "api_key" in text.lower():
        return ModelSetupError(f"Set {key or 'the provider API key'} or {CHOOSE}.")
    if text.startswith("Unknown model"):
        hint = text.split(". ", 1)[1] + " " if ". " in text else ""
        return ModelSetupError(f"Unknown model '{label}'. {hint}Use a pydantic-ai model string "
                               f"such as 'openai:gpt-4o' with --model / NL2SQL_MODEL.")
    first_line = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return ModelSetupError(f"Model '{label}' cannot be used ({first_line[:200]}); {CHOOSE}.")


def _http_error_classes() -> tuple[type[BaseException], ...]:
    # Provider SDKs use httpx, pydantic-ai itself httpx2; neither is a direct dependency.
    classes = []
    for module_name in ("httpx", "httpx2"):
        try:
            classes.append(importlib.import_module(module_name).HTTPError)
        except (ImportError, AttributeError):
            continue
    return tuple(classes)


_HTTP_ERRORS = _http_error_classes()

#: Exceptions that mean "the model/provider cannot be used", as opposed to a bad answer.
PROVIDER_ERRORS: tuple[type[BaseException], ...] = (
    ai_errors.ModelAPIError, ai_errors.UserError, ImportError, OSError, *_HTTP_ERRORS)


def _key_variable(text: str, provider: str) -> str | None:
    match = _KEY_VARIABLE.search(text)
    if match:
        return match.group(1)
    return _PROVIDER_KEYS.get(provider) if "key" in text.lower() else None


def _status(exc: BaseException) -> int | None:
    return getattr(exc, "status_code", None)
