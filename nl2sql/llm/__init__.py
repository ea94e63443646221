"""Shared LLM plumbing for annotation, the agents and evaluation: model strings and providers
(``models``), provider errors as one sentence, rate-limit retries (``retries``), one way to run
an agent (``runs``), and usage accounting (``usage``)."""
