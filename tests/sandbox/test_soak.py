"""The fault soak, small: 5 short STSS episodes and a PingPong quick run through the real
openai backend against the loopback endpoint at 30% faults of every kind (bench/soak.py runs
100). No episode crashes, every episode is scored, every transport fault is counted in
calls.jsonl, every answer fault that a call could notice is counted, and `sandbox log` shows
them all."""

from __future__ import annotations

from tests.scripts import load_script


def load_soak():
    return load_script("bench/soak.py")


def accounted(soak, figures) -> None:
    injected, seen = figures["injected"], figures["seen"]
    for kind in ("rate_limit", "server_error", "connection"):
        assert seen[kind] == sum(n for k, n in injected.items() if soak.TRANSPORT.get(k) == kind)
    # On a loaded machine an answer can also outlast the client's timeout: never fewer.
    assert seen["timeout"] >= injected["timeout"]
    answers = sum(injected[k] for k in soak.ANSWER_FAULTS)
    valid_text = figures["free_text"]["malformed"] + figures["free_text"]["off_schema"]
    assert answers - valid_text <= figures["answer_attempts"] <= answers
    assert figures["log_mismatches"] == 0
    assert figures["recovered"] + sum(figures["fallbacks"].values()) == figures["faulted"]


def test_five_episodes_at_30_percent_faults_all_finish_scored_with_every_fault_counted(
        tmp_path):
    soak = load_soak()
    stss = soak.soak_stss(5, 0.3, 0, tmp_path / "stss")
    assert stss["crashed"] == 0 and stss["completed"] == stss["scored"] == 5
    assert sum(stss["injected"].values()) >= 30
    assert set(stss["injected"]) >= {"timeout", "429", "500", "reset", "malformed"}
    accounted(soak, stss)

    ping = soak.soak_pingpong(0.3, 0, tmp_path / "pingpong")
    assert ping["crashed"] == 0 and ping["runs"] == ping["judged"] == 8
    accounted(soak, ping)
