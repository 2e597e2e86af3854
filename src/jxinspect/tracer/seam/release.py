"""The release: which JAX this is, its configuration, and the error for a feature it lacks.

Every other concern detects what a release can do by feature, not by version number;
the version is only named in messages (:func:`unsupported`) and reports.
"""

from __future__ import annotations

import contextlib
from typing import Any

from jxinspect.core.errors import UsageError, installed_version
from jxinspect.core.vocabulary import release_key

OLDEST_SUPPORTED = "0.4.35"
"""The oldest JAX release jxinspect reads (``pyproject.toml`` requires it too)."""

NEWEST_TESTED = "0.12.1"
"""The newest JAX release CI tests (the newest leg of ``.ci/releases``; a test holds
the two equal, and CI fails when the package index serves a newer one)."""


def jax_version() -> str:
    import jax

    return str(jax.__version__)


def running_since(release: str) -> bool:
    """Whether the running JAX is ``release`` or newer: a release fact stated as the first
    release that has it."""
    return release_key(jax_version()) >= release_key(release)


def jaxlib_version() -> str:
    import jaxlib

    return str(jaxlib.__version__)


def require_supported() -> None:
    """Raise the one-line error (exit 2) where the installed JAX is older than
    :data:`OLDEST_SUPPORTED` (installed beside it with ``--no-deps``); read from the
    distribution's metadata, without importing JAX."""
    found = installed_version("jax")  # read once per process, as each target checks it
    if found is not None and release_key(found) < release_key(OLDEST_SUPPORTED):
        raise UsageError(
            f"jxinspect needs JAX {OLDEST_SUPPORTED} or newer; this environment has JAX "
            f"{found} (pip install -U 'jax>={OLDEST_SUPPORTED}' 'jaxlib>={OLDEST_SUPPORTED}')"
        )


def untested_note() -> str | None:
    """The report's note on a JAX newer than :data:`NEWEST_TESTED` (a note, never a
    refusal: what it reads is still what that release emitted); ``None`` otherwise."""
    running = jax_version()
    if release_key(running) <= release_key(NEWEST_TESTED):
        return None
    return f"tested up to JAX {NEWEST_TESTED}; this is {running} (what differs is worth a report)"


def import_jax() -> None:
    """Load JAX and ``jax.numpy`` (what every target needs)."""
    import jax.numpy  # noqa: F401


def unsupported(feature: str, since: str) -> UsageError:
    """The one-line error for a feature this JAX release does not have."""
    return UsageError(
        f"{feature} needs JAX {since} or newer; this is JAX {jax_version()} "
        "(upgrade JAX, or leave the option out)"
    )


def has_public_api(dotted: str) -> bool:
    """Whether this JAX has the public API ``dotted`` (``jax.custom_transpose.custom_transpose``:
    its module imports and has the name). ``jax.custom_transpose`` is in 0.4.35 to 0.9.x;
    JAX 0.10 removed it."""
    import importlib

    module, _, name = dotted.rpartition(".")
    try:
        found = importlib.import_module(module)
    except ImportError:
        return False
    return hasattr(found, name)


def config_has(option: str) -> bool:
    import jax

    return option in jax.config.values


def warm_up() -> None:
    """Lower one tiny program: what JAX sets up for its first lowering (a second or so
    of a fresh process) is then done before a target needs it."""
    import jax
    import jax.numpy as jnp

    jax.jit(lambda x: x + 1).lower(jax.ShapeDtypeStruct((), jnp.float32)).as_text()


def unfiltered_tracebacks() -> contextlib.AbstractContextManager[object]:
    """JAX keeps its own frames in the tracebacks of what it raises (it removes them by
    default), so that an error's innermost frame says whose it is: JAX's or the user's
    code, or jxinspect's own (:func:`jxinspect.core.errors.raised_by_jxinspect`);
    otherwise every error JAX raises would seem to come from jxinspect's call of it."""
    from jax._src import config

    manager: contextlib.AbstractContextManager[object] = config.traceback_filtering("off")
    return manager


def config_values() -> dict[str, Any]:
    """JAX's configuration now (``jax.config.values``, public in every supported
    release), to put back with :func:`restore_config`."""
    import jax

    return dict(jax.config.values)


def persistent_cache_off() -> None:
    """Turn JAX's persistent compilation cache off in this process (the partitioner's
    debug run: a compile the cache answers writes no dump). JAX decides whether a
    process uses the cache at its first compile and keeps to it, so the debug run calls
    this before it imports the user's module and again before it compiles."""
    import jax

    option = "jax_enable_compilation_cache"  # 0.4.35 on
    if option in jax.config.values:
        jax.config.update(option, False)


def restore_config(values: dict[str, Any]) -> None:
    """Put back what user code changed (``jax.config.update`` at import) since
    :func:`config_values`; an option that cannot change once the backend started is
    left as it is."""
    import jax

    for name, value in jax.config.values.items():
        if name in values and values[name] != value:
            with contextlib.suppress(Exception):
                jax.config.update(name, values[name])
