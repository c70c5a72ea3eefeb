"""``neta run --fallback MODEL`` and ``neta run --image PATH``."""

import json

from tests.core.cli.cli_runner import neta_in_process
from tests.core.images.pictures import picture
from tests.fake_openai import FakeOpenAI, Reply, received_images
from tests.services import neta_environ


def neta(*args, **env):
    return neta_in_process(*args, env=neta_environ(**env))


def script(tmp_path, turns):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def test_run_falls_back_to_the_next_model_and_says_which_answered(tmp_path):
    refused = script(tmp_path, [{"error": {"message": "invalid key", "status": 401}}])
    with FakeOpenAI([Reply(text="Answered by the fallback.")]) as server:
        done = neta(
            "run", "hi", "--script", refused, "--fallback", "openai:fake-model",
            "-w", str(tmp_path), "--json",
            OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="k",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["text"] == "Answered by the fallback."
    [event] = [e for e in result["events"] if e["type"] == "model_fallback"]
    assert (event["failed"], event["model"]) == ("scripted", "openai:fake-model")
    assert event["reason"] == "authentication failed (401)"
    assert server.requests[0]["model"] == "fake-model"


def test_run_on_a_terminal_shows_the_fallback_line(tmp_path):
    refused = script(tmp_path, [{"error": {"message": "overloaded", "status": 529}}])
    with FakeOpenAI([Reply(text="Fine.")]) as server:
        done = neta(
            "run", "hi", "--script", refused, "--fallback", "openai:fake-model",
            "-w", str(tmp_path), "--max-tries", "1",
            OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="k",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "scripted failed (overloaded); asking openai:fake-model" in done.stderr
    assert done.stdout.strip() == "Fine."


def test_run_image_attaches_the_picture_to_the_task(tmp_path):
    data = picture(50, 40, "image/jpeg")
    (tmp_path / "cat.jpg").write_bytes(data)
    with FakeOpenAI([Reply(text="A red cat.")]) as server:
        done = neta(
            "run", "what is this?", "--image", str(tmp_path / "cat.jpg"), "-p", "openai",
            "--base-url", server.base_url, "--api-key", "k", "-w", str(tmp_path), "--json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert server.rejected == []
    assert received_images(server.requests[0]) == [("user", "image/jpeg", data)]
    [prompt] = [m for m in server.requests[0]["messages"] if m["role"] == "user"]
    assert prompt["content"][-1]["text"] == "[image: cat.jpg 50x40]\nwhat is this?"
    started = json.loads(done.stdout)["events"][0]
    assert started["message"] == "[image: cat.jpg 50x40]\nwhat is this?"


def test_run_image_that_is_no_image_is_a_usage_error_naming_the_flag(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    done = neta("run", "hi", "--image", str(tmp_path / "notes.txt"), "-w", str(tmp_path))
    assert done.returncode == 2
    assert "--image" in done.stderr
    assert "notes.txt is not a PNG, JPEG, GIF or WebP image" in done.stderr
    missing = neta("run", "hi", "-i", str(tmp_path / "gone.png"), "-w", str(tmp_path))
    assert missing.returncode == 2
    assert "gone.png" in missing.stderr


def test_run_help_lists_fallback_and_image():
    text = " ".join(neta("run", "-h").stdout.split())
    assert "--fallback MODEL A model to ask when the one before fails for good" in text
    assert "-i, --image PATH Attach an image (PNG, JPEG, GIF, WebP) to the task" in text
