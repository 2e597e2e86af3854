"""Renderers: ``render(obj) -> str``, no I/O; the CLI decides where the text goes."""
