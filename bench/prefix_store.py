"""How much prompt evaluation the embedded model's prefix store saves at each memory budget, from
the prompts of a scripted STSS episode replayed through the store's rule (longest stored prefix,
least recently used evicted first, a state costing its tokens' KV bytes), without running the
model: the budget's default is chosen here.

    .venv/bin/python bench/prefix_store.py                       # 12 residents, from 08:00
    .venv/bin/python bench/prefix_store.py --background 3 --budgets 128 512

Every prompt is formatted with the model's chat template and tokenized by its tokenizer, as the
local backend does; the scripted answer is the completion a state keeps. The scripted episode
talks less than the embedded model does, so the shares are a lower bound on what the store
misses in a real run.
"""

from __future__ import annotations

import argparse
import sys
from collections import OrderedDict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from local_llm import scripted_calls  # noqa: E402  (bench/, beside this script)

from sandbox.llm.local import common_prefix  # noqa: E402

KV_BYTES_PER_TOKEN = 2_305_945 / 100  # llama_state_get_size after 100 tokens of SmolLM2-135M


def episode_calls(background: int, start: str) -> list[tuple[list, str]]:
    """(messages, answer text) of every call of the scripted episode, in order."""
    return [([m.model_dump() for m in request.messages], text)
            for request, text in scripted_calls(background, start, embedder="hashing")]


def token_sequences(calls) -> list[tuple[list[int], list[int]]]:
    """(prompt tokens, answer tokens) as the local backend would evaluate them."""
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from sandbox.llm.local import embedded_model_path

    llm = Llama(model_path=str(embedded_model_path("smollm2-135m")), vocab_only=True,
                verbose=False)
    formatter = Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=llm._model.token_get_text(llm.token_eos()),
        bos_token=llm._model.token_get_text(llm.token_bos()))
    out = []
    for messages, text in calls:
        formatted = formatter(messages=messages)
        prompt = llm.tokenize(formatted.prompt.encode(), add_bos=not formatted.added_special,
                              special=True)
        out.append((prompt, llm.tokenize(text.encode(), add_bos=False, special=False)))
    return out


def replay(sequences, budget_bytes: float) -> tuple[int, int]:
    """(prompt tokens, tokens not evaluated again) through a store of `budget_bytes`."""
    store: OrderedDict[tuple, None] = OrderedDict()
    held: list[int] = []  # what the context holds (llama.cpp's own same-prompt reuse)
    total = reused = 0
    for prompt, answer in sequences:
        best, best_key = common_prefix(held, prompt), None
        for key in store:
            n = common_prefix(key, prompt)
            if n > best:
                best, best_key = n, key
        if best_key is not None:
            store.move_to_end(best_key)
        total += len(prompt)
        reused += min(best, len(prompt) - 1)
        held = prompt + answer
        store[tuple(held)] = None
        store.move_to_end(tuple(held))
        while sum(len(k) for k in store) * KV_BYTES_PER_TOKEN > budget_bytes and len(store) > 1:
            store.popitem(last=False)
    return total, reused


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--background", type=int, default=11)
    parser.add_argument("--start", default="08:00", help="start time on the event's day")
    parser.add_argument("--budgets", type=int, nargs="+", default=[0, 256, 512, 1024, 2048],
                        metavar="MIB")
    args = parser.parse_args()
    sequences = token_sequences(episode_calls(args.background, args.start))
    print(f"public_spring_tasting, {args.background + 1} residents from {args.start}, scripted: "
          f"{len(sequences)} calls, {sum(len(p) for p, _ in sequences)} prompt tokens")
    for mib in args.budgets:
        total, reused = replay(sequences, mib * 2**20)
        print(f"  {mib:5d} MiB: {reused / total:6.1%} of prompt tokens not evaluated again")
    return 0


if __name__ == "__main__":
    sys.exit(main())
