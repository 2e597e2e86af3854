"""The module-cycle contract of pyproject.toml (tests/import_contracts.py)."""

from import_contracts import cycles_among


def test_each_cycle_is_found_once_with_its_members_sorted_a_self_import_none() -> None:
    imports = {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg", "pkg.c"},
        "pkg.c": set(),
        "pkg.d": {"pkg.e"},
        "pkg.e": {"pkg.d"},
        "pkg.f": {"pkg.f"},
    }
    assert cycles_among(set(imports), imports.__getitem__) == [
        ["pkg", "pkg.a", "pkg.b"],
        ["pkg.d", "pkg.e"],
    ]


def test_an_acyclic_graph_has_none() -> None:
    imports = {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": set()}
    assert cycles_among(set(imports), imports.__getitem__) == []
