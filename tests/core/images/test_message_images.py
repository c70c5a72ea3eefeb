"""Images in messages: the JSON the history keeps, the per-message cap, and runs through the
scripted provider, which takes no image input and reads each image's placeholder."""

import asyncio
import json

import neta
from neta.events import RunStarted, ToolResultEvent
from neta.images import MAX_MESSAGE_IMAGE_BYTES, fit_images
from neta.providers.image_input import TextOnlyProvider, text_only
from tests.core.images import camera
from tests.core.images.camera import weighing
from tests.core.images.pictures import picture


def image(width=8, height=6, name="a.png", **options):
    return neta.ImagePart.from_bytes(picture(width, height, **options), name=name)


def agent(tmp_path, turns):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("camera", camera)])
    provider = neta.ScriptedProvider(turns)
    return neta.Agent(provider=provider, plugin_manager=pm, workspace=tmp_path), provider


def test_a_message_without_images_keeps_the_json_it_had():
    plain = neta.Message(role="user", content="hi")
    assert "images" not in json.loads(plain.model_dump_json())


def test_a_message_with_images_is_json_that_comes_back_equal():
    message = neta.Message(role="user", content="[image: a.png 8x6] look", images=[image()])
    body = json.loads(message.model_dump_json())
    assert body["images"][0]["media_type"] == "image/png"
    assert neta.Message.model_validate_json(message.model_dump_json()) == message


def test_fit_images_names_each_image_in_the_text_once():
    first, second = image(name="a.png"), image(name="b.png")
    text, kept = fit_images("[image: b.png 8x6] and more", [first, second])
    assert kept == [first, second]
    assert text == "[image: a.png 8x6]\n[image: b.png 8x6] and more"


def test_fit_images_leaves_out_what_passes_the_message_cap_and_says_so():
    heavy = weighing(2 * 2**20 - 1000, "heavy.png")
    light = weighing(1000, "light.png")
    text, kept = fit_images("look", [heavy, heavy, heavy, heavy, light])
    assert kept == [heavy, heavy, heavy, light]  # what still fits after a refusal is kept
    assert sum(i.size for i in kept) <= MAX_MESSAGE_IMAGE_BYTES
    assert text.count("[image: heavy.png left out: a message carries at most 6 MiB") == 1


def test_text_only_says_the_image_was_not_shown_where_the_text_names_it():
    message = neta.Message(role="tool", content="[image: a.png 8x6]", images=[image()])
    assert text_only(message).content == (
        "[image: a.png 8x6 (not shown: this model takes no image input)]"
    )
    assert text_only(message).images == []
    unnamed = neta.Message(role="user", content="see", images=[image(name="b.png")])
    assert text_only(unnamed).content == (
        "see\n[image: b.png 8x6 (not shown: this model takes no image input)]"
    )


def test_a_tools_images_reach_the_history_named_and_a_text_only_model_reads_placeholders(
    tmp_path,
):
    turns = [
        {"tool_calls": [{"name": "snap", "arguments": {"count": 2, "text": "two shots"}}]},
        {"text": "I cannot see them."},
    ]
    runner, provider = agent(tmp_path, turns)
    result = asyncio.run(runner.run("take two pictures"))
    assert result.outcome == "completed", result.reason
    stored = result.messages[2]
    assert [i.name for i in stored.images] == ["snap1.png", "snap2.png"]
    assert stored.content == "[image: snap1.png 40x30]\n[image: snap2.png 40x30]\ntwo shots"
    [shown] = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert shown.content == stored.content  # hosts show the placeholders
    sent = provider.received[1].messages[-1]
    assert sent.images == []
    assert sent.content == (
        "[image: snap1.png 40x30 (not shown: this model takes no image input)]\n"
        "[image: snap2.png 40x30 (not shown: this model takes no image input)]\ntwo shots"
    )
    again = [neta.Message.model_validate_json(m.model_dump_json()) for m in result.messages]
    assert again == result.messages  # the history stays JSON, images and all


def test_a_tool_result_keeps_images_within_the_message_cap(tmp_path):
    snap = {"count": 4, "weight": 2 * 2**20}
    runner, _ = agent(tmp_path, [{"tool_calls": [{"name": "snap", "arguments": snap}]}, {}])
    result = asyncio.run(runner.run("take many"))
    stored = result.messages[2]
    assert [i.name for i in stored.images] == ["snap1.png", "snap2.png", "snap3.png"]
    assert "[image: snap4.png left out: a message carries at most 6 MiB of images]" in (
        stored.content
    )


def test_run_attaches_images_to_the_prompt(tmp_path):
    runner, provider = agent(tmp_path, [{"text": "A red square."}])
    result = asyncio.run(runner.run("What is this?", images=[image(name="sq.png")]))
    prompt = result.messages[0]
    assert prompt.content == "[image: sq.png 8x6]\nWhat is this?"
    assert [i.name for i in prompt.images] == ["sq.png"]
    [started] = [e for e in result.events if isinstance(e, RunStarted)]
    assert started.message == prompt.content
    assert (
        provider.received[0]
        .messages[-1]
        .content.startswith("[image: sq.png 8x6 (not shown: this model takes no image input)]")
    )


def test_text_only_copies_are_made_once_while_the_message_stays(tmp_path):
    seen = []

    class Recorder:
        async def complete(self, request, on_text):
            seen.append(list(request.messages))
            return neta.ModelResponse(text="ok")

    wrapped = TextOnlyProvider(Recorder())
    history = [neta.Message(role="user", content="x", images=[image()])]
    request = neta.ModelRequest(messages=history)
    asyncio.run(wrapped.complete(request, lambda piece: None))
    asyncio.run(wrapped.complete(request, lambda piece: None))
    assert seen[0][0] is seen[1][0]  # the same copy: a provider's encoded form is reused
    assert seen[0][0].images == []
