"""XLA's protocol buffers, decoded by the ``protobuf`` library over the fields read here.

jaxlib ships no generated Python for XLA's protos, so the messages are declared here, each
field by the number XLA's ``xla/service/hlo.proto`` gives it (unknown fields are skipped,
so a newer XLA's additions decode too):

* ``BufferAssignmentProto``: the logical buffers (id, size, the instruction and shape
  index defining each), the allocations (size, what they hold: an entry parameter, a
  maybe-live-out result, a constant, thread-local scalars, or temporaries at offsets) and,
  where the release keeps them, XLA's own record of liveness: the heap simulator's trace
  (field 4: allocate / free / share events in schedule order, up to 0.4.x) or each
  allocation's buffers live at its peak (field 5, not in ``hlo.proto``'s published text:
  measured, an allocation index and buffer ids that sum to the allocation's size; from
  0.8 on).
* ``HloProto`` (0.4.x's ``serialized_hlo_proto``): the module and its buffer assignment.
* ``HloModuleProto`` (``hlo_modules()[0]``): each instruction's id and name, each
  computation's id, the schedule (per computation, its instruction ids in order).
* ``XSpace`` (``tsl/profiler/protobuf/xplane.proto``, what ``jax.profiler.trace`` writes
  as ``HOST.xplane.pb``): planes of lines of events, each event and stat named through
  its plane's metadata tables; a stat's value a number, a string, or a reference to
  another stat metadata's name.
"""

from __future__ import annotations

import functools
from typing import Any

_DOUBLE = 1  # FieldDescriptorProto.TYPE_DOUBLE
_INT64 = 3
_UINT64 = 4
_BOOL = 8
_STRING = 9
_MESSAGE = 11
_BYTES = 12
_OPTIONAL = 1  # FieldDescriptorProto.LABEL_OPTIONAL
_REPEATED = 3

_MESSAGES: dict[str, list[tuple[str, int, int, int, str | None]]] = {
    # message: [(field, number, type, label, message type)]
    "Location": [
        ("instruction_name", 2, _STRING, _OPTIONAL, None),
        ("shape_index", 3, _INT64, _REPEATED, None),
        ("instruction_id", 4, _INT64, _OPTIONAL, None),
    ],
    "LogicalBuffer": [
        ("id", 1, _INT64, _OPTIONAL, None),
        ("size", 2, _INT64, _OPTIONAL, None),
        ("defined_at", 3, _MESSAGE, _OPTIONAL, "Location"),
        ("color", 4, _INT64, _OPTIONAL, None),
    ],
    "Assigned": [
        ("logical_buffer_id", 1, _INT64, _OPTIONAL, None),
        ("offset", 2, _INT64, _OPTIONAL, None),
        ("size", 3, _INT64, _OPTIONAL, None),
    ],
    "Allocation": [
        ("index", 1, _INT64, _OPTIONAL, None),
        ("size", 2, _INT64, _OPTIONAL, None),
        ("is_thread_local", 3, _BOOL, _OPTIONAL, None),
        ("is_entry_computation_parameter", 5, _BOOL, _OPTIONAL, None),
        ("parameter_number", 6, _INT64, _OPTIONAL, None),
        ("maybe_live_out", 7, _BOOL, _OPTIONAL, None),
        ("color", 8, _INT64, _OPTIONAL, None),
        ("assigned", 9, _MESSAGE, _REPEATED, "Assigned"),
        ("parameter_shape_index", 10, _INT64, _REPEATED, None),
        ("is_tuple", 11, _BOOL, _OPTIONAL, None),
        ("is_constant", 12, _BOOL, _OPTIONAL, None),
    ],
    "Event": [
        ("kind", 1, _INT64, _OPTIONAL, None),  # 0 allocate, 1 free, 2 share with
        ("buffer_id", 2, _INT64, _OPTIONAL, None),
        ("computation_name", 3, _STRING, _OPTIONAL, None),
        ("instruction_name", 4, _STRING, _OPTIONAL, None),
        ("share_with_canonical_id", 5, _INT64, _OPTIONAL, None),
    ],
    "HeapTrace": [
        ("events", 1, _MESSAGE, _REPEATED, "Event"),
        ("whole_module_simulation", 2, _BOOL, _OPTIONAL, None),
        ("buffer_allocation_index", 3, _INT64, _OPTIONAL, None),
    ],
    "PeakBuffers": [
        ("allocation_index", 1, _INT64, _OPTIONAL, None),
        ("logical_buffer_ids", 2, _INT64, _REPEATED, None),
    ],
    "BufferAssignment": [
        ("logical_buffers", 1, _MESSAGE, _REPEATED, "LogicalBuffer"),
        ("buffer_allocations", 3, _MESSAGE, _REPEATED, "Allocation"),
        ("heap_simulator_traces", 4, _MESSAGE, _REPEATED, "HeapTrace"),
        ("peak_buffers", 5, _MESSAGE, _REPEATED, "PeakBuffers"),
    ],
    "Instruction": [
        ("name", 1, _STRING, _OPTIONAL, None),
        ("opcode", 2, _STRING, _OPTIONAL, None),
        ("id", 35, _INT64, _OPTIONAL, None),
        ("called_computation_ids", 38, _INT64, _REPEATED, None),
    ],
    "Computation": [
        ("name", 1, _STRING, _OPTIONAL, None),
        ("instructions", 2, _MESSAGE, _REPEATED, "Instruction"),
        ("id", 5, _INT64, _OPTIONAL, None),
        ("root_id", 6, _INT64, _OPTIONAL, None),
    ],
    "Sequence": [("instruction_ids", 1, _INT64, _REPEATED, None)],
    "SequenceEntry": [  # a map<int64, Sequence>'s entry, as the wire writes it
        ("key", 1, _INT64, _OPTIONAL, None),
        ("value", 2, _MESSAGE, _OPTIONAL, "Sequence"),
    ],
    "Schedule": [("sequences", 1, _MESSAGE, _REPEATED, "SequenceEntry")],
    "Module": [
        ("name", 1, _STRING, _OPTIONAL, None),
        ("computations", 3, _MESSAGE, _REPEATED, "Computation"),
        ("entry_computation_id", 6, _INT64, _OPTIONAL, None),
        ("schedule", 7, _MESSAGE, _OPTIONAL, "Schedule"),
    ],
    "HloProto": [
        ("hlo_module", 1, _MESSAGE, _OPTIONAL, "Module"),
        ("buffer_assignment", 3, _MESSAGE, _OPTIONAL, "BufferAssignment"),
    ],
    "XStat": [
        ("metadata_id", 1, _INT64, _OPTIONAL, None),
        ("double_value", 2, _DOUBLE, _OPTIONAL, None),
        ("uint64_value", 3, _UINT64, _OPTIONAL, None),
        ("int64_value", 4, _INT64, _OPTIONAL, None),
        ("str_value", 5, _STRING, _OPTIONAL, None),
        ("bytes_value", 6, _BYTES, _OPTIONAL, None),
        ("ref_value", 7, _UINT64, _OPTIONAL, None),
    ],
    "XEvent": [
        ("metadata_id", 1, _INT64, _OPTIONAL, None),
        ("offset_ps", 2, _INT64, _OPTIONAL, None),
        ("duration_ps", 3, _INT64, _OPTIONAL, None),
        ("stats", 4, _MESSAGE, _REPEATED, "XStat"),
    ],
    "XLine": [
        ("id", 1, _INT64, _OPTIONAL, None),
        ("name", 2, _STRING, _OPTIONAL, None),
        ("timestamp_ns", 3, _INT64, _OPTIONAL, None),
        ("events", 4, _MESSAGE, _REPEATED, "XEvent"),
    ],
    "XEventMetadata": [
        ("id", 1, _INT64, _OPTIONAL, None),
        ("name", 2, _STRING, _OPTIONAL, None),
        ("stats", 5, _MESSAGE, _REPEATED, "XStat"),
    ],
    "XEventMetadataEntry": [
        ("key", 1, _INT64, _OPTIONAL, None),
        ("value", 2, _MESSAGE, _OPTIONAL, "XEventMetadata"),
    ],
    "XStatMetadata": [
        ("id", 1, _INT64, _OPTIONAL, None),
        ("name", 2, _STRING, _OPTIONAL, None),
    ],
    "XStatMetadataEntry": [
        ("key", 1, _INT64, _OPTIONAL, None),
        ("value", 2, _MESSAGE, _OPTIONAL, "XStatMetadata"),
    ],
    "XPlane": [
        ("id", 1, _INT64, _OPTIONAL, None),
        ("name", 2, _STRING, _OPTIONAL, None),
        ("lines", 3, _MESSAGE, _REPEATED, "XLine"),
        ("event_metadata", 4, _MESSAGE, _REPEATED, "XEventMetadataEntry"),
        ("stat_metadata", 5, _MESSAGE, _REPEATED, "XStatMetadataEntry"),
    ],
    "XSpace": [("planes", 1, _MESSAGE, _REPEATED, "XPlane")],
}
_PACKAGE = "jxinspect.xla"


_WITH_PRESENCE = frozenset(m for m in _MESSAGES if m.startswith("X"))
"""The profiler's messages, declared in a file of their own as ``proto2``: a stat says
which value it holds by the field present (a ``device_ordinal`` or ``run_id`` of 0
included), as ``xplane.proto``'s ``oneof`` does; the wire is the same."""


@functools.cache
def _classes() -> dict[str, Any]:
    """Each message's class, built once from the table above."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for file_name, syntax, names in (
        ("jxinspect_xla.proto", "proto3", [m for m in _MESSAGES if m not in _WITH_PRESENCE]),
        ("jxinspect_xplane.proto", "proto2", [m for m in _MESSAGES if m in _WITH_PRESENCE]),
    ):
        file = descriptor_pb2.FileDescriptorProto(name=file_name, package=_PACKAGE, syntax=syntax)
        for message in names:
            described = file.message_type.add(name=message)
            for name, number, kind, label, type_name in _MESSAGES[message]:
                field = described.field.add(name=name, number=number, type=kind, label=label)
                if type_name is not None:
                    field.type_name = f".{_PACKAGE}.{type_name}"
        pool.Add(file)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
        for name in _MESSAGES
    }


def decode(message: str, data: bytes) -> Any:
    """``data`` decoded as ``message`` (``BufferAssignment``, ``HloProto``, ``Module``);
    a ``google.protobuf.message.DecodeError`` where it is no such message."""
    decoded = _classes()[message]()
    decoded.ParseFromString(data)
    return decoded
