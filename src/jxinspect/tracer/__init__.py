"""The only package that imports JAX, and only inside functions.

``devices`` prepares the backend (simulated CPU devices) before user code is imported;
``stage`` wraps the user's function with jit/pjit/pmap/shard_map, traces and lowers it;
``mlir`` and ``shardings`` read ``@main`` through jaxlib's MLIR bindings; ``nested``
walks the jaxpr's sub-jaxprs; ``extract`` joins all of it into a :class:`~jxinspect.model.Report`.
"""
