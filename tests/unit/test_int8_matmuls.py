"""The offline model's weight products run in int8 (``adapters.int8_matmuls``): every
int8 weight matrix of the shipped file is rewritten, the vectors stay near (cosine
above 0.975) the float32 products' and keep their meaning, and a text's vector does
not depend on what it is embedded with."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from memledger import bootstrap
from memledger.adapters import int8_matmuls
from memledger.adapters.embedding import (
    MINILM_FLOAT32_MODEL,
    MINILM_MODEL,
    MiniLmEmbedder,
    default_model_path,
    offline,
)
from memledger.config import Settings

TEXTS = [
    "Project Phoenix uses PostgreSQL for its background jobs",
    "I prefer concise answers in bullet points",
    "Why does the deploy of the billing service keep failing, and how should I debug it?",
    "Sarah works with me on the FastAPI migration",
    "x",
]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def float32_vector(session: onnxruntime.InferenceSession, text: str) -> list[float]:
    """The vector the file gives with its products in float32 (the reference)."""
    loaded = offline()._load()
    ids = np.array([loaded.tokenizer.encode(text).ids], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    (hidden,) = session.run(["last_hidden_state"], feeds)
    pooled = hidden[0].mean(axis=0)
    result: list[float] = (pooled / np.linalg.norm(pooled)).tolist()
    return result


def test_every_int8_weight_matrix_of_the_shipped_model_is_multiplied_in_int8() -> None:
    original = default_model_path().read_bytes()
    rewritten, replaced = int8_matmuls.rewrite(original)
    assert replaced == 36  # 6 layers x (query, key, value, output, two feed-forward)
    model = onnx.load_model_from_string(rewritten)
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("DynamicQuantizeMatMul") == 36
    made_by = {output: node for node in model.graph.node for output in node.output}
    int8 = {init.name for init in model.graph.initializer if init.data_type == TensorProto.INT8}

    def dequantised(name: str) -> bool:  # Mul(Cast(int8 initializer), scale)
        mul = made_by.get(name)
        cast = made_by.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
        return cast is not None and cast.op_type == "Cast" and cast.input[0] in int8

    left = [node.name for node in model.graph.node if node.op_type == "MatMul" and dequantised(node.input[1])]
    assert left == [], "no float product of dequantised weights is left"
    assert len(rewritten) < len(original) * 1.05  # the int8 weights are kept, not unpacked


def test_vectors_stay_within_a_few_percent_of_the_float32_products() -> None:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    reference = onnxruntime.InferenceSession(str(default_model_path()), options, providers=["CPUExecutionProvider"])
    vectors = offline().embed(TEXTS)
    assert offline().matmuls_in_int8 == 36
    for text, vector in zip(TEXTS, vectors, strict=True):
        assert cosine(vector, float32_vector(reference, text)) > 0.975, text
    assert MINILM_MODEL.endswith("-dq"), "another computation is another model"


def test_a_text_gets_the_same_vector_alone_and_among_others() -> None:
    together = offline().embed(TEXTS)
    for text, vector in zip(TEXTS, together, strict=True):
        assert offline().embed([text])[0] == vector
    assert offline().embed(list(reversed(TEXTS))) == list(reversed(together))


def test_a_model_without_int8_weights_is_left_as_it_is() -> None:
    weights = numpy_helper.from_array(np.ones((2, 2), dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [weights],
    )
    data = helper.make_model(graph).SerializeToString()
    assert int8_matmuls.rewrite(data) == (data, 0)


def test_a_per_row_scale_is_not_mistaken_for_a_per_column_one() -> None:
    quantised = numpy_helper.from_array(np.ones((3, 2), dtype=np.int8), "w_q")
    per_row = numpy_helper.from_array(np.ones((3, 1), dtype=np.float32), "w_scale")
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["w_q"], ["w_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
            helper.make_node("MatMul", ["x", "w"], ["y"]),
        ],
        "per_row",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [quantised, per_row],
    )
    assert int8_matmuls.rewrite(helper.make_model(graph).SerializeToString())[1] == 0


def test_bytes_that_are_not_a_model_are_refused() -> None:
    with pytest.raises(ValueError, match="not an ONNX model"):
        int8_matmuls.rewrite(b"\xff\x00 definitely not protobuf")


def test_minilm_float32_keeps_the_vectors_made_before_the_int8_products() -> None:
    chosen = bootstrap.build_embedder(Settings(embedding_model="minilm-float32"))
    assert isinstance(chosen, MiniLmEmbedder)
    assert chosen.model == MINILM_FLOAT32_MODEL != offline().model
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    reference = onnxruntime.InferenceSession(str(default_model_path()), options, providers=["CPUExecutionProvider"])
    for text, vector in zip(TEXTS, chosen.embed(TEXTS), strict=True):
        assert vector == pytest.approx(float32_vector(reference, text), abs=1e-5)
    assert chosen.matmuls_in_int8 == 0
