"""The MCP prompt ``ask_database(question, db_id?)``: the NL2SQL agent's own instructions and
context for one question, so an MCP client (Claude Code) can act as the agent with our prompts.

The text is what ``nl2sql.ask()`` gives its model: the system prompt and instructions of
``prompts/nl2sql/`` filled with ``nl2sql.context()`` (pruned schema, value hints, examples),
then the question and how to answer it with the server's tools, including how to check an
answer that matters the way ``nl2sql-ask --candidates N`` does (several different queries run
with ``db_execute_sql``, compared by their results; no model runs inside the server).
"""

from __future__ import annotations

import functools

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from nl2sql.errors import InternalError, Nl2SqlError, as_one_sentence
from nl2sql.llm.prompt_files import render_prompt
from nl2sql._worker import run_in_worker
from nl2sql.mcp.callers import caller_message, request_ops
from nl2sql.operations.first_use import prepare_context_engine
from nl2sql.operations.recorded import call_recorded
from nl2sql.operations.ops_context import OpsContext

DESCRIPTION = (
    "Answer a question from a database the way nl2sql's own agent does: its instructions, the "
    "schema part that matters for the question (tables with reasons, join tables), the stored "
    "values the question names and similar example queries, and how to check an answer that "
    "matters with several different queries compared by their results. Without db_id the "
    "best-matching database is chosen.")


def ask_database_text(ops: OpsContext, question: str, db_id: str | None = None) -> str:
    """The prompt text for ``question`` on ``db_id`` (or the best database for it)."""
    prepare_context_engine()  # before its first import: concurrent first calls
    from nl2sql.agents.instructions import nl2sql_instructions  # not at start-up: the
    from nl2sql.context_engine.engine import engine_for  # context engine, semantic models

    context = engine_for(ops.configs).context(question, db_id=db_id)
    if context.db_id is None:
        raise Nl2SqlError("No database has a schema cache yet; run `annotate-schema <db_id>` "
                          "first.")
    chosen = context.db_id
    instructions = nl2sql_instructions(
        context, db_type=ops.config(chosen).type.value,
        dialect=ops.connection(chosen).sqlglot_dialect, data_dir=ops.data_dir,
        metrics_tool=f"metrics_query (db_id='{chosen}')")
    why = next((c.reason for c in context.candidates if c.db_id == chosen), "")
    picked = "" if db_id else f" (chosen for the question: {why})"
    return (f"{instructions.rstrip()}\n\n## Your task\n\nQuestion: {question.strip()}\n\n"
            f"Write one read-only SQL query for the database '{chosen}'{picked} and run it "
            f"with the db_execute_sql tool (db_id='{chosen}', nl_query set to the question). "
            f"If the database reports an error, fix the query and run it again. Then answer "
            f"the question from the result in a few sentences, showing the SQL you ran.\n\n"
            f"{render_prompt('nl2sql/candidates_by_hand', db_id=chosen).strip()}\n")


def register_prompts(server: MCPServer) -> None:
    @server.prompt(name="ask_database", title="Answer a question from a database",
                   description=DESCRIPTION)
    async def ask_database(question: str, db_id: str | None = None) -> str:
        try:
            return await run_in_worker(functools.partial(
                call_recorded, "ask_database", ask_database_text, request_ops(),
                question=question, db_id=db_id))
        except Exception as exc:  # noqa: BLE001 - the face's edge: one sentence for everything
            # An MCPError reaches the client with its message (the SDK turns any other
            # exception from a prompt into "Internal server error").
            error = as_one_sentence(exc, "building the prompt")
            code = INTERNAL_ERROR if isinstance(error, InternalError) else INVALID_PARAMS
            raise MCPError(code=code, message=caller_message(error)) from None
