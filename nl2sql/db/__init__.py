"""Database access: connections and read-only operations, one module per backend."""
