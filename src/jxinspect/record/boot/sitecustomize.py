"""Started by Python in every process of a ``jxinspect record`` run: its folder comes
first on the run's ``PYTHONPATH``. It starts recording when the run names a record
folder, then loads the ``sitecustomize`` it hides, if the environment has one. It never
imports JAX: recording waits until the run imports it."""

import os
import sys


def _start_recording() -> None:
    if not os.environ.get("JXINSPECT_RECORD_DIR"):
        return
    try:
        from jxinspect.record import recorder
    except ImportError:  # the run's Python is not the one jxinspect is installed in
        home = os.environ.get("JXINSPECT_RECORD_HOME")
        if not home:
            raise
        sys.path.append(home)
        from jxinspect.record import recorder
    recorder.start()


def _load_hidden() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.pop("sitecustomize", None)
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import sitecustomize  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        if ours is not None:
            sys.modules["sitecustomize"] = ours
    finally:
        sys.path[:] = saved


try:
    _start_recording()
except Exception as err:  # never stop the user's run
    print(f"jxinspect record: recording could not start: {err!r}", file=sys.stderr)
_load_hidden()
