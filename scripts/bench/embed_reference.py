"""The ONNX Runtime reference of the embedding benchmark (scripts/bench-embed.sh): the same
model and the same chunks as researchflow's index embeds, run the plain way from Python.

Reads CHUNKS.jsonl (one JSON string a line, written by `examples/bench_embed.rs`) and the
model folder (tokenizer.json, model.onnx); tokenizes with the Hugging Face `tokenizers`
package (truncated at 256 tokens, padded to the longest of the batch), runs
`onnxruntime.InferenceSession(model.onnx)` with its default CPU options on batches of
--batch texts (default 1, its fastest here: on 2 cores and the Debian corpus about 34
chunks/s, batches of 32 about 24) in the file's order, mean-pools the last hidden states under the attention mask and scales each
vector to length 1. Prints `onnxruntime: N chunks in S s, R chunks/s`: the wall time of
tokenizing, running and pooling, the session's loading not counted (as on researchflow's side).

  embed_reference.py CHUNKS.jsonl MODEL_DIR [--batch N] [--save OUT.npy]
                     [--check VECTORS.safetensors]

--save writes the vectors ([N, dims] float32, .npy); --check compares them with
researchflow's (the index's vectors.safetensors, rows in the file's order) and prints the
least and the mean cosine similarity (the two agree when the least is >= 0.999).
"""

import argparse
import json
import struct
import time
from pathlib import Path

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

MAX_TOKENS = 256


def load(model_dir):
    """The tokenizer, set as researchflow sets it, and the ONNX Runtime session."""
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding()
    session = onnxruntime.InferenceSession(
        str(model_dir / "model.onnx"), providers=["CPUExecutionProvider"]
    )
    return tokenizer, session


def embed(tokenizer, session, texts, batch):
    """The vector of each text, in order, each of length 1."""
    names = [i.name for i in session.get_inputs()]
    out = []
    for start in range(0, len(texts), batch):
        encodings = tokenizer.encode_batch(texts[start : start + batch])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, {name: feed[name] for name in names})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        out.append(pooled / norms)
    return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)


def read_safetensors(path, name="vectors"):
    """The f32 tensor `name` of a safetensors file."""
    data = Path(path).read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    meta = json.loads(data[8 : 8 + size])[name]
    start, end = meta["data_offsets"]
    body = data[8 + size + start : 8 + size + end]
    return np.frombuffer(body, dtype="<f4").reshape(meta["shape"])


def check(ours, path):
    """Prints how close researchflow's vectors (in `path`) are to `ours`."""
    theirs = read_safetensors(path)
    if theirs.shape != ours.shape:
        print(f"agreement: shapes differ, researchflow {theirs.shape}, onnxruntime {ours.shape}")
        return
    cosines = (theirs * ours).sum(axis=1)
    verdict = "agree" if cosines.min() >= 0.999 else "DIFFER (least < 0.999)"
    print(
        f"agreement: cosine least {cosines.min():.6f}, mean {cosines.mean():.6f} "
        f"over {len(cosines)} chunks: {verdict}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chunks", type=Path)
    parser.add_argument("model", type=Path)
    parser.add_argument("--batch", type=int, default=1, help="texts a run (default 1)")
    parser.add_argument("--save", type=Path, help="write the vectors here (.npy)")
    parser.add_argument("--check", type=Path, help="researchflow's vectors.safetensors")
    args = parser.parse_args()
    texts = [json.loads(line) for line in args.chunks.read_text().splitlines() if line]
    tokenizer, session = load(args.model)
    start = time.perf_counter()
    vectors = embed(tokenizer, session, texts, args.batch)
    wall = time.perf_counter() - start
    print(f"onnxruntime: {len(texts)} chunks in {wall:.2f} s, {len(texts) / wall:.1f} chunks/s")
    if args.save:
        np.save(args.save, vectors.astype(np.float32))
    if args.check:
        check(vectors, args.check)


if __name__ == "__main__":
    main()
