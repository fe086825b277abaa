"""Free-text chat turns: what the parser keeps of a small model's answer."""

import pytest

from agents.chat import turn_parser

parse = turn_parser(["Grace Okonkwo", "Arthur Okonkwo"])


@pytest.mark.parametrize("answer, utterance, ends", [
    ("Good morning, Arthur.", "Good morning, Arthur.", False),
    ("Grace: Good morning!", "Good morning!", False),
    ("Arthur Okonkwo is : Oh, nice to meet you!", "Oh, nice to meet you!", False),
    ("Grace says: Tea?", "Tea?", False),
    ("Bye for now, see you at ten! [END]", "Bye for now, see you at ten!", True),
    # the model went on to write the partner's line, or its own label again
    ("Hi. Arthur Okonkwo: Hello, dear. Grace: Tea?", "Hi.", False),
    ("Hi. It's nice to see you. Grace Okonkwo: Thank you for coming", "Hi. It's nice to see you.",
     False),
    ("(smiles) Lovely weather *waves*", "Lovely weather", False),
    ("First paragraph.\n\nA second one the model added.", "First paragraph.", False),
])
def test_parser_keeps_only_the_speakers_own_line(answer, utterance, ends):
    turn = parse(answer)
    assert (turn.utterance, turn.end_conversation) == (utterance, ends)


def test_a_long_answer_cut_at_max_tokens_ends_at_its_last_full_sentence():
    answer = ("I have been planning the planting morning for weeks. We need volunteers at ten. "
              "Would you and Kenji be able to bring the spa")
    assert parse(answer).utterance.endswith("volunteers at ten.")


def test_an_empty_answer_is_refused_so_the_layer_reasks():
    with pytest.raises(ValueError):
        parse("  [END] ")


def test_a_town_utterance_is_held_to_the_two_sentences_its_prompt_asks_for():
    from agents.scripted import RESPONDERS
    from tests.agents.ga_helpers import Recorder, town_day

    def chatty(request):  # the scripted turn, then two sentences more
        return RESPONDERS["converse.turn"](request).replace(
            " [END]", "") + " The weather is lovely. I walked here by the river."

    engine, _ = town_day(Recorder({**RESPONDERS, "converse.turn": chatty}), until_hour=16.5)
    said = [e.text for e in engine.events if e.kind == "utterance"]
    assert said and not any("river" in text for text in said)
    assert any(text.endswith("The weather is lovely.") for text in said)  # kept: sentence 2
