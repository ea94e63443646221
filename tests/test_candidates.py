"""SQL candidates in process, with a scripted model answering several runs at once: the
majority's result wins (different SQL texts, same rows), a tie goes to the selection step with
its reason, failed candidates count against the confidence, all failing is ``NoAnswerError``
with every candidate's last error, one candidate makes exactly the single run's requests, the
``agent:`` limits bound the whole answer, and the candidates differ by design."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_scripts import CandidateScripts, Script, final, group_showing, tool

import nl2sql
from nl2sql.agents import selection
from conftest import SampleDb
from nl2sql.agents.candidates import GENERATORS, TEMPERATURE, candidate_instructions, \
    plan_candidates
from nl2sql.context_engine.prompt_context import ContextExample, PromptContext
from nl2sql.errors import Nl2SqlError, NoAnswerError
from nl2sql.config.agent_settings import AgentSettings
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.operations.ops_context import OpsContext
from nl2sql.workspace.saved_query_index import SavedQueryIndex

QUESTION = "How many tracks are in the Rock genre?"
NAMES = {"sqlite": dict(Track="Track", Genre="Genre", GenreId="GenreId", Name="Name",
                        TrackId="TrackId"),
         "postgres": dict(Track="track", Genre="genre", GenreId="genre_id", Name="name",
                          TrackId="track_id")}
# Three different SQL texts, one result (1297 Rock tracks), and three other results.
ROCK_JOIN = ("SELECT count(*) AS tracks FROM {Track} t JOIN {Genre} g ON g.{GenreId} = "
             "t.{GenreId} WHERE g.{Name} = 'Rock'")
ROCK_SUBQUERY = ("SELECT COUNT(t.{TrackId}) AS n FROM {Track} t WHERE t.{GenreId} = "
                 "(SELECT {GenreId} FROM {Genre} WHERE {Name} = 'Rock')")
ROCK_CTE = ("WITH rock AS (SELECT {GenreId} FROM {Genre} WHERE {Name} = 'Rock') "
            "SELECT count(*) FROM {Track} t JOIN rock r ON r.{GenreId} = t.{GenreId}")
METAL = ROCK_JOIN.replace("'Rock'", "'Metal'")  # 374
METAL_2 = ROCK_SUBQUERY.replace("'Rock'", "'Metal'")
ALL_TRACKS = "SELECT count(*) AS tracks FROM {Track}"  # 3503
BAD = "SELECT count(*) FROM {Track} WHERE nope = 1"


def sql(template: str, backend: str) -> str:
    return template.format(**NAMES[backend])


def _ask(ops: OpsContext, model: object, candidates: int | None = 5, **kwargs: object):  # noqa: ANN202
    return nl2sql.ask(QUESTION, db_id="chinook", model=model, config=ops, candidates=candidates,
                      **kwargs)


def test_three_texts_with_the_same_rows_outvote_two_others(chinook_ops: OpsContext,
                                                           chinook: SampleDb) -> None:
    b = chinook.backend
    scripts = CandidateScripts([[final(sql(ROCK_JOIN, b))], [final(sql(METAL, b))],
                                [final(sql(ROCK_SUBQUERY, b))], [final(sql(ALL_TRACKS, b))],
                                [final(sql(ROCK_CTE, b))]])
    SavedQueryIndex(chinook_ops.workspace).sync()  # an index exists: the removals go into it
    answer = _ask(chinook_ops, scripts.model)
    majority = {sql(ROCK_JOIN, b), sql(ROCK_SUBQUERY, b), sql(ROCK_CTE, b)}
    assert answer.sql in majority and answer.confidence == 0.6
    assert answer.df.iloc[0, 0] == 1297 and answer.row_count == 1
    assert answer.selection_reason is None and not scripts.of(None)  # no tie: no selection step
    by_sql = {c.sql: c for c in answer.candidates}
    assert len(answer.candidates) == 5 and {by_sql[s].group for s in majority} == {1}
    assert sorted(c.group for c in answer.candidates if c.sql not in majority) == [2, 3]
    assert [c.sql for c in answer.candidates if c.chosen] == [answer.sql]
    assert all(c.error is None and c.row_count == 1 for c in answer.candidates)
    assert answer.usage.requests == 5
    assert "Confidence: 3 of 5 candidates agree (60%), 2 other result(s)" in \
        answer._repr_markdown_()  # the notebook rendering
    # Each candidate wrote a new file; only the answer's is left.
    csv = Path(answer.csv_path)
    assert csv.read_text().splitlines()[1] == "1297"
    assert sorted(p.name for p in csv.parent.glob("*.csv")) == [csv.name]
    assert len(list(csv.parent.glob("*.metadata.json"))) == 1
    found, total = SavedQueryIndex(chinook_ops.workspace).search(limit=10)
    assert total == 1 and found[0].sql_query == answer.sql


def test_a_two_two_one_split_is_settled_by_the_selection_step(chinook_ops: OpsContext,
                                                              chinook: SampleDb) -> None:
    b = chinook.backend
    reason = "A scripted choice: the Metal group, whatever its number."
    scripts = CandidateScripts(
        [[final(sql(ROCK_JOIN, b))], [final(sql(ROCK_SUBQUERY, b))], [final(sql(METAL, b))],
         [final(sql(METAL_2, b))], [final(sql(ALL_TRACKS, b))]],
        selection=[tool("final_result", group=3, reason="a group that does not exist"),
                   lambda prompt: tool("final_result", reason=reason,
                                       group=group_showing(prompt, "'Metal'"))])
    answer = _ask(chinook_ops, scripts.model)
    prompt = scripts.selection_prompt()
    # The tied groups' SQL and first rows were shown; the single 3503 was not in the tie.
    assert "Group 1: 2 queries" in prompt and "Group 2: 2 queries" in prompt
    assert sql(ROCK_JOIN, b) in prompt and sql(METAL_2, b) in prompt and "1297" in prompt
    assert "374" in prompt and "3503" not in prompt and "Group 3" not in prompt
    # The Metal group was picked after one retry (group 3 does not exist).
    assert answer.sql in {sql(METAL, b), sql(METAL_2, b)} and answer.df.iloc[0, 0] == 374
    assert answer.confidence == 0.4 and answer.selection_reason == reason
    assert len(scripts.of(None)) == 2 and answer.usage.requests == 7
    groups = sorted((c.group, c.row_count) for c in answer.candidates)
    assert [g for g, _ in groups] == [1, 1, 2, 2, 3]


def test_failed_candidates_count_against_confidence_but_do_not_vote(
        chinook_ops: OpsContext, chinook: SampleDb) -> None:
    chinook_ops.configs.agent = AgentSettings(retries=1)
    b = chinook.backend
    bad = sql(BAD, b)
    scripts = CandidateScripts([[final(sql(ROCK_JOIN, b))], [final(bad), final(bad)],
                                [final(sql(ROCK_CTE, b))], [final(bad), final(bad)],
                                [final(sql(METAL, b))]])
    answer = _ask(chinook_ops, scripts.model)
    assert answer.confidence == 0.4 and answer.df.iloc[0, 0] == 1297  # 2 of 5, not 2 of 3
    failed = [c for c in answer.candidates if c.error]
    assert len(failed) == 2 and all(c.group is None and c.row_count is None for c in failed)
    assert all("ran out of retries" in c.error and "nope" in c.error.lower() for c in failed)
    assert all(c.sql == bad for c in failed)
    assert answer.attempts[-1].sql == answer.sql and not any(a.error for a in answer.attempts)


def test_all_candidates_failing_is_no_answer_with_each_last_error(
        chinook_ops: OpsContext, chinook: SampleDb) -> None:
    chinook_ops.configs.agent = AgentSettings(retries=0)
    bad = sql(BAD, chinook.backend)
    scripts = CandidateScripts([[final(bad)], [final(bad)], [final(bad)]])
    with pytest.raises(NoAnswerError) as raised:
        _ask(chinook_ops, scripts.model, candidates=3)
    message = str(raised.value)
    assert "all 3 candidates failed" in message and message.count("and failed:") == 3
    assert "candidate 1 (direct)" in message and "candidate 3 (divide_and_conquer)" in message
    assert len(raised.value.attempts) == 3


def test_one_candidate_makes_exactly_the_single_runs_requests(
        chinook_ops: OpsContext, chinook: SampleDb, monkeypatch: pytest.MonkeyPatch) -> None:
    """candidates=1 and the default: two requests each, the same instructions and messages,
    no generator guidance, no temperature; and the result is not read back for grouping
    (nothing to compare it with: 0.5 s for a result of 100,000 rows)."""
    read_back: list[Path] = []
    monkeypatch.setattr(selection, "read_values",
                        lambda path, rows: read_back.append(path) or ([], []))
    b = chinook.backend
    typo = sql(ROCK_JOIN, b).replace("'Rock'", "'Rock' AND g.nope = 1")
    steps = [tool("db_execute_sql", db_id="chinook", query=typo), final(sql(ROCK_JOIN, b))]
    explicit, default = Script(list(steps)), Script(list(steps))
    one = _ask(chinook_ops, explicit.model, candidates=1)
    for saved in chinook_ops.workspace.iterdir():  # saved results become examples: none here
        if saved.is_file():
            saved.unlink()
    plain = nl2sql.ask(QUESTION, db_id="chinook", model=default.model, config=chinook_ops)
    assert len(explicit.requests) == len(default.requests) == 2
    assert one.usage.requests == plain.usage.requests == 2
    assert explicit.instructions == default.instructions
    assert "How to write this query" not in explicit.instructions[0]
    assert [len(r) for r in explicit.requests] == [len(r) for r in default.requests]
    assert one.confidence is None and plain.confidence is None
    assert [(c.sql, c.group, c.chosen) for c in one.candidates] == [(one.sql, 1, True)]
    assert Path(one.csv_path).name == Path(plain.csv_path).name  # the question's own file
    assert read_back == [] and one.df.iloc[0, 0] == 1297


def test_the_limits_bound_the_whole_answer(chinook_ops: OpsContext, chinook: SampleDb) -> None:
    chinook_ops.configs.agent = AgentSettings(max_requests=3)
    rock = sql(ROCK_JOIN, chinook.backend)
    scripts = CandidateScripts([[final(rock)] for _ in range(5)])
    answer = _ask(chinook_ops, scripts.model)
    assert len(scripts.requests) == 3 and answer.usage.requests == 3
    assert answer.confidence == 0.6
    assert sum(1 for c in answer.candidates if c.error and "budget" in c.error) == 2


def test_candidates_differ_by_prompt_temperature_and_model(chinook_ops: OpsContext,
                                                           chinook: SampleDb) -> None:
    rock = sql(ROCK_JOIN, chinook.backend)
    scripts = CandidateScripts([[final(rock)] for _ in range(4)])
    answer = _ask(chinook_ops, scripts.model, candidates=4)
    infos = [info for _, _, info in scripts.requests]
    headings = {"direct": "directly", "query_plan": "plan it first",
                "divide_and_conquer": "divide and conquer"}
    seen = [next(g for g, h in headings.items() if f"How to write this query: {h}" in
                 info.instructions) for info in infos]
    assert sorted(seen) == sorted([*GENERATORS, GENERATORS[0]])
    temperatures = sorted((info.model_settings or {}).get("temperature", -1) for info in infos)
    assert temperatures == [-1, TEMPERATURE, TEMPERATURE, TEMPERATURE]
    assert answer.confidence == 1.0 and [c.generator for c in answer.candidates] == \
        [*GENERATORS, GENERATORS[0]]


def test_models_take_turns_and_examples_are_shuffled() -> None:
    from pydantic_ai.models.test import TestModel

    a, b = TestModel(custom_output_text="a"), TestModel(custom_output_text="b")
    plans = plan_candidates(5, a, [a, b])
    assert [p.model for p in plans] == [a, b, a, b, a]
    assert plan_candidates(1, a) == [plan_candidates(1, a)[0]] and plan_candidates(1, a)[0] \
        .generator is None
    examples = [ContextExample(question=f"q{i}", sql=f"SELECT {i}") for i in range(6)]
    context = PromptContext(question="q", db_id="x", examples=examples)

    def render(ctx: PromptContext) -> str:
        return " ".join(e.sql for e in ctx.examples)

    first, second, third = (candidate_instructions(p, context, render) for p in plans[:3])
    assert first.startswith("SELECT 0 SELECT 1 SELECT 2")  # the first candidate: as given
    orders = {text.split("\n")[0] for text in (first, second, third)}
    assert len(orders) == 3 and candidate_instructions(plans[1], context, render) == second


def test_a_candidate_count_out_of_range_is_one_sentence(chinook_ops: OpsContext,
                                                       tmp_path: Path) -> None:
    with pytest.raises(Nl2SqlError, match="candidates must be between 1 and 20"):
        _ask(chinook_ops, Script([]).model, candidates=0)
    path = tmp_path / "dbs.yaml"
    path.write_text("agent:\n  candidates: 50\n")
    with pytest.raises(Nl2SqlError, match=r"line 2: 'agent:' setting 'candidates': .*20"):
        DbConnectionConfigs.load(path)  # every command reads it so: none goes on with it


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # checked before any backend
@pytest.mark.parametrize(("arguments", "expected"), [
    ({"question": None}, "The question must be text (got NoneType)."),
    ({"question": b"How many?"}, "The question must be text (got bytes)."),
    ({"db_id": 3}, "db_id must be a string (got int)."),
    ({"model": 42}, "model must be a model string such as 'openai:gpt-4o-mini' or a pydantic-ai "
                    "Model (got int)."),
    ({"max_rows": 0}, "max_rows must be a whole number of at least 1 (got 0)."),
    ({"max_rows": "10"}, "max_rows must be a whole number of at least 1 (got '10')."),
    ({"candidates": 2.5}, "candidates must be a whole number of at least 1 (got 2.5)."),
    ({"conversation_id": 7}, "conversation_id must be a string (got int)."),
])
def test_an_argument_of_the_wrong_kind_is_one_sentence_before_the_model_is_asked(
        chinook_ops: OpsContext, chinook: SampleDb, arguments: dict[str, object],
        expected: str) -> None:
    """Python callers get one sentence (was: AttributeError, a pandas ValueError after the
    model had answered, an audit record that failed to write with a traceback)."""
    script = Script([final("SELECT 1 AS one")])
    call = {"question": QUESTION, "db_id": "chinook", "model": script.model,
            "config": chinook_ops, **arguments}
    with pytest.raises(Nl2SqlError) as raised:
        nl2sql.ask(call.pop("question"), **call)
    assert str(raised.value) == expected and script.requests == []


def test_results_cut_by_the_row_limit_group_only_with_the_same_sql(chinook_ops: OpsContext,
                                                                  chinook: SampleDb) -> None:
    """A cut result cannot be compared by its rows: it joins a group only with the same SQL."""
    chinook_ops.configs.databases["chinook"] = chinook.config.model_copy(update={"max_rows": 5})
    names = sql("SELECT {Name} FROM {Track}", chinook.backend)  # 3,503 rows, cut at 5
    aliased = sql("SELECT t.{Name} AS track FROM {Track} t", chinook.backend)
    scripts = CandidateScripts([[final(names)], [final(aliased)], [final(names)]])
    answer = _ask(chinook_ops, scripts.model, candidates=3)
    assert answer.truncated and answer.row_count == 5
    assert answer.sql == names and answer.confidence == 0.6667
    assert sorted((c.sql == names, c.group) for c in answer.candidates) == \
        [(False, 2), (True, 1), (True, 1)]


def test_the_agent_block_sets_the_default_count(chinook_ops: OpsContext,
                                                chinook: SampleDb) -> None:
    chinook_ops.configs.agent = AgentSettings(candidates=3)
    rock = sql(ROCK_JOIN, chinook.backend)
    scripts = CandidateScripts([[final(rock)] for _ in range(3)])
    answer = _ask(chinook_ops, scripts.model, candidates=None)  # dbs.yaml's agent: candidates
    assert len(answer.candidates) == 3 and answer.usage.requests == 3
    assert answer.confidence == 1.0 and answer.agreement_line() == \
        "3 of 3 candidates agree (100%)"
