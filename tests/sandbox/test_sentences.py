"""An answer held to its first sentences (LLMRequest.max_sentences): where the cut falls, every
backend's answer cut there, a cut-off tail past it not counted as truncation, and the embedded
model stopping there instead of generating on."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from sandbox.llm import LLMRequest, LLMSettings, Message, ScriptedBackend, make_llm
from sandbox.llm.sentences import first_sentences, next_sentence_at


@pytest.mark.parametrize("text, two", [
    ("Hello there. How are you? Fine, thanks.", "Hello there. How are you?"),
    ("Hi! I'm off... See you. Bye.", "Hi! I'm off..."),
    ('"Come along," she said. "Please." Then left.', '"Come along," she said. "Please."'),
    ("It costs 3.50 today. Only today. Really.", "It costs 3.50 today. Only today."),
    ("One.\nTwo.\nThree.", "One.\nTwo."),
    # a bracketed mark after the last sentence kept is not a sentence: it stays
    ("Goodbye now. See you soon. [END] And one more thing.", "Goodbye now. See you soon. [END]"),
    ("Just one sentence [END]", "Just one sentence [END]"),
    # stage directions are not sentences either, wherever they stand
    ("(smiles.) Hello there. How are you? Fine.", "(smiles.) Hello there. How are you?"),
    ("Hi *waves.* there. Bye. Now go.", "Hi *waves.* there. Bye."),
    ("Lovely. Truly! (laughs) And more.", "Lovely. Truly! (laughs)"),
])
def test_an_answer_is_cut_after_its_second_sentence(text, two):
    assert first_sentences(text, 2) == two


def test_the_next_sentence_is_known_only_once_it_has_begun():
    assert next_sentence_at("Hello there. How are you?", 2) is None  # no third yet
    assert next_sentence_at("Hello there. How are you? ", 2) is None  # white space is not one
    assert next_sentence_at("Hello there. How are you? [EN", 2) is None  # a mark being written
    assert next_sentence_at("Hello there. How are you? [END] ", 2) is None
    assert next_sentence_at("Hello there. How are you? (wav", 2) is None
    assert next_sentence_at("Hello there. How are you? I", 2) == len("Hello there. How are you? ")
    assert next_sentence_at("It is 3.5", 1) is None  # a decimal point ends nothing


class Line(BaseModel):
    text: str


def line_request(**kw) -> LLMRequest:
    return LLMRequest(messages=[Message(role="user", content="Say hello.")], tag="chat.turn",
                      seed=1, parser=lambda text: Line(text=text), fallback=Line(text="..."),
                      **kw)


def test_every_backends_answer_is_cut_before_it_is_parsed():
    backend = ScriptedBackend(responders={
        "chat.turn": lambda r: "Good morning. Lovely weather. Shall we walk? I know a path."})
    completion = make_llm(LLMSettings(), backend=backend).complete(line_request(max_sentences=2))
    assert completion.parsed.text == "Good morning. Lovely weather."
    assert completion.text == "Good morning. Lovely weather."
    assert completion.faults == []


def test_a_cut_off_tail_past_the_last_sentence_asked_for_is_not_truncation():
    def ask(max_sentences: int):  # the answer is cut off at max_tokens, in its 4th sentence
        answer = "Good morning. Lovely weather. Shall we walk? I know a path by the river."
        backend = ScriptedBackend(responders={"chat.turn": lambda r: answer},
                                  faults=["truncated"])
        return make_llm(LLMSettings(), backend=backend).complete(
            line_request(max_sentences=max_sentences))

    whole = ask(2)
    assert whole.finish_reason == "length" and whole.faults == []
    assert whole.parsed.text == "Good morning. Lovely weather."
    cut = ask(4)  # asked for all of it, the same cut-off answer misses something: counted
    assert cut.faults == ["truncated"] and cut.parsed.text.startswith("Good morning.")


def test_max_sentences_is_for_free_text_and_keys_the_cache_only_when_set():
    with pytest.raises(ValidationError, match="max_sentences"):
        LLMRequest(messages=[Message(role="user", content="x")], schema=Line, max_sentences=2)
    plain = line_request()
    # The key of a request without the limit is the one recorded before the limit existed.
    assert plain.cache_key("m") == \
        "cb01f288fd8449c9fd49d081a2287397a8df13f6ced879eded9c2a7b832464f9"
    assert line_request(max_sentences=2).cache_key("m") != plain.cache_key("m")
    assert line_request(max_sentences=2).cache_key("m") != \
        line_request(max_sentences=3).cache_key("m")


@pytest.mark.model
def test_the_embedded_model_stops_generating_after_the_sentences_asked_for(embedded_weights):
    from sandbox.llm.local import LocalBackend

    backend = LocalBackend(n_threads=1, prefix_mb=0, lanes=1, weights=embedded_weights)
    # 60 tokens: well past the first sentence (about 20 tokens), all the free answer has to show;
    # it may otherwise run on to its limit.
    ask = dict(messages=[Message(role="user", content=(
        "Tell me about your town in at least five sentences."))], temperature=0.0, seed=1,
               max_tokens=60, tag="test")
    free = backend.complete(LLMRequest(**ask))
    assert next_sentence_at(free.text, 1) is not None  # on its own it goes on past one
    held = backend.complete(LLMRequest(**ask, max_sentences=1))
    assert held.finish_reason == "stop"
    assert held.usage.completion_tokens < free.usage.completion_tokens
    # the same first sentence (greedy), then only the one token that showed it was over
    assert first_sentences(held.text, 1) == first_sentences(free.text, 1)
    assert held.text.startswith(first_sentences(free.text, 1))
    assert next_sentence_at(held.text, 1) is not None
