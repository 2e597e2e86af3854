"""A small model package: the fixture of `jxinspect lint`'s end-to-end tests.

``mlp`` is clean; ``attention`` is sharded over a data=2,model=4 mesh; ``legacy`` still
uses ``jax.pmap``; ``train`` carries one deliberate regression (a replicated embedding
table) that ``jxinspect lint`` must catch.
"""
