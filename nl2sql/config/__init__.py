"""Configuration: the dbs.yaml registry, YAML edits that keep the file's layout, encrypted
secrets, and the files shipped with nl2sql (prompts, the bundled sample, question sets)."""
