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
