"""multilingual-e5-small's encoder as an ONNX graph, for ONNX Runtime (``services.retrieval.e5.onnx_model``).

The same computation as ``torch_model.TorchE5._forward``: the embeddings' LayerNorm, then 12 post-LayerNorm
layers (attention with a mask added to the scores, exact GELU). Activations stay (tokens × hidden) between the
attentions so that every matrix product is one ``Gemm`` with the weights as the file stores them ([out, in],
``transB``): nothing transposed, nothing copied. The weights are the graph's initializers, named as
``E5Weights.named`` names them, their data outside the graph: the session is handed the arrays themselves.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from services.retrieval.e5.weights import E5Weights

OPSET = 20  # Gelu (exact) from 20, LayerNormalization from 17


class _Nodes:
    """The graph's nodes in order; ``add`` one, get the name of its output."""

    def __init__(self) -> None:
        self.nodes: list[NodeProto] = []

    def add(self, op: str, inputs: list[str], output: str, **attributes: object) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output


def encoder_graph(weights: E5Weights) -> ModelProto:
    """The graph: ``embedded`` (batch × width × hidden, before the LayerNorm) and ``mask`` (batch × 1 × 1 ×
    width: 0 on a token, -inf on padding) → ``hidden`` (batch × width × hidden)."""
    shape = weights.shape
    h, heads = shape.hidden, shape.heads
    constants = {
        "rows": np.array([-1, h], dtype=np.int64),
        "heads": np.array([heads, h // heads], dtype=np.int64),
        "zero": np.array([0], dtype=np.int64),
        "two": np.array([2], dtype=np.int64),
        "scale": np.array(1 / math.sqrt(h // heads), dtype=np.float32),
    }
    g = _Nodes()
    size = g.add("Shape", ["embedded"], "size")  # batch, width, hidden
    split = g.add("Concat", [g.add("Slice", [size, "zero", "two"], "batch_width"), "heads"], "split", axis=0)
    normed = g.add("LayerNormalization", ["embedded", "emb.lnw", "emb.lnb"], "emb.out", epsilon=shape.eps, axis=-1)
    x = g.add("Reshape", [normed, "rows"], "x0")
    for index in range(shape.layers):
        x = _layer(g, f"l{index}.", x, split, shape.eps)
    hidden = g.add("Reshape", [x, size], "hidden")
    graph = helper.make_graph(
        g.nodes,
        "e5",
        [
            helper.make_tensor_value_info("embedded", TensorProto.FLOAT, ["batch", "width", h]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1, 1, "width"]),
        ],
        [helper.make_tensor_value_info(hidden, TensorProto.FLOAT, ["batch", "width", h])],
        [numpy_helper.from_array(value, name) for name, value in constants.items()] + _declared(weights),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=10)


def _declared(weights: E5Weights) -> list[TensorProto]:
    """The weights as initializers whose data lies outside the graph: the session takes it from the arrays
    (``add_external_initializers``), not from a serialized copy (85 MB written, then read back)."""
    declared = []
    for name, array in weights.named().items():
        tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=array.shape)
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", "e5-weights"), ("offset", "0"), ("length", str(array.nbytes))):
            tensor.external_data.add(key=key, value=value)
        declared.append(tensor)
    return declared


def _layer(g: _Nodes, prefix: str, x: str, split: str, eps: float) -> str:
    """One post-LayerNorm layer on ``x`` (tokens × hidden); ``split``: the shape (batch, width, heads, head)."""

    def linear(source: str, name: str) -> str:
        return g.add("Gemm", [source, f"{prefix}{name}", f"{prefix}{name}b"], f"{prefix}{name}.out", transB=1)

    def by_head(name: str, perm: list[int]) -> str:  # (batch, heads, width, head); keys (…, head, width)
        grid = g.add("Reshape", [linear(x, name), split], f"{prefix}{name}.grid")
        return g.add("Transpose", [grid], f"{prefix}{name}.heads", perm=perm)

    def add_norm(residual: str, update: str, norm: str) -> str:
        total = g.add("Add", [residual, update], f"{prefix}{norm}.in")
        return g.add("LayerNormalization", [total, f"{prefix}{norm}w", f"{prefix}{norm}b"], f"{prefix}{norm}.out",
                     epsilon=eps, axis=-1)  # fmt: skip

    q, k, v = by_head("q", [0, 2, 1, 3]), by_head("k", [0, 2, 3, 1]), by_head("v", [0, 2, 1, 3])
    scores = g.add("Mul", [g.add("MatMul", [q, k], f"{prefix}qk"), "scale"], f"{prefix}scaled")
    attention = g.add("Softmax", [g.add("Add", [scores, "mask"], f"{prefix}masked")], f"{prefix}attn", axis=-1)
    context = g.add("Transpose", [g.add("MatMul", [attention, v], f"{prefix}ctx")], f"{prefix}ctx.t", perm=[0, 2, 1, 3])
    x = add_norm(x, linear(g.add("Reshape", [context, "rows"], f"{prefix}ctx.rows"), "ao"), "aln")
    inner = g.add("Gelu", [linear(x, "fi")], f"{prefix}gelu", approximate="none")
    return add_norm(x, linear(inner, "fo"), "oln")
