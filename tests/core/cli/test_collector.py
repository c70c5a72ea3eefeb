"""``neta serve`` collects, freezes what start-up made, and collects the young less often."""

import gc
import json
import subprocess
import sys

import uvicorn

from neta.cli import collector
from neta.cli.collector import SERVER_YOUNG_THRESHOLD
from tests.core.cli.cli_runner import neta_in_process


def test_a_server_process_freezes_its_objects_and_collects_the_young_less_often():
    code = (
        "import gc, json; import neta.cli.app; from neta.cli import collector; "
        "before = gc.get_threshold(); collector.own_process(); "
        "collector.freeze_startup_objects(serving=True); "
        "print(json.dumps([gc.get_freeze_count(), before, gc.get_threshold()]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    frozen, before, after = json.loads(done.stdout)
    assert frozen > 10_000  # the imported modules' objects, at least
    assert after == [SERVER_YOUNG_THRESHOLD, before[1], before[2]]


def test_serve_settles_the_collector_once_the_app_is_built_and_before_it_serves(
    monkeypatch, tmp_path
):
    seen = []
    steps = []
    collect, freeze = gc.collect, gc.freeze

    def run(app, **options):
        seen.append((gc.get_freeze_count(), gc.get_threshold()[0]))

    def collecting(*args):
        steps.append("collect")
        return collect(*args)

    def freezing():
        steps.append("freeze")
        freeze()

    script = tmp_path / "script.json"
    script.write_text('{"turns": [{"text": "hi"}]}')
    threshold = gc.get_threshold()
    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.setattr(gc, "collect", collecting)
    monkeypatch.setattr(gc, "freeze", freezing)
    monkeypatch.setattr(collector, "_owned", True)  # as in the neta command's own process
    try:
        done = neta_in_process(
            "serve", "--port", "0", "--script", str(script), "-w", str(tmp_path), together=True
        )
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
    assert done.returncode == 0, done.stdout
    [(frozen, young)] = seen
    assert frozen > 10_000
    assert young == SERVER_YOUNG_THRESHOLD
    # main's freeze once the plugins are loaded, then serve's: collect first, then freeze
    assert steps[-2:] == ["collect", "freeze"]
