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


def _town_talks(recorder, **conversation):
    from tests.agents.ga_helpers import architecture, town_day

    arch = architecture("ga").with_params("conversation", **conversation)
    engine, _ = town_day(recorder, performer_arch=arch, others_arch=arch, until_hour=16.5)
    return engine


def test_each_later_turn_of_a_speaker_begins_with_its_previous_turns_messages():
    # Why: the embedded model then finds all but the newest lines of a turn's prompt in its
    # prefix store (sandbox/llm/local.py) instead of evaluating the memories and the transcript
    # again at every turn.
    from tests.agents.ga_helpers import Recorder

    recorder = Recorder()
    engine = _town_talks(recorder)
    said = [e for e in engine.events if e.kind == "utterance"]
    later = 0
    for speaker in {u.agent for u in said}:
        # one call per line (the scripted answers are all usable): the nth line's prompt is
        # the nth turn request of its speaker
        asked = [r.messages for r in recorder.requests
                 if r.tag == "converse.turn" and r.agent == speaker]
        lines = [u for u in said if u.agent == speaker]
        assert len(asked) == len(lines)
        for i in range(1, len(lines)):
            if lines[i].conversation != lines[i - 1].conversation:
                continue
            before, after = asked[i - 1], asked[i]
            # every message but the last (which carries a cue) stays as it was
            assert after[:len(before) - 1] == before[:-1]
            assert after[len(before) - 1].content.startswith(before[-1].content.split("\n\n(")[0])
            later += 1
    assert later >= 2
    retrieved = [e for e in engine.events if e.kind == "memory_retrieved"
                 and e.purpose == "converse.turn"]
    assert len(retrieved) == len({(u.conversation, u.agent) for u in said})  # once a speaker


def test_retrieve_every_turn_retrieves_for_each_line():
    from tests.agents.ga_helpers import Recorder

    engine = _town_talks(Recorder(), retrieve_every_turn=True)
    retrieved = [e for e in engine.events if e.kind == "memory_retrieved"
                 and e.purpose == "converse.turn"]
    assert len(retrieved) == len([e for e in engine.events if e.kind == "utterance"])
