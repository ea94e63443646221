"""Model selection and provider failures: any pydantic-ai model string, ``test`` is TestModel,
and setup/provider errors become one-line ``ModelSetupError`` messages naming what to fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai import exceptions as ai_errors
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel

from packages import hide_package
from nl2sql.llm.providers import build_model, model_label, model_setup_error
from nl2sql.llm.usage import UsageTracker, summary_lines
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import ModelSetupError
from nl2sql.schema.models import AnnotationRun, StepUsage


def test_test_string_is_pydantic_ai_test_model() -> None:
    assert isinstance(build_model("test"), TestModel)


def test_model_instances_pass_through_and_are_labelled() -> None:
    model = FunctionModel(lambda messages, info: None, model_name="scripted")  # type: ignore[arg-type,return-value]
    assert build_model(model) is model
    assert model_label("openai:gpt-4o") == "openai:gpt-4o"
    assert "scripted" in model_label(model)


def test_unknown_model_string_names_the_flag() -> None:
    with pytest.raises(ModelSetupError) as info:
        build_model("no-such-provider:foo")
    message = str(info.value)
    assert "Unknown model 'no-such-provider:foo'" in message and "--model / NL2SQL_MODEL" in message
    assert "\n" not in message


def test_missing_provider_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    hide_package(monkeypatch, "openai")
    with pytest.raises(ModelSetupError, match=r"run `pip install -e '\.\[openai\]'` in the nl2sql clone"):
        build_model("openai:gpt-4o-mini")


@pytest.mark.parametrize(("error", "expected"), [
    (ai_errors.UserError("Set the `OPENAI_API_KEY` environment variable or pass it via "
                         "`OpenAIProvider(api_key=...)` to use the OpenAI provider."),
     "Set OPENAI_API_KEY or choose another model with --model / NL2SQL_MODEL."),
    (ai_errors.ModelHTTPError(401, "gpt-4o", body={"error": "bad key sk-123"}),
     "set a valid OPENAI_API_KEY"),
    (ai_errors.ModelHTTPError(429, "gpt-4o"), "rate-limited"),
    (ai_errors.ModelRateLimitError("gpt-4o", "slow down"), "lower --concurrency"),
    (ai_errors.ModelConnectionError("gpt-4o", "connection refused", phase="connect"),
     "Cannot reach the provider"),
    (ConnectionRefusedError(111, "Connection refused"), "Cannot reach the provider"),
    (ai_errors.ModelHTTPError(404, "gpt-9"), "does not know the model"),
    (ai_errors.ModelHTTPError(500, "gpt-4o"), "run again later"),
])
def test_provider_errors_become_one_line_setup_errors(error: BaseException, expected: str) -> None:
    message = str(model_setup_error(error, "openai:gpt-4o"))
    assert expected in message
    assert "\n" not in message and "sk-123" not in message


def test_model_precedence_flag_over_env_over_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "dbs.yaml"
    config.write_text("model: file:model\ndatabases: {}\n")
    assert DbConnectionConfigs.load(config).model == "file:model"
    monkeypatch.setenv("NL2SQL_MODEL", "env:model")
    assert DbConnectionConfigs.load(config).model == "env:model"
    assert DbConnectionConfigs.load(config, model="flag:model").model == "flag:model"


def test_usage_tracker_sums_runs_and_summary_lists_steps() -> None:
    from pydantic_ai.usage import RunUsage

    tracker = UsageTracker()
    tracker.start("enum_classification")
    tracker.add("table_descriptions", RunUsage(requests=2, input_tokens=300, output_tokens=40))
    tracker.add("table_descriptions", RunUsage(requests=1, input_tokens=100, output_tokens=10))
    assert tracker.steps["table_descriptions"] == StepUsage(requests=3, input_tokens=400,
                                                            output_tokens=50)
    assert tracker.steps["enum_classification"].requests == 0
    assert tracker.total.requests == 3
    run = AnnotationRun(model="test", steps=tracker.steps, skipped_steps=["example_queries"])
    lines = summary_lines(run)
    assert any("table_descriptions" in line and "400" in line for line in lines)
    assert lines[-3].split()[-3:] == ["3", "400", "50"]
    assert lines[-2] == "cost: unknown (no price for this model)"  # TestModel has no price
    assert lines[-1] == "skipped LLM steps: example_queries"


# -- rate limits: wait as the provider asks, then retry ---------------------------------------

def _rate_limited(failures: int, retry_after: float | None):  # noqa: ANN202
    from pydantic_ai.messages import ModelResponse, TextPart

    calls: list[float] = []

    def respond(messages, info):  # noqa: ANN001, ANN202
        import time

        calls.append(time.monotonic())
        if len(calls) <= failures:
            raise ai_errors.ModelHTTPError(429, "m", body={"error": "rate_limit_exceeded"}) \
                if retry_after is None else \
                ai_errors.ModelRateLimitError("m", "slow down", retry_after=retry_after)
        return ModelResponse(parts=[TextPart("ok")])

    return FunctionModel(respond), calls


async def test_rate_limits_wait_for_retry_after_then_succeed() -> None:
    from pydantic_ai import Agent

    from nl2sql.llm.runs import run_agent

    model, calls = _rate_limited(2, retry_after=0.3)
    result = await run_agent(Agent(), "hi", model=model)
    assert result.output == "ok" and len(calls) == 3
    waits = [b - a for a, b in zip(calls, calls[1:])]
    assert all(0.3 <= wait < 1.0 for wait in waits), waits


async def test_rate_limit_without_retry_after_backs_off_then_gives_a_setup_error() -> None:
    from pydantic_ai import Agent

    from nl2sql.llm.retries import RateLimitRetry
    from nl2sql.llm.runs import run_agent

    assert 1.0 <= RateLimitRetry().delay(RuntimeError(), 1) <= 1.25
    assert 4.0 <= RateLimitRetry().delay(RuntimeError(), 3) <= 5.0
    assert RateLimitRetry(max_delay=2).delay(RuntimeError(), 9) == 2
    model, calls = _rate_limited(10, retry_after=0.01)
    with pytest.raises(ModelSetupError, match="rate-limited"):
        await run_agent(Agent(), "hi", model=model)
    assert len(calls) == RateLimitRetry().max_attempts


def test_setup_errors_do_not_depend_on_pydantic_ai_wording(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Decisions come from exception types, the missing module's name and the environment:
    a reworded pydantic-ai message gives the same answer."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reworded = ai_errors.UserError("Credentials are required for this provider.")
    assert str(model_setup_error(reworded, "openai:gpt-4o")) == (
        "Set OPENAI_API_KEY or choose another model with --model / NL2SQL_MODEL.")
    missing = ImportError("Some other wording entirely.")
    missing.__cause__ = ModuleNotFoundError("No module named 'mistralai'", name="mistralai")
    assert "pip install -e '.[mistral]'" in str(model_setup_error(missing, "mistral:large"))
    unknown = str(model_setup_error(ai_errors.UserError("nope"), "opnai:gpt-4o"))
    assert unknown.startswith("Unknown model 'opnai:gpt-4o'.")
    # With the key set, a UserError is not blamed on the key.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert "Set OPENAI_API_KEY" not in str(model_setup_error(reworded, "openai:gpt-4o"))


async def test_an_unreachable_server_is_named_as_given_with_its_url_variable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An OpenAI-compatible server that is not running: the model as the user wrote it
    (not pydantic-ai's 'openai:x'), and where the URL comes from, without its password."""
    import socket

    from pydantic_ai import Agent

    from nl2sql.llm.runs import run_agent

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://user:secret@127.0.0.1:{port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    model = build_model("openai-chat:local-model")
    assert model_label(model) == "openai-chat:local-model"
    from pydantic_ai import models
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # a closed local port only
    with pytest.raises(ModelSetupError) as info:
        await run_agent(Agent(output_type=str, retries=0), "hi", model=model)
    message = str(info.value)
    assert message.startswith("Cannot reach the provider of 'openai-chat:local-model': check the "
                              f"server at http://127.0.0.1:{port}/v1 (OPENAI_BASE_URL)"), message
    assert "secret" not in message
