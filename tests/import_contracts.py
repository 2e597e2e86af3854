"""import-linter's contract for cycles between modules (pyproject.toml's ``acyclic_modules``).

``acyclic_siblings`` finds cycles between the children of each package, at every depth,
but not one through a package's own ``__init__`` (``pkg`` imports ``pkg.a``, which imports
``pkg`` back): that module is no sibling of its children. This contract finds every
module that reaches itself through imports (inside functions too), whatever the packages:
the strongly connected components of the module graph (Tarjan's algorithm).
"""

from __future__ import annotations

from collections.abc import Callable

import grimp
from importlinter import Contract, ContractCheck, fields, output


class AcyclicModulesContract(Contract):
    """No module of the top-level ``packages`` imports itself through other modules."""

    type_name = "acyclic_modules"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        roots: list[str] = self.packages  # type: ignore[assignment]
        ours = {m for m in graph.modules if m.split(".")[0] in roots}
        cycles = cycles_among(ours, lambda m: graph.find_modules_directly_imported_by(m) & ours)
        return ContractCheck(kept=not cycles, warnings=[], metadata={"cycles": cycles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for cycle in check.metadata["cycles"]:
            output.print_error(f"These {len(cycle)} modules import each other in a cycle:")
            for module in cycle:
                output.print_error(f"- {module}")
            output.new_line()


def cycles_among(modules: set[str], imported_by: Callable[[str], set[str]]) -> list[list[str]]:
    """Each set of two or more modules that reach each other, sorted (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(sorted(imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, todo = work[-1]
            child = next(todo, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(imported_by(child)))))
            elif child in on_stack:
                low[module] = min(low[module], index[child])
    return sorted(found)
