"""The workspace is resolved once per OpsContext; names inside it are still checked per call."""

from __future__ import annotations

from pathlib import Path

import pytest

from nl2sql.access.caller import Caller
from nl2sql.errors import WorkspacePathError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op


def test_a_workspace_replaced_by_a_symlink_later_is_refused(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    ctx = OpsContext.load(None, data_dir=tmp_path / "data", workspace=workspace)
    try:
        first = db_execute_sql_op(ctx, "bookstore", "SELECT 1 AS one", output_file="a.csv")
        assert (workspace / first.csv_filename).is_file()
        assert ctx.workspace_root == workspace.resolve()
        workspace.rename(tmp_path / "old_ws")
        workspace.symlink_to(outside, target_is_directory=True)
        with pytest.raises(WorkspacePathError):
            db_execute_sql_op(ctx, "bookstore", "SELECT 2 AS two", output_file="b.csv")
        assert list(outside.iterdir()) == []
    finally:
        ctx.close()


def test_a_deleted_workspace_is_created_again(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    ctx = OpsContext.load(None, data_dir=tmp_path / "data", workspace=workspace)
    try:
        db_execute_sql_op(ctx, "bookstore", "SELECT 1 AS one", output_file="a.csv")
        for path in workspace.iterdir():
            path.unlink()
        workspace.rmdir()
        result = db_execute_sql_op(ctx, "bookstore", "SELECT 1 AS one", output_file="a.csv")
        assert (workspace / result.csv_filename).read_text() == "one\n1\n"
    finally:
        ctx.close()


def test_each_request_view_reuses_the_resolved_workspace_and_stays_inside(tmp_path: Path) -> None:
    """A server makes a view per request (``for_caller``): the views of one workspace share its
    real path (no mkdir + resolve per call), and a workspace replaced by a symlink later is
    still refused through a new view; a configured user's view has its own folder."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    ctx = OpsContext.load(None, data_dir=tmp_path / "data", workspace=workspace)
    try:
        first = ctx.for_caller(Caller(name="me"), "mcp-stdio")
        db_execute_sql_op(first, "bookstore", "SELECT 1 AS one", output_file="a.csv")
        real = workspace.resolve()
        workspace.rename(tmp_path / "old_ws")
        workspace.symlink_to(outside, target_is_directory=True)
        second = ctx.for_caller(Caller(name="me"), "mcp-stdio")
        assert second.workspace_root == real  # shared, not resolved again (it now would differ)
        with pytest.raises(WorkspacePathError):
            db_execute_sql_op(second, "bookstore", "SELECT 2 AS two", output_file="b.csv")
        assert list(outside.iterdir()) == []
        ana = ctx.for_caller(Caller(name="ana", configured=True), "mcp-http")
        assert ana.workspace_root == (outside / "users" / "ana").resolve()
        assert ctx.for_caller(Caller(name="me"), "mcp-stdio").workspace_root == real
    finally:
        ctx.close()
