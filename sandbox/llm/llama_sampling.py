"""Sampling under a grammar with the grammar asked about one token, not all of them.

llama-cpp-python samples a schema-bound answer through one chain: repeat penalties, then the
grammar, then top-k, typical, top-p, min-p, temperature and the draw (or the greedy pick). The
grammar step decodes and checks every one of the model's 49,152 tokens at every step: measured
here, about 10 ms a token, more than the model's own forward pass (8.6 ms).

`GrammarLastSampler` runs the chain without the grammar and asks the grammar about the token it
picked; only when the grammar turns it down (a veto) is the step done again the full way, grammar
first. This is how llama.cpp's own server samples under a grammar. Greedy, the answer is the
grammar-first chain's exactly (the best token, if allowed, is the best allowed token); with a
temperature it follows the grammar all the same but is drawn a little differently, so a seed
gives another answer than llama-cpp-python's chain (still the same one every time).
"""

from __future__ import annotations

import ctypes
import math

import llama_cpp
import numpy as np
from llama_cpp import _internals

# On a veto, the grammar is first asked about this many best tokens, not all 49,152: what the
# sampler needs (the best allowed token, or top-k's 40) is almost always among them.
SHORTLIST = 512


class GrammarLastSampler:
    """The chain `Llama._init_sampler` builds for temperature >= 0 without mirostat or logits
    processors, in four parts: penalties, grammar, head (top-k; nothing when greedy) and tail
    (typical .. draw, or greedy). Duck-types llama-cpp-python's LlamaSampler for `generate`."""

    def __init__(self, llama, *, top_k: int, top_p: float, min_p: float, typical_p: float,
                 temp: float, repeat_penalty: float, frequency_penalty: float,
                 presence_penalty: float, grammar):
        n_vocab = llama.n_vocab()
        self.penalties = _internals.LlamaSampler()
        self.penalties.add_penalties(n_vocab=n_vocab, penalty_last_n=llama.last_n_tokens_size,
                                     penalty_repeat=repeat_penalty,
                                     penalty_freq=frequency_penalty,
                                     penalty_present=presence_penalty)
        self.grammar = None
        if grammar is not None:
            self.grammar = _internals.LlamaSampler()
            self.grammar.add_grammar(llama._model, grammar)
        self.head = None
        self.need = 1 if temp == 0.0 else top_k  # allowed tokens the head and tail look at
        self.tail = _internals.LlamaSampler()
        if temp == 0.0:
            self.tail.add_greedy()
        else:
            self.head = _internals.LlamaSampler()
            self.head.add_top_k(top_k)
            self.tail.add_typical(typical_p, 1)
            self.tail.add_top_p(top_p, 1)
            self.tail.add_min_p(min_p, 1)
            self.tail.add_temp(temp)
            self.tail.add_dist(llama._seed)
        self._n_vocab = n_vocab
        self._data = (llama_cpp.llama_token_data * n_vocab)()
        self._view = np.ctypeslib.as_array(self._data)
        self._ids = np.arange(n_vocab, dtype=np.int32)
        self._short = (llama_cpp.llama_token_data * SHORTLIST)()
        self._short_view = np.ctypeslib.as_array(self._short)
        self.vetoes = 0  # tokens the grammar turned down, each step done again grammar first
        # Tokens to write in next without sampling: the text the grammar dictates, put here by
        # sandbox/llm/llama_dictation.py (and evaluated by then, in one batch).
        self.forced: list[int] = []

    def _candidates(self, ctx, idx: int) -> llama_cpp.llama_token_data_array:
        logits = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        self._view["id"] = self._ids
        self._view["logit"] = np.ctypeslib.as_array(logits, shape=(self._n_vocab,))
        self._view["p"] = 0.0
        return llama_cpp.llama_token_data_array(data=self._data, size=self._n_vocab,
                                                selected=-1, sorted=False)

    @staticmethod
    def _apply(chain, array) -> None:
        llama_cpp.llama_sampler_apply(chain.sampler, ctypes.byref(array))

    def _draw(self, array) -> int:
        """The token the head and tail pick from `array`."""
        for chain in (self.head, self.tail):
            if chain is not None:
                self._apply(chain, array)
        return array.data[array.selected].id

    def _allowed(self, token: int) -> bool:
        """Whether the grammar lets `token` come next (asked about that token alone)."""
        one = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
        self._apply(self.grammar, llama_cpp.llama_token_data_array(
            data=one, size=1, selected=-1, sorted=True))
        return math.isfinite(one[0].logit)

    def sample(self, ctx, idx: int = -1) -> int:
        if self.forced:
            return self._accept(self.forced.pop(0))
        array = self._candidates(ctx, idx)
        self._apply(self.penalties, array)
        if self.grammar is not None:
            # The chain without the grammar first; the grammar vetoes the token it picked.
            token = self._draw(array)
            if self._allowed(token):
                return self._accept(token)
            self.vetoes += 1
            array = self._candidates(ctx, idx)
            self._apply(self.penalties, array)
            shortlist = self._best_allowed()
            array = shortlist if shortlist is not None else self._all_allowed(array)
        return self._accept(self._draw(array))

    def _all_allowed(self, array):
        self._apply(self.grammar, array)
        return array

    def _best_allowed(self) -> llama_cpp.llama_token_data_array | None:
        """The `need` best tokens the grammar allows, best first, if they are among the
        SHORTLIST best after the penalties (then they are the best allowed of all: the grammar
        first, then top-k, would keep the same ones, in the same order); else None.
        Equal logits go by token id, as llama.cpp's greedy pick does."""
        if self.need > SHORTLIST or SHORTLIST >= self._n_vocab:
            return None
        logits = self._view["logit"]
        best = np.argpartition(-logits, SHORTLIST)[:SHORTLIST]
        best = best[np.lexsort((best, -logits[best]))]
        short = self._short_view
        short["id"] = best
        short["logit"] = logits[best]
        short["p"] = 0.0
        self._apply(self.grammar, llama_cpp.llama_token_data_array(
            data=self._short, size=SHORTLIST, selected=-1, sorted=True))
        allowed = np.flatnonzero(np.isfinite(short["logit"]))
        if len(allowed) < self.need:
            return None
        kept = short[allowed[: self.need]].copy()  # the head and tail work on these alone
        short[: self.need] = kept
        return llama_cpp.llama_token_data_array(data=self._short, size=self.need,
                                                selected=-1, sorted=True)

    def _accept(self, token: int) -> int:
        for chain in (self.penalties, self.grammar, self.head, self.tail):
            if chain is not None:
                llama_cpp.llama_sampler_accept(chain.sampler, token)
        return token
