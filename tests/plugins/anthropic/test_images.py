"""Images through the real ``anthropic`` SDK to the fake Messages API: ``image`` blocks."""

import asyncio
import json

import neta
import neta_base.plugin
from neta_anthropic import plugin
from neta_anthropic.history import from_anthropic, to_anthropic
from tests.core.images import camera
from tests.core.images.pictures import picture
from tests.fake_anthropic import FakeAnthropic, Reply, received_images

KEY = "sk-ant-test"


def agent(server, tmp_path, *plugins):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("anthropic", plugin), *plugins]
    )
    return neta.Agent(
        permissions="auto",
        model="anthropic:claude-test",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": KEY},
    )


def test_read_file_of_an_image_goes_in_the_tool_result_as_an_image_block(tmp_path):
    data = picture(64, 32, "image/jpeg")
    (tmp_path / "photo.jpg").write_bytes(data)
    replies = [
        Reply(tool_calls=[("read_file", json.dumps({"path": "photo.jpg"}))]),
        Reply(text="A red photo."),
    ]
    with FakeAnthropic(replies) as server:
        runner = agent(server, tmp_path, ("base", neta_base.plugin))
        result = asyncio.run(runner.run("describe photo.jpg"))
    assert result.outcome == "completed", result.reason
    assert server.rejected == []
    [read] = server.requests[1]["messages"][-1]["content"]
    assert read["type"] == "tool_result"
    assert read["content"][0] == {"type": "text", "text": "[image: photo.jpg 64x32]"}
    assert read["content"][1]["type"] == "image"
    assert received_images(server.requests[1]) == [("tool_result", "image/jpeg", data)]


def test_images_attached_to_the_prompt_come_before_its_text(tmp_path):
    data = picture(12, 12, "image/gif")
    image = neta.ImagePart.from_bytes(data, name="anim.gif")
    with FakeAnthropic([Reply(text="A square.")]) as server:
        asyncio.run(agent(server, tmp_path).run("what is it?", images=[image]))
    [prompt] = server.requests[0]["messages"]
    assert [block["type"] for block in prompt["content"]] == ["image", "text"]
    assert prompt["content"][1]["text"] == "[image: anim.gif 12x12]\nwhat is it?"
    assert received_images(server.requests[0]) == [("user", "image/gif", data)]


def test_a_tool_with_several_images_sends_them_in_one_tool_result(tmp_path):
    replies = [Reply(tool_calls=[("snap", json.dumps({"count": 3}))]), Reply(text="Three.")]
    with FakeAnthropic(replies) as server:
        asyncio.run(agent(server, tmp_path, ("camera", camera)).run("snap"))
    assert server.rejected == []
    assert [where for where, _, _ in received_images(server.requests[1])] == ["tool_result"] * 3


def test_images_map_back_from_the_messages_api():
    image = neta.ImagePart.from_bytes(picture(5, 5), name="a.png")
    history = [
        neta.Message(role="user", content="[image: a.png 5x5]\nlook", images=[image]),
        neta.Message(role="assistant", tool_calls=[neta.ToolCall("t1", "snap", "{}")]),
        neta.Message(role="tool", content="[image: a.png 5x5]", tool_call_id="t1", images=[image]),
    ]
    back = from_anthropic(None, to_anthropic(history))
    assert [m.images[0].data for m in back if m.images] == [image.data, image.data]
    assert back[2].content == "[image: a.png 5x5]"
