"""Renderers: ``render(obj) -> str``, no I/O; the CLI decides where the text goes.

``formats.py`` is the registry: per product (report, diff, lint result, record summary)
its formats, which the ``--format`` choices, the commands and the notebook display read.
``display.py`` is how products display themselves (``repr``, notebook cell, rich,
``Report.show``), handed to :mod:`jxinspect.core.display` by the root package;
``notebook.py`` frames a page for a cell and turns coloured text into HTML or rich text.
One folder per product (``report/``, ``compare/``, ``lint/``, ``record/``) and ``common/``
for what they share (escaping, tables, consoles, finding groups).
"""
