"""How JAX releases are ordered (the oldest-supported check and the survey advice)."""

from __future__ import annotations

from jxinspect.core.vocabulary import release_key


def test_release_keys_order_releases_by_number() -> None:
    assert release_key("0.4.35") == (0, 4, 35, 0)
    assert release_key("0.4.36rc1") == (0, 4, 36, 0)
    assert release_key("0.5.0.dev20250101") == (0, 5, 0, 0)
    assert release_key("0.5") == (0, 5, 0, 0)
    assert release_key("0.12.0.1") > release_key("0.12.0") > release_key("0.10.2")
    assert release_key("0.10.2") > release_key("0.9.2") > release_key("0.4.38")
