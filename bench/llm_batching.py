"""Could the embedded model answer concurrent calls as sequences of one llama.cpp batch?

The precondition is that a sequence's logits do not depend on what else is in the batch:
otherwise an answer would depend on which calls happened to be asked together. This bench
evaluates real prompts of ours (the conversation-turn template) in one llama context with
several sequences, and compares a sequence's last-token logits bitwise:

- a prompt evaluated alone, and in one batch with another sequence's prompt (before or after it);
- a decode step as a pass of 1 row, of 2 rows and of 3 rows (one row per sequence), with the
  sequence's cells first or last in the KV cache;

then times a decode pass of k rows (one generated token for each of k sequences).

    .venv/bin/python bench/llm_batching.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import llama_cpp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sandbox.llm.local import LocalBackend  # noqa: E402

TEMPLATE = Path(__file__).resolve().parents[1] / "agents" / "prompts" / "converse_turn.j2"


class Context:
    """A bare llama context over the backend's model, holding up to `sequences` sequences."""

    def __init__(self, model, sequences: int, threads: int):
        params = llama_cpp.llama_context_default_params()
        # Each sequence has a cache of its own (n_ctx is split between them).
        params.n_ctx, params.n_batch, params.n_ubatch = 1024 * sequences, 1024, 512
        params.n_seq_max, params.n_threads, params.n_threads_batch = sequences, threads, threads
        self.ctx = llama_cpp.llama_init_from_model(model, params)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(model))

    def decode(self, rows: list[tuple[int, int, int, bool]]) -> dict[int, np.ndarray]:
        """One pass over rows (token, position, sequence, wants logits): the logits wanted, by
        row index."""
        batch = llama_cpp.llama_batch_init(len(rows), 0, 1)
        try:
            for i, (token, pos, seq, wanted) in enumerate(rows):
                batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, pos, 1
                batch.seq_id[i][0], batch.logits[i] = seq, wanted
            batch.n_tokens = len(rows)
            if llama_cpp.llama_decode(self.ctx, batch) != 0:
                raise RuntimeError("llama_decode failed")
            return {i: np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self.ctx, i),
                                             shape=(self.n_vocab,)).copy()
                    for i, row in enumerate(rows) if row[3]}
        finally:
            llama_cpp.llama_batch_free(batch)

    def prompts(self, prompts: list[list[int]]) -> list[np.ndarray]:
        """All prompts in one pass, sequence i for prompt i: each one's last-token logits."""
        rows = [(t, p, seq, p == len(toks) - 1)
                for seq, toks in enumerate(prompts) for p, t in enumerate(toks)]
        out = self.decode(rows)
        return [out[i] for i in sorted(out)]

    def close(self) -> None:
        llama_cpp.llama_free(self.ctx)


def template_tokens(llama) -> list[int]:
    """Real prompt text of ours, tokenized: the conversation-turn template, eight times over."""
    return llama.tokenize((TEMPLATE.read_text(encoding="utf-8") * 8).encode())


def pass_seconds(model, threads: int, tokens: list[int], rows=(1, 2, 4, 8),
                 context: int = 300) -> dict[int, float]:
    """What a decode pass of k rows costs (one token for each of k sequences, each holding
    `context` tokens of `tokens`), best of 10, for each k in `rows`."""
    prompt = tokens[:context]
    costs = {}
    for k in rows:
        ctx = Context(model, k, threads)
        for seq in range(k):
            ctx.decode([(t, p, seq, p == len(prompt) - 1) for p, t in enumerate(prompt)])
        best = float("inf")
        for _ in range(10):
            for seq in range(k):
                llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(ctx.ctx), seq,
                                              len(prompt), -1)
            started = time.perf_counter()
            ctx.decode([(tokens[context + 100], len(prompt), seq, True) for seq in range(k)])
            best = min(best, time.perf_counter() - started)
        ctx.close()
        costs[k] = best
    return costs


def diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max())


def main() -> int:
    backend = LocalBackend(lanes=1, prefix_mb=0)
    llama = backend.contexts[0]
    model, threads = llama._model.model, backend.threads
    tokens = template_tokens(llama)
    a, b, c = tokens[:300], tokens[50:250], tokens[100:220]
    print(f"weights {backend.weights}, {threads} threads; prompts of {len(a)}, {len(b)} and "
          f"{len(c)} tokens")

    def fresh(prompts):
        ctx = Context(model, 3, threads)
        return ctx, ctx.prompts(prompts)

    ctx, (alone,) = fresh([a])
    ctx.close()
    ctx, (first, _) = fresh([a, b])
    ctx.close()
    ctx, (_, second) = fresh([b, a])
    ctx.close()
    print(f"prompt A alone vs in one batch with B: {diff(alone, first)} (A first), "
          f"{diff(alone, second)} (A second)")

    def step(prompts, who):
        """A decode row for each sequence in one pass; sequence `who`'s logits."""
        ctx, _ = fresh(prompts)
        rows = [(tokens[400] if i == who else tokens[401 + i], len(p), i, i == who)
                for i, p in enumerate(prompts)]
        out = ctx.decode(rows)[who]
        ctx.close()
        return out

    one, two, three = step([a], 0), step([a, b], 0), step([a, b, c], 0)
    last = step([c, b, a], 2)
    print(f"decode step of A: 1 row vs 2 rows {diff(one, two)}; 2 rows vs 3 rows "
          f"{diff(two, three)}; A's cells first vs last of 3 sequences {diff(two, last)}")

    print("a decode pass of k rows (one token for each of k sequences), best of 10:")
    for k, best in pass_seconds(model, threads, tokens).items():
        print(f"  {k} rows: {best * 1000:6.2f} ms, {best * 1000 / k:5.2f} ms a sequence")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
