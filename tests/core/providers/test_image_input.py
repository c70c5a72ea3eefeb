"""Images through the real ``openai`` SDK to the fake Chat Completions server.

The API takes images in user messages only, so a tool result's images follow the turn's tool
results in a user message of their own; a model told to take text only reads placeholders.
"""

import asyncio
import json

import neta
import neta_base.plugin
from tests.core.images import camera
from tests.core.images.pictures import picture
from tests.fake_openai import FakeOpenAI, Reply, received_images


def agent(server, tmp_path, *plugins, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=list(plugins))
    return neta.Agent(
        provider="openai",
        model="fake-model",
        plugin_manager=pm,
        workspace=tmp_path,
        permissions="auto",
        provider_options={"base_url": server.base_url, "api_key": "k", **options},
    )


def test_read_file_of_an_image_reaches_the_model_after_the_tool_result(tmp_path):
    data = picture(64, 32)
    (tmp_path / "plot.png").write_bytes(data)
    replies = [
        Reply(tool_calls=[("read_file", json.dumps({"path": "plot.png"}))]),
        Reply(text="A red rectangle."),
    ]
    with FakeOpenAI(replies) as server:
        runner = agent(server, tmp_path, ("base", neta_base.plugin))
        result = asyncio.run(runner.run("what does plot.png show?"))
    assert result.outcome == "completed", result.reason
    assert server.rejected == []
    messages = server.requests[1]["messages"]
    tool, shown = messages[-2:]
    assert tool == {"role": "tool", "content": "[image: plot.png 64x32]", "tool_call_id": "call_0"}
    assert shown["role"] == "user"
    assert shown["content"][0] == {
        "type": "text",
        "text": "The images of the read_file result (call_0):",
    }
    assert received_images(server.requests[1]) == [("user", "image/png", data)]


def test_images_of_several_tool_results_follow_the_last_of_them(tmp_path):
    calls = [("snap", json.dumps({"count": 1})), ("snap", json.dumps({"count": 2}))]
    with FakeOpenAI([Reply(tool_calls=calls), Reply(text="Three.")]) as server:
        result = asyncio.run(agent(server, tmp_path, ("camera", camera)).run("snap"))
    assert result.outcome == "completed", result.reason
    assert server.rejected == []  # a user message between tool results would be refused
    roles = [m["role"] for m in server.requests[1]["messages"]]
    assert roles[-4:] == ["tool", "tool", "user", "user"]
    assert len(received_images(server.requests[1])) == 3


def test_images_attached_to_the_prompt_come_before_its_text(tmp_path):
    data = picture(10, 10, "image/webp")
    image = neta.ImagePart.from_bytes(data, name="icon.webp")
    with FakeOpenAI([Reply(text="An icon.")]) as server:
        asyncio.run(agent(server, tmp_path).run("what is it?", images=[image]))
    [prompt] = [m for m in server.requests[0]["messages"] if m["role"] == "user"]
    assert [part["type"] for part in prompt["content"]] == ["image_url", "text"]
    assert prompt["content"][1]["text"] == "[image: icon.webp 10x10]\nwhat is it?"
    assert received_images(server.requests[0]) == [("user", "image/webp", data)]


def test_a_model_told_to_take_text_only_reads_placeholders(tmp_path):
    image = neta.ImagePart.from_bytes(picture(10, 10), name="x.png")
    with FakeOpenAI([Reply(text="I cannot see it.")]) as server:
        runner = agent(server, tmp_path, image_input=False)
        asyncio.run(runner.run("look", images=[image]))
    [prompt] = [m for m in server.requests[0]["messages"] if m["role"] == "user"]
    assert prompt["content"] == (
        "[image: x.png 10x10 (not shown: this model takes no image input)]\nlook"
    )
    assert received_images(server.requests[0]) == []


def test_a_stored_image_is_encoded_once_for_every_turn_that_sends_it():
    from neta.providers.json_body import BodyEncoder

    image = neta.ImagePart.from_bytes(picture(10, 10), name="x.png")
    call = neta.ToolCall("c1", "snap", "{}")
    history = [
        neta.Message(role="user", content="go"),
        neta.Message(role="assistant", tool_calls=[call]),
        neta.Message(role="tool", content=image.placeholder, tool_call_id="c1", images=[image]),
    ]
    encoder = BodyEncoder()
    first = json.loads(encoder.body("m", history, []))
    encoded = encoder.encoded
    again = json.loads(encoder.body("m", [*history, neta.Message(role="user", content="more")], []))
    assert encoder.encoded == encoded + 1  # only the new message
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "tool", "user"]
    assert [m["role"] for m in again["messages"]] == ["user", "assistant", "tool", "user", "user"]
    assert again["messages"][3] == first["messages"][3]
