"""Writes a BERT-family sentence-embedding model (sentence-transformers layout: config.json,
model.safetensors) as an ONNX graph, model.onnx, in the same folder: the graph ONNX Runtime
runs for researchflow's search by meaning.

The graph is the encoder of the Hugging Face `BertModel` (absolute positions, post-norm
layers, exact GELU), with the inputs and the output of the usual ONNX export of such a model
(`input_ids`, `attention_mask`, `token_type_ids`, int64 [batch, sequence]; `last_hidden_state`,
float [batch, sequence, hidden]); researchflow pools and scales the output itself. Built from
the weights with the `onnx` package alone: no PyTorch, no model hub.

Usage: python3 bert_onnx.py MODEL_DIR
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 20  # the first with Gelu


def read_safetensors(path):
    """The float tensors of a safetensors file, by name."""
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    body = data[8 + size :]
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue
        start, end = meta["data_offsets"]
        tensors[name] = np.frombuffer(body[start:end], dtype="<f4").reshape(meta["shape"])
    return tensors


def strip_prefix(tensors):
    """Names without a leading `bert.` (checkpoints saved from a task model carry it)."""
    return {n[5:] if n.startswith("bert.") else n: t for n, t in tensors.items()}


class Graph:
    def __init__(self, weights):
        self.weights = weights
        self.nodes = []
        self.initializers = []
        self.count = 0

    def const(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def weight(self, name, transpose=False):
        array = self.weights[name]
        return self.const(name, array.T if transpose else array)

    def op(self, kind, inputs, **attrs):
        self.count += 1
        out = f"{kind.lower()}_{self.count}"
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(self, x, prefix):
        y = self.op("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)])
        return self.op("Add", [y, self.weight(f"{prefix}.bias")])

    def layer_norm(self, x, prefix, eps):
        scale = self.weight(f"{prefix}.weight")
        bias = self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)


def embeddings(g, eps):
    word = g.op("Gather", [g.weight("embeddings.word_embeddings.weight"), "input_ids"])
    kinds = g.op("Gather", [g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"])
    # The first `sequence` rows of the position table: [sequence, hidden].
    length = g.op("Shape", ["input_ids"], start=1, end=2)
    first = g.const("first", np.array([0], dtype=np.int64))
    place = g.op("Slice", [g.weight("embeddings.position_embeddings.weight"), first, length, first])
    total = g.op("Add", [g.op("Add", [word, kinds]), place])
    return g.layer_norm(total, "embeddings.LayerNorm", eps)


def attention_bias(g):
    """0 where a token is read, a large negative number where it is padding: [batch, 1, 1, seq]."""
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    hidden = g.op("Sub", [g.const("unit", np.array(1.0, dtype=np.float32)), mask])
    bias = g.op("Mul", [hidden, g.const("floor", np.array(-1e4, dtype=np.float32))])
    return g.op("Unsqueeze", [bias, g.const("bias_axes", np.array([1, 2], dtype=np.int64))])


def layer(g, x, bias, i, heads, hidden, eps):
    p = f"encoder.layer.{i}"
    head = hidden // heads
    split = g.const(f"split_{i}", np.array([0, 0, heads, head], dtype=np.int64))
    joined = g.const(f"join_{i}", np.array([0, 0, hidden], dtype=np.int64))

    def heads_of(name, perm):
        y = g.op("Reshape", [g.linear(x, f"{p}.attention.self.{name}"), split])
        return g.op("Transpose", [y], perm=perm)

    q = heads_of("query", [0, 2, 1, 3])
    k = heads_of("key", [0, 2, 3, 1])
    v = heads_of("value", [0, 2, 1, 3])
    scale = g.const(f"scale_{i}", np.array(1.0 / np.sqrt(head), dtype=np.float32))
    scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), bias])
    context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), joined])
    attended = g.op("Add", [g.linear(context, f"{p}.attention.output.dense"), x])
    x = g.layer_norm(attended, f"{p}.attention.output.LayerNorm", eps)
    inner = g.op("Gelu", [g.linear(x, f"{p}.intermediate.dense")])
    out = g.op("Add", [g.linear(inner, f"{p}.output.dense"), x])
    return g.layer_norm(out, f"{p}.output.LayerNorm", eps)


def build(config, weights):
    if config.get("position_embedding_type", "absolute") != "absolute":
        sys.exit("error: only absolute position embeddings are supported")
    if config.get("hidden_act", "gelu") != "gelu":
        sys.exit(f"error: the activation `{config['hidden_act']}` is not supported (gelu is)")
    g = Graph(weights)
    eps = float(config.get("layer_norm_eps", 1e-12))
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    x = embeddings(g, eps)
    bias = attention_bias(g)
    for i in range(config["num_hidden_layers"]):
        x = layer(g, x, bias, i, heads, hidden, eps)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    ids = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden]
    )
    graph = helper.make_graph(g.nodes, "bert", ids, [out], g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9  # read by ONNX Runtime 1.16 and later
    model.producer_name = "researchflow scripts/setup/bert_onnx.py"
    onnx.checker.check_model(model)
    return model


def main():
    folder = Path(sys.argv[1])
    config = json.loads((folder / "config.json").read_text())
    weights = strip_prefix(read_safetensors(folder / "model.safetensors"))
    model = build(config, weights)
    partial = folder / "model.onnx.partial"
    partial.write_bytes(model.SerializeToString())
    partial.replace(folder / "model.onnx")


if __name__ == "__main__":
    main()
