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
import os
import typing
from urllib.parse import urlsplit

import pydantic_ai
from pydantic_ai import exceptions as ai_errors
from pydantic_ai.models import KnownModelName, Model, infer_model
from pydantic_ai.providers import infer_provider_class

from nl2sql._helpers import install_command
from nl2sql.errors import ModelSetupError, did_you_mean

# pydantic-ai shows a first-run banner on stderr (a terminal, or a coding agent reading it),
# which would land inside nl2sql's progress bar and output; ``BANNER_ENABLED`` is its switch
# for "a program that would rather own its output" (``PYDANTIC_AI_NO_BANNER`` is the same for
# the environment). Every nl2sql model use imports this module first.
pydantic_ai.BANNER_ENABLED = False

CHOOSE = "choose another model with --model / NL2SQL_MODEL"
# Decisions below use exception types, status codes, the missing module's name and the
# environment, never the wording of pydantic-ai's or a provider's messages (which changes).
# The key variable of each provider (pydantic-ai reads these).
_PROVIDER_KEYS = {"openai": "OPENAI_API_KEY", "openai-chat": "OPENAI_API_KEY",
                  "openai-responses": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
                  "google-gla": "GOOGLE_API_KEY", "groq": "GROQ_API_KEY",
                  "mistral": "MISTRAL_API_KEY", "cohere": "CO_API_KEY",
                  "deepseek": "DEEPSEEK_API_KEY", "openrouter": "OPENROUTER_API_KEY",
                  "grok": "GROK_API_KEY", "xai": "XAI_API_KEY",
                  "together": "TOGETHER_API_KEY", "fireworks": "FIREWORKS_API_KEY"}
# The variable that points each provider at another server (pydantic-ai reads these).
_PROVIDER_URLS = {"openai": "OPENAI_BASE_URL", "openai-chat": "OPENAI_BASE_URL",
                  "openai-responses": "OPENAI_BASE_URL", "ollama": "OLLAMA_BASE_URL",
                  "anthropic": "ANTHROPIC_BASE_URL", "groq": "GROQ_BASE_URL"}
#: Attribute ``build_model`` sets on a model built from a string: the string as given.
_GIVEN = "_nl2sql_model_string"
# Missing module (ImportError.name) -> the nl2sql extra that installs it.
_MODULE_EXTRAS = {"openai": "openai", "anthropic": "anthropic", "google": "google",
                  "groq": "groq", "mistralai": "mistral", "boto3": "bedrock",
                  "botocore": "bedrock"}


def model_label(model: Model | str) -> str:
    """The name recorded in ``AnnotationRun.model``: the string as given, or provider:name."""
    if isinstance(model, str):
        return model
    if given := getattr(model, _GIVEN, None):
        return str(given)
    system = getattr(model, "system", None)
    return f"{system}:{model.model_name}" if system and system != model.model_name \
        else model.model_name


def build_model(model: Model | str) -> Model:
    """Turn a model string into a pydantic-ai ``Model``; setup problems become ModelSetupError."""
    if isinstance(model, Model):
        return model
    try:
        built = infer_model(model)
    except Exception as exc:  # noqa: BLE001 - every provider reports setup problems differently
        raise model_setup_error(exc, model) from None
    try:
        setattr(built, _GIVEN, model)  # messages name the model as the user wrote it
    except AttributeError:  # a model class with __slots__: its provider:name then
        pass
    return built


def no_model_error() -> ModelSetupError:
    """The one error for "no model configured", naming the three places to set one."""
    return ModelSetupError(
        "No model configured: pass --model (or model= in Python), set NL2SQL_MODEL, or add "
        "'model:' to dbs.yaml, e.g. openai:gpt-4o-mini or ollama:qwen2.5-coder.")


def model_setup_error(exc: BaseException, model: Model | str | None) -> ModelSetupError:
    """A one-line, actionable ``ModelSetupError`` for a provider failure (never a secret)."""
    label = model_label(model) if model is not None else "the model"
    provider = label.split(":", 1)[0] if ":" in label else label
    key = _PROVIDER_KEYS.get(provider)
    if isinstance(exc, ImportError):
        group = _missing_extra(exc) or provider
        return ModelSetupError(f"Model '{label}' needs its provider package: "
                               f"{install_command(group)}, or {CHOOSE}.")
    if isinstance(exc, ai_errors.ModelAuthenticationError) or _status(exc) in (401, 403):
        return ModelSetupError(f"The provider refused the credentials for '{label}': set a valid "
                               f"{key or 'API key'} or {CHOOSE}.")
    if isinstance(exc, ai_errors.ModelQuotaExceededError) or _status(exc) == 402:
        return ModelSetupError(f"The quota or credit for '{label}' is used up: check the "
                               f"provider account or {CHOOSE}.")
    if isinstance(exc, ai_errors.ModelRateLimitError) or _status(exc) == 429:
        return ModelSetupError(f"The provider rate-limited '{label}': wait and run again (the "
                               f"results so far are cached), or lower --concurrency.")
    if isinstance(exc, ai_errors.ModelNotFoundError) or _status(exc) in (404, 405, 501):
        url = _PROVIDER_URLS.get(provider)
        if provider == "openai" and url and os.environ.get(url):
            # 'openai:' is OpenAI's Responses API, which OpenAI-compatible servers (Ollama,
            # vLLM, proxies) often lack; they answer it 404 as if the model were unknown.
            name = label.partition(":")[2]
            return ModelSetupError(
                f"The server at {_without_userinfo(os.environ[url])} ({url}) does not answer "
                f"'{label}' on the Responses API that 'openai:' uses; for an OpenAI-compatible "
                f"server use chat completions: --model openai-chat:{name}.")
        return ModelSetupError(f"The provider does not know the model '{label}'; {CHOOSE}.")
    if isinstance(exc, (ai_errors.ModelConnectionError, *_HTTP_ERRORS, OSError)):
        url = _PROVIDER_URLS.get(provider)
        where = (f"the server at {_without_userinfo(os.environ[url])} ({url})"
                 if url and os.environ.get(url) else
                 f"the network{f' or {url}' if url else ''}")
        return ModelSetupError(f"Cannot reach the provider of '{label}': check {where}, or "
                               f"{CHOOSE}.")
    if isinstance(exc, ai_errors.ModelAPIError):
        return ModelSetupError(f"The provider of '{label}' failed ({type(exc).__name__}): run "
                               f"again later (the results so far are cached) or {CHOOSE}.")
    if isinstance(exc, ai_errors.UserError) and _unknown_provider(label):
        hint = did_you_mean(label, _known_model_names())
        return ModelSetupError(f"Unknown model '{label}'. {hint}Use a pydantic-ai model string "
                               f"such as 'openai:gpt-4o' with --model / NL2SQL_MODEL.")
    if isinstance(exc, ai_errors.UserError) and key and not os.environ.get(key):
        return ModelSetupError(f"Set {key} or {CHOOSE}.")
    text = str(exc).strip()
    first_line = text.splitlines()[0] if text else type(exc).__name__
    return ModelSetupError(f"Model '{label}' cannot be used ({first_line[:200]}); {CHOOSE}.")


def _without_userinfo(url: str) -> str:
    """A URL as messages may show it: no user or password."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")
                          ).geturl() if parts.hostname else url


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


def _missing_extra(exc: ImportError) -> str | None:
    """The nl2sql extra for the module whose import failed (pydantic-ai chains the
    ``ModuleNotFoundError``, which names it)."""
    for error in (exc, exc.__cause__, exc.__context__):
        name = getattr(error, "name", None)
        if isinstance(name, str) and name:
            return _MODULE_EXTRAS.get(name.split(".")[0], name.split(".")[0])
    return None


def _unknown_provider(label: str) -> bool:
    """True when ``label`` names no provider pydantic-ai knows (``provider:model``)."""
    provider, _, name = label.partition(":")
    if not name:
        return label not in _known_model_names()
    try:
        infer_provider_class(provider)
    except ValueError:
        return True
    except ImportError:
        return False
    return False


def _known_model_names() -> tuple[str, ...]:
    alias = getattr(KnownModelName, "__value__", KnownModelName)
    return tuple(name for name in typing.get_args(alias) if isinstance(name, str))


def _status(exc: BaseException) -> int | None:
    return getattr(exc, "status_code", None)
