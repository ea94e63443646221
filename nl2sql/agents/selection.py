"""Selection among SQL candidates: grouped by what they return, the largest group wins.

The candidates whose SQL ran are grouped by their results, compared by the rules and the code
``nl2sql-eval`` compares a prediction with a gold by (``nl2sql.workspace.result_compare``: rows
as a multiset, columns matched by value, row order only when the group's first SQL orders,
numbers within 1e-6); each candidate joins the first group whose first member's result equals
its own. Results are read back from the candidates' CSV files as values
(``nl2sql.workspace.csv_values``: a DECIMAL's ``12.50`` and a float's ``12.5`` are one number,
``007`` is text; up to ``GROUP_ROWS`` rows); a result larger than that, or cut by the row limit,
only groups with the same SQL text.

The largest group wins. When several groups tie, a selection step settles it: the model sees
the tied groups' SQL and first rows and names one, with its reason (never a coin). If that step
itself fails (budget, retries), the tied group holding the lowest-numbered candidate is kept and
the reason says so. Failed candidates do not vote; they count in the confidence's denominator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry, RunContext, TextOutput, ToolOutput
from pydantic_ai.exceptions import UnexpectedModelBehavior, UsageLimitExceeded

from nl2sql.agents.answer import SqlCandidate, markdown_table, read_dataframe
from nl2sql.agents.candidates import CandidateRun
from nl2sql.agents.sql_agent import parse_json_text
from nl2sql.workspace.csv_values import read_values
from nl2sql.workspace.result_compare import compare_results
from nl2sql.workspace.result_order import order_spec
from nl2sql.llm.prompt_files import render_prompt
from nl2sql.llm.runs import run_agent

GROUP_ROWS = 100_000  # rows of each result read back for grouping (nl2sql-eval's default too)
SHOWN_ROWS = 5  # first rows of each tied group the selection step sees
SHOWN_SQL = 3  # distinct SQL texts shown per tied group


@dataclass
class _Result:
    run: CandidateRun
    columns: list[str]
    rows: list[tuple[Any, ...]]  # the first GROUP_ROWS rows, as values (csv_values)
    complete: bool  # every row was read (not cut by the row limit or GROUP_ROWS)
    csv_path: Path  # its first SHOWN_ROWS rows are read again only for a tie's selection step


@dataclass
class ResultGroup:
    """Candidates that returned the same result; ``first`` is the lowest-numbered member."""

    members: list[CandidateRun] = field(default_factory=list)
    first_result: _Result | None = None  # None when it is the only group of one: not read

    @property
    def first(self) -> CandidateRun:
        return self.members[0]

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass
class Selection:
    """The groups (chosen first, then the others largest first), and why the chosen one won
    when a tie had to be settled."""

    groups: list[ResultGroup]
    reason: str | None = None

    @property
    def chosen(self) -> ResultGroup:
        return self.groups[0]


class GroupChoice(BaseModel):
    group: int = Field(description="The number of the group whose result answers the question.")
    reason: str = Field(description="One or two sentences for a person: why that group's "
                                    "result is the right one.")


def group_runs(runs: list[CandidateRun], workspace: Path, dialect: str) -> list[ResultGroup]:
    """The candidates whose SQL ran, grouped by result: largest group first, then by the
    lowest candidate number (blocking: reads the result files, unless only one ran: then
    there is nothing to compare, and a result of 100,000 rows read for nothing took 0.5 s)."""
    ran = [run for run in runs if run.ran]
    if len(ran) == 1:
        return [ResultGroup(ran)]
    groups: list[ResultGroup] = []
    for run in ran:
        result = _read(run, workspace)
        for group in groups:
            assert group.first_result is not None
            if _same(group.first_result, result, dialect):
                group.members.append(run)
                break
        else:
            groups.append(ResultGroup([run], result))
    return sorted(groups, key=lambda g: (-g.size, g.first.plan.number))


def _read(run: CandidateRun, workspace: Path) -> _Result:
    query = run.deps.result
    assert query is not None
    csv_path = workspace / query.csv_filename
    columns, rows = read_values(csv_path, GROUP_ROWS)
    return _Result(run, columns, rows,
                   complete=not query.truncated and query.row_count <= GROUP_ROWS,
                   csv_path=csv_path)


def _same(a: _Result, b: _Result, dialect: str) -> bool:
    if not (a.complete and b.complete):
        return " ".join((a.run.sql or "").split()) == " ".join((b.run.sql or "").split())
    return compare_results(a.rows, b.rows, gold_columns=len(a.columns),
                           pred_columns=len(b.columns),
                           order=order_spec(a.run.sql or "", dialect, a.columns)).equal


async def select(groups: list[ResultGroup], *, question: str, db_id: str, retries: int,
                 **run_kwargs: Any) -> Selection:
    """The winning group; a tie for the most members goes to the selection step
    (``run_kwargs``: model, usage, limits, capabilities for its agent run)."""
    tied = [g for g in groups if g.size == groups[0].size]
    if len(tied) == 1:
        return Selection(groups)
    chosen, reason = await _settle(tied, question=question, db_id=db_id, retries=retries,
                                   **run_kwargs)
    return Selection([chosen, *(g for g in groups if g is not chosen)], reason)


async def _settle(tied: list[ResultGroup], *, question: str, db_id: str, retries: int,
                  **run_kwargs: Any) -> tuple[ResultGroup, str]:
    prompt = render_prompt("nl2sql/selection_prompt", db_id=db_id, question=question,
                           groups="\n\n".join(_describe(n, g) for n, g in enumerate(tied, 1)))
    agent = _selection_agent(len(tied), retries)
    try:
        result = await run_agent(agent, prompt, **run_kwargs)
    except UsageLimitExceeded:
        why = "the answer's request/token budget was used up"
    except UnexpectedModelBehavior:
        why = f"the model ran out of retries ({retries})"
    else:
        return tied[result.output.group - 1], result.output.reason
    return tied[0], (f"the selection step failed ({why}); the tied group with the "
                     f"lowest-numbered candidate ({tied[0].first.plan.number}) was kept")


def _describe(number: int, group: ResultGroup) -> str:
    assert group.first_result is not None
    texts = list(dict.fromkeys(run.sql or "" for run in group.members))
    sql = "\n".join(f"```sql\n{text.strip()}\n```" for text in texts[:SHOWN_SQL])
    more = f"\n(and {len(texts) - SHOWN_SQL} more SQL texts)" if len(texts) > SHOWN_SQL else ""
    query = group.first.deps.result
    rows = query.row_count if query is not None else len(group.first_result.rows)
    shown = read_dataframe(group.first_result.csv_path, SHOWN_ROWS)
    table = "\n".join(markdown_table(shown, SHOWN_ROWS)) or "(no columns)"
    return (f"## Group {number}: {group.size} quer{'y' if group.size == 1 else 'ies'}, "
            f"{rows:,} row(s)\n\n{sql}{more}\n\nFirst rows:\n\n{table}")


def _parse_choice(text: str) -> GroupChoice:
    return parse_json_text(text, GroupChoice, '{"group": <number>, "reason": "<why>"}')


def _selection_agent(options: int, retries: int) -> Agent[None, GroupChoice]:
    agent: Agent[None, GroupChoice] = Agent(
        output_type=[ToolOutput(GroupChoice, name="final_result"), TextOutput(_parse_choice)],
        retries=retries, name="nl2sql_selection")

    @agent.output_validator
    def _known_group(ctx: RunContext[None], choice: GroupChoice) -> GroupChoice:
        if not 1 <= choice.group <= options:
            raise ModelRetry(f"There is no group {choice.group}; choose one of the groups 1 to "
                             f"{options}.")
        return choice

    return agent


def candidate_records(runs: list[CandidateRun], selection: Selection) -> list[SqlCandidate]:
    """``Answer.candidates``: each candidate's SQL, error, group number (1: the chosen group,
    then the others largest first; None: failed), row count, and whether it is the answer."""
    group_of = {id(run): number for number, group in enumerate(selection.groups, 1)
                for run in group.members}
    winner = selection.chosen.first
    return [SqlCandidate(sql=run.sql, error=run.failure, group=group_of.get(id(run)),
                         row_count=run.deps.result.row_count if run.ran and run.deps.result
                         else None, chosen=run is winner, generator=run.plan.generator,
                         model=run.model)
            for run in runs]
