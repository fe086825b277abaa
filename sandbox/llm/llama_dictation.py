"""Text the grammar dictates is written into the answer, not sampled token by token.

Much of a schema-bound answer is not the model's to choose: the keys and their quotes
(`"importance"`), the rest of a place name once its first letters tell it from every other
place. Yet sampled, each of those tokens costs a forward pass of its own (about 9 ms on 2
cores), while one pass over several tokens costs little more than one over a single token
(bench/README.md: 1 token 8.7 ms, 4 tokens 19 ms, 8 tokens 28 ms).

After each sampled token, `Dictation` reads the text the grammar lets come next: it asks a copy
of the grammar which single characters may follow, and while only one may, that character is
dictated. Where JSON allows an optional space before the one other character, the answer's own
habit so far decides (`"a": 1` or `"a":1`); with no habit yet, the dictated text ends there. The
text is tokenized as the tokenizer would, less its last token (the model's own token there may
reach on into what it chooses next: `":` where the text ends at `"`), and the tokens go two ways:
to the sampler, which writes them in without sampling (GrammarLastSampler.forced), and to
llama-cpp-python's speculative loop (`Llama.generate`'s `draft_model`), which evaluates them
in one batch with the token before them.

This is "jump-forward" decoding. Unlike drafting and checking, it changes the answers: the model
no longer picks how the dictated text is tokenized (measured: with llama.cpp's repeat penalty it
often spelled a repeated key `pl` `ac` `e`, and a checked draft was then mostly thrown away). The
answers are the same every time for the same prompt and seed, and no less valid (bench/README.md);
`SANDBOX_LLM_DICTATION=sample` samples every token as before.
"""

from __future__ import annotations

import ctypes
import math
import string

import llama_cpp
import numpy as np

# Longest dictated text, in characters: our schemas' dictated stretches are shorter than this
# (`", "importance":` is 16; a place name's tail rarely over 30).
MAX_DICTATED_CHARS = 48
NO_TOKENS = np.zeros(0, dtype=np.intc)


class CharProbe:
    """The model's single-character tokens (printable ASCII and the newline) and its end of
    generation token, asked together which of them a grammar lets come next."""

    def __init__(self, llama):
        chars: list[str | None] = []
        ids: list[int] = []
        for ch in string.printable:
            if ch in "\t\r\x0b\x0c":
                continue
            tokens = llama.tokenize(ch.encode(), add_bos=False, special=False)
            if len(tokens) == 1 and llama.detokenize(tokens) == ch.encode():
                chars.append(ch)
                ids.append(tokens[0])
        chars.append(None)  # the end: the grammar is complete
        ids.append(llama.token_eos())
        self.chars = chars
        self.token = dict(zip(chars, ids, strict=True))
        self._data = (llama_cpp.llama_token_data * len(ids))()
        self._view = np.ctypeslib.as_array(self._data)
        self._view["id"] = ids

    def allowed(self, grammar) -> list[str | None]:
        """The characters (None: the end) `grammar`, a llama_sampler, lets come next."""
        self._view["logit"] = 0.0
        self._view["p"] = 0.0
        array = llama_cpp.llama_token_data_array(data=self._data, size=len(self.chars),
                                                 selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(grammar, ctypes.byref(array))
        return [ch for ch, logit in zip(self.chars, self._view["logit"], strict=True)
                if math.isfinite(logit)]


def spaced_before(written: str, prev: str, nxt: str) -> bool | None:
    """Whether the answer so far (`written`) puts a space between `prev` and `nxt`; None when
    it has not shown a habit."""
    spaced, tight = written.count(f"{prev} {nxt}"), written.count(prev + nxt)
    return None if spaced == tight else spaced > tight


def dictated_text(grammar, probe: CharProbe, written: str,
                  limit: int = MAX_DICTATED_CHARS) -> str:
    """The characters `grammar` (a llama_sampler) dictates from its state on, given the answer
    so far. Works on a copy: the grammar itself advances only by the tokens the sampler takes."""
    clone = llama_cpp.llama_sampler_clone(grammar)
    try:
        text = ""
        while len(text) < limit:
            allowed = probe.allowed(clone)
            if len(allowed) == 2 and " " in allowed and None not in allowed:
                # JSON's optional space: as the answer has done so far, else stop here.
                other = next(ch for ch in allowed if ch != " ")
                so_far = written + text
                habit = spaced_before(so_far, so_far[-1], other) if so_far else None
                if habit is None:
                    break
                allowed = [" " if habit else other]
            if len(allowed) != 1 or allowed[0] is None:
                break
            text += allowed[0]
            llama_cpp.llama_sampler_accept(clone, probe.token[allowed[0]])
        return text
    finally:
        llama_cpp.llama_sampler_free(clone)


class Dictation:
    """llama-cpp-python's `draft_model` for a Llama whose sampler is a GrammarLastSampler:
    given the tokens so far (the last one sampled, not yet evaluated), the tokens the grammar
    dictates next, handed to the sampler to be written in. No grammar (free text), nothing."""

    def __init__(self, llama, max_tokens: int = 16):
        self.llama = llama
        self.probe = CharProbe(llama)
        self.max_tokens = max_tokens

    def __call__(self, input_ids, **_) -> np.ndarray:
        sampler = self.llama._sampler
        grammar = getattr(sampler, "grammar", None)
        if grammar is None:
            return NO_TOKENS
        written = self.llama.detokenize(list(input_ids[self.llama.answer_start:]))
        text = dictated_text(grammar.sampler, self.probe,
                             written.decode("utf-8", errors="replace"))
        if not text:
            return NO_TOKENS
        tokens = self.llama.tokenize(text.encode(), add_bos=False, special=False)
        tokens = tokens[:-1][: self.max_tokens]
        sampler.forced = list(tokens)
        self.llama.call["dictated"] = self.llama.call.get("dictated", 0) + len(tokens)
        return np.asarray(tokens, dtype=np.intc)
