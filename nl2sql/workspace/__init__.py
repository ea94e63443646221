"""The workspace: result files (CSV), their dialect, Arrow batches written as CSV, and the index
of saved queries."""
