"""Guard a multi-process JAX run: every process compiles the same program, checked
before it runs (:mod:`jxinspect.record.guard`). In each process, before its first
compile::

    import jxinspect.guard
    jxinspect.guard.install()          # wait_s=60: how long to wait for the others

``jxinspect record --guard`` installs it in every process it records.
"""

from jxinspect.record.guard import ProgramsDiffer
from jxinspect.record.guard import install_guard as install

__all__ = ["ProgramsDiffer", "install"]
