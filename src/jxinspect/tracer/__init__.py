"""The only package that imports JAX, and only inside functions.

``seam`` is the one module that touches JAX's internals, jaxlib's MLIR bindings, config
option names and everything that differs between JAX releases (0.4.35 to the newest);
the other modules call its small typed functions. ``devices`` prepares the backend
(simulated CPU devices) before user code is imported; ``stage`` wraps the user's function
with jit/pjit/pmap/shard_map, traces and lowers it; ``mlir`` and ``shardings`` read
``@main``; ``nested`` walks the jaxpr's sub-jaxprs; ``extract`` is the one report builder,
for a live lowering or for ``@main`` alone (``stablehlo`` reads ``.mlir`` text into it).
"""
