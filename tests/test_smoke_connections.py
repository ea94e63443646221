from sqlalchemy import inspect, text

from nl2sql.db.base import create_connection


def test_connects_to_chinook_on_each_backend(chinook):
    with create_connection(chinook.config) as db, db.connect() as conn:
        names = inspect(conn).get_table_names(schema=db.schema)
        assert len(names) == 11
        count = conn.execute(text(f'SELECT COUNT(*) FROM "{chinook.table("track")}"')).scalar()
        assert count == 3503
