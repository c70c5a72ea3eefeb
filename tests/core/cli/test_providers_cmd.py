"""``neta providers`` and a third-party provider plugin installed as the README says."""

import json

ECHO_PLUGIN = """
import neta


class EchoModel:
    def __init__(self, model: str = "", base_url: str | None = None, **_: object) -> None:
        self.model = model

    async def complete(self, request: neta.ModelRequest, on_text) -> neta.ModelResponse:
        text = f"{self.model}: " + (request.messages[-1].content or "")
        on_text(text)
        return neta.ModelResponse(text=text, finish_reason="stop")


@neta.hookimpl
def neta_providers():
    return [
        neta.ProviderSpec(
            name="echo",
            description="Says back what it was told.",
            factory=EchoModel,
            env_vars=("ECHO_TOKEN",),
            install="pip install neta-echo",
        )
    ]
"""


def test_a_third_party_provider_is_listed_and_chosen_by_provider_model_name(plugin_dir, tmp_path):
    plugin_dir.add("neta-echo", "neta_echo", ECHO_PLUGIN, entry_name="echo")
    listed = plugin_dir.neta("providers", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["echo"]["source"] == "plugin echo from neta-echo 0.1"
    assert rows["echo"]["env_vars"] == ["ECHO_TOKEN"]
    assert rows["echo"]["install"] == "pip install neta-echo"
    assert list(rows)[:2] == ["openai", "scripted"]  # the core's own come first

    ran = plugin_dir.neta("run", "hello", "--model", "echo:parrot-1", "-w", str(tmp_path), "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["text"] == "parrot-1: hello"


def test_providers_table_names_each_provider_and_what_it_reads(plugin_dir):
    done = plugin_dir.neta("providers", NETA_LOAD_PLUGINS="")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["provider", "from", "environment", "install", "description"]
    names = [line.split()[0] for line in lines[1:] if line.strip() and line[:2].strip()]
    assert names == ["openai", "scripted"]  # NETA_LOAD_PLUGINS="": the core's own only
    assert "OPENAI_API_KEY" in done.stdout
