"""``neta serve`` collects, freezes what start-up made, and collects what it makes after."""

import gc
import json
import subprocess
import sys

from neta.cli import collector, serve_cmd
from neta.cli.collector import SERVER_THRESHOLDS
from tests.core.cli.cli_runner import neta_in_process


def test_a_server_process_freezes_its_objects_and_keeps_pythons_thresholds():
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
    assert after == before == list(SERVER_THRESHOLDS)


def test_serve_settles_the_collector_once_the_app_is_built_and_before_it_serves(
    monkeypatch, tmp_path
):
    seen = []
    steps = []
    collect, freeze = gc.collect, gc.freeze

    def run(app, options, store, announce):
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
    monkeypatch.setattr(serve_cmd, "_serve_app", run)  # where it would serve
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
    assert young == SERVER_THRESHOLDS[0]
    # main's freeze once the plugins are loaded, then serve's: collect, freeze, collect
    assert steps[-3:] == ["collect", "freeze", "collect"]


# A session a server drops from memory is a graph of objects referring to each other, old
# enough by then to be in the collector's oldest generation: only a full collection frees it.
_OLD_GARBAGE = """
import gc, json, weakref
import neta.server
from neta.cli import collector, serve_cmd

class Node:
    pass

collector.own_process()
collector.freeze_startup_objects(serving=True)
nodes = [Node() for _ in range(2000)]
for a, b in zip(nodes, nodes[1:] + nodes[:1]):
    a.next = b
gc.collect(1)  # they lived through the young collections: they are in the oldest generation
left = weakref.WeakSet(nodes)
del nodes, a, b
made = [[] for _ in range(150_000)]  # what the server goes on making meanwhile
print(json.dumps(len(left)))
"""


def test_a_server_process_frees_old_garbage_as_it_goes_on_allocating():
    done = subprocess.run(
        [sys.executable, "-c", _OLD_GARBAGE],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(done.stdout) == 0  # no explicit collection: the collector's own
