"""Fuzzed loaders (issue 19): every file a user gives us, mutated, through the command that reads
it. Each ends in success or a one-line error naming the file (exit 2): never a traceback, never
a half-written output directory. A model that does not exist (`scripted/nope`) stops every
command after its files are read, before anything runs.

Each test keeps its examples few (a few seconds each); the inputs that broke a loader once are
kept in tests/data/bad/ and run by test_bad_corpus.py."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox.files import read_data

from .harness import check_cli, file_text, jsonl_text

ROOT = Path(__file__).resolve().parents[2]
NOPE = "scripted/nope"
# The suite runs a fixed, small set of examples (the same each time); a bug hunt runs many new
# ones: SANDBOX_FUZZ_EXAMPLES=500 pytest tests/fuzz
HUNT = int(os.environ.get("SANDBOX_FUZZ_EXAMPLES", "0"))


def examples(n: int) -> settings:
    return settings(max_examples=HUNT or n, deadline=None, derandomize=not HUNT,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


FAST = examples(20)


def original(relative: str):
    return read_data(ROOT / relative)


def written(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


TEMPLATE = original("tasks/stss/templates/public_spring_tasting.yaml")


@FAST
@given(file_text(TEMPLATE, ".yaml"))
def test_task_templates(text):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = written(tmp, "mine.yaml", text)
        check_cli(["run", str(path), "--model", NOPE, "--embedder", "hashing", "--out",
                   str(tmp / "out")], [path], tmp / "out")


ARCHITECTURE = original("agents/architectures/ga_tdp.yaml")


@FAST
@given(file_text(ARCHITECTURE, ".yaml"))
def test_architecture_files(text):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = written(tmp, "arch.yaml", text)
        check_cli(["run", "public_spring_tasting", "--arch", str(path), "--model", NOPE,
                   "--embedder", "hashing", "--out", str(tmp / "out")], [path], tmp / "out")


SINGLE_ROOM = original("tasks/scenarios/single_room.yaml")
TOWN_DAY = original("tasks/scenarios/town_day.yaml")


@FAST
@given(st.sampled_from(["single_room", "town_day"]).flatmap(
    lambda name: st.tuples(st.just(name), file_text(
        SINGLE_ROOM if name == "single_room" else TOWN_DAY, ".yaml"))))
def test_scenario_configs(case):
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = written(tmp, "scenario.yaml", text)
        check_cli(["run", name, "--config", str(path), "--model", NOPE, "--out",
                   str(tmp / "out")], [path], tmp / "out")


WORLD = original("worlds/maps/single_room.yaml")


@FAST
@given(file_text(WORLD, ".yaml"))
def test_world_maps(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = written(Path(tmp), "room.yaml", text)
        check_cli(["world", str(path)], [path], allowed=(0, 1, 2))  # 1: unreachable tiles


RESIDENT = original("worlds/residents/town/agnes_whitfield.yaml")


@examples(6)  # each loads the town
@given(file_text(RESIDENT, ".yaml"))
def test_resident_files(text):
    """A world whose residents folder holds one mutated resident file."""
    world = yaml.safe_load((ROOT / "worlds/maps/town.yaml").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "residents").mkdir()
        resident = written(tmp / "residents", "agnes_whitfield.yaml", text)
        world["residents"] = "residents"
        town = written(tmp, "town.yaml", yaml.safe_dump(world, allow_unicode=True))
        check_cli(["world", str(town)], [town, resident], allowed=(0, 1, 2))


PINGPONG_OURS = original("tasks/pingpong/settings.yaml")
PINGPONG_PUBLIC = {"en": {
    "version": 2,
    "characters": [{"char_name": "Makise", "system_prompt": "A sharp young scientist.",
                    "summary": "A scientist."},
                   {"char_name": "Bob", "system_prompt": "A calm plumber.",
                    "summary": "A plumber."}],
    "situations": [{"text": "Chat about the weather.", "num_turns": 2},
                   {"text": "Ask for advice.", "num_turns": 3}]}}


@FAST
@given(st.one_of(file_text(PINGPONG_OURS, ".yaml").map(lambda t: (".yaml", t)),
                 file_text(PINGPONG_PUBLIC, ".json").map(lambda t: (".json", t))))
def test_pingpong_settings(case):
    suffix, text = case
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = written(tmp, f"settings{suffix}", text)
        check_cli(["pingpong", "--settings", str(path), "--player", NOPE, "--interrogator", NOPE,
                   "--judge", NOPE, "--out", str(tmp / "out")], [path], tmp / "out")


STSS_PUBLIC = [{
    "goal": "Valentine party", "FPG": "Isabella Rodriguez wants to hold a Valentine's Day party "
    "at Hobbs Cafe at 2023-02-14 19:00.", "Description": "The target is to have 5 people "
    "attend the party at Hobbs Cafe.", "task_type": "Party", "performer": "Isabella Rodriguez",
    "role_requirement": "", "Note": "", "n_characters": 12, "all_chars": [],
    "env_name": "base_party",
    "task": {"target": [], "target_num": 6, "goal": [{
        "keyword": "party", "alter_kwd": ["valentine"], "start_time": "2023-02-14 19:00",
        "duration_in_minutes": 120, "location": "the Ville:Hobbs Cafe",
        "required_character": []}]}}]
NAME_MAP = {"Isabella Rodriguez": "Maya Lindqvist", "the Ville:Hobbs Cafe": "Copper Kettle Cafe"}


@FAST
@given(st.one_of(
    file_text(STSS_PUBLIC, ".json").map(lambda t: (t, yaml.safe_dump(NAME_MAP))),
    file_text(NAME_MAP, ".yaml").map(lambda t: (json.dumps(STSS_PUBLIC), t))))
def test_stss_public_task_files_and_name_maps(case):
    tasks, names = case
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        task_file, name_map = written(tmp, "tasks.json", tasks), written(tmp, "map.yaml", names)
        check_cli(["stss", "--templates", str(task_file), "--name-map", str(name_map), "--out",
                   str(tmp / "out"), "--model", NOPE, "--embedder", "hashing"],
                  [task_file, name_map], tmp / "out")


SIMULBENCH_TASKS = original("tasks/simulbench/tasks.yaml")
REFUTEBENCH_ITEMS = original("tasks/refutebench/items.yaml")


@FAST
@given(file_text(SIMULBENCH_TASKS, ".yaml"))
def test_simulbench_task_files(text):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = written(tmp, "tasks.yaml", text)
        check_cli(["simulbench-collect", "--tasks", str(path), "--user", NOPE, "--simulator",
                   NOPE, "--judge", NOPE, "--out", str(tmp / "out")], [path], tmp / "out")


@FAST
@given(file_text(REFUTEBENCH_ITEMS, ".yaml"))
def test_refutebench_item_files(text):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = written(tmp, "items.yaml", text)
        check_cli(["refutebench", "--items", str(path), "--model", NOPE, "--refuter", NOPE,
                   "--judge", NOPE, "--out", str(tmp / "out")], [path], tmp / "out")


SIMULBENCH_SCRIPTS = [  # the published format's 8 fields, on our tasks
    {"id": 0, "source_id": "Unix Shell", "act": "Unix Shell", "task_description": "Act as a shell.",
     "type": "stateful", "source_file_name": "gpt-3.5-turbo.json", "turn_num": 1,
     "dialogue_history": [{"role": "user", "content": "Act as a shell. ls"}]},
    {"id": 1, "source_id": "Unix Shell", "act": "Unix Shell", "task_description": "Act as a shell.",
     "type": "stateful", "source_file_name": "gpt-3.5-turbo.json", "turn_num": 0,
     "dialogue_history": [{"role": "user", "content": "ls"}, {"role": "assistant",
                                                               "content": "notes"},
                          {"role": "user", "content": "pwd"}]},
]


@FAST
@given(jsonl_text(SIMULBENCH_SCRIPTS))
def test_simulbench_script_files(text):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = written(tmp, "scripts.jsonl", text)
        check_cli(["simulbench", "--scripts", str(path), "--simulator", NOPE, "--judge", NOPE,
                   "--out", str(tmp / "out")], [path], tmp / "out")


REFUTEBENCH_V1 = [{
    "system_prompt": "You are a helpful assistant.",
    "feedbacks": {"coffee": {"translation": ["咖啡", "咖啡豆"], "random": "暮气", "cnt": 1}},
    "feedback_prompt": "",
    "feedback_mapping_prompt": "In the following translations, you should translate {src} to "
                               "{tgt}.",
    "queries": ["Please translate the following sentence from English into Chinese.\n"
                "[English]: A fine coffee maker. \n[Chinese]: ", "[MAYBE FEEDBACK]",
                "What is Gremolata?", "Please translate the following sentence from English "
                "into Chinese.\n[English]: A fine coffee maker. \n[Chinese]: "]}]


@FAST
@given(jsonl_text(REFUTEBENCH_V1))
def test_refutebench_1_0_files(text):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = written(tmp, "en-zh.memory.NC-1.jsonl", text)
        check_cli(["refutebench", "--items", str(path), "--model", NOPE, "--out",
                   str(tmp / "out")], [path], tmp / "out")


STSS_LANG_SET = json.loads((ROOT / "tests/data/bad/stss_lang_set/"
                            "initiator_not_in_the_scenario.json").read_text(encoding="utf-8"))
STSS_LANG_SET["scenarios"][0]["initiator"] = STSS_LANG_SET["scenarios"][0]["performer"]["name"]


@FAST
@given(file_text(STSS_LANG_SET, ".json"))
def test_stss_lang_sets(text):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = written(tmp, "set.json", text)
        check_cli(["stss-lang", str(path), "--model", NOPE, "--judge", NOPE, "--out",
                   str(tmp / "out")], [path], tmp / "out")
