"""Where a JAX release cannot produce a rule's finding on its fixture, and why.

Plain data, no JAX: ``test_rule_fixtures.py`` checks each release's fixtures against it
(the golden records that such a release produced none), and ``docs/generate.py`` writes
each rule page's "Where it fires" table from it.
"""

from __future__ import annotations

_NO_PLAIN_STAGING = "JAX names results after the output tree jxinspect reads"
SILENT: dict[str, dict[str, str | None]] = {
    "JX101": {"0.4": "pmap keeps the real names", "0.5": "pmap keeps the real names",
              "0.6": "pmap keeps the real names", "0.7.1": "pmap keeps the real names",
              "0.8": "pmap says args[i] (JX102)",
              "0.9": "pmap says flat_args[i] (JX102)", "0.10": "pmap says flat_args[i] (JX102)",
              "0.11": "pmap says flat_args[i] (JX102)", "0.12": "pmap says flat_args[i] (JX102)"},
    "JX102": {"0.4": "pmap keeps the real names", "0.5": "pmap keeps the real names",
              "0.6": "pmap keeps the real names", "0.7": "pmap names nothing (JX101)",
              "0.7.1": "pmap keeps the real names"},
    "JX103": {series: "pmap keeps the result paths"
              for series in ("0.4", "0.5", "0.6", "0.7.1", "0.8", "0.9", "0.10", "0.11", "0.12")},
    "JX104": {series: _NO_PLAIN_STAGING
              for series in ("0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.10", "0.11", "0.12")},
    "JX106": {**{series: "only 0.5.3-0.7.1 miscount names"
                 for series in ("0.4", "0.7", "0.8", "0.9", "0.10", "0.11", "0.12")},
              "0.7.1": None},
    "JX107": {series: "remat's body has debug info"
              for series in ("0.5", "0.6", "0.7", "0.8", "0.9", "0.10", "0.11", "0.12")},
    "JX110": {"0.4": "the custom_vjp body has no debug info (JX107); a lone result's '' is whole",
              "0.5": "the custom_vjp body keeps its names and paths",
              "0.6": "the custom_vjp body keeps its names and paths",
              "0.7.1": "the custom_vjp body keeps its names and paths"},
    "JX204": {series: "GSPMD partitions by default, and keeps no record of where a sharding "
                      "came from" for series in ("0.4", "0.5", "0.6")},
    "JX203": {"0.4": "pmap's axis is anonymous", "0.5": "pmap's axis is anonymous",
              "0.6": "pmap's axis is anonymous", "0.7": "pmap's axis is anonymous",
              "0.8": "pmap's axis is an object's <axis 0x...>, read as (unnamed)",
              "0.9": "pmap's axis is an object's <axis 0x...>, read as (unnamed)",
              "0.10.0": "pmap's axis is an object's <axis 0x...>, read as (unnamed)",
              "0.10.1": "pmap's axis is an object's <axis 0x...>, read as (unnamed)"},
}  # fmt: skip
"""Code -> JAX series (or release, where it differs from its series) -> why that
release's fixture produces no finding of the code (``None``: that release produces one,
though its series does not)."""
